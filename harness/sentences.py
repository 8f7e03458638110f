"""Sentences for driving the app's pages: new ones for the real-model page, of a known length in word pieces, and the
two the attend page's sentence box goes back and forth between."""

from __future__ import annotations

import random

from mha_core.i18n import translate

# Words that are one word piece each for MiniLM's uncased WordPiece: 30 of them, with [CLS] and [SEP], are 32 pieces.
WORDS = ("the a cat dog sat ran on under mat tree because it was tired happy small big red blue old new house car "
         "road park river city day night boy girl man woman book table chair door window").split()


def fresh_sentence(seed: str, n_words: int = 30) -> str:
    """A sentence no earlier move typed (so no cache has its result): ``n_words`` one-piece words drawn by ``seed``."""
    rnd = random.Random(seed)
    return " ".join(rnd.choice(WORDS) for _ in range(n_words))


SENTENCE_B = "The cat sat on the mat because it was tired"


def back_and_forth(i: int) -> str:
    """The sentence of the i-th move of the attend page's sentence box: SENTENCE_B, then the app's own default
    sentence, in turn. Both are fixed: the way back is never read from the page (at 6x throttling Chromium read the
    box empty mid-redraw, and every other move then timed the page's "type a sentence" notice)."""
    return SENTENCE_B if i % 2 == 0 else translate("en", "common.default_sentence")
