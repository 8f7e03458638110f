"""The printable handout: its text (pdftotext) holds the formulas in one notation, the worked example's numbers as
the core computes them (two heads looking at different tokens), the live shapes and Chinese; at most four pages
unless the glossary is asked for; en is set in a Latin face, zh in the CJK font, both embedded, no glyph missing;
the CLI's contract."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mha_core.errors import LabError
from mha_core.glossary import load_glossary
from mha_core.handout import handout_pdf
from mha_core.handout.content import QUESTION_IDS, build_handout
from mha_core.handout.worked import fmt_rows, worked_example
from mha_core.i18n import LANGS, translate
from mha_core.inputs import tokenize
from mha_core.quiz import Kind, format_value

ROOT = Path(__file__).resolve().parents[1]
MISSING = "missing the following glyphs"
USER_SENTENCE = "The **cat** sat on the __mat__."   # markdown markers: must print as typed


def _tool(name: str) -> str:
    """The path of a poppler tool; skip (fail on CI) when it is not installed."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} (Debian poppler-utils) is required on CI")
        pytest.skip(f"{name} not installed (Debian package poppler-utils)")
    return path


@dataclass(frozen=True)
class Built:
    """One handout: the PDF file, its text per page (pdftotext -layout), the warnings fpdf2 gave."""

    path: Path
    pages: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.pages)


class _Records(logging.Handler):
    """Collects what fpdf2 logs: it reports missing glyphs as a logged warning when the PDF is written."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _fpdf_warnings():
    """The warnings fpdf2 logs inside the block (logger "fpdf" and its children)."""
    handler, logger = _Records(), logging.getLogger("fpdf")
    logger.addHandler(handler)
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)


def _pages(path: Path) -> tuple[str, ...]:
    out = subprocess.run([_tool("pdftotext"), "-layout", str(path), "-"], capture_output=True, text=True, check=True)
    return tuple(out.stdout.split("\f")[:-1] or [out.stdout])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Built]:
    """The default handout in every language (in process, warnings recorded), built once for the module."""
    _tool("pdftotext")
    folder = tmp_path_factory.mktemp("handout")
    result = {}
    for lang in LANGS:
        with _fpdf_warnings() as caught:
            data = handout_pdf(lang)
        path = folder / f"handout-{lang}.pdf"
        path.write_bytes(data)
        result[lang] = Built(path, _pages(path), tuple(caught))
    return result


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mha_core.handout", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def wide(tmp_path_factory) -> tuple[subprocess.CompletedProcess[str], Built]:
    """A handout written by the CLI for non-default settings: h = 4, d_head = 8, a sentence of the user's."""
    _tool("pdftotext")
    out = tmp_path_factory.mktemp("handout_cli") / "wide.pdf"
    run = _cli("--lang", "en", "--h", "4", "--d-head", "8", "--sentence", USER_SENTENCE, "-o", str(out))
    return run, Built(out, _pages(out) if out.exists() else (), ())


# ---------------------------------------------------------------------------------------------
# What the text says.


@pytest.mark.parametrize("lang", LANGS)
def test_the_formulas_symbols_are_in_the_text(built, lang):
    text = built[lang].text
    for symbol in ("softmax", "√", "dhead", "WO", "Concat", "MultiHead(X)", "dmodel"):
        assert symbol in text, symbol
    # the attention formula itself, its sub/superscripts set as such (pdftotext writes them inline)
    assert re.search(r"head\s*i\s*=\s*softmax\(Q\s*i\s*K\s*i\s*T\s*/\s*√\s*d\s*head\)\s*V\s*i", text)


@pytest.mark.parametrize("lang", LANGS)
def test_one_notation_and_no_internal_jargon(built, lang):
    """Issue 24, items 12 and 13: the paper's W^Q, W_i^Q, W^O with real sub/superscripts everywhere, so no plain
    W_Q, d_head, e^s or leftover markup reaches the page; no knowledge-point ids."""
    text = built[lang].text
    plain = re.findall(r"(?<![A-Za-z0-9])[A-Za-z]_[A-Za-z0-9]+|\^|_\{|W_[QKVO]", text)
    assert not plain, sorted(set(plain))
    assert "kp-" not in text
    assert "WiQ" in text.replace(" ", "") and "WQ,WK,WV" in text.replace(" ", "").replace("、", ",")


def test_notation_follows_the_paper_and_leaves_identifiers_alone():
    from mha_core.handout.pdf import notation

    assert notation("Q = XW_Q, W_K, W_V and W^O") == "Q = XW^{Q}, W^{K}, W^{V} and W^{O}"
    assert notation("W_i^Q, Q_i K_iᵀ / √d_head, e^s") == "W_{i}^{Q}, Q_{i} K_{i}ᵀ / √d_{head}, e^{s}"
    assert notation("Concat(head_1, …, head_h), 4·d_model²") == "Concat(head_{1}, …, head_{h}), 4·d_{model}²"
    for same in ("split_heads", "mha_core.handout", "W^{O}", "Q_{i}K_{i}ᵀ", "\\**bold**"):
        assert notation(same) == same


def _row_pattern(cells: tuple[str, ...]) -> re.Pattern[str]:
    """A matrix row as printed: its cells in order, separated by white space only."""
    return re.compile(r"(?<![\d.])" + r"\s+".join(re.escape(c) for c in cells) + r"(?![\d.])")


@pytest.mark.parametrize("lang", LANGS)
def test_the_worked_examples_numbers_are_the_cores(built, lang):
    """Every matrix of the worked example, formatted as printed, is found row by row in the PDF's text."""
    text = built[lang].text
    wk = worked_example()
    tr = wk.trace
    matrices = {"W_Q": wk.w_q, "W_K": wk.w_k, "W_V": wk.w_v, "W_O": wk.w_o, "X": tr.x, "Q": tr.q, "K": tr.k,
                "V": tr.v, "concat": tr.concat, "output": tr.output}
    for i in range(tr.n_heads):
        matrices |= {f"raw{i}": tr.raw_scores[i], f"scaled{i}": tr.scores[i], f"weights{i}": tr.weights[i],
                     f"head{i}": tr.head_outputs[i]}
    for name, m in matrices.items():
        for r, cells in enumerate(fmt_rows(m)):
            assert _row_pattern(cells).search(text), (name, r, cells)
    exp_cells = fmt_rows(np.array([e for _, e in wk.exp_table()]))[0]
    assert _row_pattern(exp_cells).search(text), exp_cells


def test_the_worked_example_agrees_with_torch():
    """The core's numbers for the worked example, checked independently: per head with PyTorch's
    scaled_dot_product_attention, and the whole layer with nn.MultiheadAttention; the printed (rounded) forms agree."""
    wk = worked_example()
    tr = wk.trace
    x = torch.tensor(wk.x, dtype=torch.float64)
    q, k, v = x @ torch.tensor(wk.w_q), x @ torch.tensor(wk.w_k), x @ torch.tensor(wk.w_v)
    h, d = tr.n_heads, tr.d_head
    heads = [t.reshape(x.shape[0], h, d).transpose(0, 1) for t in (q, k, v)]   # (h, n, d)
    out = F.scaled_dot_product_attention(*heads)
    weights = torch.softmax(heads[0] @ heads[1].transpose(-1, -2) / d**0.5, dim=-1)
    np.testing.assert_allclose(tr.weights, weights.numpy(), atol=1e-12)
    np.testing.assert_allclose(tr.head_outputs, out.numpy(), atol=1e-12)

    mha = torch.nn.MultiheadAttention(tr.d_model, h, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([torch.tensor(w).T for w in (wk.w_q, wk.w_k, wk.w_v)]))
        mha.out_proj.weight.copy_(torch.tensor(wk.w_o).T)
        y, avg_weights = mha(x[None], x[None], x[None], need_weights=True, average_attn_weights=False)
    np.testing.assert_allclose(tr.output, y[0].numpy(), atol=1e-12)
    np.testing.assert_allclose(tr.weights, avg_weights[0].numpy(), atol=1e-12)
    assert fmt_rows(tr.output) == fmt_rows(y[0].numpy())
    assert fmt_rows(tr.weights[0]) == fmt_rows(weights[0].numpy())


def test_the_two_heads_look_at_different_other_tokens():
    """The point of several heads, in the one example students do by hand: head 1 looks at the previous token (the
    first token at itself), head 2 at one content token from every row; their favourite keys differ on at least two
    of the three rows, and the handout's sentence about it names exactly those tokens."""
    wk = worked_example()
    fav = wk.favourite()
    n = wk.trace.x.shape[0]
    assert fav[0].tolist() == [max(i - 1, 0) for i in range(n)]
    assert len(set(fav[1].tolist())) == 1 and fav[1][0] != 0
    assert sum(a != b for a, b in zip(fav[0], fav[1], strict=True)) >= 2
    for lang in LANGS:
        labels = translate(lang, "handout.worked_tokens").split()
        sep = translate(lang, "handout.list_sep")
        first = sep.join(translate(lang, "handout.quoted", token=labels[j]) for j in fav[0])
        second = sep.join(translate(lang, "handout.quoted", token=labels[j]) for j in fav[1])
        assert first in translate(lang, "handout.worked_heads", first=first, second=second)
        assert first != second


def test_the_worked_example_is_hand_sized():
    """n = 3, d_model = 4, h = 2, integer inputs in {-1, 0, 1, 2}, integer raw scores: friendly arithmetic."""
    wk = worked_example()
    tr = wk.trace
    assert (tr.x.shape[0], tr.d_model, tr.n_heads, tr.d_head) == (3, 4, 2, 2)
    for m in (wk.x, wk.w_q, wk.w_k, wk.w_v, wk.w_o):
        assert set(np.unique(m)) <= {-1, 0, 1, 2}
    assert np.array_equal(tr.raw_scores, np.round(tr.raw_scores)) and np.abs(tr.raw_scores).max() <= 9


def test_the_live_shapes_follow_the_settings(wide):
    run, pdf = wide
    assert run.returncode == 0, run.stderr
    assert pdf.path.read_bytes().startswith(b"%PDF")
    text = pdf.text
    n = len(tokenize(USER_SENTENCE).tokens)
    d_model = 4 * 8
    for shape in (f"{n} × {d_model}", f"{d_model} × {d_model}", f"{n} × 8", f"{n} × {n}"):
        assert shape in text, shape
    assert "h × dhead = 4 × 8 = 32" in text
    assert "Tensor shapes for these settings (h = 4, dhead = 8" in " ".join(text.split())
    assert USER_SENTENCE in text   # the user's markdown markers print as typed


def test_the_default_shapes_are_the_cores(built):
    """The shapes table for the default settings equals the trace's shapes (not typed numbers)."""
    ho = build_handout("en")
    text = built["en"].text
    n = len(ho.tokens.tokens)
    assert [r.shape for r in ho.shapes][0] == (n, 4)
    for r in ho.shapes:
        assert " × ".join(map(str, r.shape)) in text


def test_the_chinese_handout_is_chinese(built):
    text = built["zh"].text
    assert "多头注意力" in text and "词元" in text
    assert translate("zh", "handout.answers_title") in text


@pytest.mark.parametrize("lang", LANGS)
def test_the_class_handout_fits_four_pages_without_the_glossary(built, lang):
    """Issue 24: three to four pages of glossary are too much for a 45-minute class; it is an option."""
    assert len(built[lang].pages) <= 4
    assert translate(lang, "handout.glossary_title") not in [line.strip() for line in built[lang].text.splitlines()]


def test_the_glossary_is_an_option(tmp_path):
    with _fpdf_warnings() as caught:
        data = handout_pdf("zh", glossary=True)
    path = tmp_path / "with-glossary.pdf"
    path.write_bytes(data)
    pages = _pages(path)
    text = "\n".join(pages)
    assert len(pages) > 4 and translate("zh", "handout.glossary_title") in text
    assert all(term.term("zh") in text for term in load_glossary())
    assert "WQ,WK,WV" in text.replace(" ", "").replace("、", ",") and not re.search(r"W_[QKVO]|\^", text)
    assert not [w for w in caught if MISSING in w]


@pytest.mark.parametrize("lang", LANGS)
def test_the_answers_come_on_their_own_page_after_the_questions(built, lang):
    pages = built[lang].pages
    questions = translate(lang, "handout.questions_title")
    answers = translate(lang, "handout.answers_title")
    q_page = next(i for i, p in enumerate(pages) if re.search(rf"^\s*{re.escape(questions)}\s*$", p, re.M))
    a_page = next(i for i, p in enumerate(pages) if re.search(rf"^\s*{re.escape(answers)}\s*$", p, re.M))
    assert a_page > q_page
    ho = build_handout(lang)
    assert len(ho.questions) == len(QUESTION_IDS) == 8
    first_prompt = " ".join(ho.questions[0].stem.split())[:20]
    assert all(first_prompt not in " ".join(p.split()) for p in pages[a_page:])   # no question on the answer page
    answer_text = " ".join(" ".join(pages[a_page:]).split())
    for q in ho.questions:
        if q.kind is Kind.NUMERIC:
            assert format_value(q.value, q.unit) in answer_text, q.id
        if q.kind is Kind.SINGLE:
            assert _as_printed(" ".join(q.option(q.correct[0]).text.split()))[:25] in answer_text, q.id


def _as_printed(text: str) -> str:
    """Text as pdftotext gives it back from the handout: sub/superscripts inline (d_head -> dhead, W^O -> WO)."""
    return re.sub(r"[_^{}]", "", text)


@pytest.mark.parametrize("lang", LANGS)
def test_the_printed_questions_have_no_app_label_and_one_instruction_each(built, lang):
    """Issue 24, items 10 and 11: no "Self-test N", no "(select them in order)", each instruction printed once."""
    text = " ".join(built[lang].text.split())
    for label in ("Self-test", "自测题", "select them in order", "按顺序依次选择", "Answer in one or two sentences"):
        assert label not in text, label
    for kind in ("ordering", "text"):
        instruction = translate(lang, f"handout.kind_{kind}")
        n = sum(q.kind.value == kind for q in build_handout(lang).questions)
        assert text.count(instruction) == n, instruction
    assert text.count("用一两句话回答") <= sum(q.kind is Kind.TEXT for q in build_handout(lang).questions)


def test_the_question_spread_covers_several_kinds():
    kinds = {q.kind for q in build_handout("en").questions}
    assert {Kind.SINGLE, Kind.NUMERIC, Kind.ORDERING, Kind.TEXT} <= kinds


# ---------------------------------------------------------------------------------------------
# The font.


def _fonts(path: Path) -> dict[str, str]:
    """pdffonts: each font's name (subset prefix dropped) and its "emb" column."""
    out = subprocess.run([_tool("pdffonts"), str(path)], capture_output=True, text=True, check=True)
    rows = [line.split() for line in out.stdout.splitlines()[2:] if line.strip()]
    return {row[0].split("+")[-1]: row[-5] for row in rows}


@pytest.mark.parametrize("lang", LANGS)
def test_the_cjk_font_is_embedded(built, lang):
    fonts = _fonts(built[lang].path)
    assert any(name.startswith("NotoSansCJK") for name in fonts), fonts
    assert set(fonts.values()) == {"yes"}, fonts   # every font embedded


def test_english_is_set_in_a_latin_face_and_chinese_in_the_cjk_font(built):
    """Issue 24, item 14: the English body in Source Sans Pro (regular and bold; CJK only as the fallback for the
    app's Chinese name), so quotes, middle dots and × keep their Latin widths; zh keeps Noto Sans CJK."""
    en, zh = _fonts(built["en"].path), _fonts(built["zh"].path)
    assert {"SourceSansPro", "SourceSansProBold"} <= set(en) and any(n.startswith("NotoSansCJK") for n in en)
    assert not any(n.startswith("SourceSansPro") for n in zh)


@pytest.mark.parametrize("lang", LANGS)
def test_no_glyph_is_missing(built, lang):
    """fpdf2 logs "... is missing the following glyphs" for every character the font cannot draw: none may be."""
    assert not [w for w in built[lang].warnings if MISSING in w]


def test_the_missing_glyph_check_sees_a_missing_glyph():
    """The check above can fail: a glyph the font lacks warns; ᵀ (also lacking) is set as a superscript T."""
    from mha_core.handout.pdf import HandoutPDF

    def warned(text: str) -> list[str]:
        pdf = HandoutPDF("en")
        pdf.add_page()
        with _fpdf_warnings() as caught:
            pdf.multi_cell(0, 5, text, markdown=True)
            pdf.output()
        return [m for m in caught if MISSING in m]

    assert warned("ᚠ")   # runic: neither the Latin face nor the CJK fallback has it
    assert not warned("QKᵀ and W^{O} and **bold**")


# ---------------------------------------------------------------------------------------------
# The CLI's contract and the Python API's errors.


def test_the_cli_writes_the_pdf(wide):
    run, pdf = wide
    assert run.returncode == 0 and pdf.path.stat().st_size > 10_000
    assert "Traceback" not in run.stderr


def test_the_cli_adds_the_glossary_on_request(monkeypatch, tmp_path, capsys):
    """--glossary reaches handout_pdf (its default stays off); checked without typesetting."""
    import mha_core.handout.__main__ as cli

    calls = []
    monkeypatch.setattr(cli, "handout_pdf", lambda *args: calls.append(args) or b"%PDF-1.4")
    for extra in ((), ("--glossary",)):
        assert cli.main(["--lang", "en", *extra, "-o", str(tmp_path / "x.pdf")]) == 0
    capsys.readouterr()
    assert [args[-1] for args in calls] == [False, True]


def _main(capsys, *args: str) -> tuple[int, str]:
    """The CLI's main() in this process (the subprocess runs cost ~3 s each for the import of torch)."""
    from mha_core.handout.__main__ import main

    code = main(list(args))
    return code, capsys.readouterr().err


@pytest.mark.parametrize("args,key", [
    (["--h", "0"], "handout_h"),
    (["--h", "abc"], "handout_h"),
    (["--d-head", "2.5"], "handout_d_head"),
    (["--h", "16", "--d-head", "512"], "handout_d_model"),
    (["--sentence", ""], "empty_sentence"),
    (["--sentence", "x" * 401], "handout_sentence_long"),
    (["--lang", "fr"], "handout_lang"),
])
def test_bad_arguments_exit_2_with_one_translated_line(tmp_path, capsys, args, key):
    out = tmp_path / "x.pdf"
    argv = ["--lang", "zh", *args] if "--lang" not in args else list(args)
    code, err = _main(capsys, *argv, "-o", str(out))
    assert code == 2
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0]
    if "--lang" not in args:
        assert re.search(r"[\u4e00-\u9fff]", lines[0])   # in the language asked for
    assert not out.exists()


def test_the_real_cli_exits_2_on_a_bad_argument_without_a_traceback(tmp_path):
    run = _cli("--lang", "en", "--h", "0", "-o", str(tmp_path / "x.pdf"))
    assert run.returncode == 2 and "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_an_unwritable_output_and_a_missing_option_exit_2(tmp_path, capsys):
    for argv in (("--lang", "en", "-o", str(tmp_path / "no" / "such" / "dir" / "x.pdf")), ("--lang", "en")):
        try:
            code, err = _main(capsys, *argv)
        except SystemExit as stop:  # argparse's own exit, if main lets it through
            code, err = stop.code, capsys.readouterr().err
        assert code == 2
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("kwargs,key", [
    ({"h": 17}, "handout_h"), ({"h": True}, "handout_h"), ({"d_head": 0}, "handout_d_head"),
    ({"sentence": "   "}, "empty_sentence"), ({"sentence": "y" * 401}, "handout_sentence_long"),
])
def test_the_api_raises_lab_errors(kwargs, key):
    with pytest.raises(LabError) as err:
        handout_pdf("en", **kwargs)
    assert err.value.key == key
    assert translate("zh", f"errors.{key}", **err.value.params) != translate("en", f"errors.{key}", **err.value.params)


def test_an_unknown_language_is_explained_in_both_catalogs():
    """The language's parameter is not called ``lang``: translate(lang, key, **params) would get it twice."""
    with pytest.raises(LabError) as err:
        handout_pdf("fr")
    assert err.value.key == "handout_lang" and "fr" in str(err.value)
    assert all("fr" in translate(code, "errors.handout_lang", **err.value.params) for code in LANGS)


# ---------------------------------------------------------------------------------------------
# The download button (mha_core.ui.teacher_downloads) on the map page.


@pytest.mark.parametrize("lang", LANGS)
def test_the_map_page_offers_the_handout(lang):
    from apphelpers import open_page

    at = open_page("pages/map.py", lang=lang)
    assert not at.exception
    buttons = at.get("download_button")
    assert len(buttons) == 1
    assert translate(lang, "handout.download") in str(buttons[0].proto)


def test_a_bad_sentence_shows_a_translated_message_instead_of_the_button():
    from apphelpers import open_page

    at = open_page("pages/map.py", lang="en", sentence="   ")
    assert not at.exception
    assert not at.get("download_button")
    assert translate("en", "errors.empty_sentence") in [e.value for e in at.error]
