"""Speed as a student feels it, in headless Chromium against a real server.

1. cold start: process spawn -> server healthy -> first page fully rendered;
2. per page: time from a slider release (a key press on the slider) to the updated page, p50/p95;
3. a class: N concurrent browser sessions loading pages and moving sliders; p50/p95, errors, server memory.
Prints figures; never asserted in tests.
Usage: python -m benchmarks.bench_browser [--moves 12] [--sessions 20] [--think 0] [--skip cold pages class]
       [--pages split attend] [--throttle 6] [--port 18500]
--throttle N slows the page's CPU N times (Chrome DevTools' Emulation.setCPUThrottlingRate: a slow phone).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from benchmarks.harness import (
    CHROMIUM,
    CHROMIUM_FLAGS,
    PAGE_TEXT,
    open_student_page,
    pause,
    percentile,
    rss_mib,
    settled_ms,
    start_server,
    stop_server,
    timed_move,
    wait_ready,
)

# the slider that drives each page (widget key), as in tests/e2e/test_pages_in_browser.py
SLIDERS = {"overview": "h", "prereq": "prereq_sharp", "split": "h", "attend": "h", "concat": "h", "why": "h",
           "myths": "h", "cost": "cost_h_div"}


def page_text(page) -> str:
    return page.evaluate(PAGE_TEXT)


def move_and_time(page, key: str, direction: str) -> float:
    """Press an arrow on the slider; seconds until the page's figures (not the slider's own label) last
    changed, once the script run has ended and the page has settled."""
    before = page_text(page)
    slider = page.locator(f".st-key-{key} input[type=range]")
    slider.focus()
    t0 = time.time()
    page.keyboard.press(direction)
    return settled_ms(page, before, t0) / 1000


def open_page(browser, base: str, key: str, width: int = 1280, throttle: float = 1.0):
    ctx = browser.new_context(viewport={"width": width, "height": 900}, locale="en-US")
    page = ctx.new_page()
    if throttle > 1:  # a slower CPU for this page's renderer, as DevTools' "CPU throttling"
        ctx.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": throttle})
    page.goto(f"{base}/{'' if key == 'overview' else key}?fixed=0")  # the h slider (d_model fixed is the default)
    wait_ready(page)
    page.locator(f".st-key-{SLIDERS[key]} input[type=range]").first.wait_for(state="attached", timeout=15_000)
    return ctx, page


def cold_start(p, port: int | None = None) -> tuple[float, float]:
    t0 = time.perf_counter()
    proc, base = start_server(port=port)
    healthy = time.perf_counter() - t0
    try:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page()
        page.goto(f"{base}/?fixed=0")  # free mode: the h slider (d_model fixed, the default, shows h_div instead)
        wait_ready(page)
        page.locator(".st-key-h input[type=range]").wait_for(state="attached")
        rendered = time.perf_counter() - t0
        browser.close()
    finally:
        stop_server(proc)
    return healthy, rendered


def per_page(browser, base: str, moves: int, pages: list[str], throttle: float = 1.0) -> None:
    print(f"{'page':<9} {'p50 ms':>8} {'p95 ms':>8}  (slider release -> updated page, {moves} moves, "
          f"CPU throttled {throttle:g}x, load average {os.getloadavg()[0]:.1f})")
    for key in pages:
        slider = SLIDERS[key]
        ctx, page = open_page(browser, base, key, throttle=throttle)
        times, failed = [], 0
        for i in range(moves):
            try:
                times.append(move_and_time(page, slider, "ArrowRight" if i % 2 == 0 else "ArrowLeft") * 1000)
            except Exception:  # noqa: BLE001 - a move whose update never showed counts as a failure
                failed += 1
        ctx.close()
        print(f"{key:<9} {statistics.median(times):8.0f} {percentile(times, 0.95):8.0f}"
              + (f"  ({failed} moves without a visible update)" if failed else ""))


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
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser()
    ap.add_argument("--moves", type=int, default=12)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--class-moves", type=int, default=4)
    ap.add_argument("--think", type=float, default=0.0, help="class mode: mean seconds between a student's moves")
    ap.add_argument("--skip", nargs="*", default=[], choices=["cold", "pages", "class"])
    ap.add_argument("--pages", nargs="*", default=list(SLIDERS), choices=list(SLIDERS), help="pages to time")
    ap.add_argument("--throttle", type=float, default=1.0, help="per-page mode: CPU slowdown factor (e.g. 6)")
    ap.add_argument("--port", type=int, default=None, help="server port (default: any free port)")
    a = ap.parse_args()
    with sync_playwright() as p:
        if "cold" not in a.skip:
            healthy, rendered = cold_start(p, a.port)
            print(f"cold start: server healthy {healthy:.1f} s, first page rendered {rendered:.1f} s")
        if "pages" not in a.skip:
            proc, base = start_server(port=a.port)
            try:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
                per_page(browser, base, a.moves, a.pages, a.throttle)
                browser.close()
            finally:
                stop_server(proc)
    if "class" not in a.skip:  # asyncio, outside the sync API's event loop; a fresh server
        proc, base = start_server(port=a.port)
        try:
            a_class(base, proc.pid, a.sessions, a.class_moves, a.think)
        finally:
            stop_server(proc)


if __name__ == "__main__":
    main()
