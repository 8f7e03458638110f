"""A class against one server, without browsers: N concurrent Streamlit sessions over the app's own
websocket protocol (what each student's browser sends: harness/websocket_client.py), each opening pages and
moving the h slider.

In a real class every student's browser renders on its own device; 20 Chromium renderers on this
server's 2 cores would measure the renderers, not the server (bench_browser.py does that:
~0.4 s of renderer CPU per move against ~25 ms of server CPU). So most students here speak the protocol,
and ``--browsers`` of them are real headless Chromium pages, timed from slider release to the updated
page, as a student under the class's load sees it.
Reports p50/p95 of slider -> script finished (all page data received), errors and server memory.
Usage: python -m benchmarks.bench_class [--sessions 20] [--moves 6] [--think 0] [--browsers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from playwright.async_api import async_playwright

from benchmarks.timing import open_student_page, pause, percentile, rss_mib, timed_move
from harness.server import CHROMIUM, CHROMIUM_FLAGS, start_server, stop_server
from harness.websocket_client import Student

PAGES = ("overview", "split", "attend", "concat", "why", "myths", "prereq")


async def student(base: str, i: int, moves: int, think: float, times: list[float], errors: list[str]) -> None:
    """A protocol session: opens two pages in turn and moves h on each (the link's fixed=0 shows the h slider)."""
    s = Student(base, "none", {"fixed": "0"}, locale="")   # no locale: the app's default language, as before
    try:
        await s.connect()
        for j in range(2):
            page = PAGES[(i + j) % len(PAGES)]
            h_id = (await s.run(page)).widget_id("h")
            for m in range(moves):
                await asyncio.sleep(pause(think, i, m))  # a student reads
                run = await s.run(page, {h_id: ("double_array_value", [float(4 + (i + m) % 12)])})  # h 4..15
                times.append(run.seconds * 1000)
                if run.exceptions:
                    errors.append(f"student {i}: exception on {page}")
    except Exception as err:  # noqa: BLE001 - every failure counts as an error of the run
        errors.append(f"student {i}: {type(err).__name__}: {err}"[:200])
    finally:
        await s.close()


async def browser_student(browser, base: str, i: int, moves: int, think: float, times: list[float],
                          errors: list[str]) -> None:
    """A student in headless Chromium (a phone every other one): opens a pipeline page, moves h."""
    page_key = PAGES[i % len(PAGES)]
    try:
        ctx, page, slider = await open_student_page(browser, base, page_key, 390 if i % 2 else 1280, "h")
        for m in range(moves):
            await asyncio.sleep(pause(think, i, m))
            value = await slider.evaluate("e => e.value")
            ms = await timed_move(page, slider, m, 30_000)
            if ms < 0:  # counted, and the student goes on
                after = await slider.evaluate("e => e.value")
                shown = dict(kv.split("=", 1) for kv in page.url.partition("?")[2].split("&") if "=" in kv).get("h")
                errors.append(f"browser student {i}: move {m} on {page_key}: no update in 30 s "
                              f"(slider {value} -> {after}, last run's h {shown})")
                continue
            times.append(ms)
            if await page.locator('[data-testid="stException"]').count():
                errors.append(f"browser student {i}: exception on {page_key}")
        await ctx.close()
    except Exception as err:  # noqa: BLE001 - every failure counts as an error of the run
        errors.append(f"browser student {i}: {type(err).__name__}: {err}"[:200])


def summary(times: list[float]) -> str:
    if not times:
        return "no moves"
    return (f"p50 {statistics.median(times):.0f} ms, p95 {percentile(times, 0.95):.0f} ms, "
            f"max {max(times):.0f} ms")


async def a_class(base: str, pid: int, sessions: int, moves: int, think: float, browsers: int = 0) -> None:
    times: list[float] = []
    browser_times: list[float] = []
    errors: list[str] = []
    peak = [rss_mib(pid)]

    async def watch() -> None:
        while True:
            peak[0] = max(peak[0], rss_mib(pid))
            await asyncio.sleep(0.2)

    watcher = asyncio.create_task(watch())
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS) if browsers else None
        t0 = time.perf_counter()
        await asyncio.gather(
            *(student(base, i, moves, think, times, errors) for i in range(sessions - browsers)),
            *(browser_student(browser, base, i, moves, think, browser_times, errors) for i in range(browsers)),
        )
        wall = time.perf_counter() - t0
        if browser:
            await browser.close()
    watcher.cancel()
    print(f"class of {sessions} sessions ({browsers} in Chromium), think time ~{think:g} s: "
          f"{len(times) + len(browser_times)} slider moves in {wall:.1f} s; errors {len(errors)}; "
          f"server memory peak {peak[0]:.0f} MiB")
    print(f"  protocol sessions, slider -> all page data: {summary(times)}")
    if browsers:
        print(f"  Chromium students, slider release -> updated page: {summary(browser_times)}")
    for e in errors[:5]:
        print("  ", e)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--moves", type=int, default=6)
    ap.add_argument("--think", type=float, default=0.0, help="mean seconds between a student's moves")
    ap.add_argument("--browsers", type=int, default=2, help="how many of the sessions are real Chromium pages")
    a = ap.parse_args()
    proc, base = start_server()
    try:
        asyncio.run(a_class(base, proc.pid, a.sessions, a.moves, a.think, min(a.browsers, a.sessions)))
    finally:
        stop_server(proc)


if __name__ == "__main__":
    main()
