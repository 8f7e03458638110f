"""Exports: one attention heatmap (as the attend page draws it) to SVG, PNG and CSV; the first conversion of a
process starts vl-convert's JavaScript engine, so it is reported apart from the warm ones.

Usage: python -m benchmarks.bench_export [--repeats 10] [--tokens 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from benchmarks.harness import percentile
from mha_core import multi_head_attention
from mha_core.charts import base
from mha_core.export import chart_png, chart_svg, weights_csv


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--tokens", type=int, default=10)
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


if __name__ == "__main__":
    main()
