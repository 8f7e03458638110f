"""Every pipeline page, in both languages, through Streamlit's AppTest."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from apphelpers import canvases, charts, open_page, panel_values, shown_text, tables
from mha_core.i18n import LANGS, translate
from mha_core.inputs import tokenize
from mha_core.ui.nav import PAGES
from mha_core.ui.pipeline import MYTHS_TAB_KEY

PIPELINE = [p for p in PAGES if p.pipeline]
ALL = list(PAGES)


def _torch_total(d_model: int, h: int) -> int:
    return sum(p.numel() for p in torch.nn.MultiheadAttention(d_model, h, bias=False).parameters())


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", ALL, ids=[p.key for p in ALL])
def test_page_renders_translated_without_errors(page, lang):
    at = open_page(page.script, lang)
    assert not at.exception, at.exception
    assert not at.error
    text = shown_text(at)
    assert "⟦" not in text, re.findall(r"⟦[^⟧]*⟧", text)
    # the language switch is on every page, and it is the one the student picked
    assert at.sidebar.radio(key="lang").value == lang


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PIPELINE, ids=[p.key for p in PIPELINE])
def test_title_and_controls_follow_the_page(page, lang):
    at = open_page(page.script, lang)
    assert at.title[0].value == translate(lang, f"{page.key}.title")
    # default: d_model kept fixed (moving h keeps the budget), 4 heads of 16
    assert at.sidebar.toggle(key="fixed").value is True
    assert at.sidebar.select_slider(key="d_model").value == 64 and at.sidebar.select_slider(key="h_div").value == 4


@pytest.mark.parametrize("page", PIPELINE, ids=[p.key for p in PIPELINE])
def test_h_slider_changes_shapes_and_live_counts(page):
    at = open_page(page.script, "en")
    at.sidebar.toggle(key="fixed").set_value(False).run()  # free mode starts from the shape on screen: 4 × 16
    assert at.sidebar.slider(key="h").value == 4 and at.sidebar.slider(key="d_head").value == 16
    before = shown_text(at)
    assert f"{_torch_total(64, 4):,}" in before         # d_model = 4 × 16
    at.sidebar.slider(key="h").set_value(8).run()
    assert not at.exception
    after = shown_text(at)
    assert f"{_torch_total(128, 8):,}" in after          # d_model = 8 × 16
    assert translate("en", "controls.shape_line", h=8, d_head=16, d_model=128) in after
    assert before != after


def test_fixed_d_model_keeps_the_budget_while_h_runs_over_divisors():
    at = open_page("pages/split.py", "zh")
    at.sidebar.toggle(key="fixed").set_value(True).run()
    at.sidebar.select_slider(key="d_model").set_value(128).run()
    divisors = at.sidebar.select_slider(key="h_div").options
    assert [int(o) for o in divisors] == [h for h in range(1, 17) if 128 % h == 0 and 128 // h >= 4]
    totals = set()
    for h in (1, 4, 16):
        at.sidebar.select_slider(key="h_div").set_value(h).run()
        assert not at.exception
        text = shown_text(at)
        assert f"{_torch_total(128, h):,}" in text
        totals.add(_torch_total(128, h))
        assert f"d_head = **{128 // h}**" in text
    assert len(totals) == 1                               # same parameters for every h
    assert translate("zh", "controls.same_budget") in shown_text(at)


def test_settings_survive_switching_pages():
    at = open_page("pages/split.py", "en", fixed=False)
    at.sidebar.slider(key="h").set_value(6).run()
    at.sidebar.slider(key="d_head").set_value(16).run()
    at.switch_page("pages/attend.py").run()
    assert at.sidebar.slider(key="h").value == 6 and at.sidebar.slider(key="d_head").value == 16
    assert translate("en", "attend.grid_title", h=6) in shown_text(at)



def test_a_pages_own_controls_survive_switching_pages():
    """The refresher's head and sharpness are kept (its KEPT table) across a visit to another page and a sidebar
    change there; the head in focus on the attend page is a shared setting and is kept as well."""
    from mha_core.settings import HEAD
    from mha_core.ui.pipeline import PREREQ_KIND_KEY, PREREQ_SHARP_KEY

    at = open_page("pages/prereq.py", "en")
    assert at.slider(key=PREREQ_SHARP_KEY).value == 1.0
    at.selectbox(key=PREREQ_KIND_KEY).select("previous").run()
    at.slider(key=PREREQ_SHARP_KEY).set_value(2.5).run()
    at.switch_page("pages/attend.py").run()
    at.selectbox(key=HEAD.key).select(2).run()
    at.sidebar.text_area(key="sentence").set_value("the cat sat on the mat").run()
    at.switch_page("pages/prereq.py").run()
    assert not at.exception
    assert at.selectbox(key=PREREQ_KIND_KEY).value == "previous" and at.slider(key=PREREQ_SHARP_KEY).value == 2.5
    at.switch_page("pages/attend.py").run()
    assert at.selectbox(key=HEAD.key).value == 2

def test_a_page_first_opened_later_in_the_session_keeps_its_controls():
    """A page registers its kept keys the first time it runs (state.keep), not before: a session that starts
    elsewhere has none of them; once the page ran, its control keeps its value across two other pages."""
    from mha_core.ui import cross
    from mha_core.ui.state import KEPT_KEY

    at = open_page("pages/overview.py", "en")
    assert cross.H_KEY not in at.session_state
    assert KEPT_KEY not in at.session_state or cross.H_KEY not in at.session_state[KEPT_KEY]
    at.switch_page("pages/cross.py").run()
    assert at.session_state[cross.H_KEY] == cross.KEPT[cross.H_KEY]  # the default, on the page's first run
    at.radio(key=cross.H_KEY).set_value(2).run()
    at.switch_page("pages/split.py").run()
    at.switch_page("pages/attend.py").run()
    at.switch_page("pages/cross.py").run()
    assert not at.exception
    assert at.session_state[cross.H_KEY] == 2 and cross.H_KEY in at.session_state[KEPT_KEY]


@pytest.mark.parametrize("lang", LANGS)
def test_language_switch_changes_the_text(lang):
    at = open_page("pages/overview.py", lang)
    other = "en" if lang == "zh" else "zh"
    at.sidebar.radio(key="lang").set_value(other).run()
    assert at.title[0].value == translate(other, "overview.title")
    # the default sentence follows the language, because the student had not edited it
    assert at.sidebar.text_area(key="sentence").value == translate(other, "common.default_sentence")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PIPELINE, ids=[p.key for p in PIPELINE])
def test_bad_sentences_get_a_translated_message_not_a_traceback(page, lang):
    at = open_page(page.script, lang)
    at.sidebar.text_area(key="sentence").set_value("   ").run()
    assert not at.exception
    assert [e.value for e in at.error] == [translate(lang, "errors.empty_sentence")]
    at.sidebar.text_area(key="sentence").set_value("word " * 40).run()
    assert not at.exception and not at.error
    assert translate(lang, "common.truncated", max=24, dropped=16) in [e.value for e in at.info]


def test_causal_mask_zeroes_the_future():
    at = open_page("pages/attend.py", "en")
    at.toggle(key="causal").set_value(True).run()
    assert not at.exception
    assert translate("en", "attend.mask_caption") in shown_text(at)


@pytest.mark.parametrize("mode", ["illustrative", "random"])
def test_both_weight_modes_render_every_page(mode):
    for page in PIPELINE:
        at = open_page(page.script, "zh", weight_mode=mode)
        assert not at.exception and not at.error


HEATMAP_PAGES = [p for p in PIPELINE if p.key != "overview"]  # pages that draw charts


@pytest.mark.parametrize("page", HEATMAP_PAGES, ids=[p.key for p in HEATMAP_PAGES])
def test_table_view_shows_the_numbers_behind_the_heatmaps(page):
    at = open_page(page.script, "en")
    charts_before = len(charts(at))
    assert charts_before >= 1
    at.sidebar.toggle(key="tables").set_value(True).run()
    assert not at.exception
    assert len(at.dataframe) >= 1
    assert len(charts(at)) < charts_before


@pytest.mark.parametrize("lang", LANGS)
def test_predict_then_reveal(lang):
    at = open_page("pages/split.py", lang)
    radios = [r for r in at.radio if r.key and r.key.startswith("predict_split")]
    assert len(radios) == 1 and radios[0].value is None
    reveal = next(b for b in at.button if b.key and b.key.startswith("predict_btn_split"))
    assert reveal.disabled                                    # no guess, no answer
    assert translate(lang, "split.predict_why") not in shown_text(at)
    radios[0].set_value(1).run()                              # "h × n × d_head": the right shape
    next(b for b in at.button if b.key and b.key.startswith("predict_btn_split")).click().run()
    assert translate(lang, "split.predict_why") in shown_text(at)
    n = len(tokenize(translate(lang, "common.default_sentence")).tokens)
    assert translate(lang, "common.predict_right", answer=f"4 × {n} × 16") in [s.value for s in at.success]
    at.sidebar.select_slider(key="h_div").set_value(8).run()  # new settings: predict again
    assert translate(lang, "split.predict_why") not in shown_text(at)


def test_check_yourself_links_to_the_quiz():
    at = open_page("pages/concat.py", "en")
    assert translate("en", "common.check_yourself") in shown_text(at)


@pytest.mark.parametrize("page", ALL, ids=[p.key for p in ALL])
def test_a_cold_server_still_runs_each_page_inside_the_frame(page):
    """AppTest starts every run like a fresh server (it resets Streamlit's pages-folder flag), so Streamlit runs
    pages/<key>.py alone; its page_header runs app.py there and then, so the language switch is there and the
    page is drawn exactly once."""
    from streamlit.runtime.pages_manager import PagesManager

    at = open_page(page.script, "en")
    assert not at.exception
    assert at.sidebar.radio(key="lang").value == "en"
    assert len(at.title) == 1 and "⟦" not in at.title[0].value
    assert PagesManager.uses_pages_directory is False  # cleared by app.py's own st.navigation, not by the lab


@pytest.mark.parametrize("stored,expected",
                         [("8 · MHA (own K/V per query head)", 8), (99, 16), (3, 4), ("abc", 16), (2, 2)])
def test_a_stale_select_box_value_is_made_valid_again(stored, expected):
    """Streamlit can return an old option *label* when a select box's options and labels both change."""
    at = AppTest.from_string(
        "import streamlit as st\n"
        "from mha_core.ui.state import valid_choice\n"
        f"st.session_state.setdefault('k', {stored!r})\n"
        "valid_choice('k', [16, 8, 4, 2, 1], 16)\n"
        "st.markdown(repr(st.session_state['k']))\n"
    ).run()
    assert at.markdown[0].value == repr(expected)


@pytest.mark.parametrize("lang", LANGS)
def test_a_wide_w_q_is_drawn_cut_and_says_so(lang):
    """At d_model = 1024 the myths page draws 64 rows of W^Q (16 columns per head) and tells the student."""
    at = open_page("pages/myths.py", lang, fixed=False, h=16, d_head=64, tables=True)
    assert not at.exception
    expected = translate(lang, "myths.m1_cut", rows=64, d_model=1024, cols=16, d_head=64)
    assert expected in [c.value for c in at.caption]
    w_q = at.dataframe[0].value  # the table view of the W^Q chart: the drawn part of the matrix
    assert w_q.shape == (64, 16 * 16)


@pytest.mark.parametrize("lang", LANGS)
def test_overview_table_has_one_row_per_head_with_its_strongest_weight(lang):
    at = open_page("pages/overview.py", lang, fixed=False, h=6)
    assert not at.exception
    shown = tables(at)[0]
    weights = [float(row[translate(lang, "overview.col_weight")]) for row in shown]
    assert len(shown) == 6
    assert all(0 < w <= 1 for w in weights)


def test_the_code_that_ran_is_drawn_only_while_its_expander_is_open():
    """Closed (every page's first view and every move), the expander holds no code; opened, the functions' own
    source, as inspect reads it."""
    import inspect

    from mha_core.attention import merge_heads, split_heads
    from mha_core.ui.render import source_key

    at = open_page("pages/split.py", "en")
    assert not at.exception and not at.code
    at.session_state[source_key(split_heads, merge_heads)] = True  # what the browser sends when it is opened
    at.run()
    assert [c.value for c in at.code] == [inspect.getsource(f).rstrip() for f in (split_heads, merge_heads)]


def test_the_pipeline_diagram_is_an_image_drawn_on_the_server_with_the_live_shapes():
    """No Graphviz layout in the browser on each h move: the overview shows the server's SVG as an image."""
    import base64

    at = open_page("pages/overview.py", "en", fixed=False, h=4)
    assert not at.get("graphviz_chart")

    def shown() -> str:
        (image,) = at.get("image")
        url = image.proto.imgs[0].url
        assert url.startswith("data:image/svg+xml;base64,")
        return base64.b64decode(url.split(",", 1)[1]).decode("utf-8")

    assert "head 3  " in shown() and "head 4  " not in shown()
    at.sidebar.slider(key="h").set_value(5).run()
    assert "head 4  " in shown() and "× W^O  80 × 80" in shown()
    alt = at.get("image")[0].proto.imgs[0].alt  # what a screen reader says instead (axe: image-alt)
    assert alt.startswith(translate("en", "overview.pipeline_alt", h=5, n=0, d_model=80, d_head=16).split("(")[0])
    assert "into 5 heads" in alt and "× 16 block" in alt and "back to 10 × 80 and multiplied by W^O" in alt


@pytest.mark.parametrize("lang", LANGS)
def test_at_sixteen_heads_and_24_tokens_attend_paints_every_cell_with_the_value_the_table_view_shows(lang):
    """h = 16 with 24 tokens: attend's head grid (9,216 cells) is painted on the app's canvas, one panel per head,
    each cell with its value for the tooltip: the same numbers as the table view's 16 matrices of 24 × 24."""
    sentence = " ".join(f"w{i}" for i in range(24))
    at = open_page("pages/attend.py", lang, fixed=False, h=16, d_head=64, sentence=sentence)
    assert not at.exception
    (grid,) = [c for c in canvases(at) if len(c["panels"]) > 1]
    painted = [panel_values(p) for p in grid["panels"]]
    assert len(painted) == 16 and all(v.shape == (24, 24) for v in painted)
    assert translate(lang, "common.canvas_grid", n=16, rows=24, cols=24,
                     tables=translate(lang, "common.tables")) == grid["label"]
    at.session_state["tables"] = True
    at.run()
    assert not [c for c in canvases(at) if len(c["panels"]) > 1]
    grids = [d.value for d in at.dataframe if d.value.shape == (24, 24)]
    assert len(grids) >= 16 and not any(str(c).startswith("_") for g in grids for c in g.columns)
    for shown, table in zip(painted, grids[:16], strict=True):
        np.testing.assert_allclose(shown, table.to_numpy(dtype=float), atol=1e-4)


@pytest.mark.parametrize("lang", LANGS)
def test_myths_draws_only_its_open_tab(lang):
    """A move of h redraws one misconception's demonstration, not all three (issue 26: the page drew every tab's
    charts on every move); opening a tab draws it, and the choice survives a visit to another page."""
    verdicts = [translate(lang, f"myths.m{i}_verdict") for i in (1, 3)]
    at = open_page("pages/myths.py", lang)
    assert not at.exception
    shown = [m.value for m in at.markdown]
    assert verdicts[0] in shown and verdicts[1] not in shown
    assert len(charts(at)) == 1  # W^Q only: not the rank and accuracy charts of the second tab
    at.session_state[MYTHS_TAB_KEY] = translate(lang, "myths.tab3")  # what the browser sends when it is opened
    at.run()
    shown = [m.value for m in at.markdown]
    assert verdicts[1] in shown and verdicts[0] not in shown and not charts(at)
    at.switch_page("pages/split.py").run()
    at.switch_page("pages/myths.py").run()
    assert verdicts[1] in [m.value for m in at.markdown]


@pytest.mark.parametrize("lang", LANGS)
def test_myths_verdict_quotes_the_presets_not_a_typed_range(lang):
    """h across the published presets runs from 8 (Transformer base) to 96 (GPT-3 175B); d_head from 32 to 128."""
    from dataclasses import asdict

    from mha_core.presets import head_spread

    at = open_page("pages/myths.py", lang, **{MYTHS_TAB_KEY: translate(lang, "myths.tab2")})
    assert not at.exception
    verdict = translate(lang, "myths.m2_verdict", **asdict(head_spread()))
    assert verdict in [m.value for m in at.markdown]
    for part in ("96 (GPT-3 175B)" if lang == "en" else "96（GPT-3 175B）", "32", "128"):
        assert part in verdict
    assert "8–32" not in verdict and "8～32" not in verdict
    assert "Bhojanapalli" in translate(lang, "myths.m2_rank_explain", n=24)


def test_every_registered_page_has_its_script_and_none_is_hidden():
    """A page listed in nav.PAGES whose script is missing must fail loudly, not drop out of the navigation (the
    old nav.available_pages filtered missing scripts out; it is gone: every reader takes PAGES as it is)."""
    from mha_core.ui import nav

    assert not hasattr(nav, "available_pages")
    assert all((nav.ROOT / p.script).is_file() for p in nav.PAGES)


def _two_runs_of_the_navigation() -> None:
    """Two runs' navigation sections, as app.py asks for them (an AppTest script)."""
    import streamlit as st

    from mha_core.ui import frame

    one, two = frame.sections("en"), frame.sections("zh")
    again = frame.sections("en")
    pages = [p for s in one.values() for p in s]
    st.session_state["shared"] = any(p is q for p, q in zip(pages, (p for s in again.values() for p in s), strict=True))
    st.session_state["paths"] = [p.url_path for p in pages]
    st.session_state["titles"] = (list(one), list(two))


def test_each_run_gets_its_own_copy_of_the_pages_built_once():
    """The pages are built once per language and process, and copied per run: st.navigation marks the page it picks
    as runnable, so a page object shared by two sessions' runs could be run by the wrong one."""
    at = AppTest.from_function(_two_runs_of_the_navigation).run()
    assert not at.exception
    assert at.session_state["shared"] is False
    assert at.session_state["paths"] == ["" if p.key == "overview" else p.key for p in PAGES]
    en, zh = at.session_state["titles"]
    assert en == list(dict.fromkeys(translate("en", p.section) for p in PAGES)) and en != zh
