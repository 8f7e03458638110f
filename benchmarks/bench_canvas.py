"""A lead for issue 26's target 1: the same matrix charts drawn by Streamlit's Vega chart and by a component of the
page's own on a canvas, on the bare Streamlit page (harness.floor.BARE_APP), slider move -> settled.

    python -m benchmarks.bench_canvas [--charts 3] [--rows 10] [--rounds 2] [--moves 8] [--throttle 1 6]

The charts are ``--rows`` x 64 heatmaps whose values follow the slider (640 cells at 10 rows: split's, attend's and
concat's charts at the default settings). The canvas component (``?canvas=1``: st.components.v2, its JavaScript in
the page, no iframe) draws the cells, row labels and a hover tooltip, not yet the column labels, legend or title a
lesson chart has. Each round times the bare page, the Vega charts and the canvas charts in turn, at each throttle
(benchmarks.bench_speed's ``measure``: p95 and the browser's main-thread ms per move), and prints one table. Exit 1 if
a case could not be measured.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.bench_speed import BARE, Case, Result, measure
from harness.floor import BARE_APP
from harness.server import CHROMIUM, CHROMIUM_FLAGS, start_server, stop_server


def cases(charts: int, rows: int) -> list[Case]:
    """The bare page alone, with the Vega charts, with the canvas charts."""
    query = f"?charts={charts}&rows={rows}&cols=64"
    return [BARE, Case(f"{charts} Vega charts", query, "slider:h"),
            Case(f"{charts} canvas charts", f"{query}&canvas=1", "slider:h")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--charts", type=int, default=3, help="charts on the page (default 3)")
    ap.add_argument("--rows", type=int, default=10, help="rows of each 64-column chart (default 10: 640 cells)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of all cases (default 2)")
    ap.add_argument("--moves", type=int, default=8, help="timed moves per case (default 8)")
    ap.add_argument("--quiet", type=int, default=300, help="ms without activity that count as settled")
    ap.add_argument("--throttle", type=float, nargs="+", default=[1.0, 6.0], help="CPU throttling rates")
    a = ap.parse_args()
    results: list[tuple[int, Result]] = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        (Path(tmp) / "bare.py").write_text(BARE_APP, encoding="utf-8")
        proc, base = start_server(script=Path(tmp) / "bare.py", cwd=Path(tmp))
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            for rnd in range(a.rounds):
                for throttle in a.throttle:
                    for case in cases(a.charts, a.rows):
                        results.append((rnd, measure(browser, base, case, throttle, a.moves, a.quiet)))
                        print(f"  round {rnd + 1}, {case.name} at {throttle:g}x: p95 {results[-1][1].p95:.0f} ms "
                              f"{results[-1][1].error}", file=sys.stderr, flush=True)
        finally:
            browser.close()
            stop_server(proc)
    print(f"{a.charts} charts of {a.rows} x 64 cells; {a.moves} moves per case; main thread: the browser's ms per move")
    print(f"{'round':>5}  {'throttle':>8}  {'case':<20} {'p95 ms':>7} {'ratio':>6} {'main-thread ms':>15}")
    for rnd, r in results:
        bare = next(b for n, b in results if n == rnd and b.throttle == r.throttle and b.case == BARE.name)
        ratio = f"{r.p95 / bare.p95:.1f}x" if r.ms and bare.ms else "-"
        busy = f"{r.busy_p50:.0f}" if r.busy else "-"
        print(f"{rnd + 1:>5}  {r.throttle:>7g}x  {r.case:<20} {r.p95:>7.0f} {ratio:>6} {busy:>15}  {r.error}")
    failed = [r for _, r in results if r.error or not r.ms]
    if failed:
        print(f"FAILED: {', '.join(f'{r.case} at {r.throttle:g}x' for r in failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
