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
