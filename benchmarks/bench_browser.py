"""Speed as a student feels it, in headless Chromium against a real server.

1. cold start: process spawn -> server healthy -> first page fully rendered;
2. per page: time from a slider release (a key press on the slider) to the updated page, p50/p95;
3. a class: N concurrent browser sessions loading pages and moving sliders; p50/p95, errors, server memory.
Prints figures; never asserted in tests. Usage: python benchmarks/bench_browser.py [--moves 12] [--sessions 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_FLAGS,
    percentile,
    rss_mib,
    run_threads,
    start_server,
    stop_server,
    wait_ready,
)

# the slider that drives each page (widget key), as in tests/e2e/test_browser.py
SLIDERS = {"overview": "h", "prereq": "h", "split": "h", "attend": "h", "concat": "h", "why": "h", "myths": "h",
           "cost": "cost_h_div"}
CHANGED = """([before]) => document.querySelector('[data-testid="stApp"]').getAttribute('data-test-script-state')
 === 'notRunning' && document.querySelector('[data-testid="stMain"]').innerText +
 document.querySelector('[data-testid="stSidebar"]').innerText !== before"""


def page_text(page) -> str:
    return page.evaluate("""() => document.querySelector('[data-testid="stMain"]').innerText +
        document.querySelector('[data-testid="stSidebar"]').innerText""")


def move_and_time(page, key: str, direction: str) -> float:
    """Press an arrow on the slider; seconds until the page shows the new figures and the run has ended."""
    before = page_text(page)
    slider = page.locator(f".st-key-{key} input[type=range]")
    slider.focus()
    t0 = time.perf_counter()
    page.keyboard.press(direction)
    page.wait_for_function(CHANGED, arg=[before], timeout=60_000)
    return time.perf_counter() - t0


def open_page(browser, base: str, key: str, width: int = 1280):
    ctx = browser.new_context(viewport={"width": width, "height": 900}, locale="en-US")
    page = ctx.new_page()
    page.goto(base if key == "overview" else f"{base}/{key}")
    wait_ready(page)
    page.locator(f".st-key-{SLIDERS[key]} input[type=range]").first.wait_for(state="attached", timeout=15_000)
    return ctx, page


def cold_start(p) -> tuple[float, float]:
    t0 = time.perf_counter()
    proc, base = start_server()
    healthy = time.perf_counter() - t0
    browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
    page = browser.new_page()
    page.goto(base)
    wait_ready(page)
    page.locator(".st-key-h input[type=range]").wait_for(state="attached")
    rendered = time.perf_counter() - t0
    browser.close()
    stop_server(proc)
    return healthy, rendered


def per_page(browser, base: str, moves: int) -> None:
    print(f"{'page':<9} {'p50 ms':>8} {'p95 ms':>8}  (slider release -> updated page, {moves} moves)")
    for key, slider in SLIDERS.items():
        ctx, page = open_page(browser, base, key)
        times = []
        for i in range(moves):
            times.append(move_and_time(page, slider, "ArrowRight" if i % 2 == 0 else "ArrowLeft") * 1000)
        ctx.close()
        print(f"{key:<9} {statistics.median(times):8.0f} {percentile(times, 0.95):8.0f}")


def a_class(p, base: str, pid: int, sessions: int, moves: int) -> None:
    """Each session in its own thread with its own browser process: load pages and move sliders."""
    times: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    peak = [rss_mib(pid)]

    def student(i: int) -> None:
        from playwright.sync_api import sync_playwright

        keys = list(SLIDERS)
        try:
            with sync_playwright() as pw:
                b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
                for j in range(2):
                    key = keys[(i + j) % len(keys)]
                    ctx, page = open_page(b, base, key, width=390 if i % 3 == 0 else 1280)
                    for m in range(moves):
                        dt = move_and_time(page, SLIDERS[key], "ArrowRight" if m % 2 == 0 else "ArrowLeft")
                        if page.locator('[data-testid="stException"]').count():
                            raise RuntimeError(f"exception on {key}")
                        with lock:
                            times.append(dt * 1000)
                            peak[0] = max(peak[0], rss_mib(pid))
                    ctx.close()
                b.close()
        except Exception as err:  # noqa: BLE001 - every failure counts as an error of the run
            with lock:
                errors.append(f"session {i}: {type(err).__name__}: {err}"[:200])

    wall = run_threads(student, sessions)
    print(f"class of {sessions}: {len(times)} slider moves in {wall:.0f} s; p50 {statistics.median(times):.0f} ms, "
          f"p95 {percentile(times, 0.95):.0f} ms; errors {len(errors)}; server memory peak {peak[0]:.0f} MiB")
    for e in errors[:5]:
        print("  ", e)


def main() -> None:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser()
    ap.add_argument("--moves", type=int, default=12)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--class-moves", type=int, default=4)
    ap.add_argument("--skip", nargs="*", default=[], choices=["cold", "pages", "class"])
    a = ap.parse_args()
    with sync_playwright() as p:
        if "cold" not in a.skip:
            healthy, rendered = cold_start(p)
            print(f"cold start: server healthy {healthy:.1f} s, first page rendered {rendered:.1f} s")
        proc, base = start_server()
        try:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            if "pages" not in a.skip:
                per_page(browser, base, a.moves)
            browser.close()
            if "class" not in a.skip:
                a_class(p, base, proc.pid, a.sessions, a.class_moves)
        finally:
            stop_server(proc)


if __name__ == "__main__":
    main()
