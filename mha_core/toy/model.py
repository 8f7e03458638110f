"""A tiny causal transformer (attention-only by default) in which induction heads emerge.

Written in the style of nanoGPT's ``model.py``, with the attention maths of the numpy core
(split heads -> QK^T / sqrt(d_head) with a causal mask -> softmax -> merge -> W_O) so the
two can be compared number for number. There is **no LayerNorm**: each layer reads the raw
residual stream, so "the input of layer L" is one unambiguous matrix the page can show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from mha_core.errors import LabError
from mha_core.toy_config import ToyConfig

__all__ = ["ToyConfig", "ToyOutput", "LayerWeights", "ToyTransformer", "layer_weights", "full_head_mask"]


@dataclass(frozen=True)
class ToyOutput:
    """One forward pass: logits, and on request each layer's attention and input."""

    logits: torch.Tensor                  # (B, n, vocab)
    attn: torch.Tensor | None             # (B, layers, heads, n, n), rows sum to 1
    layer_inputs: list[torch.Tensor] | None  # layers x (B, n, d_model): what each attention layer reads


@dataclass(frozen=True)
class LayerWeights:
    """One attention layer in the numpy core's row-vector convention (``q = x @ w_q``)."""

    w_q: np.ndarray  # (d_model, h*d_head)
    w_k: np.ndarray  # (d_model, g*d_head)
    w_v: np.ndarray  # (d_model, g*d_head)
    w_o: np.ndarray  # (h*d_head, d_model)
    n_heads: int
    n_kv_heads: int  # g: K/V heads, each read by n_heads // g query heads


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention, grouped-query when ``cfg.n_kv_heads`` < ``cfg.n_heads`` (each K/V head
    serves a group of consecutive query heads, as ``mha_core.repeat_kv``); ``head_mask`` (h,) scales each query
    head's output before W_O."""

    def __init__(self, cfg: ToyConfig) -> None:
        super().__init__()
        self.n_heads, self.n_kv_heads, self.d_head = cfg.n_heads, cfg.kv_heads, cfg.d_head
        kv = cfg.kv_heads * cfg.d_head
        self.split_sizes = (cfg.d_model, kv, kv)
        self.c_attn = nn.Linear(cfg.d_model, cfg.d_model + 2 * kv, bias=False)  # [W_Q | W_K | W_V]
        self.c_proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)      # W_O
        self.register_buffer("mask", torch.tril(torch.ones(cfg.n_ctx, cfg.n_ctx, dtype=torch.bool)),
                             persistent=False)

    def forward(self, x: torch.Tensor, head_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        b, n, d = x.shape
        q, k, v = self.c_attn(x).split(self.split_sizes, dim=2)
        # split heads: column block i -> head i, as mha_core.split_heads
        q = q.view(b, n, self.n_heads, self.d_head).transpose(1, 2)                       # (B, h, n, d_head)
        k, v = (t.view(b, n, self.n_kv_heads, self.d_head).transpose(1, 2) for t in (k, v))  # (B, g, n, d_head)
        if self.n_kv_heads != self.n_heads:  # each K/V head serves h // g query heads (mha_core.repeat_kv)
            k, v = (t.repeat_interleave(self.n_heads // self.n_kv_heads, dim=1) for t in (k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d_head)
        scores = scores.masked_fill(~self.mask[:n, :n], float("-inf"))
        weights = F.softmax(scores, dim=-1)
        heads = weights @ v                                   # (B, h, n, d_head)
        if head_mask is not None:
            heads = heads * head_mask.view(1, -1, 1, 1)
        concat = heads.transpose(1, 2).reshape(b, n, d)        # merge heads
        return self.c_proj(concat), weights


class MLP(nn.Module):
    """nanoGPT's position-wise MLP (4x wide, GELU); only present when ``cfg.mlp``."""

    def __init__(self, cfg: ToyConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(cfg.d_model, 4 * cfg.d_model)
        self.c_proj = nn.Linear(4 * cfg.d_model, cfg.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    """Residual block without LayerNorm: x + attn(x), then x + mlp(x) if enabled."""

    def __init__(self, cfg: ToyConfig) -> None:
        super().__init__()
        self.attn = CausalSelfAttention(cfg)
        self.mlp = MLP(cfg) if cfg.mlp else None

    def forward(self, x: torch.Tensor, head_mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        out, weights = self.attn(x, head_mask)
        x = x + out
        if self.mlp is not None:
            x = x + self.mlp(x)
        return x, weights


class ToyTransformer(nn.Module):
    """Token + learned position embeddings, ``n_layers`` blocks, untied unembedding."""

    def __init__(self, cfg: ToyConfig) -> None:
        super().__init__()
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.wpe = nn.Embedding(cfg.n_ctx, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self._init_weights(torch.Generator().manual_seed(cfg.seed))

    def _init_weights(self, gen: torch.Generator) -> None:
        """Unit-variance embeddings, N(0, 1/fan_in) matrices, from a private generator.

        Without LayerNorm this keeps the residual stream and the attention scores O(1) at the start;
        nanoGPT's std 0.02 would leave every pattern uniform and training stuck on a long plateau.
        """
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif name.startswith(("wte", "wpe")):
                nn.init.normal_(p, 0.0, 1.0, generator=gen)
            else:
                nn.init.normal_(p, 0.0, 1.0 / math.sqrt(p.shape[1]), generator=gen)

    def forward(
        self,
        idx: torch.Tensor,
        head_mask: torch.Tensor | np.ndarray | None = None,
        return_attn: bool = False,
    ) -> ToyOutput:
        """Run ``idx`` (B, n) token ids; ``head_mask`` (layers, heads) of 0/1 switches heads off."""
        cfg = self.config
        if idx.ndim != 2 or not 1 <= idx.shape[1] <= cfg.n_ctx:
            raise LabError("toy_idx", n_ctx=cfg.n_ctx, shape=tuple(idx.shape))
        if int(idx.min()) < 0 or int(idx.max()) >= cfg.vocab_size:
            raise LabError("toy_vocab_range", top=cfg.vocab_size - 1, lo=int(idx.min()), hi=int(idx.max()))
        mask = None if head_mask is None else torch.as_tensor(head_mask, dtype=torch.float32)
        if mask is not None and tuple(mask.shape) != (cfg.n_layers, cfg.n_heads):
            raise LabError("toy_head_mask", want=(cfg.n_layers, cfg.n_heads), got=tuple(mask.shape))
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        attns, inputs = [], []
        for i, block in enumerate(self.blocks):
            if return_attn:
                inputs.append(x)
            x, w = block(x, None if mask is None else mask[i])
            attns.append(w)
        logits = self.lm_head(x)
        if not return_attn:
            return ToyOutput(logits=logits, attn=None, layer_inputs=None)
        return ToyOutput(logits=logits, attn=torch.stack(attns, dim=1), layer_inputs=inputs)


def full_head_mask(cfg: ToyConfig) -> np.ndarray:
    """(layers, heads) of ones: every head switched on."""
    return np.ones((cfg.n_layers, cfg.n_heads), dtype=np.float32)


def layer_weights(model: ToyTransformer, layer: int) -> LayerWeights:
    """Layer ``layer``'s W_Q, W_K, W_V, W_O as numpy, transposed from nn.Linear to ``y = x @ W``."""
    cfg = model.config
    if not 0 <= layer < cfg.n_layers:
        raise LabError("toy_layer", layer=layer, n=cfg.n_layers)
    attn = model.blocks[layer].attn
    w = attn.c_attn.weight.detach().cpu().numpy()  # (d_model + 2*g*d_head, d_model), rows = output features
    edges = np.cumsum(attn.split_sizes)[:-1]
    w_q, w_k, w_v = (part.T.copy() for part in np.split(w, edges, axis=0))
    w_o = attn.c_proj.weight.detach().cpu().numpy().T.copy()
    return LayerWeights(w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o, n_heads=cfg.n_heads, n_kv_heads=cfg.kv_heads)
