"""The lab's own ``multi_head_attention`` against a real model's layers: each layer's weights in the core's
row-vector convention, the core run on the layer's own input, and how far it lands from the model (TOLERANCE)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha_core.attention import Trace, multi_head_attention
from mha_core.pretrained import Loaded, Run, need_bert

TOLERANCE = 1e-4                      # the core must reproduce every layer to this


@dataclass(frozen=True)
class LayerWeights:
    """One layer's attention parameters in the core's row-vector convention (W = nn.Linear weight transposed)."""

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    b_q: np.ndarray | None
    b_k: np.ndarray | None
    b_v: np.ndarray | None
    b_o: np.ndarray | None


@dataclass(frozen=True)
class LayerDiff:
    """What the page keeps of one layer's check: its two differences (the trace itself is rebuilt on demand)."""

    layer: int
    weights_diff: float
    output_diff: float

    @property
    def ok(self) -> bool:
        return max(self.weights_diff, self.output_diff) < TOLERANCE


@dataclass(frozen=True)
class LayerCheck:
    """The core run on one layer's own weights and input, and how far it is from the model."""

    layer: int
    trace: Trace
    weights_diff: float   # max |core weights − model attentions|
    output_diff: float    # max |core output − model attention.output.dense output|

    @property
    def ok(self) -> bool:
        return max(self.weights_diff, self.output_diff) < TOLERANCE


def layer_weights(loaded: Loaded, layer: int) -> LayerWeights:
    """One layer's W_Q, W_K, W_V, W_O and biases, float64, transposed to y = x @ W."""
    att = need_bert(loaded)[layer].attention

    def w(lin) -> tuple[np.ndarray, np.ndarray | None]:
        b = None if lin.bias is None else lin.bias.detach().double().numpy()
        return lin.weight.detach().double().numpy().T, b

    (wq, bq), (wk, bk), (wv, bv), (wo, bo) = (w(att.self.query), w(att.self.key), w(att.self.value),
                                              w(att.output.dense))
    return LayerWeights(wq, wk, wv, wo, bq, bk, bv, bo)


def check_layer(loaded: Loaded, r: Run, layer: int) -> LayerCheck:
    """Run mha_core.multi_head_attention on the layer's own input and weights; compare with the model."""
    p = layer_weights(loaded, layer)
    causal = bool(getattr(loaded.model.config, "is_decoder", False))
    x = r.layer_inputs[layer].astype(np.float64)  # the Run is float32; the check itself runs in float64
    trace = multi_head_attention(x, p.w_q, p.w_k, p.w_v, p.w_o, loaded.n_heads, causal=causal,
                                 b_q=p.b_q, b_k=p.b_k, b_v=p.b_v, b_o=p.b_o)
    return LayerCheck(layer, trace, float(np.max(np.abs(trace.weights - r.attentions[layer]))),
                      float(np.max(np.abs(trace.output - r.attn_outputs[layer]))))


def check_all(loaded: Loaded, r: Run) -> list[LayerCheck]:
    """``check_layer`` for every layer."""
    return [check_layer(loaded, r, i) for i in range(loaded.n_layers)]


def check_diffs(loaded: Loaded, r: Run) -> list[LayerDiff]:
    """Every layer's differences, one layer's trace in memory at a time (~3 MiB at 128 pieces, not ~20 for six)."""
    out = []
    for i in range(loaded.n_layers):
        c = check_layer(loaded, r, i)
        out.append(LayerDiff(i, c.weights_diff, c.output_diff))
    return out

