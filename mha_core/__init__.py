"""MHA Lab's core: attention maths, counts, inputs, charts and texts. No Streamlit in here
except in ``mha_core.ui``, the one part that renders."""

from mha_core.attention import (
    Trace,
    causal_mask,
    merge_heads,
    multi_head_attention,
    repeat_kv,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)
from mha_core.counts import kv_cache_bytes, param_counts
from mha_core.errors import LabError

__all__ = [
    "LabError",
    "Trace",
    "causal_mask",
    "merge_heads",
    "multi_head_attention",
    "kv_cache_bytes",
    "param_counts",
    "repeat_kv",
    "scaled_dot_product_attention",
    "softmax",
    "split_heads",
]

# Cost lab: FLOPs, whole-model figures and published presets.
from mha_core.cost_model import CostReport, ModelShape, cost_report  # noqa: E402
from mha_core.counts import LayerFlops, attention_flops, attention_kind, divisors  # noqa: E402
from mha_core.presets import PRESETS, Preset, preset  # noqa: E402

__all__ += [
    "CostReport", "LayerFlops", "ModelShape", "PRESETS", "Preset", "attention_flops", "attention_kind",
    "cost_report", "divisors", "preset",
]
