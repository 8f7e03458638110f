"""The speed benchmark's moves (benchmarks/bench_speed.py) do what each case says, without a browser."""

from __future__ import annotations

from types import SimpleNamespace

from benchmarks.bench_speed import SENTENCE_B, _do_move, cases
from mha_core.i18n import translate


class _Box:
    """A text box read mid-redraw: empty, as Chromium returned it at 6x throttling."""

    def __init__(self, log: list[str]) -> None:
        self.log, self.first = log, self

    def fill(self, text: str) -> None:
        self.log.append(text)

    def input_value(self) -> str:
        return ""


class _Page:
    def __init__(self) -> None:
        self.log: list[str] = []
        self.keyboard = SimpleNamespace(press=self.log.append)

    def locator(self, selector: str) -> _Box:
        return _Box(self.log)


def test_the_sentence_case_goes_back_and_forth_between_two_whole_sentences():
    """Before the fix the way back was the box's value read from the page: once read empty, every other timed move
    of the 6x run timed the page's "type a sentence" notice (16 elements) instead of the attend page."""
    page, case = _Page(), next(c for c in cases() if c.name == "sentence")
    for i in range(4):
        _do_move(page, case, i)()
    typed = [x for x in page.log if x != "Control+Enter"]
    default = translate("en", "common.default_sentence")
    assert typed == [SENTENCE_B, default, SENTENCE_B, default] and default != SENTENCE_B
    assert page.log.count("Control+Enter") == 4
