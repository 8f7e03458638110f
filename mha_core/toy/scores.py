"""What each head does, from its attention pattern alone: pure numpy, so tests can feed hand-made patterns.

Every score takes ``attn`` of shape (..., B, n, n) -- any leading axes (layers, heads), then B
sequences, query rows i and key columns j, causal rows summing to 1 -- and averages over the
last three axes, returning an array of the leading shape (a float for a single head).

Scores (A = one sequence's attention, queries i = 1 .. n-1 unless stated, averaged over the
B sequences too):

* previous-token  = mean_i A[i, i-1]. A uniform causal pattern A[i, j] = 1/(i+1) scores
  (1/(n-1)) * sum_{i=1}^{n-1} 1/(i+1) = (H_n - 1)/(n - 1), H_n the n-th harmonic number.
* induction       = mean over queries i in ``query_mask`` (default all) that have an earlier
  occurrence of their token, of sum_{j in S_i} A[i, j], with S_i = {m+1 : m < i, tok[m] = tok[i]}
  (the positions right after earlier occurrences of the current token).
* first-token     = mean_i A[i, 0] (the "attention sink").
* self            = mean_i A[i, i].
* pattern         = mean over queries i in ``queries`` of sum_{j in K_i} A[i, j], for any marked keys K_i
  (``keys``, e.g. where a task's answer sits): induction is the pattern K_i = S_i.
* entropy         = mean_i -sum_j A[i, j] ln A[i, j] in nats; ``entropy_norm`` divides each row
  by ln(i+1), its maximum, so 0 = one key, 1 = uniform over all visible keys.

Query 0 is excluded from all but induction because it can only look at itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "PREVIOUS_TOKEN_MIN", "INDUCTION_MIN", "FIRST_TOKEN_MIN", "SELF_MIN", "BROAD_ENTROPY_MIN", "LABELS",
    "HeadScores", "ScoreTable", "previous_token_score", "first_token_score", "self_score", "entropy_score",
    "induction_keys", "induction_score", "pattern_score", "label_head", "score_attention",
]

PREVIOUS_TOKEN_MIN = 0.4  # previous-token score at or above this -> "previous_token"
INDUCTION_MIN = 0.5       # induction score at or above this -> "induction" (checked first)
FIRST_TOKEN_MIN = 0.5     # first-token score at or above this -> "first_token"
SELF_MIN = 0.5            # self score at or above this -> "self"
BROAD_ENTROPY_MIN = 0.8   # normalised entropy at or above this -> "broad"
LABELS = ("induction", "previous_token", "first_token", "self", "broad", "mixed")  # in the order checked


def _check(attn: np.ndarray) -> np.ndarray:
    attn = np.asarray(attn, dtype=np.float64)
    if attn.ndim < 3 or attn.shape[-1] != attn.shape[-2] or attn.shape[-1] < 2:
        raise ValueError(f"attention must be (..., B, n, n) with n >= 2; got {attn.shape}")
    return attn


def _mean_rows(per_row: np.ndarray) -> np.ndarray:
    """(..., B, n-1) -> (...): mean over sequences and queries 1..n-1."""
    return per_row.mean(axis=(-2, -1))


def previous_token_score(attn: np.ndarray) -> np.ndarray:
    """mean_i A[i, i-1] over queries 1..n-1: 1.0 for a head that always looks one step back."""
    attn = _check(attn)
    return _mean_rows(np.diagonal(attn, offset=-1, axis1=-2, axis2=-1))


def first_token_score(attn: np.ndarray) -> np.ndarray:
    """mean_i A[i, 0] over queries 1..n-1: mass parked on the first position."""
    attn = _check(attn)
    return _mean_rows(attn[..., 1:, 0])


def self_score(attn: np.ndarray) -> np.ndarray:
    """mean_i A[i, i] over queries 1..n-1: mass a query keeps on its own position."""
    attn = _check(attn)
    return _mean_rows(np.diagonal(attn, axis1=-2, axis2=-1)[..., 1:])


def entropy_score(attn: np.ndarray, normalized: bool = False) -> np.ndarray:
    """mean_i of row entropy in nats over queries 1..n-1; ``normalized`` divides row i by ln(i+1)."""
    attn = _check(attn)[..., 1:, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.sum(np.where(attn > 0, attn * np.log(attn), 0.0), axis=-1)
    if normalized:
        h = h / np.log(np.arange(2, attn.shape[-1] + 1))
    return _mean_rows(h)


def induction_keys(tokens: np.ndarray) -> np.ndarray:
    """(B, n) ids -> (B, n, n) bool: key j is marked for query i when tok[j-1] == tok[i] and j-1 < i."""
    tokens = np.asarray(tokens)
    n = tokens.shape[-1]
    same = tokens[..., :, None] == tokens[..., None, :]       # same[i, m]: tok[i] == tok[m]
    earlier = np.tril(np.ones((n, n), dtype=bool), k=-1)      # m < i
    keys = np.zeros(same.shape, dtype=bool)
    keys[..., :, 1:] = (same & earlier)[..., :, :-1]          # key j = m + 1
    return keys


def induction_score(attn: np.ndarray, tokens: np.ndarray, query_mask: np.ndarray | None = None) -> np.ndarray:
    """Mean over eligible queries of the mass on positions right after earlier copies of the query's token.

    Eligible: ``query_mask`` (B, n) is True (default: every query) and S_i is not empty.
    """
    attn = _check(attn)
    keys = induction_keys(tokens)
    eligible = keys.any(axis=-1)
    if query_mask is not None:
        eligible &= np.asarray(query_mask, dtype=bool)
    if not eligible.any():
        raise ValueError("no query has an earlier occurrence of its token: induction score undefined")
    per_query = np.sum(attn * keys, axis=-1)                   # (..., B, n)
    return np.sum(per_query * eligible, axis=(-2, -1)) / eligible.sum()


def pattern_score(attn: np.ndarray, keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Mean over the marked queries (B, n) of the mass on their marked keys (B, n, n): 1.0 = always there."""
    attn = _check(attn)
    keys, queries = np.asarray(keys, dtype=bool), np.asarray(queries, dtype=bool)
    if keys.shape != attn.shape[-3:] or queries.shape != attn.shape[-3:-1] or not queries.any():
        raise ValueError(f"keys {keys.shape} / queries {queries.shape} do not fit attention {attn.shape}")
    per_query = np.sum(attn * keys, axis=-1)                   # (..., B, n)
    return np.sum(per_query * queries, axis=(-2, -1)) / queries.sum()


def label_head(previous_token: float, induction: float, first_token: float, self_: float,
               entropy_norm: float) -> str:
    """A stable label id from the thresholds above, checked in the order of ``LABELS``."""
    if induction >= INDUCTION_MIN:
        return "induction"
    if previous_token >= PREVIOUS_TOKEN_MIN:
        return "previous_token"
    if first_token >= FIRST_TOKEN_MIN:
        return "first_token"
    if self_ >= SELF_MIN:
        return "self"
    if entropy_norm >= BROAD_ENTROPY_MIN:
        return "broad"
    return "mixed"


@dataclass(frozen=True)
class HeadScores:
    """All scores of one head, and the label they give."""

    layer: int
    head: int
    previous_token: float
    induction: float
    first_token: float
    self_token: float
    entropy: float
    entropy_norm: float
    label: str


@dataclass(frozen=True)
class ScoreTable:
    """Scores of every head of a model, layer-major."""

    heads: tuple[HeadScores, ...]
    n_layers: int
    n_heads: int

    def matrix(self, score: str) -> np.ndarray:
        """(layers, heads) array of one score field, e.g. ``matrix("induction")``."""
        out = np.zeros((self.n_layers, self.n_heads))
        for s in self.heads:
            out[s.layer, s.head] = getattr(s, score)
        return out

    def labelled(self, label: str) -> list[tuple[int, int]]:
        """(layer, head) of every head carrying ``label``."""
        return [(s.layer, s.head) for s in self.heads if s.label == label]

    def best(self, score: str, layer: int | None = None) -> HeadScores:
        """The head with the highest ``score`` (optionally within one layer)."""
        pool = [s for s in self.heads if layer is None or s.layer == layer]
        return max(pool, key=lambda s: getattr(s, score))


def score_attention(attn: np.ndarray, tokens: np.ndarray, query_mask: np.ndarray | None = None) -> ScoreTable:
    """Score every head from (layers, heads, B, n, n) attention on ``tokens`` (B, n).

    ``query_mask`` restricts the induction score (use the data's repeat mask); others use all queries.
    """
    attn = _check(attn)
    if attn.ndim != 5:
        raise ValueError(f"expected (layers, heads, B, n, n) attention; got {attn.shape}")
    prev, first, self_ = previous_token_score(attn), first_token_score(attn), self_score(attn)
    ent, ent_n = entropy_score(attn), entropy_score(attn, normalized=True)
    ind = induction_score(attn, tokens, query_mask)
    heads = tuple(
        HeadScores(
            layer=layer, head=head,
            previous_token=float(prev[layer, head]), induction=float(ind[layer, head]),
            first_token=float(first[layer, head]), self_token=float(self_[layer, head]),
            entropy=float(ent[layer, head]), entropy_norm=float(ent_n[layer, head]),
            label=label_head(prev[layer, head], ind[layer, head], first[layer, head],
                             self_[layer, head], ent_n[layer, head]),
        )
        for layer in range(attn.shape[0]) for head in range(attn.shape[1])
    )
    return ScoreTable(heads=heads, n_layers=attn.shape[0], n_heads=attn.shape[1])
