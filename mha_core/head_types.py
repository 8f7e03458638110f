"""What a real model's heads measurably do on one sentence: every head's scores for each head type, a label named
only after a measured pattern, top-heads rankings, and the "attends to this word" probe over word pieces.

Pure numpy over a run's attention weights (L, H, n, n): nothing here loads or runs a model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha_core.errors import LabError

HEAD_TYPES = ("previous", "next", "self", "sink", "broad", "focused")
LABEL_SHARE = 0.5                     # a head is named after a pattern that holds at least half its attention
BROAD_ENTROPY = 0.8                   # … or "broad" when its rows are this spread out (1 = uniform)


@dataclass(frozen=True)
class HeadStats:
    """Every head's score for each head type, as (L, H) arrays (see ``head_stats`` for formulas)."""

    previous: np.ndarray
    next: np.ndarray
    own: np.ndarray       # weight a token gives itself (head type "self")
    sink: np.ndarray
    entropy: np.ndarray   # normalised to 0..1 (1 = uniform over the sentence)

    def score(self, kind: str) -> np.ndarray:
        """The (L, H) score whose top heads are heads of ``kind`` (focused = low entropy)."""
        if kind == "broad":
            return self.entropy
        if kind == "focused":
            return 1.0 - self.entropy
        if kind == "self":
            return self.own
        return getattr(self, kind)


@dataclass(frozen=True)
class HeadLabel:
    """What one head measurably does on a sentence: a pattern named in HEAD_TYPES (or "mixed") and its share."""

    kind: str      # "previous", "next", "self", "sink", "broad" or "mixed"
    value: float   # the pattern's mean share of attention (for "broad": the normalised entropy)


@dataclass(frozen=True)
class RankedHead:
    """One row of a top-heads table."""

    layer: int
    head: int
    score: float


def head_stats(attn: np.ndarray, special: np.ndarray, punct: np.ndarray) -> HeadStats:
    """Scores of every head from attentions (L, H, n, n); rows are the ordinary tokens i (not [CLS]/[SEP]).

    previous = mean_i A[i, i−1] (i ≥ 1);  next = mean_i A[i, i+1] (i ≤ n−2);  self = mean_i A[i, i];
    sink = mean_i Σ_{j special or punctuation} A[i, j];  entropy = mean_i (−Σ_j A[i,j] log A[i,j]) / log n.
    """
    n = attn.shape[-1]
    rows = np.flatnonzero(~special)
    if rows.size == 0:
        rows = np.arange(n)
    prev_rows, next_rows = rows[rows >= 1], rows[rows <= n - 2]
    previous = attn[..., prev_rows, prev_rows - 1].mean(-1) if prev_rows.size else np.zeros(attn.shape[:2])
    nxt = attn[..., next_rows, next_rows + 1].mean(-1) if next_rows.size else np.zeros(attn.shape[:2])
    own = attn[..., rows, rows].mean(-1)
    sinks = special | punct
    sink = attn[..., sinks].sum(-1)[..., rows].mean(-1)  # the few sink columns first: no copy of every row
    contiguous = rows.size and rows[-1] - rows[0] + 1 == rows.size  # the usual [CLS] … [SEP]: a view, not a copy
    a = attn[..., rows[0]:rows[-1] + 1, :] if contiguous else attn[..., rows, :]
    logs = np.maximum(a, 1e-12)  # one temporary of a's size (at 512 pieces a is 72 MiB): the log is taken in place
    np.log(logs, out=logs)
    ent = -np.einsum("...ij,...ij->...", a, logs, dtype=np.float64) / rows.size / max(np.log(n), 1e-12)
    return HeadStats(previous=previous, next=nxt, own=own, sink=sink, entropy=ent)


def head_label(stats: HeadStats, layer: int, head: int) -> HeadLabel:
    """Name a head after what it measurably does: the pattern holding ≥ LABEL_SHARE of its attention, else
    "broad" when its rows are spread (entropy ≥ BROAD_ENTROPY), else "mixed" — never a function it was not shown to do.
    """
    shares = {k: float(stats.score(k)[layer, head]) for k in ("previous", "next", "self", "sink")}
    kind = max(shares, key=shares.__getitem__)
    if shares[kind] >= LABEL_SHARE:
        return HeadLabel(kind, shares[kind])
    entropy = float(stats.entropy[layer, head])
    if entropy >= BROAD_ENTROPY:
        return HeadLabel("broad", entropy)
    return HeadLabel("mixed", shares[kind])


def top_heads(score: np.ndarray, k: int = 5) -> list[RankedHead]:
    """The ``k`` heads with the highest score, best first."""
    order = np.argsort(-score, axis=None, kind="stable")[:k]
    return [RankedHead(int(i // score.shape[1]), int(i % score.shape[1]), float(score.flat[i])) for i in order]


def word_pieces(tokens: tuple[str, ...], word: str) -> list[int]:
    """Indices of the pieces of the first whole word equal to ``word`` (case-insensitive), or []."""
    target = word.lower()
    i = 0
    while i < len(tokens):
        j = i + 1
        while j < len(tokens) and tokens[j].startswith("##"):
            j += 1
        text = "".join(t.removeprefix("##") for t in tokens[i:j]).lstrip("Ġ▁").lower()
        if text == target or (len(tokens[i]) == 1 and tokens[i].lower() == target):
            return list(range(i, j))
        for c in range(i, j):  # a Chinese model: one character per token
            if tokens[c].lower() == target:
                return [c]
        i = j
    return []


def word_span(tokens: tuple[str, ...], i: int) -> list[int]:
    """Token i and the "##" pieces that continue its word."""
    j = i + 1
    while j < len(tokens) and tokens[j].startswith("##"):
        j += 1
    return list(range(i, j))


def word_scores(attn: np.ndarray, source: int, word: list[int]) -> np.ndarray:
    """(L, H): attention from token ``source`` to the pieces of ``word``, summed over the pieces."""
    if not word or source in word:
        raise LabError("pick_distinct")
    return attn[:, :, source, word].sum(-1)

