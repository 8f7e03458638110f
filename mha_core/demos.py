"""The live demonstrations that refute the misconceptions and explain the mechanism.

Each returns numbers computed from the same core the pages use; tests assert the claims from these
numbers (nothing is hard-coded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha_core.attention import multi_head_attention, softmax, split_heads
from mha_core.counts import param_counts
from mha_core.errors import LabError
from mha_core.inputs import (
    HEAD_KINDS,
    content_values,
    embed,
    illustrative_weights,
    lookup_head,
    random_weights,
    tokenize,
)


@dataclass(frozen=True)
class EnsembleCheck:
    """Misconception 1: head i's Q computed as a column block of one W_Q equals the head's own Q."""

    n_heads: int
    d_head: int
    max_diff_per_head: tuple[float, ...]   # |X @ W_Q[:, block i] − q_heads[i]|, per head
    inputs_identical: bool                  # every head read the very same X
    params_multi: int
    params_single: int


def ensemble_check(sentence: str, d_model: int, n_heads: int, seed: int = 0) -> EnsembleCheck:
    """Compute every head's queries twice — from its block of W_Q, and through the split — and compare."""
    d_head = d_model // n_heads
    tokens = tokenize(sentence).tokens
    x = embed(tokens, d_model)
    w = random_weights(d_model, n_heads, d_head, seed)
    trace = multi_head_attention(x, w.w_q, w.w_k, w.w_v, w.w_o, n_heads)
    diffs = tuple(float(np.max(np.abs(x @ w.w_q[:, i * d_head:(i + 1) * d_head] - trace.q_heads[i])))
                  for i in range(n_heads))
    return EnsembleCheck(
        n_heads, d_head, diffs, inputs_identical=bool(np.shares_memory(trace.x, x) or np.array_equal(trace.x, x)),
        params_multi=param_counts(d_model, n_heads)["total"], params_single=param_counts(d_model, 1)["total"],
    )


@dataclass(frozen=True)
class RankPoint:
    """One h at fixed d_model: each head's width and the rank of its n × n score matrix."""

    n_heads: int
    d_head: int
    n: int
    rank: int          # numerical rank of head 0's Q K^T (max over heads is the same bound)
    bound: int         # min(n, d_head): no head can exceed it


def score_ranks(d_model: int, n: int, seed: int = 0) -> list[RankPoint]:
    """Misconception 2: at fixed d_model, more heads → narrower heads → score matrices of lower rank."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d_model))
    points = []
    for h in [h for h in range(1, d_model + 1) if d_model % h == 0 and h <= 64]:
        d = d_model // h
        w = random_weights(d_model, h, d, seed)
        q, k = split_heads(x @ w.w_q, h), split_heads(x @ w.w_k, h)
        rank = max(int(np.linalg.matrix_rank(q[i] @ k[i].T)) for i in range(min(h, 4)))
        points.append(RankPoint(h, d, n, rank, min(n, d)))
    return points


@dataclass(frozen=True)
class TwoTargets:
    """Mechanism: one softmax row can hold one distribution; two things at once need two heads.

    The query (say a verb) needs two tokens at once (its subject and its object). ``one_head`` is a single
    head of width 2·d_head whose score is the sum of the two questions (same parameters as the two heads
    together); ``two_heads`` keeps the questions apart.
    """

    tokens: tuple[str, ...]
    query: int
    targets: tuple[int, int]
    one_head: np.ndarray           # (n,) attention of the query in the single wide head
    two_heads: np.ndarray          # (2, n) attention of the query in each of the two heads
    recover_one: float             # relative error recovering both targets' values from the output
    recover_two: float


def find_token(tokens: tuple[str, ...], word: str) -> int:
    """Position of the first token equal to ``word`` (case-insensitive); LabError when it is not there."""
    for i, tok in enumerate(tokens):
        if tok.lower() == word.strip().lower():
            return i
    raise LabError("why_word", word=word)


def role_positions(sentence: str, query: str, first: str, second: str) -> tuple[int, tuple[int, int]]:
    """Where a query word and its two targets (e.g. a verb, its subject, its object) sit in the sentence."""
    tokens = tokenize(sentence).tokens
    return find_token(tokens, query), (find_token(tokens, first), find_token(tokens, second))


def two_targets(sentence: str, query: int, targets: tuple[int, int], d_head: int = 8, seed: int = 0) -> TwoTargets:
    """Ask 'where is target 1?' and 'where is target 2?' with one wide head vs two heads (same budget).

    Each question is a hand-built head in which the query token looks for one target token by its
    meaning (``lookup_head``), as a trained head might look from a verb to its subject or its object.
    """
    tokens = tokenize(sentence).tokens
    n = len(tokens)
    if n < 3:
        raise LabError("why_short")
    if not (0 <= query < n and all(0 <= t < n for t in targets)) or len({query, *targets}) < 3:
        raise LabError("why_targets")
    if tokens[targets[0]].lower() == tokens[targets[1]].lower():
        raise LabError("why_targets")
    d_model = 4 * d_head
    heads = [lookup_head(d_model, d_head, tokens[query], tokens[t]) for t in targets]
    w_v = content_values(d_model, d_head, seed)                  # both heads read the same content projection

    x = embed(tokens, d_model)
    q_two = np.hstack([heads[0][0], heads[1][0]])
    k_two = np.hstack([heads[0][1], heads[1][1]])
    v = np.hstack([w_v, w_v])
    eye = np.eye(2 * d_head, d_model)
    two = multi_head_attention(x, q_two, k_two, v, eye, 2)
    # one head of width 2·d_head: q·k = q_a·k_a + q_b·k_b, scaled by its own √(2·d_head)
    one = multi_head_attention(x, q_two * np.sqrt(2), k_two, v, eye, 1)
    values = x[list(targets)] @ w_v                                # what each target "says"
    one_out = one.head_outputs[0][query].reshape(2, d_head)        # its 2·d_head numbers, as two halves
    two_out = np.stack([two.head_outputs[0][query], two.head_outputs[1][query]])
    return TwoTargets(tokens, query, tuple(targets), one.weights[0][query], two.weights[:, query, :],
                      recover_one=_recovery(one_out[0], values), recover_two=_recovery(two_out, values))


def _recovery(outputs: np.ndarray, values: np.ndarray) -> float:
    """Relative error of the best linear read-out of both target values from the head outputs."""
    outputs = np.atleast_2d(outputs)
    coef, *_ = np.linalg.lstsq(outputs.T, values.T, rcond=None)
    return float(np.linalg.norm(outputs.T @ coef - values.T) / np.linalg.norm(values))


@dataclass(frozen=True)
class OneHead:
    """The prerequisite, one head on one query: scores, weights and the weighted sum of values."""

    query: int
    scores: np.ndarray     # (n,) q·k_j / √d
    weights: np.ndarray    # (n,) softmax(scores)
    output: np.ndarray     # (d,) Σ_j w_j v_j
    values: np.ndarray     # (n, d)


def one_head(q: np.ndarray, k: np.ndarray, v: np.ndarray, query: int, temperature: float = 1.0) -> OneHead:
    """Scaled dot-product attention for a single query, spelled out step by step."""
    scores = (k @ q[query]) / np.sqrt(q.shape[1]) / temperature
    weights = softmax(scores)
    return OneHead(query, scores, weights, weights @ v, v)


# The refresher opens on a head and a query whose weights are a real distribution (several tokens share
# the weight), not one token taking ~1.00: the point of softmax is that every key gets *some* weight.
REFRESHER_KIND = "local"


def refresher_query(n_tokens: int) -> int:
    """The refresher's first query: the middle token, so the local head's weight spreads to both sides."""
    return n_tokens // 2


@dataclass(frozen=True)
class SingleHead:
    """One hand-built head on a sentence: its Q, K, V (n × d) and token labels."""

    kind: str
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    tokens: tuple[str, ...]


def single_head(sentence: str, kind: str, d_head: int = 8) -> SingleHead:
    """The prerequisite's head: one illustrative head of the given kind (previous, same_word, …)."""
    tokens = tokenize(sentence).tokens
    d_model = 4 * d_head
    w = illustrative_weights(d_model, len(HEAD_KINDS), d_head)
    i = list(w.head_kinds).index(kind)
    block = slice(i * d_head, (i + 1) * d_head)
    x = embed(tokens, d_model)
    return SingleHead(kind, x @ w.w_q[:, block], x @ w.w_k[:, block], x @ w.w_v[:, block], tokens)


@dataclass(frozen=True)
class Snapshot:
    """Head scores of the toy model at one training step (misconception 3: roles emerge)."""

    step: int
    loss: float
    previous_token: np.ndarray   # (layers, heads)
    induction: np.ndarray        # (layers, heads)


def emergence(steps: int = 300, every: int = 25, seed: int = 0, n_seqs: int = 64) -> list[Snapshot]:
    """Train the toy model from random initialisation and score every head along the way."""
    from mha_core.toy import DEFAULT_RECIPE, held_out_batch, score_model, train  # lazy: loads torch

    config = DEFAULT_RECIPE.config
    batch = held_out_batch(config, n_seqs=n_seqs)
    shots: list[Snapshot] = []

    def snap(step: int, loss: float, model) -> None:
        table = score_model(model, batch)
        shots.append(Snapshot(step, float(loss), table.matrix("previous_token"), table.matrix("induction")))

    train(config, steps=steps, seed=seed, callback=snap, every=every)
    return shots
