"""Cached bridges from settings to core results, shared by every page.

One trace per distinct Settings, kept once per process and shared read-only by every session (mha_core.lru):
st.cache_data hashed the Settings with Streamlit's hasher and unpickled a copy of the whole trace on every call,
a share of every follower's redraw in a live lesson (benchmarks/bench_fanout.py). Settings is frozen and hashable,
so it is the key itself.
"""

from __future__ import annotations

from mha_core.counts import param_counts
from mha_core.lru import MIB, ByteLRU, read_only
from mha_core.settings import Settings
from mha_core.walkthrough import ScaleDemo, Walkthrough, averaging_matrix, build_walkthrough, recovery_error, scale_demo

TRACES = ByteLRU(64 * MIB)  # a trace at the sliders' maximum is ~1 MiB; most are a few KiB


def walkthrough(s: Settings) -> Walkthrough:
    """The trace for these settings (computed once, read-only; raises LabError for bad input, never cached)."""
    return TRACES.get(("walkthrough", s), lambda: read_only(build_walkthrough(s)))


def counts(s: Settings) -> tuple[dict[str, int], dict[str, int]]:
    """(this layer's parameter counts, those of one full-width head of the same d_model)."""
    return (param_counts(s.d_model, s.n_heads, d_head=s.d_head),
            param_counts(s.d_model, 1, d_head=s.d_model))


def recovery(s: Settings) -> tuple[float, float]:
    """(error recovering the heads after W^O, after averaging) — a linear solve, so cached."""
    def solve() -> tuple[float, float]:
        wt = walkthrough(s)
        avg = averaging_matrix(s.n_heads, s.d_head)
        return (recovery_error(wt.trace, wt.trace.output, wt.weights.w_o),
                recovery_error(wt.trace, wt.trace.concat @ avg, avg))
    return TRACES.get(("recovery", s), solve)


def scale(d_head: int) -> ScaleDemo:
    """Why 1/sqrt(d_head), for this d_head (64 random samples: the same numbers every time, so computed once)."""
    return TRACES.get(("scale", d_head), lambda: read_only(scale_demo(d_head)))
