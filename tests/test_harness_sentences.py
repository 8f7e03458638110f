"""What the speed benchmark types (harness/sentences.py, used by benchmarks/bench_speed.py)."""

from __future__ import annotations

from harness.sentences import SENTENCE_B, back_and_forth
from mha_core.i18n import translate
from mha_core.inputs import tokenize


def test_the_sentence_case_goes_back_and_forth_between_two_whole_sentences():
    """Before the fix the way back was the box's value read from the page: once read empty, every other timed move
    of the 6x run timed the page's "type a sentence" notice (16 elements) instead of the attend page."""
    typed = [back_and_forth(i) for i in range(4)]
    default = translate("en", "common.default_sentence")
    assert typed == [SENTENCE_B, default, SENTENCE_B, default] and default != SENTENCE_B
    assert all(tokenize(s) for s in typed)  # both draw the whole page
