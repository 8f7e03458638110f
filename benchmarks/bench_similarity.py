"""Head similarity: Jensen–Shannon distances between all heads and their grouping, for the real model's 72 heads
(6 layers x 12) at growing input lengths, on random attention of that shape (its cost depends only on the shape);
distances in float64 and in float32 (what the real-model page uses), and the largest difference between the two.

Usage: python -m benchmarks.bench_similarity [--repeats 5] [--heads 72] [--lengths 16 32 64 128]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from benchmarks.timing import percentile
from mha_core.attention import softmax
from mha_core.head_similarity import group_heads, js_distances


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--heads", type=int, default=72)
    ap.add_argument("--lengths", type=int, nargs="+", default=[16, 32, 64, 128])
    a = ap.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; {a.heads} heads, {a.repeats} repeats")
    rng = np.random.default_rng(0)
    for n in a.lengths:
        attn = softmax(rng.standard_normal((a.heads, n, n)) * 2)
        dist_ms, fast_ms, group_ms = [], [], []
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            d = js_distances(attn)
            t1 = time.perf_counter()
            group_heads(d, 0.3)
            t2 = time.perf_counter()
            fast = js_distances(attn, np.float32)
            t3 = time.perf_counter()
            dist_ms.append((t1 - t0) * 1000)
            group_ms.append((t2 - t1) * 1000)
            fast_ms.append((t3 - t2) * 1000)
        print(f"  n = {n:4d}: float64 p50 {statistics.median(dist_ms):7.1f} ms  p95 {percentile(dist_ms, 95):7.1f}"
              f"  | float32 p50 {statistics.median(fast_ms):7.1f} ms  p95 {percentile(fast_ms, 95):7.1f}"
              f"  (max |diff| {np.abs(fast - d).max():.1e})  | grouping p50 {statistics.median(group_ms):5.1f} ms")


if __name__ == "__main__":
    main()
