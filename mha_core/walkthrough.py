"""One call from the sidebar's settings to the Trace every pipeline page shows."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha_core.attention import Trace, multi_head_attention, softmax
from mha_core.inputs import Tokens, Weights, embed, make_weights, tokenize
from mha_core.settings import Settings


@dataclass(frozen=True)
class Walkthrough:
    """A sentence, the weights in use and the full trace of one forward pass."""

    tokens: Tokens
    weights: Weights
    trace: Trace

    @property
    def labels(self) -> list[str]:
        """Unique axis labels ("3 the"), so repeated tokens keep their own row."""
        return token_labels(self.tokens.tokens)


def token_labels(tokens: tuple[str, ...] | list[str]) -> list[str]:
    """Position-prefixed labels: charts would merge two rows that are both "the"."""
    return [f"{i} {tok}" for i, tok in enumerate(tokens)]


def build_walkthrough(s: Settings) -> Walkthrough:
    """Tokenise, embed, make weights, run ``multi_head_attention``; LabError on bad input."""
    tokens = tokenize(s.sentence)
    weights = make_weights(s.weight_mode, s.d_model, s.n_heads, s.d_head, s.seed)
    trace = multi_head_attention(
        embed(tokens.tokens, s.d_model), weights.w_q, weights.w_k, weights.w_v, weights.w_o,
        s.n_heads, causal=s.causal,
    )
    return Walkthrough(tokens, weights, trace)


def weights_without_scaling(trace: Trace) -> np.ndarray:
    """softmax(QK^T) with the 1/sqrt(d_head) left out (same mask): what scaling prevents."""
    raw = trace.raw_scores if trace.mask is None else np.where(trace.mask, trace.raw_scores, -np.inf)
    return softmax(raw, axis=-1)


def row_entropy(weights: np.ndarray) -> np.ndarray:
    """Entropy (nats) of each attention row: 0 = looks at one key, log n = looks everywhere."""
    p = np.clip(weights, 1e-12, 1.0)
    return -(weights * np.log(p)).sum(axis=-1)


def fuse_with_head_gains(trace: Trace, w_o: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """Concat(g_i · head_i) W^O: what the output becomes if W^O turns head i up or down by g_i."""
    scaled = trace.head_outputs * np.asarray(gains, dtype=float)[:, None, None]
    return scaled.transpose(1, 0, 2).reshape(trace.concat.shape) @ w_o


def head_contributions(trace: Trace, w_o: np.ndarray) -> np.ndarray:
    """(h, n, d_model): head i's share head_i @ W_O[rows of head i]; they sum to the output."""
    d = trace.d_head
    return np.stack([trace.head_outputs[i] @ w_o[i * d:(i + 1) * d] for i in range(trace.n_heads)])


def recovery_error(trace: Trace, fused: np.ndarray, fuse_matrix: np.ndarray) -> float:
    """Relative error of the best linear recovery of every head's output from a fused result.

    Least squares: find C with C · fuse_matrix ≈ fused. With a full-rank square W^O the heads come
    back exactly; with a plain average they cannot.
    """
    if fuse_matrix.shape[0] == fuse_matrix.shape[1]:
        recovered = np.linalg.solve(fuse_matrix.T, fused.T).T
    else:
        recovered = np.linalg.lstsq(fuse_matrix.T, fused.T, rcond=None)[0].T
    return float(np.linalg.norm(recovered - trace.concat) / max(np.linalg.norm(trace.concat), 1e-12))


def averaging_matrix(n_heads: int, d_head: int) -> np.ndarray:
    """(h·d, d): the fixed 'fusion' that averages the heads: mean_i head_i = concat @ A."""
    return np.vstack([np.eye(d_head) / n_heads] * n_heads)


@dataclass(frozen=True)
class ScaleDemo:
    """Scores of unit-variance random q, k (as after LayerNorm at init), with and without 1/sqrt(d)."""

    d_head: int
    raw_std: float
    scaled_std: float
    max_weight_raw: float
    max_weight_scaled: float
    entropy_raw: float
    entropy_scaled: float


def scale_demo(d_head: int, n: int = 16, samples: int = 64, seed: int = 0) -> ScaleDemo:
    """Why 1/sqrt(d_head): q·k of unit-variance vectors has std sqrt(d_head), so softmax saturates."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((samples, n, d_head))
    k = rng.standard_normal((samples, n, d_head))
    raw = q @ np.swapaxes(k, -1, -2)
    scaled = raw / np.sqrt(d_head)
    w_raw, w_scaled = softmax(raw), softmax(scaled)
    return ScaleDemo(
        d_head=d_head, raw_std=float(raw.std()), scaled_std=float(scaled.std()),
        max_weight_raw=float(w_raw.max(-1).mean()), max_weight_scaled=float(w_scaled.max(-1).mean()),
        entropy_raw=float(row_entropy(w_raw).mean()), entropy_scaled=float(row_entropy(w_scaled).mean()),
    )
