"""The cross-attention page through AppTest: both languages, live shapes from edited sentences, translated errors."""

from __future__ import annotations

import pytest

from apphelpers import charts, open_page, shown_text
from mha_core import cross
from mha_core.i18n import LANGS, translate
from mha_core.inputs import MAX_TOKENS
from mha_core.markdown import escape
from mha_core.ui import cross as ui

PAGE = "pages/cross.py"


def _shape(*dims: int) -> str:
    """A live shape as render.shapes writes it."""
    return f"`{' × '.join(map(str, dims))}`"


@pytest.mark.parametrize("lang", LANGS)
def test_page_renders_the_default_pair_in_each_language(lang):
    at = open_page(PAGE, lang)
    assert not at.exception and not at.error
    text = shown_text(at)
    assert "⟦" not in text
    assert at.title[0].value == translate(lang, "cross.title")
    lesson = cross.build_lesson(cross.PAIRS[0].source, cross.PAIRS[0].target, 4)
    n, m = lesson.n_tgt, lesson.n_src
    assert _shape(n, m) in text and _shape(4, n, m) in text              # not square: 7 × 5
    assert translate(lang, "cross.explain", n=n, m=m) in text
    assert translate(lang, "cross.predict", n=n, m=m) in text          # predict the shape before reading it
    assert translate(lang, "errors.causal_cross") in [i.value for i in at.info]
    assert translate(lang, "cross.found", found=lesson.found, n=n) in text
    assert escape(cross.PAIRS[0].source) in text                        # the padding text names the sentence


def test_edited_sentences_an_example_and_h_change_the_shapes_shown():
    at = open_page(PAGE, "en")
    at.text_input(key=ui.SRC_KEY).set_value("猫睡了。").run()
    at.text_input(key=ui.TGT_KEY).set_value("The cat slept in the sun .").run()
    assert not at.exception and not at.error
    text = shown_text(at)
    assert _shape(7, 4) in text and _shape(4, 7, 4) in text and _shape(7, 5) not in text
    at.radio(key=ui.H_KEY).set_value(8).run()
    assert _shape(8, 7, 4) in shown_text(at)
    at.button(key="cross_pair_1").click().run()                          # 他明天要去北京。 -> He will go to ...
    assert at.text_input(key=ui.SRC_KEY).value == cross.PAIRS[1].source
    assert _shape(8, 7, 6) in shown_text(at)
    at.text_input(key=ui.TGT_KEY).set_value("hello there").run()          # no dictionary word: random, and said so
    at.text_input(key=ui.SRC_KEY).set_value("你好").run()
    assert translate("en", "cross.random") in [i.value for i in at.info]
    at.text_input(key=ui.TGT_KEY).set_value(" ".join(["hello"] * 30)).run()   # over the limit: cut, and said so
    assert translate("en", "cross.truncated_target", max=MAX_TOKENS, dropped=30 - MAX_TOKENS) in [
        i.value for i in at.info]
    assert _shape(MAX_TOKENS, 1) in shown_text(at)


def test_an_empty_sentence_shows_the_translated_error_and_nothing_else():
    at = open_page(PAGE, "zh")
    at.text_input(key=ui.TGT_KEY).set_value("   ").run()
    assert not at.exception
    assert [e.value for e in at.error] == [translate("zh", "errors.cross_target_empty")]
    assert not charts(at)
