"""Sentences for driving the real-model page: new ones, of a known length in word pieces."""

from __future__ import annotations

import random

# Words that are one word piece each for MiniLM's uncased WordPiece: 30 of them, with [CLS] and [SEP], are 32 pieces.
WORDS = ("the a cat dog sat ran on under mat tree because it was tired happy small big red blue old new house car "
         "road park river city day night boy girl man woman book table chair door window").split()


def fresh_sentence(seed: str, n_words: int = 30) -> str:
    """A sentence no earlier move typed (so no cache has its result): ``n_words`` one-piece words drawn by ``seed``."""
    rnd = random.Random(seed)
    return " ".join(rnd.choice(WORDS) for _ in range(n_words))
