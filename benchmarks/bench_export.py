"""Exports: one attention heatmap (as the attend page draws it) to SVG, PNG and CSV; the first conversion of a
process starts vl-convert's JavaScript engine, so it is reported apart from the warm ones.

With --pages, also what the download menus add to a page run (the cost every follower of a live lesson pays on
each teacher move): reruns with and without them, interleaved in one process so both see the same machine load.

Usage: python -m benchmarks.bench_export [--repeats 10] [--tokens 10] [--pages attend overview]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from benchmarks.bench_pages import ROOT, SETTINGS
from benchmarks.timing import percentile
from mha_core import multi_head_attention
from mha_core.charts import base
from mha_core.figure_files import chart_png, chart_svg, weights_csv


def page_runs(key: str, state: dict, repeats: int) -> tuple[float, float, float, int]:
    """Medians over reruns of one page at these settings: CPU ms of a rerun without the download menus, with them,
    CPU ms spent drawing the menus themselves, and how many were drawn. CPU time (this process, all threads), not
    wall time: the machine is shared, and a busy neighbour would otherwise swamp a difference of a few ms."""
    from streamlit.testing.v1 import AppTest

    from mha_core.ui import render
    from mha_core.ui.nav import spec

    real = render._downloads
    inside: list[float] = []

    def timed(*args: object, **kwargs: object) -> None:
        t0 = time.thread_time()
        real(*args, **kwargs)
        inside.append((time.thread_time() - t0) * 1000)

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    for k, v in state.items():
        at.session_state[k] = v
    at.switch_page(spec(key).script)
    at.run()
    runs: tuple[list[float], list[float]] = ([], [])
    menus: list[float] = []
    try:
        for i in range(2 * (repeats + 1)):
            render._downloads = timed if i % 2 else (lambda *a, **k: None)
            inside.clear()
            t0 = time.process_time()
            at.run()
            runs[i % 2].append((time.process_time() - t0) * 1000)
            if i % 2:
                menus.append(sum(inside))
    finally:
        render._downloads = real
    assert not at.exception, at.exception
    return (statistics.median(runs[0][1:]), statistics.median(runs[1][1:]), statistics.median(menus[1:]),
            len(at.get("popover")))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--tokens", type=int, default=10)
    ap.add_argument("--pages", nargs="*", default=[], help="page keys: page-run cost of the download menus")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    n = a.tokens
    trace = multi_head_attention(rng.standard_normal((n, 64)), *(rng.standard_normal((64, 64)) for _ in range(4)), 8)
    labels = [f"{i} w{i}" for i in range(n)]
    chart = base.heatmap(trace.weights[0], labels, labels, domain=(0.0, 1.0), title="head 0")
    t0 = time.perf_counter()
    chart_svg(chart)
    first = (time.perf_counter() - t0) * 1000
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; {n} tokens; first SVG of the process "
          f"{first:.0f} ms")
    for name, fn in (("svg", lambda: chart_svg(chart)), ("png", lambda: chart_png(chart)),
                     ("csv", lambda: weights_csv(trace, 0, labels, "q"))):
        ms = []
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            fn()
            ms.append((time.perf_counter() - t0) * 1000)
        print(f"  {name}: p50 {statistics.median(ms):7.1f} ms  p95 {percentile(ms, 95):7.1f} ms")
    for key in a.pages:
        for label, state in SETTINGS.items():
            without, with_menus, drawing, menus = page_runs(key, state, a.repeats)
            print(f"  page {key:9s} {label:8s} rerun CPU without menus {without:6.1f} ms, with {with_menus:6.1f} ms;"
                  f" drawing the {menus} menus {drawing:4.1f} ms")


if __name__ == "__main__":
    main()
