"""The real-model page through AppTest, on the packaged model: both languages, a typed sentence, the models the
server offers."""

from __future__ import annotations

import base64
import io
import json
import re

import numpy as np
import pytest
from markdown_it import MarkdownIt
from PIL import Image

from apphelpers import (
    canvas_titled,
    chart_frame,
    chart_titles,
    line_canvases,
    open_page,
    panel_colours,
    panel_values,
    shown_text,
)
from mha_core import minimal_pair, pretrained
from mha_core.charts import raster
from mha_core.i18n import LANGS, translate
from mha_core.markdown import escape
from mha_core.ui import real as real_ui
from mha_core.ui import render
from mha_core.ui.nav import spec
from mha_core.units import head_name

PAGE = "pages/real.py"


@pytest.fixture(scope="module", autouse=True)
def _imported() -> None:
    """Import torch and transformers once, outside the first page run's AppTest timeout (a busy CI machine)."""
    pretrained.load()


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


def test_the_model_line_shows_the_source_as_plain_text_without_code_in_a_caption():
    """A code span inside a (faded) caption was the page's one low-contrast text; the source is escaped instead."""
    at = open_page(PAGE, "en")
    line = next(c.value for c in at.caption if c.value.startswith(translate("en", "real.model_line", source="",
                                                                           arch="", L="", H="", d="")[:6]))
    html = MarkdownIt("commonmark").render(line)
    assert f"Loaded from {pretrained.PACKAGED} · bert · 6 layers × 12 heads" in html and "<code>" not in html


def test_a_typed_sentence_changes_the_view():
    at = open_page(PAGE, "en")
    before = shown_text(at)
    at.text_input(key=real_ui.SENTENCE_KEY).set_value("Birds sing at dawn.").run()
    assert not at.exception
    after = shown_text(at)
    assert after != before
    assert translate("en", "real.tokens", n=7) in after and "`dawn`" in after and "`animal`" not in after


def test_an_example_fills_the_sentence():
    at = open_page(PAGE, "en")
    at.selectbox(key=real_ui.EXAMPLE_KEY).set_value(1).run()
    assert at.text_input(key=real_ui.SENTENCE_KEY).value == pretrained.EXAMPLES[1].sentence


def test_switching_a_head_off_moves_the_sentence_and_the_head_view_follows():
    at = open_page(PAGE, "en")
    label = translate("en", "real.cosine")
    assert next(m for m in at.metric if m.label == label).value == "1.0000"
    at.multiselect(key=real_ui.OFF_KEY).set_value([2, 14]).run()
    assert not at.exception
    assert float(next(m for m in at.metric if m.label == label).value) < 1.0
    at.selectbox(key=real_ui.LAYER_KEY).set_value(3).run()
    at.selectbox(key=real_ui.HEAD_KEY).set_value(5).run()
    titles = chart_titles(at)
    assert translate("en", "real.head_title", name="L3·H5") in titles, titles


def test_the_head_view_and_switched_off_heads_survive_a_visit_to_another_page():
    at = open_page(PAGE, "en")
    at.selectbox(key=real_ui.LAYER_KEY).set_value(2).run()
    at.multiselect(key=real_ui.OFF_KEY).set_value([4]).run()
    at.selectbox(key=real_ui.KIND_KEY).set_value("pick").run()
    at.selectbox(key=real_ui.PICK_TO_KEY).set_value(1).run()
    at.switch_page(spec("overview").script)
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception
    assert at.selectbox(key=real_ui.LAYER_KEY).value == 2 and at.multiselect(key=real_ui.OFF_KEY).value == [4]
    assert at.selectbox(key=real_ui.KIND_KEY).value == "pick" and at.selectbox(key=real_ui.PICK_TO_KEY).value == 1


def test_picking_a_top_head_opens_it_in_the_head_view_and_the_pick_clears():
    """The top heads are a list of options (a selectable table settled ~0.2 s later: its grid rewrites hidden text
    after new data); a pick opens that head, named and scored as head_types ranks it, and does not stay chosen."""
    from mha_core import head_types

    at = open_page(PAGE, "en")
    run = pretrained.run(pretrained.load(), real_ui.EXAMPLES[0].sentence)
    ranked = head_types.top_heads(head_types.head_stats(run.attentions, run.special, run.punct).score("previous"), 6)
    top = at.radio(key=real_ui.top_key("previous"))
    assert top.options == [f"{head_name(r.layer, r.head)} · {r.score:.3f}" for r in ranked]
    third = ranked[2]
    assert (third.layer, third.head) != (at.selectbox(key=real_ui.LAYER_KEY).value,
                                         at.selectbox(key=real_ui.HEAD_KEY).value)
    top.set_value(2).run()
    assert not at.exception
    assert (at.selectbox(key=real_ui.LAYER_KEY).value, at.selectbox(key=real_ui.HEAD_KEY).value) == (third.layer,
                                                                                                     third.head)
    assert at.radio(key=real_ui.top_key("previous")).value is None


def test_one_head_name_in_both_labs():
    assert head_name(3, 5) == "L3·H5"
    assert translate("en", "heads.head_title", head=head_name(0, 1), label="x").startswith("L0·H1")


def test_token_to_word_probe_opens_on_the_example_pronoun():
    at = open_page(PAGE, "zh")
    at.selectbox(key=real_ui.KIND_KEY).set_value("pick").run()
    assert not at.exception and not at.error
    tokens = at.selectbox(key=real_ui.PICK_FROM_KEY).options
    assert tokens[at.selectbox(key=real_ui.PICK_FROM_KEY).index].endswith(" it")
    assert tokens[at.selectbox(key=real_ui.PICK_TO_KEY).index].endswith(" animal")
    assert "coref" not in " ".join(at.selectbox(key=real_ui.KIND_KEY).options).lower()


# --- the minimal pair (issue 13, item 2) ---

def _pair_columns(at, pair: minimal_pair.MinimalPair) -> tuple[int, int]:
    """Indices of two adjacent columns that show sentence 1 and sentence 2 of the pair."""
    texts = ["\n".join(m.value for m in col.markdown) for col in at.columns]
    for i in range(len(texts) - 1):
        if pair.sentences[0] in texts[i] and pair.sentences[1] in texts[i + 1]:
            return i, i + 1
    raise AssertionError(f"the two sentences are not side by side: {texts}")


@pytest.mark.parametrize("lang", LANGS)
def test_the_minimal_pair_shows_both_sentences_side_by_side(lang):
    at = open_page(PAGE, lang)
    assert not at.exception and not at.error
    pair = minimal_pair.PAIRS[0]
    left, right = _pair_columns(at, pair)
    for col, i in ((left, 0), (right, 1)):
        noun = pair.nouns[pair.referents[i]]
        assert translate(lang, "real.pair_means", pronoun="it", noun=noun) in [c.value for c in at.columns[col].caption]
        labels = [m.label for m in at.columns[col].metric]
        assert labels == [translate(lang, "real.pair_weight", pronoun="it", noun=n) for n in pair.nouns]
    layer, head = at.selectbox(key=real_ui.PAIR_LAYER_KEY).value, at.selectbox(key=real_ui.PAIR_HEAD_KEY).value
    verdict = translate(lang, "real.pair_verdict_subject", head=f"L{layer}·H{head}", pronoun="it", noun0="animal",
                        noun1="animal", a=0, b=0, ref0="animal", ref1="street")
    assert any(i.value.startswith(verdict[:20]) for i in at.info), [i.value for i in at.info]
    text = shown_text(at)
    assert translate(lang, "real.pair_reading") in text
    sentence = pretrained.ZH_EXAMPLES[0].sentence
    unknown, pieces = pretrained.unknown_tokens(pretrained.load(), sentence)
    assert translate(lang, "real.pair_english_only", sentence=sentence, unk=unknown, n=pieces) in text


def test_the_other_pair_and_another_head():
    at = open_page(PAGE, "en")
    at.radio(key=real_ui.PAIR_KEY).set_value(1).run()
    assert not at.exception
    _pair_columns(at, minimal_pair.PAIRS[1])
    at.selectbox(key=real_ui.PAIR_LAYER_KEY).set_value(0).run()
    at.selectbox(key=real_ui.PAIR_HEAD_KEY).set_value(0).run()
    assert not at.exception
    titles = chart_titles(at)
    assert titles.count(translate("en", "real.pair_chart", head="L0·H0", pronoun="it")) == 2, titles


# --- the model: picked from what the server offers, never typed (issue 25, item 4) ---

def test_the_model_is_picked_from_the_server_s_list_and_survives_a_visit(monkeypatch, tiny_model_dir):
    monkeypatch.setenv(pretrained.MODELS_ENV, f"tiny={tiny_model_dir}")
    at = open_page(PAGE, "en")
    box = at.selectbox(key=real_ui.MODEL_KEY)
    assert box.options == [pretrained.PACKAGED, "tiny"] and box.value == pretrained.PACKAGED
    assert [w.key for w in at.text_input] == [real_ui.SENTENCE_KEY]  # nothing to type a model into
    box.set_value("tiny").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    text = shown_text(at)
    assert "Loaded from tiny · bert · 2 layers × 2 heads · d_model = 32" in text and str(tiny_model_dir) not in text
    at.switch_page(spec("overview").script)
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert at.selectbox(key=real_ui.MODEL_KEY).value == "tiny" and "Loaded from tiny" in shown_text(at)


@pytest.mark.parametrize("lang", LANGS)
def test_an_offered_model_that_fails_is_named_once_and_the_packaged_one_is_shown(monkeypatch, tmp_path, lang):
    folder = tmp_path / "no" / "such" / "folder"
    monkeypatch.setenv(pretrained.MODELS_ENV, f"broken={folder}")
    at = open_page(PAGE, lang)
    at.selectbox(key=real_ui.MODEL_KEY).set_value("broken").run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == [translate(lang, "errors.model_unavailable", name="broken")]
    text = shown_text(at)
    assert translate(lang, "real.fallback", name=pretrained.PACKAGED) in text and str(tmp_path) not in text
    assert translate(lang, "real.model_line", source=escape(pretrained.PACKAGED), arch="bert", L=6, H=12, d=384) in text
    at.text_input(key=real_ui.SENTENCE_KEY).set_value("Rain fell on the roof.").run()
    assert not at.exception and "`roof`" in shown_text(at)


def test_no_browser_value_reaches_the_file_system(monkeypatch, tiny_model_dir):
    """A folder named in the session state or the URL (even one holding a model) is never loaded: only the names
    the server's configuration offers pick a folder, and none was offered here."""
    loads = []
    original = real_ui._load
    monkeypatch.setattr(real_ui, "_load", lambda *args: loads.append(args) or original(*args))
    path = str(tiny_model_dir)
    at = open_page(PAGE, "en", query={real_ui.MODEL_KEY: path}, **{real_ui.MODEL_KEY: path})
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key=real_ui.MODEL_KEY).options == [pretrained.PACKAGED]
    assert at.selectbox(key=real_ui.MODEL_KEY).value == pretrained.PACKAGED
    assert loads and all(args == (pretrained.PACKAGED, "") for args in loads), loads
    assert translate("en", "real.model_line", source=escape(pretrained.PACKAGED), arch="bert", L=6, H=12, d=384) \
        in shown_text(at)


def test_the_real_lab_s_charts_are_valid_vega_lite():
    import numpy as np

    from mha_core.charts import real as charts

    rng = np.random.default_rng(0)
    attn = rng.random((2, 3, 4, 4))
    labels = ("a", "b", "c", "d")
    built = [
        charts.model_view(attn / attn.sum(-1, keepdims=True), labels, layer_title="L", head_title="H",
                          query_title="q", key_title="k", weight_title="w"),
        charts.score_map(attn[..., 0, 0], title="t", layer_title="L", head_title="H", value_title="v"),
        charts.pair_row(attn[0, 0, 0], labels, ((1,), (3,)), title="t", value_title="w"),
    ]
    for chart in built:
        assert chart.to_dict(validate=True)["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    row = built[2].to_dict()
    colours = row["encoding"]["color"]["scale"]["range"]
    assert colours == [charts.OTHER_COLOUR, charts.NOUN_COLOURS[0], charts.OTHER_COLOUR, charts.NOUN_COLOURS[1]]


# --- long inputs, token lines and heads that behave alike (issue 17, items 2 and 6) ---

def _chart(at, title: str):
    """(spec, data frame) of the chart with this title."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    for c in at.get("vega_lite_chart"):
        spec = json.loads(c.proto.spec)
        if spec.get("title") == title:
            return spec, convert_arrow_bytes_to_pandas_df(chart_frame(c)) if chart_frame(c) else None
    raise AssertionError(f"no chart titled {title!r}")


def test_a_128_piece_sentence_renders_with_lines_and_the_head_similarity_map():
    import numpy as np

    from mha_core import head_similarity
    from mha_core.charts import lines
    from mha_core.charts import real as charts

    sentence = " ".join(["word"] * 126)  # + [CLS] and [SEP]
    at = open_page(PAGE, "en")
    at.text_input(key=real_ui.SENTENCE_KEY).set_value(sentence).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    text = shown_text(at)
    assert translate("en", "real.tokens", n=128) in text
    size = -(-128 // charts.MODEL_VIEW_CELLS)
    assert translate("en", "real.model_view_pooled", n=128, size=size) in text  # 128 tokens in blocks of `size`
    r = pretrained.run(pretrained.load(), sentence)
    layer, head = at.selectbox(key=real_ui.LAYER_KEY).value, at.selectbox(key=real_ui.HEAD_KEY).value
    k = lines.top_k_for(1, 128)
    assert translate("en", "lines.top_k", n=128, k=k, share=lines.shown_share(r.attentions[layer, head], k)) in text
    # a long sentence compares every two heads only when asked (toggle), then in the grouping's order
    assert translate("en", "real.sim_map") not in chart_titles(at)
    assert ("sim", real_ui.cache_name(pretrained.load()), sentence) not in real_ui.RESULTS
    at.toggle(key=real_ui.SIMILARITY_KEY).set_value(True).run()
    assert not at.exception, at.exception
    flat = r.attentions.reshape(72, 128, 128)
    dist = head_similarity.js_distances(flat, real_ui.SIMILARITY_DTYPE)
    painted = canvas_titled(at, translate("en", "real.sim_map"))  # as the browser gets it, grouping's order
    names = [head_name(i // 12, i % 12) for i in range(72)]
    shown = panel_values(painted["panels"][0])
    assert sorted(painted["rows"]) == sorted(names) and painted["cols"] == painted["rows"]
    for a, b in [(0, 1), (5, 40), (71, 3)]:
        i, j = painted["rows"].index(names[a]), painted["cols"].index(names[b])
        assert shown[i, j] == pytest.approx(dist[a, b], abs=1e-4)
    assert dist[0, 1] == pytest.approx(head_similarity.js_distances(flat[:2])[0, 1], abs=1e-4)  # float32 ≈ float64
    table = next(d.value for d in at.dataframe if translate("en", "real.col_entropy") in d.value.columns)
    order = [names.index(h) for h in table[translate("en", "real.col_head")]]
    assert sorted(order) == list(range(72))
    np.testing.assert_allclose(table[translate("en", "real.col_entropy")], head_similarity.head_entropy(flat)[order],
                               atol=5e-4)
    assert translate("en", "real.importance_run", n=128, heads=72) in [tg.label for tg in at.toggle]  # asked, not run


def test_a_sentence_at_the_model_s_own_limit_paints_every_weight_of_its_head_and_keeps_the_row_table():
    """512 pieces (MiniLM's position limit): 262,144 cells as Vega marks stall a browser. The app's canvas paints
    them as one picture, one pixel per cell in Vega's viridis, and keeps every weight for its tooltips; the table
    view (the Altair builder's frame) still names each query's strongest key, as the model says."""
    import numpy as np

    from mha_core.charts import real as charts
    from mha_core.figure_files import matrix_csv

    sentence = " ".join(["word"] * (pretrained.MAX_REAL_TOKENS - 2))
    at = open_page(PAGE, "en")
    at.text_input(key=real_ui.SENTENCE_KEY).set_value(sentence).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    n = pretrained.MAX_REAL_TOKENS
    assert translate("en", "real.head_pixels", n=n, cells=n * n) in shown_text(at)
    layer, head = at.selectbox(key=real_ui.LAYER_KEY).value, at.selectbox(key=real_ui.HEAD_KEY).value
    title = translate("en", "real.head_title", name=head_name(layer, head))
    painted = canvas_titled(at, title)
    w = pretrained.run(pretrained.load(), sentence).attentions[layer, head]
    (only,) = painted["panels"]
    assert (only["n_rows"], only["n_cols"]) == (n, n) and len(painted["rows"]) == n
    np.testing.assert_array_equal(panel_values(only), w.astype(np.float32))
    np.testing.assert_array_equal(panel_colours(only)[..., :3], raster.colours(w))
    spec, data = render.figure(charts.head_heatmap, w, tuple(painted["rows"]), title=title,
                               row_title=translate("en", "common.query"), col_title=translate("en", "common.key"),
                               value_title=translate("en", "common.weight"))  # the table view's rows and spec
    frame = data.to_pandas()
    assert [lay["mark"]["type"] for lay in spec["layer"]] == ["image", "rect"] and len(frame) == n
    labels = frame["query"].tolist()
    assert frame["strongest"].tolist() == [labels[k] for k in w.argmax(1)]
    np.testing.assert_allclose(frame["weight"], w.max(1), atol=5e-4)
    assert frame["_image"].iloc[0].startswith("data:image/png;base64,") and frame["_image"].iloc[1:].isna().all()
    csv = matrix_csv(w, tuple(labels), tuple(labels), translate("en", "export.corner"))  # what the CSV button sends
    assert csv.count(b"\n") >= n and len(csv.splitlines()[1].split(b",")) == n + 1
    assert n * n > charts.PIXEL_CELLS


def test_the_two_costly_analyses_wait_to_be_asked_and_then_stay_on_for_the_next_sentence():
    """Every pair of heads compared and each head's importance were half of a new short sentence's time
    (bench_speed "real"): they are drawn when the student switches them on, and stay on for later sentences."""
    at = open_page(PAGE, "en")
    titles = lambda: chart_titles(at)  # noqa: E731
    shown = (translate("en", "real.sim_map"), translate("en", "real.importance"))
    assert not set(shown) & set(titles())
    assert not at.toggle(key=real_ui.SIMILARITY_KEY).value and not at.toggle(key=real_ui.IMPORTANCE_KEY).value
    at.toggle(key=real_ui.SIMILARITY_KEY).set_value(True).run()
    at.toggle(key=real_ui.IMPORTANCE_KEY).set_value(True).run()
    assert not at.exception, at.exception
    assert set(shown) <= set(titles())
    at.text_input(key=real_ui.SENTENCE_KEY).set_value("The red car stopped because it was old").run()
    assert not at.exception, at.exception
    assert set(shown) <= set(titles())  # the switches stayed on: the new sentence's analyses are drawn at once
    n = len(pretrained.run(pretrained.load(), "The red car stopped because it was old").tokens)
    assert translate("en", "real.sim_run", n=n, heads=72) in [tg.label for tg in at.toggle]


def test_one_piece_too_many_is_a_translated_error_not_a_crash():
    at = open_page(PAGE, "zh")
    at.text_input(key=real_ui.SENTENCE_KEY).set_value(" ".join(["word"] * (pretrained.MAX_REAL_TOKENS - 1))).run()
    assert not at.exception
    assert [e.value for e in at.error] == [translate("zh", "errors.too_many_pieces", n=513, max=512)]


@pytest.mark.parametrize("lang", LANGS)
def test_the_token_lines_show_the_head_view_s_head(lang):
    at = open_page(PAGE, lang)
    at.selectbox(key=real_ui.LAYER_KEY).set_value(1).run()
    at.selectbox(key=real_ui.HEAD_KEY).set_value(4).run()
    assert not at.exception
    assert translate(lang, "real.lines_title", name="L1·H4") in [s.value for s in at.subheader]
    (lines_,) = line_canvases(at)  # painted on the app's canvas: one line per nonzero weight of L1·H4
    assert lines_["heads"] == ["L1·H4"]
    r = pretrained.run(pretrained.load(), real_ui.EXAMPLES[0].sentence)
    w = r.attentions[1, 4]
    assert len(lines_["line_q"]) == int((w > 0).sum()) and set(lines_["line_head"]) == {0}
    np.testing.assert_allclose(lines_["weights"], w[lines_["line_q"], lines_["line_k"]], atol=5e-5)


def _pixels(uri: str) -> np.ndarray:
    """A PNG data URI's pixels, (h, w, 3) uint8."""
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGB"))


def test_the_model_view_draws_each_head_as_its_weights_in_vega_s_colours_and_names_its_strongest_pair():
    """One image mark per head (not one Vega mark per cell): every cell's pixels are the weight's viridis colour,
    the tooltip's pair is the head's largest weight, and the table view keeps the numbers without the pixels."""
    from mha_core.charts import real as charts
    from mha_core.charts.base import spec_and_data

    rng = np.random.default_rng(3)
    attn = rng.random((2, 3, 5, 5)) ** 4
    attn /= attn.sum(-1, keepdims=True)
    labels = ("a", "b", "c", "d", "e")
    spec, frame = spec_and_data(charts.model_view(attn, labels, layer_title="L", head_title="H", query_title="q",
                                                  key_title="k", weight_title="w"))
    assert spec["mark"]["type"] == "image" and len(frame) == 6
    for row in frame.to_dict("records"):
        head = attn[row["layer"], row["head"]]
        pixels = _pixels(row["_image"])
        scale = pixels.shape[0] // 5
        assert scale * 5 >= raster.TARGET_PX and pixels.shape == (5 * scale, 5 * scale, 3)
        np.testing.assert_array_equal(pixels[::scale, ::scale], raster.colours(head))
        q, k = np.unravel_index(head.argmax(), head.shape)
        assert row["strongest"] == f"{labels[q]} → {labels[k]}"
        assert row["weight"] == pytest.approx(head.max(), abs=5e-4)


def test_long_inputs_pool_the_model_view_keep_the_head_view_and_order_the_similarity_map():
    from mha_core.charts import real as charts
    from mha_core.charts.base import spec_and_data

    rng = np.random.default_rng(1)
    attn = rng.random((2, 3, 70, 70))
    attn /= attn.sum(-1, keepdims=True)
    pooled, starts = charts.pool(attn, 32)
    assert pooled.shape == (2, 3, 24, 24) and list(starts[:3]) == [0, 3, 6]  # blocks of 3 tokens, the last of 1
    np.testing.assert_allclose(pooled.sum(-1), 1.0)
    assert pooled[1, 2, 4, 7] == pytest.approx(attn[1, 2, 12:15, 21:24].sum(-1).mean())
    assert pooled[0, 0, 23, 23] == pytest.approx(attn[0, 0, 69, 69])
    cells = charts.MODEL_VIEW_CELLS
    blocks = -(-70 // -(-70 // cells))  # ceil(70 / tokens per block)
    labels = tuple(f"{i} w" for i in range(70))
    _, frame = spec_and_data(charts.model_view(attn, labels, layer_title="L", head_title="H", query_title="q",
                                               key_title="k", weight_title="w"))
    size = -(-70 // cells)
    assert len(frame) == 2 * 3  # one image per head, each of the pooled grid's blocks × blocks cells
    pixels = _pixels(frame["_image"][5])
    scale = pixels.shape[0] // blocks
    assert pixels.shape == (blocks * scale, blocks * scale, 3)
    want, _ = charts.pool(attn, cells)
    np.testing.assert_array_equal(pixels[::scale, ::scale], raster.colours(want[1, 2]))
    blocks_named = {f"{a} w … {min(a + size, 70) - 1} w" if min(a + size, 70) - 1 > a else f"{a} w"
                    for a in range(0, 70, size)}
    assert all(set(p.split(" → ")) <= blocks_named for p in frame["strongest"])  # a block is named by its range
    _, frame = spec_and_data(charts.head_heatmap(attn[0, 0], labels, title="t", row_title="q", col_title="k",
                                                 value_title="w"))
    assert len(frame) == 70 * 70  # one head keeps every cell
    dist = rng.random((4, 4))
    dist = (dist + dist.T) * (1 - np.eye(4)) / 4
    names = ("a", "b", "c", "d")
    spec, frame = spec_and_data(charts.similarity_map(dist, names, (2, 0, 3, 1), title="t", value_title="d",
                                                      max_value=0.83))
    order = spec["encoding"]["x"]["sort"] or list(dict.fromkeys(frame["col"]))  # None: drawn in the data's order
    assert order == ["c", "a", "d", "b"]
    shown = frame.pivot(index="row", columns="col", values="value")
    assert shown.loc["c", "d"] == pytest.approx(dist[2, 3], abs=1e-4)


def test_cached_results_are_keyed_on_the_results_version(monkeypatch):
    """A result computed by an older version (e.g. while sessions shared hooks on the model) never matches."""
    loaded = real_ui.load(pretrained.PACKAGED_CHOICE)
    now = (real_ui._run_key(loaded, "a"), real_ui.cache_name(loaded))
    monkeypatch.setattr(pretrained, "RESULTS_VERSION", pretrained.RESULTS_VERSION - 1)
    assert real_ui._run_key(loaded, "a") != now[0] and real_ui.cache_name(loaded) != now[1]


def test_the_page_keeps_a_run_in_float32_once_in_a_byte_bounded_cache():
    at = open_page(PAGE, "en")
    assert not at.exception
    loaded = real_ui.load(pretrained.PACKAGED_CHOICE)
    r = real_ui.run(loaded, pretrained.EXAMPLES[0].sentence)
    assert r is real_ui.run(loaded, pretrained.EXAMPLES[0].sentence)  # shared, not a copy per rerun
    assert r.attentions.dtype == np.float32 and not r.attentions.flags.writeable
    assert 0 < real_ui.RUNS.total <= real_ui.RUNS.max_bytes and real_ui.RESULTS.total <= real_ui.RESULTS.max_bytes
    assert all(c.ok for c in real_ui.checks(loaded, r, pretrained.EXAMPLES[0].sentence))


def test_ablation_and_importance_take_their_turn_and_no_head_off_costs_no_forward(monkeypatch):
    """Under a class every forward waits its turn (TURNS); with no head off the cosine is 1 without one."""
    from mha_core.turns import Turns

    loaded = real_ui.load(pretrained.PACKAGED_CHOICE)
    s = "A sentence only this test uses, for the turn count."
    r = real_ui.run(loaded, s)
    monkeypatch.setattr(pretrained, "run", lambda *_a, **_k: pytest.fail("a forward for no head off"))
    assert real_ui.ablate(loaded, r, s, []) == 1.0
    monkeypatch.undo()
    turns = Turns(2)
    taken = []
    original = turns.turn
    monkeypatch.setattr(turns, "turn", lambda *a, **k: taken.append(1) or original(*a, **k))
    monkeypatch.setattr(real_ui, "TURNS", turns)
    real_ui.ablate(loaded, r, s, [(0, 1)])
    real_ui.importance(loaded, r, s)
    assert len(taken) == 2
