"""The real-model page through AppTest, on the packaged model: both languages, a typed sentence, bad model names."""

from __future__ import annotations

import json
import re

import pytest

from apphelpers import open_page, shown_text
from mha_core import pretrained as P
from mha_core.i18n import LANGS, translate

PAGE = "pages/real.py"


@pytest.mark.parametrize("lang", LANGS)
def test_page_renders_translated_and_passes_the_layer_check(lang):
    at = open_page(PAGE, lang)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    text = shown_text(at)
    assert "⟦" not in text, re.findall(r"⟦[^⟧]*⟧", text)
    assert at.title[0].value == translate(lang, "real.title")
    assert translate(lang, "real.model_view") in text and translate(lang, "real.head_view") in text
    assert at.success[0].value.startswith(translate(lang, "real.all_pass", L=6, worst="", tol="")[:8])


def test_a_typed_sentence_changes_the_view():
    at = open_page(PAGE, "en")
    before = shown_text(at)
    at.text_input(key="real_sentence").set_value("Birds sing at dawn.").run()
    assert not at.exception
    after = shown_text(at)
    assert after != before
    assert translate("en", "real.tokens", n=7) in after and "`dawn`" in after and "`animal`" not in after


def test_an_example_fills_the_sentence():
    at = open_page(PAGE, "en")
    at.selectbox(key="real_example").set_value(1).run()
    assert at.text_input(key="real_sentence").value == P.EXAMPLES[1].sentence


@pytest.mark.parametrize("lang", LANGS)
def test_unknown_model_id_says_so_and_the_page_stays_usable(lang):
    at = open_page(PAGE, lang)
    name = "no-such-org/no-such-model-for-mha-lab"
    at.text_input(key="real_model").set_value(name).run()
    assert not at.exception
    assert [e.value for e in at.error] == [translate(lang, "errors.model_not_found", name=name)]
    assert translate(lang, "real.fallback", name=P.PACKAGED) in shown_text(at)
    at.text_input(key="real_sentence").set_value("Rain fell on the roof.").run()
    assert not at.exception and "`roof`" in shown_text(at)


def test_missing_directory_says_so():
    at = open_page(PAGE, "en")
    at.text_input(key="real_model").set_value("/no/such/model/folder").run()
    assert not at.exception
    assert at.error[0].value == translate("en", "errors.model_dir_missing", name="/no/such/model/folder")


def test_switching_a_head_off_moves_the_sentence_and_the_head_view_follows():
    at = open_page(PAGE, "en")
    label = translate("en", "real.cosine")
    assert next(m for m in at.metric if m.label == label).value == "1.0000"
    at.multiselect(key="real_off").set_value([2, 14]).run()
    assert not at.exception
    assert float(next(m for m in at.metric if m.label == label).value) < 1.0
    at.selectbox(key="real_layer").set_value(3).run()
    at.selectbox(key="real_head").set_value(5).run()
    titles = [json.loads(e.proto.spec).get("title") for e in at.get("vega_lite_chart")]
    assert translate("en", "real.head_title", name="L3·H5") in titles, titles


def test_coreference_probe_picks_the_example_pronoun():
    at = open_page(PAGE, "zh")
    at.selectbox(key="real_kind").set_value("coref").run()
    assert not at.exception and not at.error
    tokens = at.selectbox(key="real_pronoun").options
    assert tokens[at.selectbox(key="real_pronoun").index].endswith(" it")
    assert tokens[at.selectbox(key="real_antecedent").index].endswith(" animal")
