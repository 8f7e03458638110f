"""The numpy core's forward against torch.nn.MultiheadAttention on the CPU, in the same run.

Prints medians over repeated runs and the ratio; nothing here is asserted by the tests.
Usage: python -m benchmarks.bench_core [--n 256] [--d-model 512] [--heads 8] [--repeats 50]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
import torch

from benchmarks.timing import median_ms
from mha_core import multi_head_attention


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--d-model", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=100)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    for dtype, tdtype in ((np.float32, torch.float32), (np.float64, torch.float64)):
        x = rng.standard_normal((a.n, a.d_model)).astype(dtype)
        ws = [(rng.standard_normal((a.d_model, a.d_model)) / np.sqrt(a.d_model)).astype(dtype) for _ in range(4)]
        module = torch.nn.MultiheadAttention(a.d_model, a.heads, bias=False, batch_first=True, dtype=tdtype).eval()
        with torch.no_grad():
            module.in_proj_weight.copy_(torch.from_numpy(np.concatenate([w.T for w in ws[:3]])))
            module.out_proj.weight.copy_(torch.from_numpy(ws[3].T))
        xt = torch.from_numpy(x)[None]

        def ours(x=x, ws=ws):
            multi_head_attention(x, *ws, a.heads)

        def theirs(module=module, xt=xt):
            with torch.no_grad():
                module(xt, xt, xt, need_weights=True, average_attn_weights=False)

        # Both orders: numpy's BLAS threads and torch's OpenMP threads spin after a call and slow the
        # other library's next call, so "all of ours, then all of theirs" and interleaved rounds differ.
        seq = (median_ms(ours, a.repeats), median_ms(theirs, a.repeats))
        rounds = [(median_ms(ours, 5), median_ms(theirs, 5)) for _ in range(max(1, a.repeats // 5))]
        inter = (statistics.median([r[0] for r in rounds]), statistics.median([r[1] for r in rounds]))
        for name, (m_ours, m_torch) in (("sequential", seq), ("interleaved", inter)):
            print(f"{np.dtype(dtype).name} {name:<11}: n={a.n} d_model={a.d_model} h={a.heads}  mha_core "
                  f"{m_ours:.2f} ms  torch {m_torch:.2f} ms  ratio {m_ours / m_torch:.2f}x "
                  f"(torch threads {torch.get_num_threads()})")


if __name__ == "__main__":
    main()
