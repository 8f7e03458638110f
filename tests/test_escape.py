"""User text inside markdown stays text: no image fetched, no link, no bold, no KaTeX, nothing dropped."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from mha_core.errors import LabError
from mha_core.markdown import escape, escape_params

HOSTILE = [
    "![i](http://127.0.0.1:9/x.png)",
    "[click](javascript:alert(1))",
    "**bold** __b__ *i* _i_ `code`",
    ":red[alarm] :material/warning: :smile:",
    "$x^2$ and $$y$$",
    "# heading\n- list\n> quote",
    "<img src=x onerror=alert(1)>",
    "a\\*b 1. 2) +3 |t| ~~s~~ &amp;",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_renders_as_itself(text):
    html = MarkdownIt("commonmark").render(escape(text))
    for tag in ("<img", "<a ", "<strong", "<em", "<code", "<h1", "<ul", "<ol", "<blockquote"):
        assert tag not in html, (text, html)
    inline = MarkdownIt("commonmark").renderInline(escape(text))
    plain = " ".join(text.splitlines())
    unescaped = inline.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
    assert unescaped == plain


def test_only_strings_are_escaped():
    assert escape_params({"n": 3, "name": "*x*"}) == {"n": 3, "name": r"\*x\*"}


def test_error_messages_escape_their_parameters():
    """A model name like ![i](url) must not make the browser fetch an image from the error box."""
    from streamlit.testing.v1 import AppTest

    def script():
        from mha_core.errors import LabError
        from mha_core.ui import render

        render.show_error(LabError("weight_mode", mode="![i](http://127.0.0.1:9/x.png)"))

    at = AppTest.from_function(script).run()
    assert not at.exception
    body = at.error[0].value
    assert "\\!\\[i\\]" in body and "![i](" not in body
    assert isinstance(LabError("k"), ValueError)


def test_a_table_keeps_every_cell_literal_and_in_its_column():
    """render.table draws markdown tables: a cell with ``|``, ``**`` or a link must stay one literal cell."""
    from mha_core.markdown import table_markdown

    names = [*HOSTILE, "plain"]
    md = table_markdown({"name": names, "weight": [0.5] * len(names), "n": list(range(len(names)))}, decimals=2)
    html = MarkdownIt("commonmark").enable("table").render(md)
    assert html.count("<tr>") == len(names) + 1                # a header row and one row per name, none split
    assert html.count("<td") == 3 * len(names)                 # three cells each: a | inside a name split nothing
    for tag in ("<img", "<a ", "<strong", "<em", "<code", "<h1"):
        assert tag not in html, html
    assert md.splitlines()[1] == "|:---|---:|---:|"             # text left, numbers right-aligned
    assert "| plain | 0.50 | 8 |" in md
    with pytest.raises(ValueError):
        table_markdown({"a": [1, 2], "b": [1]})


def test_prose_columns_are_the_ones_with_long_text():
    from mha_core.markdown import PROSE_CHARS, prose_columns

    cols = {"term": ["head", "mask"], "n": [1, 2], "definition": ["short", "x" * (PROSE_CHARS + 1)]}
    assert prose_columns(cols) == [3]
    assert prose_columns({"term": ["head"], "weight": [0.5]}) == []


def test_a_glossary_table_keeps_its_definitions_readable_on_a_phone():
    """The definition column (4th) gets a least width; the overview's table of numbers is left as it is."""
    from apphelpers import open_page
    from mha_core.ui.render import PROSE_WIDTH

    styles = [str(h.proto.body) for h in open_page("pages/glossary.py", "en").get("html")]
    assert any("td:nth-child(4)" in s and PROSE_WIDTH in s for s in styles)
    overview = [str(h.proto.body) for h in open_page("pages/overview.py", "en").get("html")]
    assert not any(PROSE_WIDTH in s for s in overview)
    # every lesson page's table of shapes keeps a shape whole ("10 × 64") and its "what it is" readable
    assert any("td:nth-child(2) code { white-space: nowrap; }" in s and "td:nth-child(3)" in s for s in overview)
