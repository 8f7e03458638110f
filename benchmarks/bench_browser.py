"""A class in headless Chromium against one real server: N concurrent browser sessions loading pages and moving
sliders; p50/p95, errors, server memory. Prints figures; never asserted in tests.

One student's speed per page (against a bare Streamlit page, at 1x and 6x CPU) and the cold start are
bench_speed's job.
Usage: python -m benchmarks.bench_browser [--sessions 20] [--class-moves 4] [--think 0] [--port 18500]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from benchmarks.timing import open_student_page, pause, percentile, rss_mib, timed_move
from harness.server import CHROMIUM, CHROMIUM_FLAGS, start_server, stop_server

# the slider that drives each page (widget key), as in tests/e2e/test_pages_in_browser.py
SLIDERS = {"overview": "h", "prereq": "prereq_sharp", "split": "h", "attend": "h", "concat": "h", "why": "h",
           "myths": "h", "cost": "cost_h_div"}


def a_class(base: str, pid: int, sessions: int, moves: int, think: float = 0.0) -> None:
    """N students at once, as N pages of one headless Chromium driven concurrently (asyncio): each loads
    two pages (a third of them at phone width) and moves each page's slider, ``think`` seconds apart on
    average (a student reads the result; 0 = back to back, a stress test); times and errors are kept."""
    import asyncio

    from playwright.async_api import async_playwright

    times: list[float] = []
    errors: list[str] = []
    peak = [rss_mib(pid)]
    keys = list(SLIDERS)

    async def student(browser, i: int) -> None:
        try:
            for j in range(2):
                key = keys[(i + j) % len(keys)]
                width = 390 if i % 3 == 0 else 1280
                ctx, page, slider = await open_student_page(browser, base, key, width, SLIDERS[key])
                for m in range(moves):
                    await asyncio.sleep(pause(think, i, m))
                    ms = await timed_move(page, slider, m, 120_000)
                    if ms < 0:
                        raise RuntimeError(f"no update on {key}")
                    times.append(ms)
                    peak[0] = max(peak[0], rss_mib(pid))
                    if await page.locator('[data-testid="stException"]').count():
                        raise RuntimeError(f"exception on {key}")
                await ctx.close()
        except Exception as err:  # noqa: BLE001 - every failure counts as an error of the run
            errors.append(f"session {i}: {type(err).__name__}: {err}"[:200])

    async def run() -> float:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            t0 = time.perf_counter()
            await asyncio.gather(*(student(browser, i) for i in range(sessions)))
            wall = time.perf_counter() - t0
            await browser.close()
            return wall

    wall = asyncio.run(run())
    print(f"class of {sessions}, think time ~{think:g} s: {len(times)} slider moves in {wall:.0f} s; "
          f"load average {os.getloadavg()[0]:.1f}; p50 {statistics.median(times):.0f} ms, "
          f"p95 {percentile(times, 0.95):.0f} ms; errors {len(errors)}; server memory peak {peak[0]:.0f} MiB")
    for e in errors[:5]:
        print("  ", e)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--class-moves", type=int, default=4)
    ap.add_argument("--think", type=float, default=0.0, help="mean seconds between a student's moves")
    ap.add_argument("--port", type=int, default=None, help="server port (default: any free port)")
    a = ap.parse_args()
    proc, base = start_server(port=a.port)
    try:
        a_class(base, proc.pid, a.sessions, a.class_moves, a.think)
    finally:
        stop_server(proc)


if __name__ == "__main__":
    main()
