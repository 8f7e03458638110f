"""The hand-sized worked example: n = 3 tokens, d_model = 4, h = 2 heads of d_head = 2, small integer weights.

The inputs are data, chosen so that every score QKᵀ is a small integer and, above all, so that the two heads look
at *different other tokens* (the point of having several heads): head 1 puts its largest weight on the previous
token (the first token, which has none, on itself), head 2 on "mice" from every token. Every number the handout
prints from them is a field of the ``Trace`` that ``mha_core.multi_head_attention`` returns, or ``exp`` of its
scaled scores (the table a student needs to do the softmax by hand).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha_core.attention import Trace, multi_head_attention

N_HEADS = 2
# Row-vector convention, as in the core: Q = X @ W^Q. Entries in {-1, 0, 1, 2}. Each token is one-hot in the first
# three columns; the fourth column (1 for every token) lets W^Q give all queries a shared part.
X = ((1, 0, 0, 1),
     (0, 1, 0, 1),
     (0, 0, 1, 1))
# Columns 1-2 are head 1, columns 3-4 head 2. Head 1: q(cats) = 2·k(cats), q(chase) = 2·k(cats),
# q(mice) = 2·k(chase), so each token's query matches the previous token's key. Head 2: every query has a positive
# dot product with k(mice) = (2, 1), larger than with the other keys.
W_Q = ((2, 0, 0, 0),
       (2, 0, 0, 1),
       (0, 2, -1, 1),
       (0, 0, 1, 0))
W_K = ((1, 0, 0, 0),
       (0, 1, 1, 0),
       (0, 0, 2, 1),
       (0, 0, 0, 0))
W_V = ((1, 0, 0, 1),
       (0, 1, 1, 0),
       (1, 1, 2, 0),
       (0, 0, 0, 0))
W_O = ((1, 0, 0, 0),
       (0, 0, 1, 0),
       (0, 1, 0, 0),
       (0, 0, 1, -1))
DECIMALS = 2


@dataclass(frozen=True)
class Worked:
    """The example's inputs and the core's trace of them, plus e^s of every scaled score (for the softmax)."""

    x: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    trace: Trace

    @property
    def exp_scores(self) -> np.ndarray:
        """(h, n, n) e^s of the scaled scores: softmax by hand is e^s / (the row's sum of e^s)."""
        return np.exp(self.trace.scores)

    def favourite(self) -> np.ndarray:
        """(h, n): for each head and query, the key (token index) with the largest weight."""
        return self.trace.weights.argmax(axis=-1)

    def exp_table(self) -> tuple[tuple[float, float], ...]:
        """(s, e^s) for each distinct scaled score, rounded as printed, ascending: the student's tiny e^x table."""
        pairs = {round(float(s), DECIMALS): (float(s), float(e))
                 for s, e in zip(self.trace.scores.ravel(), self.exp_scores.ravel(), strict=True)}
        return tuple(sorted(pairs.values()))


def worked_example() -> Worked:
    """Run the example through the core (float64, no mask)."""
    x, w_q, w_k, w_v, w_o = (np.array(m, dtype=float) for m in (X, W_Q, W_K, W_V, W_O))
    return Worked(x, w_q, w_k, w_v, w_o, multi_head_attention(x, w_q, w_k, w_v, w_o, N_HEADS))


def fmt(value: float) -> str:
    """How the handout prints a number: whole numbers as integers, others with two decimals ("-0.00" never)."""
    rounded = round(float(value), DECIMALS)
    if abs(rounded - round(rounded)) < 10 ** -(DECIMALS + 3):
        return str(int(round(rounded)))
    return f"{rounded:.{DECIMALS}f}"


def fmt_rows(matrix: np.ndarray) -> tuple[tuple[str, ...], ...]:
    """A matrix as printed: whole numbers when every entry is one (X, the weights, Q, K, V, the raw scores),
    otherwise every entry with two decimals, so a column reads evenly ("1.00", not "1", beside "1.67")."""
    m = np.atleast_2d(np.asarray(matrix, dtype=float))
    whole = bool(np.all(np.abs(m - np.round(m)) < 1e-9))
    return tuple(tuple(fmt(v) if whole else f"{round(float(v), DECIMALS):.{DECIMALS}f}" for v in row) for row in m)
