"""Typesetting the handout with fpdf2: A4, black text and one accent colour, outline, tables, page numbers.

Fonts (embedded as subsets; both ship in pip packages, nothing is downloaded and no system font is used): a
Chinese handout is set in Noto Sans CJK SC (``noto-cjk-sans-otc``); a Latin-script one (the catalog's
``handout.body_face = "latin"``) in Source Sans Pro (``font-source-sans-pro``, regular and bold), with Noto Sans
CJK as fpdf2's fallback for the glyphs it lacks (Chinese in the app's name or a user's sentence, ⇄, ⓪).

Notation: one convention, the paper's (W^Q, W_i^Q, W^O, head_i), with real sub/superscripts. ``notation`` turns
the plain spellings of the catalogs and the quiz bank (W_Q, W_i^Q, Q_i, d_head, e^s) into the handout's markup
(``W^{Q}``, ``W_{i}^{Q}``, ``d_{head}``, ``e^{s}``), and ``HandoutPDF`` rewrites text fragments as fpdf2 splits
them: ``_{…}`` / ``^{…}`` become sub/superscripts, ``ᵀ`` a superscript T (no font has it), and ``**bold**`` is
drawn filled and stroked (a faux bold) where the font has no bold face (CJK). User text (the sentence, its
tokens) is always set with ``markdown=False``, where none of this applies.
"""

from __future__ import annotations

import copy
import importlib.resources
import re
from collections.abc import Iterator, Sequence

import numpy as np
from fpdf import FPDF, line_break
from fpdf.enums import CharVPos, TextMode, XPos, YPos
from fpdf.fonts import FontFace
from fpdf.line_break import CurrentLine, Fragment, SpaceHint

from mha_core.handout.content import Handout
from mha_core.handout.worked import DECIMALS, fmt_rows
from mha_core.i18n import LANGS, translate
from mha_core.inputs import MAX_TOKENS
from mha_core.quiz import Kind, Question, format_value
from mha_core.quiz.media import Medium, prompt_for

FONT = "noto"
FONT_FILE = "NotoSansCJK-Regular.ttc"
FONT_SC = 2                    # face index of Noto Sans CJK SC inside the collection
LATIN = "sans"                 # the Latin face: Source Sans Pro, regular and bold
LATIN_PACKAGE = "font_source_sans_pro"
LATIN_FILES = {"": "SourceSansPro-Regular.ttf", "B": "SourceSansPro-Bold.ttf"}
ACCENT = (0, 84, 150)          # the one colour: headings, table heads (dark blue, prints as dark grey)
TINT = (230, 238, 247)         # table heads' background
BAND = (243, 246, 250)         # every other matrix block in the worked example
BLACK = (0, 0, 0)
GREY = (90, 90, 90)
BODY, SMALL, TINY = 10.0, 8.5, 7.5   # font sizes (pt)
ROW_PAD = 0.4                  # mm above and below a number in the worked example's tables
ROW_H = SMALL * 0.5 + 2 * ROW_PAD  # one row of those tables
MARGIN = 15.0                  # mm
LETTERS = "ABCDEFGH"

_MARKUP = re.compile(r"([_^])\{([^{}]*)\}|ᵀ")
# The plain spellings ``notation`` rewrites. Word characters around them are ASCII on purpose ("d_model²" too).
_W_SUBSCRIPT = re.compile(r"(?<![A-Za-z0-9_\\])(X?)W_([QKVO])(?![A-Za-z0-9_{])")    # W_Q: the paper writes W^Q
_SUBSCRIPT = re.compile(r"(?<![A-Za-z0-9_\\])(head(?=_[A-Za-z0-9](?![A-Za-z0-9]))|[A-Za-z])_([A-Za-z0-9]+)"
                        r"(?![A-Za-z0-9_{])")                                        # Q_i, d_head, head_1
_SUPERSCRIPT = re.compile(r"(?<!\\)\^([A-Za-z0-9]+)(?![A-Za-z0-9_{])")              # W^O, e^s


def notation(text: str) -> str:
    """Plain notation as handout markup, the paper's convention: ``W_Q`` -> ``W^{Q}``, ``W_i^Q`` -> ``W_{i}^{Q}``,
    ``d_head`` -> ``d_{head}``, ``head_1`` -> ``head_{1}``, ``e^s`` -> ``e^{s}``; identifiers such as
    ``split_heads`` (a word before the underscore) and existing markup stay as they are."""
    text = _W_SUBSCRIPT.sub(r"\1W^\2", text)
    text = _SUBSCRIPT.sub(r"\1_{\2}", text)
    return _SUPERSCRIPT.sub(r"^{\1}", text)


def font_path() -> str:
    """The shipped font collection (inside the installed package, never fetched)."""
    return str(importlib.resources.files("noto_cjk_sans_otc") / FONT_FILE)


def latin_font_path(style: str = "") -> str:
    """The shipped Latin face (regular "" or bold "B"), inside its installed package."""
    return str(importlib.resources.files(LATIN_PACKAGE) / "files" / LATIN_FILES[style])


_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")
_NO_LINE_START = set("，。、；：？！）》」』”’〕】…%")  # Chinese punctuation that never begins a line
_NO_LINE_END = set("（《「『“‘〔【")                  # nor ends one


class CJKCurrentLine(CurrentLine):
    """fpdf2 breaks lines only at spaces; Chinese text has none, so a line ended at the last space and the rest of
    it stayed empty. This line also offers a break between two characters when either is Chinese (never before
    closing or after opening punctuation), the way Chinese is typeset. Installed once for fpdf2's line breaker
    (which only the handout uses)."""

    def add_character(self, character: str, character_width: float, original_fragment: Fragment,  # type: ignore[override]
                      original_fragment_index: int, original_character_index: int, height: float,
                      url: str | int | None = None) -> None:
        last = self.fragments[-1].characters[-1] if self.fragments and self.fragments[-1].characters else ""
        if (last and not last.isspace() and not character.isspace() and (_CJK.match(last) or _CJK.match(character))
                and character not in _NO_LINE_START and last not in _NO_LINE_END):
            # a break here keeps everything before ``character`` and resumes at it (the caller adds 1)
            self.space_break_hint = SpaceHint(original_fragment_index, original_character_index - 1,
                                              len(self.fragments), len(self.fragments[-1].characters), self.width,
                                              self.number_of_spaces)
        super().add_character(character, character_width, original_fragment, original_fragment_index,
                              original_character_index, height, url)


line_break.CurrentLine = CJKCurrentLine  # the one hook: MultiLineBreak builds its lines from this name


class HandoutPDF(FPDF):
    """FPDF with the handout's header/footer and the fragment rewrites described in the module docstring."""

    def __init__(self, lang: str) -> None:
        super().__init__(format="A4", unit="mm")
        self.lang = lang
        self.set_margins(MARGIN, MARGIN, MARGIN)
        self.set_auto_page_break(True, margin=MARGIN + 3)
        self.add_font(FONT, "", font_path(), collection_font_number=FONT_SC)
        if translate(lang, "handout.body_face") == "latin":
            for style in LATIN_FILES:
                self.add_font(LATIN, style, latin_font_path(style))
            self.set_font(LATIN, size=BODY)
            self.set_fallback_fonts([FONT], exact_match=False)
        else:
            self.set_font(FONT, size=BODY)
        self.set_title(translate(lang, "handout.title"))
        self.set_creator(translate(lang, "handout.app_name"))
        self.set_lang(lang)

    def t(self, key: str, **params: object) -> str:
        """A catalog text in the handout's language."""
        return translate(self.lang, key, **params)

    def header(self) -> None:
        """From page 2 on: the title, small, above a thin accent rule."""
        if self.page_no() == 1:
            return
        with self.local_context(font_size_pt=TINY, text_color=GREY, draw_color=ACCENT, line_width=0.3):
            self.cell(0, 4, self.t("handout.title"), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            self.line(self.l_margin, self.get_y(), self.w - self.r_margin, self.get_y())
        self.ln(4)

    def footer(self) -> None:
        """The app's name and "page x of N" on every page."""
        self.set_y(-MARGIN + 2)
        with self.local_context(font_size_pt=TINY, text_color=GREY):
            self.cell(0, 4, self.t("handout.app_name"), align="L")
            self.set_x(self.l_margin)
            self.cell(0, 4, self.t("handout.page", page=self.page_no(), pages="{nb}"), align="R")

    def _parse_chars(self, text: str, markdown: bool, **kwargs: object) -> Iterator[Fragment]:
        """fpdf2's fragments, with the notation, faux bold (fonts without a bold face) and the sub/superscript
        markup applied (markdown text only)."""
        for frag in super()._parse_chars(notation(text) if markdown else text, markdown, **kwargs):
            if markdown and "B" in frag.font_style and f"{frag.graphics_state.font_family}B" not in self.fonts:
                gs = copy.copy(frag.graphics_state)
                gs.font_style = gs.font_style.replace("B", "")
                gs.text_mode = TextMode.FILL_STROKE
                gs.line_width = gs.font_size_pt / self.k * 0.035
                gs.draw_color = gs.text_color
                frag.graphics_state = gs
            yield from _scripted(frag, markup=markdown)


def _scripted(frag: Fragment, markup: bool) -> Iterator[Fragment]:
    """Split one fragment at ``ᵀ`` (always: the font lacks it) and, in markdown text, at ``_{…}`` and ``^{…}``
    into plain, subscript and superscript pieces."""
    text = frag.string
    found = [m for m in _MARKUP.finditer(text) if markup or m.group(0) == "ᵀ"]
    if not found:
        yield frag
        return
    last = 0
    for m in found:
        if m.start() > last:
            yield Fragment(text[last:m.start()], frag.graphics_state, frag.k, frag.link)
        gs = copy.copy(frag.graphics_state)
        if m.group(0) == "ᵀ":
            gs.char_vpos, piece = CharVPos.SUP, "T"
        else:
            gs.char_vpos, piece = (CharVPos.SUB if m.group(1) == "_" else CharVPos.SUP), m.group(2)
        yield Fragment(piece, gs, frag.k, frag.link)
        last = m.end()
    if last < len(text):
        yield Fragment(text[last:], frag.graphics_state, frag.k, frag.link)


def plain(markup: str) -> str:
    """Handout markup as plain text (for the PDF outline): ``W^{O}`` -> ``W^O``, ``**x**`` -> ``x``."""
    return _MARKUP.sub(lambda m: "ᵀ" if m.group(0) == "ᵀ" else m.group(1) + m.group(2), markup).replace("**", "")


def escape(text: str) -> str:
    """User text inside a markdown cell stays text: fpdf2's markers and the handout's markup are escaped."""
    out = text.replace("\\", "\\\\")
    for marker in ("**", "__", "--", "~~"):
        out = out.replace(marker, "\\" + marker)
    return out.replace("{", "\\{") if ("_{" in out or "^{" in out) else out


# ---------------------------------------------------------------------------------------------
# Building blocks.


def _heading(pdf: HandoutPDF, text: str, level: int = 0) -> None:
    """A section (level 0) or sub-section heading in the accent colour, and its entry in the PDF outline."""
    size = 14.0 if level == 0 else 11.5
    if pdf.get_y() > pdf.h - pdf.b_margin - 30:   # never a heading alone at the foot of a page
        pdf.add_page()
    pdf.ln(3 if level == 0 else 2)
    pdf.start_section(plain(text), level=level)
    with pdf.local_context(font_size_pt=size, text_color=ACCENT):
        pdf.multi_cell(0, size * 0.5, f"**{text}**", markdown=True, align="L", new_x=XPos.LMARGIN,
                       new_y=YPos.NEXT)
    pdf.ln(1.5)


def _para(pdf: HandoutPDF, text: str, size: float = BODY, color: tuple[int, int, int] = BLACK,
          indent: float = 0.0, markdown: bool = True, after: float = 1.2) -> None:
    """A paragraph (markdown bold and the sub/superscript markup), left-aligned, comfortable line height."""
    with pdf.local_context(font_size_pt=size, text_color=color):
        pdf.set_x(pdf.l_margin + indent)
        pdf.multi_cell(pdf.epw - indent, size * 0.52, text, markdown=markdown, align="L", new_x=XPos.LMARGIN,
                       new_y=YPos.NEXT)
    pdf.ln(after)


def _para_height(pdf: HandoutPDF, text: str, size: float = BODY, indent: float = 0.0, after: float = 1.2) -> float:
    """The height ``_para`` will take (a dry run of the same multi_cell), to keep blocks on one page."""
    with pdf.local_context(font_size_pt=size):
        return pdf.multi_cell(pdf.epw - indent, size * 0.52, text, markdown=True, align="L", dry_run=True,
                              output="HEIGHT") + after


def _need(pdf: HandoutPDF, height: float) -> None:
    """Start a new page unless ``height`` mm still fit on this one (a block is never split)."""
    if pdf.get_y() + height > pdf.h - pdf.b_margin:
        pdf.add_page()


def _formula(pdf: HandoutPDF, text: str) -> None:
    """A displayed formula, centred."""
    with pdf.local_context(font_size_pt=BODY + 1):
        pdf.multi_cell(0, 6.0, text, markdown=True, align="C", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(0.5)


def _head_style() -> FontFace:
    return FontFace(emphasis="", color=ACCENT, fill_color=TINT)


def _matrix_table(pdf: HandoutPDF, key_title: str, labels: Sequence[str],
                  blocks: Sequence[tuple[str, np.ndarray]], key_width: float = 22.0) -> None:
    """One table of several matrices side by side (same rows): a label column, then each matrix's columns under
    its title, blocks shaded alternately. Numbers are formatted by ``worked.fmt_rows``."""
    _need(pdf, (len(labels) + 1) * ROW_H + 3)
    widths = [m.shape[1] for _, m in blocks]
    rest = (pdf.epw - key_width) / sum(widths)
    col_widths = (key_width, *([rest] * sum(widths)))
    with pdf.local_context(font_size_pt=SMALL), pdf.table(
        col_widths=col_widths, width=pdf.epw, text_align="CENTER", markdown=True, headings_style=_head_style(),
        line_height=SMALL * 0.5, padding=(ROW_PAD, 0.5), borders_layout="SINGLE_TOP_LINE",
    ) as table:
        head = table.row()
        head.cell(key_title)
        for title, m in blocks:
            head.cell(title, colspan=m.shape[1])
        for r, label in enumerate(labels):
            row = table.row()
            row.cell(escape(label), align="LEFT")
            for b, (_, m) in enumerate(blocks):
                style = FontFace(fill_color=BAND) if b % 2 else None
                for value in fmt_rows(m)[r]:
                    row.cell(value, style=style)
    pdf.ln(1.5)


# ---------------------------------------------------------------------------------------------
# The sections.


def _title_and_settings(pdf: HandoutPDF, ho: Handout) -> None:
    s = ho.settings
    with pdf.local_context(font_size_pt=20, text_color=ACCENT):
        pdf.multi_cell(0, 10, f"**{pdf.t('handout.title')}**", markdown=True, align="L", new_x=XPos.LMARGIN,
                       new_y=YPos.NEXT)
    _para(pdf, pdf.t("handout.subtitle"), size=SMALL, color=GREY)
    _heading(pdf, pdf.t("handout.settings_title"))
    settings = ((pdf.t("handout.s_h"), str(s.n_heads)), (pdf.t("handout.s_d_head"), str(s.d_head)),
                (pdf.t("handout.s_d_model"),
                 pdf.t("handout.s_d_model_value", h=s.n_heads, d_head=s.d_head, d_model=s.d_model)))
    user = ((pdf.t("handout.s_sentence"), s.sentence),
            (pdf.t("handout.s_tokens", n=len(ho.tokens.tokens)), " | ".join(ho.tokens.tokens)))
    # Two tables that read as one: the settings in the handout's notation (markdown), then the user's text, which
    # is not markdown, so it prints as typed (its labels hold no notation).
    for rows, markdown in ((settings, True), (user, False)):
        with pdf.table(col_widths=(0.3, 0.7), width=pdf.epw, text_align="LEFT", first_row_as_headings=False,
                       line_height=BODY * 0.5, padding=(0.6, 1.5), borders_layout="HORIZONTAL_LINES",
                       markdown=markdown) as table:
            for label, value in rows:
                row = table.row()
                row.cell(label, style=FontFace(color=ACCENT))
                row.cell(value)
    if ho.tokens.dropped:
        _para(pdf, translate(ho.lang, "common.truncated", max=MAX_TOKENS, dropped=ho.tokens.dropped), size=SMALL,
              color=GREY, markdown=False)


def _pipeline(pdf: HandoutPDF, ho: Handout) -> None:
    s = ho.settings
    _heading(pdf, pdf.t("handout.pipeline_title"))
    _para(pdf, pdf.t("handout.pipeline_lead"))
    steps = (("handout.step_split", ("Q = XW^{Q},   K = XW^{K},   V = XW^{V}",
                             "Q → Q_{1}, …, Q_{h}   (K, V " + pdf.t("handout.likewise") + ")")),
             ("handout.step_attend", ("head_{i} = softmax(Q_{i}K_{i}ᵀ / √d_head) V_{i}",)),
             ("handout.step_concat", ("Concat(head_{1}, …, head_{h})",)),
             ("handout.step_wo", ("MultiHead(X) = Concat(head_{1}, …, head_{h}) W^{O}",)))
    for key, formulas in steps:
        _need(pdf, _para_height(pdf, pdf.t(key)) + 7 * len(formulas))
        _para(pdf, pdf.t(key))
        for f in formulas:
            _formula(pdf, f)
    _heading(pdf, pdf.t("handout.shapes_title", h=s.n_heads, d_head=s.d_head, n=len(ho.tokens.tokens)), level=1)
    with pdf.local_context(font_size_pt=SMALL), pdf.table(
        col_widths=(0.3, 0.17, 0.53), width=pdf.epw, text_align=("LEFT", "CENTER", "LEFT"), markdown=True,
        headings_style=_head_style(), line_height=SMALL * 0.5, padding=(0.5, 1.5),
        borders_layout="HORIZONTAL_LINES",
    ) as table:
        head = table.row()
        for key in ("handout.col_tensor", "handout.col_shape", "handout.col_meaning"):
            head.cell(pdf.t(key))
        for r in ho.shapes:
            row = table.row()
            row.cell(r.symbol)
            row.cell(" × ".join(str(d) for d in r.shape))
            row.cell(pdf.t(f"handout.shape_{r.meaning}", h=s.n_heads))
    pdf.ln(2)
    p = ho.params
    key = "handout.params_same" if p["total"] == ho.full_width_params else "handout.params_other"
    _para(pdf, pdf.t(key, q=f"{p['q']:,}", k=f"{p['k']:,}", v=f"{p['v']:,}", o=f"{p['o']:,}",
                     total=f"{p['total']:,}", full=f"{ho.full_width_params:,}"), size=SMALL)


def _worked(pdf: HandoutPDF, ho: Handout) -> None:
    wk, tr = ho.worked, ho.worked.trace
    row_h = ROW_H
    pdf.add_page()
    _heading(pdf, pdf.t("handout.worked_title"))
    labels = pdf.t("handout.worked_tokens").split()
    _para(pdf, pdf.t("handout.worked_lead", n=tr.x.shape[0], d_model=tr.d_model, h=tr.n_heads, d_head=tr.d_head,
                          decimals=DECIMALS))
    _heading(pdf, pdf.t("handout.worked_weights", d_model=tr.d_model, inner=wk.w_q.shape[1]), level=1)
    _matrix_table(pdf, pdf.t("handout.col_row"), [str(i + 1) for i in range(wk.w_q.shape[0])],
                  (("W^{Q}", wk.w_q), ("W^{K}", wk.w_k), ("W^{V}", wk.w_v), ("W^{O}", wk.w_o)))
    _heading(pdf, pdf.t("handout.worked_qkv", d_head=tr.d_head), level=1)
    _matrix_table(pdf, pdf.t("handout.col_token"), labels, (("X", tr.x), ("Q", tr.q), ("K", tr.k), ("V", tr.v)))
    _need(pdf, _para_height(pdf, pdf.t("handout.worked_exp"), SMALL) + 3 * row_h)
    _para(pdf, pdf.t("handout.worked_exp"), size=SMALL)
    pairs = wk.exp_table()
    with pdf.local_context(font_size_pt=SMALL), pdf.table(
        width=22.0 + 18.0 * len(pairs), col_widths=(22.0, *([18.0] * len(pairs))), text_align="CENTER",
        markdown=True, first_row_as_headings=False, line_height=SMALL * 0.5, padding=(ROW_PAD, 0.5), align="LEFT",
    ) as table:
        for name, values in (("s", [s for s, _ in pairs]), ("e^{s}", [e for _, e in pairs])):
            row = table.row()
            row.cell(name, style=_head_style())
            for v in fmt_rows(np.array(values))[0]:
                row.cell(v)
    pdf.ln(2)
    for i in range(tr.n_heads):
        _need(pdf, 12 + (len(labels) + 1) * row_h)
        _heading(pdf, pdf.t("handout.worked_head", i=i + 1), level=1)
        n = f"_{{{i + 1}}}"
        _matrix_table(pdf, pdf.t("handout.col_token"), labels, (
            (f"Q{n}", tr.q_heads[i]), (f"K{n}", tr.k_heads[i]), (f"V{n}", tr.v_heads[i]),
            (f"Q{n}K{n}ᵀ", tr.raw_scores[i]), (f"÷ √{tr.d_head}", tr.scores[i]), ("softmax", tr.weights[i]),
            (f"head{n}", tr.head_outputs[i]),
        ), key_width=18.0)
    favourite = [pdf.t("handout.list_sep").join(pdf.t("handout.quoted", token=labels[j]) for j in row)
                 for row in wk.favourite()]
    _para(pdf, pdf.t("handout.worked_heads", first=favourite[0], second=favourite[1]), size=SMALL)
    _need(pdf, 20 + (len(labels) + 1) * row_h)
    _heading(pdf, pdf.t("handout.worked_concat"), level=1)
    _matrix_table(pdf, pdf.t("handout.col_token"), labels,
                  (("Concat(head_{1}, head_{2})", tr.concat), ("Concat · W^{O}", tr.output)))
    _para(pdf, pdf.t("handout.worked_check", decimals=DECIMALS), size=SMALL, color=GREY)


def _answer_text(q: Question, order: tuple[str, ...]) -> str:
    """The right answer as printed on the answer page (option letters as the questions printed them)."""
    letter = {oid: LETTERS[i] for i, oid in enumerate(order)}
    if q.kind is Kind.SINGLE:
        oid = q.correct[0]
        return f"{letter[oid]}. {q.option(oid).text}"
    if q.kind is Kind.MULTIPLE:
        return ", ".join(letter[o] for o in sorted(q.correct, key=order.index))
    if q.kind is Kind.ORDERING:
        return " → ".join(letter[o] for o in q.correct)
    if q.kind is Kind.NUMERIC:
        assert q.value is not None
        return format_value(q.value, q.unit)
    return q.model_answer


def _questions(pdf: HandoutPDF, ho: Handout) -> None:
    pdf.add_page()
    _heading(pdf, pdf.t("handout.questions_title"))
    _para(pdf, pdf.t("handout.questions_lead", n=len(ho.questions)), size=SMALL, color=GREY)
    for i, (q, order) in enumerate(zip(ho.questions, ho.orders, strict=True), start=1):
        lines = [(f"**{i}.** {prompt_for(q, Medium.PRINT)}", BODY, BLACK, 0.0, 0.4),
                 (pdf.t(f"handout.kind_{q.kind.value}", n=len(q.options)), SMALL, GREY, 5.0, 0.6),
                 *((f"{LETTERS[j]}. {q.option(oid).text}", BODY, BLACK, 5.0, 0.3) for j, oid in enumerate(order))]
        space = 9.0 if q.kind is Kind.TEXT else 3.5 if q.kind is Kind.NUMERIC else 0.0
        _need(pdf, sum(_para_height(pdf, text, size, indent, after) for text, size, _, indent, after in lines) + space)
        for text, size, color, indent, after in lines:
            _para(pdf, text, size=size, color=color, indent=indent, after=after)
        if q.kind is Kind.NUMERIC:   # a line to write the number on
            with pdf.local_context(draw_color=GREY, line_width=0.2):
                pdf.line(pdf.l_margin + 5, pdf.get_y() + 4, pdf.l_margin + 65, pdf.get_y() + 4)
        pdf.ln(space + 2.0)


def _glossary(pdf: HandoutPDF, ho: Handout) -> None:
    pdf.add_page()
    _heading(pdf, pdf.t("handout.glossary_title"))
    _para(pdf, pdf.t("handout.glossary_lead", n=len(ho.glossary)), size=SMALL, color=GREY)
    other = next((code for code in LANGS if code != ho.lang), ho.lang)   # the glossary's other language
    with pdf.local_context(font_size_pt=TINY + 0.5), pdf.table(
        col_widths=(0.15, 0.15, 0.21, 0.49), width=pdf.epw, text_align="LEFT", headings_style=_head_style(),
        line_height=(TINY + 0.5) * 0.5, padding=(0.8, 1.0), borders_layout="HORIZONTAL_LINES", markdown=True,
    ) as table:
        head = table.row()
        for text in (translate(ho.lang, "common.lang_name"), translate(other, "common.lang_name"),
                     pdf.t("handout.col_symbol"), pdf.t("handout.col_definition")):
            head.cell(text)
        for term in ho.glossary:
            row = table.row()
            for text in (term.term(ho.lang), term.term(other), term.symbol, term.definition(ho.lang)):
                row.cell(text)


def _answers(pdf: HandoutPDF, ho: Handout) -> None:
    pdf.add_page()   # on its own page: a teacher can keep it back
    _heading(pdf, pdf.t("handout.answers_title"))
    for i, (q, order) in enumerate(zip(ho.questions, ho.orders, strict=True), start=1):
        answer = pdf.t("handout.answer_line", i=i, answer=_answer_text(q, order))   # no space after “答案：”
        _need(pdf, _para_height(pdf, answer) + _para_height(pdf, q.explanation, SMALL, 5))
        _para(pdf, answer)
        _para(pdf, q.explanation, size=SMALL, color=GREY, indent=5)


def render(ho: Handout) -> bytes:
    """The handout as PDF bytes."""
    pdf = HandoutPDF(ho.lang)
    pdf.alias_nb_pages()
    pdf.add_page()
    _title_and_settings(pdf, ho)
    _pipeline(pdf, ho)
    _worked(pdf, ho)
    _questions(pdf, ho)
    if ho.glossary:
        _glossary(pdf, ho)
    _answers(pdf, ho)
    return bytes(pdf.output())
