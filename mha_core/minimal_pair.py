"""A minimal pair for one head: change one word so that a pronoun means the other noun, and see whether the
head's attention follows it.

An attention map that sends "it" to "animal" invites the reading "this head resolves coreference". A minimal
pair (in the spirit of the Winograd schemas, Levesque et al., 2012) tests it: "…because it was too tired" /
"…because it was too wide" differ in one word, and "it" means the animal in one and the street in the other.
A head that resolves the pronoun must move its weight; a head that keeps it on the same noun does something
else, and is labelled by that — what it measurably does. Pure functions over attention arrays (L, H, n, n).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mha_core.errors import LabError
from mha_core.head_types import word_pieces

VERDICTS = ("subject", "same", "follows", "against")


@dataclass(frozen=True)
class MinimalPair:
    """Two sentences that differ in one word, and the noun the pronoun means in each (a reader's answer)."""

    sentences: tuple[str, str]
    pronoun: str
    nouns: tuple[str, str]        # the two nouns the pronoun could mean; nouns[0] is the subject of the sentence
    referents: tuple[int, int]    # index into ``nouns``: what the pronoun means in sentence 0 and in sentence 1
    changed: tuple[str, str]      # the one word that differs


PAIRS: tuple[MinimalPair, ...] = (
    MinimalPair(("The animal didn't cross the street because it was too tired.",
                 "The animal didn't cross the street because it was too wide."),
                "it", ("animal", "street"), (0, 1), ("tired", "wide")),
    MinimalPair(("The trophy doesn't fit into the suitcase because it is too big.",
                 "The trophy doesn't fit into the suitcase because it is too small."),
                "it", ("trophy", "suitcase"), (0, 1), ("big", "small")),
)


@dataclass(frozen=True)
class PairSide:
    """One sentence of the pair through the model: where the pronoun and the nouns are, and every head's row."""

    sentence: str
    tokens: tuple[str, ...]
    pronoun: int                  # token index of the pronoun
    nouns: tuple[tuple[int, ...], tuple[int, ...]]   # token indices of each noun's pieces
    referent: int                 # 0 or 1: which noun the pronoun means here
    rows: np.ndarray              # (L, H, n): every head's attention from the pronoun
    to_nouns: np.ndarray          # (L, H, 2): weight from the pronoun to each noun (its pieces summed)


@dataclass(frozen=True)
class HeadOnPair:
    """One head on both sentences: its weight on each noun, the noun it prefers, and what that measurably is."""

    layer: int
    head: int
    weights: np.ndarray           # (2 sentences, 2 nouns)
    preferred: tuple[int, int]    # the noun with more weight, in sentence 0 and in sentence 1
    verdict: str                  # one of VERDICTS (see ``verdict_of``)


@dataclass(frozen=True)
class PairCensus:
    """Every head of the model on the pair, counted by verdict."""

    total: int
    counts: dict[str, int]        # verdict -> number of heads
    follows_best: float           # the largest weight on the referent, in the weaker sentence, of a head that follows


def side(attentions: np.ndarray, tokens: Sequence[str], pair: MinimalPair, i: int) -> PairSide:
    """Sentence ``i`` of ``pair`` from the model's attentions (L, H, n, n) and its tokens; LabError if the
    tokenizer did not keep the pronoun or a noun as a word."""
    tokens = tuple(tokens)
    pro = word_pieces(tokens, pair.pronoun)
    nouns = tuple(tuple(word_pieces(tokens, w)) for w in pair.nouns)
    if not pro or not all(nouns):
        raise LabError("pair_words_missing", words=", ".join((pair.pronoun, *pair.nouns)))
    rows = attentions[:, :, pro[0], :]
    to_nouns = np.stack([rows[..., list(ix)].sum(-1) for ix in nouns], axis=-1)
    return PairSide(pair.sentences[i], tokens, pro[0], nouns, pair.referents[i], rows, to_nouns)


def verdict_of(preferred: tuple[int, int], referents: tuple[int, int]) -> str:
    """"subject": noun 0 in both sentences; "same": noun 1 in both; "follows": the referent in both;
    "against": the other noun in both (the referents differ, so these four are all the cases)."""
    if preferred[0] == preferred[1]:
        return "subject" if preferred[0] == 0 else "same"
    return "follows" if preferred == referents else "against"


def compare(sides: tuple[PairSide, PairSide], layer: int, head: int) -> HeadOnPair:
    """Head (layer, head) on both sentences of a pair."""
    w = np.stack([s.to_nouns[layer, head] for s in sides])
    preferred = (int(np.argmax(w[0])), int(np.argmax(w[1])))
    return HeadOnPair(layer, head, w, preferred, verdict_of(preferred, (sides[0].referent, sides[1].referent)))


def census(sides: tuple[PairSide, PairSide]) -> PairCensus:
    """Every head's verdict on the pair, counted; and how strongly the best head that follows does so."""
    n_layers, n_heads, _ = sides[0].to_nouns.shape
    heads = [compare(sides, layer, head) for layer in range(n_layers) for head in range(n_heads)]
    counts = {v: sum(h.verdict == v for h in heads) for v in VERDICTS}
    best = max((min(h.weights[0, sides[0].referent], h.weights[1, sides[1].referent])
                for h in heads if h.verdict == "follows"), default=0.0)
    return PairCensus(len(heads), counts, float(best))


def most_referent_like(sides: tuple[PairSide, PairSide]) -> tuple[int, int]:
    """The head that looks most like a "coreference head" on the first sentence alone: the largest weight from
    the pronoun to its referent there — the head a one-sentence attention probe would pick."""
    score = sides[0].to_nouns[..., sides[0].referent]
    layer, head = np.unravel_index(int(np.argmax(score)), score.shape)
    return int(layer), int(head)
