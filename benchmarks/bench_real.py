"""The real-model page's costs: cold load of the packaged model, one 32-token sentence (forward + every head's
statistics), the layer check of every layer, and the batched per-head importance.

Prints medians (and the machine's load average, since these boxes are shared); nothing here is asserted by tests.
Usage: python -m benchmarks.bench_real [--repeats 20] [--cold 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLD = ("import time; t0 = time.perf_counter(); import torch; t1 = time.perf_counter(); "
        "from mha_core import pretrained as P; m = P.load(P.PACKAGED); t2 = time.perf_counter(); "
        "print(f'{t1 - t0:.3f} {t2 - t1:.3f}')")
SENTENCE = ("The animal didn't cross the busy street because it was too tired after the long walk "
            "home from the market near the river on a cold and windy evening in late november")


def cold(runs: int) -> None:
    """A fresh process per run: import torch, then import transformers and load the packaged model."""
    torch_s, load_s = [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", COLD], cwd=ROOT, capture_output=True, text=True, check=True,
                             env={**os.environ, "HF_HUB_OFFLINE": "1"})
        a, b = map(float, out.stdout.split()[-2:])
        torch_s.append(a)
        load_s.append(b)
    print(f"cold load, median of {runs} fresh processes:")
    print(f"  import torch                        {statistics.median(torch_s):6.2f} s")
    print(f"  transformers + packaged model       {statistics.median(load_s):6.2f} s")
    total = statistics.median([a + b for a, b in zip(torch_s, load_s, strict=True)])
    print(f"  total                               {total:6.2f} s")


def warm(repeats: int) -> None:
    """In one process: a second load (what st.cache_resource saves), a 32-token run + stats, checks, importance."""
    from mha_core import pretrained as P

    m = P.load(P.PACKAGED)
    t0 = time.perf_counter()
    P.load(P.PACKAGED)
    reload_s = time.perf_counter() - t0
    r = P.run(m, SENTENCE)
    assert r.n == P.MAX_REAL_TOKENS == 32, r.n  # the sentence is longer: cut to exactly 32
    parts: dict[str, list[float]] = {"forward + stats": [], "layer check (all 6)": [], "importance (72 heads)": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = P.run(m, SENTENCE)
        P.head_stats(r.attentions, r.special, r.punct)
        t1 = time.perf_counter()
        checks = P.check_all(m, r)
        t2 = time.perf_counter()
        parts["forward + stats"].append((t1 - t0) * 1000)
        parts["layer check (all 6)"].append((t2 - t1) * 1000)
    for _ in range(max(3, repeats // 5)):
        t0 = time.perf_counter()
        P.importance(m, SENTENCE)
        parts["importance (72 heads)"].append((time.perf_counter() - t0) * 1000)
    print(f"warm, {r.n} tokens, torch threads = {__import__('torch').get_num_threads()}:")
    print(f"  reload without the cache            {reload_s * 1000:8.1f} ms (st.cache_resource: ~0 after the first)")
    for k, v in parts.items():
        print(f"  {k:34s} {statistics.median(v):8.1f} ms (median of {len(v)})")
    print("  max |Δ| per layer (weights, output): "
          + ", ".join(f"L{c.layer} {c.weights_diff:.1e}/{c.output_diff:.1e}" for c in checks))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--cold", type=int, default=3)
    args = ap.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    cold(args.cold)
    warm(args.repeats)


if __name__ == "__main__":
    main()
