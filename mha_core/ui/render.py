"""Shared renderers every page uses: header, errors, shapes, source, heatmap grids."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from mha_core import charts
from mha_core.errors import LabError
from mha_core.inputs import MAX_TOKENS
from mha_core.markdown import escape_params
from mha_core.ui import compute
from mha_core.ui import frame as page_frame
from mha_core.ui.i18n import t
from mha_core.ui.state import Settings
from mha_core.walkthrough import Walkthrough


def page_header(key: str) -> None:
    """Title and one-line lead of a page (``<key>.title`` / ``<key>.lead``); a page's first call, so it first makes
    sure the page runs inside app.py's frame (see mha_core/ui/frame.py)."""
    page_frame.ensure()
    st.title(t(f"{key}.title"))
    st.caption(t(f"{key}.lead"))


def show_error(err: LabError) -> None:
    """A translated, student-readable message instead of a traceback (user text in it escaped)."""
    st.error(t(f"errors.{err.key}", **escape_params(err.params)), icon=":material/error:")


def walkthrough_or_stop(s: Settings) -> Walkthrough:
    """The trace for the settings; on bad input show why and stop the page (no traceback)."""
    try:
        wt = compute.walkthrough(s)
    except LabError as err:
        show_error(err)
        st.stop()
    if wt.tokens.dropped:
        st.info(t("common.truncated", max=MAX_TOKENS, dropped=wt.tokens.dropped), icon=":material/content_cut:")
    return wt


def shapes(rows: Sequence[tuple[str, tuple[int, ...], str]]) -> None:
    """A table of tensors: name, live shape, and what it is (i18n key)."""
    body = "\n".join(f"| `{name}` | `{' × '.join(map(str, shape))}` | {t(meaning)} |" for name, shape, meaning in rows)
    st.markdown(f"| {t('common.tensor')} | {t('common.shape')} | {t('common.meaning')} |\n|---|---|---|\n{body}")


def source(*objs: Callable) -> None:
    """The core functions' own source, as it ran: what the page shows is what this code computed."""
    with st.expander(t("common.code_that_ran"), icon=":material/code:"):
        for obj in objs:
            st.caption(f"`{obj.__module__}.{obj.__qualname__}`")
            st.code(inspect.getsource(obj), language="python")


def head_title(wt: Walkthrough, i: int) -> str:
    """"head i · what it was built for" (illustrative) or "head i" (random)."""
    kinds = wt.weights.head_kinds
    if kinds:
        return t("common.head_title_kind", i=i, kind=t(f"kinds.{kinds[i]}"))
    return t("common.head_title", i=i)


def heads_grid(
    wt: Walkthrough, mats: np.ndarray, key: tuple, *, value_title: str, signed: bool = False,
    per_row: int = 4, size: int = 200,
) -> None:
    """One heatmap per head, ``per_row`` to a row (rows stack on a phone); ``key`` names ``mats``."""
    labels = wt.labels
    n = mats.shape[0]
    domain = None if signed else (0.0, 1.0)
    for start in range(0, n, per_row):
        cols = st.columns(per_row)
        for j, i in enumerate(range(start, min(n, start + per_row))):
            with cols[j]:
                chart(lambda i=i: charts.heatmap(
                    mats[i], labels, labels, title=head_title(wt, i), row_title=t("common.query"),
                    col_title=t("common.key"), value_title=value_title, signed=signed, domain=domain, size=size,
                ), *key, i)


def diagram(dot: str, key: str) -> None:
    """Graphviz DOT, drawn afresh whenever it changes.

    Streamlit keeps one d3-graphviz instance per element position and morphs the old drawing into the new
    one; that path tweening cost ~200 ms of the browser's CPU per slider move (over 1 s on a slow phone).
    Moving the chart between two positions of its own container whenever ``dot`` changes makes each new
    drawing a fresh one (~10x cheaper); an unchanged ``dot`` stays where it is and is not redrawn.
    """
    memo = f"_diagram_{key}"
    last, flipped = st.session_state.get(memo, (None, False))
    flipped = flipped != (dot != last)
    st.session_state[memo] = (dot, flipped)
    with st.container():
        if flipped:
            st.empty()  # draws nothing; shifts the chart to the other position
        st.graphviz_chart(dot, width="stretch")


def table(columns: dict[str, Sequence], decimals: int = 3) -> None:
    """A small static table (drawn with the rest of the page, unlike a data grid), numbers to ``decimals``."""
    frame = pd.DataFrame(columns)
    st.table(frame.style.format(precision=decimals), hide_index=True, border="horizontal")


def next_steps(*keys: str) -> None:
    """Links to the pages that continue the lesson."""
    from mha_core.ui.nav import available_pages

    present = {p.key: p for p in available_pages()}
    links = [present[k] for k in keys if k in present]
    if not links:
        return
    st.divider()
    st.markdown(f"**{t('common.next')}**")
    for p in links:
        st.page_link(p.script, label=t(f"nav.{p.key}"), icon=p.icon)


@st.cache_data(max_entries=4096, show_spinner=False)
def _figure(_make: Callable[[], object], key: tuple) -> tuple[dict, pa.Table | None]:
    """(spec, data as an Arrow table): converted once per key, not on every rerun of every session."""
    spec, data = charts.spec_and_data(_make())
    return spec, None if data is None else pa.Table.from_pandas(data, preserve_index=False)


def chart(make: Callable[[], object], *key: object) -> None:
    """Draw the Altair chart ``make()`` builds; built once per ``key`` (which must name everything
    the chart depends on: settings, language, chart id), then served from the cache.

    In table view (sidebar switch) the chart is shown as the table of its numbers instead (a heatmap
    as its matrix).
    """
    spec, data = _figure(make, key)
    if st.session_state.get("tables") and data is not None:
        title = spec.get("title")
        if title:
            st.markdown(f"**{title}**")
        frame = data.to_pandas()
        heat = {"row", "col", "value"} <= set(frame.columns)
        st.dataframe(charts.as_table(frame) if heat else frame, width="stretch", hide_index=not heat)
        return
    st.vega_lite_chart(data, spec, width="stretch")


def predict(key: str, prompt: str, options: Sequence[str], answer: int, explanation: str) -> None:
    """Predict, then reveal: the student commits a guess before the page shows the answer.

    ``key`` should name the settings the answer depends on, so moving a slider asks again.
    """
    guess_key, shown_key = f"predict_{key}", f"predict_shown_{key}"
    with st.container(border=True):
        st.markdown(f"**{t('common.predict_title')}** {prompt}")
        choice = st.radio(t("common.predict_pick"), range(len(options)), index=None, key=guess_key,
                          format_func=list(options).__getitem__, label_visibility="collapsed",
                          disabled=shown_key in st.session_state)
        if shown_key not in st.session_state:
            # on_click, not the return value: a callback's effect survives a rerun (see frame.ensure)
            st.button(t("common.predict_reveal"), key=f"predict_btn_{key}", disabled=choice is None,
                      icon=":material/visibility:", on_click=_reveal, args=(guess_key, shown_key))
            return
        if st.session_state[shown_key] == answer:
            st.success(t("common.predict_right", answer=options[answer]), icon=":material/check_circle:")
        else:
            st.warning(t("common.predict_wrong", answer=options[answer]), icon=":material/lightbulb:")
        st.markdown(explanation)


def _reveal(guess_key: str, shown_key: str) -> None:
    st.session_state[shown_key] = st.session_state.get(guess_key)


def check_yourself(page_key: str, sections: Sequence[str] = ()) -> None:
    """The quiz questions that test this page's point (or these bank sections), and a link to them."""
    from mha_core.quiz import load_questions
    from mha_core.ui.i18n import lang
    from mha_core.ui.nav import available_pages

    quiz = next((p for p in available_pages() if p.key == "quiz"), None)
    questions = [q for q in load_questions(lang()) if q.teaches == page_key or q.section in sections]
    if quiz is None or not questions:
        return
    with st.container(border=True):
        st.markdown(f"**{t('common.check_yourself')}**")
        st.markdown("\n".join(f"- {q.title}" for q in questions))
        st.page_link(quiz.script, label=t("common.go_quiz", n=len(questions)), icon=quiz.icon)
