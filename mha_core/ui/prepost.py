"""The pre/post concept test on the class page: the teacher opens the pre- or post-test and reads the results
(⟨g⟩, per-item gains, item analysis with flags, response times, students missing a test, the CSV); a joined student
takes the open test one question at a time, so each answer's time runs from when its question was shown.

Everything lives in the database (mha_core.classroom.prepost): which test is open, when each question was shown,
each answer. Display names appear only inside dataframes.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from mha_core.classroom import ClassInfo, Member, shown_name
from mha_core.classroom.prepost import ItemReport, PrePostStore, class_results, quiz_report, results_csv
from mha_core.errors import LabError
from mha_core.quiz import concept, student_seed
from mha_core.quiz.analysis import Flag, gain_bands
from mha_core.quiz.bank import load_questions
from mha_core.quiz.progress import presented_order
from mha_core.ui import render
from mha_core.ui.class_services import storage
from mha_core.ui.i18n import bound_t, lang, t

OPEN_KEY = "prepost_open"            # widget: the test open for the class (teacher)
CSV_KEY = "prepost_csv"              # button
FLASH_KEY = "prepost_flash"          # session: a LabError a callback left, to show once
CHOICES = ("none", *concept.TESTS)


def _store() -> PrePostStore:
    return PrePostStore(storage())


def _flash(err: LabError) -> None:
    render.flash(FLASH_KEY, err)


def _num(x: float | None, pattern: str = "{:.2f}") -> str:
    """A statistic as the tables show it: '–' when undefined."""
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else pattern.format(x)


# --- teacher ---

def _on_open(class_id: int) -> None:
    choice = st.session_state.get(OPEN_KEY) or "none"
    try:
        _store().set_open_test(class_id, None if choice == "none" else choice)
    except LabError as err:
        _flash(err)


def teacher_panel(info: ClassInfo) -> None:
    """Open a test for the class and show what the class's answers say."""
    bound = bound_t()
    with st.expander(t("prepost.title"), icon=":material/trending_up:"):
        st.markdown(t("prepost.intro", n=len(concept.items())))
        try:
            current = _store().open_test(info.id)
            rows = _store().rows(info.id)
            members = storage().students(info.id)
            quiz_rows = storage().answers(info.id)
        except LabError as err:
            render.show_error(err)
            return
        st.session_state[OPEN_KEY] = current or "none"
        st.segmented_control(t("prepost.open_label"), CHOICES, key=OPEN_KEY, on_change=_on_open, args=(info.id,),
                             format_func=lambda c: bound(f"prepost.open_{c}"))
        render.show_flash(FLASH_KEY)
        res = class_results(rows, members)
        m = res.matched
        cols = st.columns(4)
        cols[0].metric(t("prepost.m_gain"), _num(m.class_gain))
        cols[1].metric(t("prepost.m_pre"), _num(m.pre_mean, "{:.0%}"))
        cols[2].metric(t("prepost.m_post"), _num(m.post_mean, "{:.0%}"))
        cols[3].metric(t("prepost.m_matched"), len(m.gains))
        if not res.pre_scores and not res.post_scores:
            st.caption(t("prepost.no_results"))
        else:
            st.caption(t("prepost.bands", **{b.value: n for b, n in gain_bands(m.gains.values()).items()}))
            _gains_table(res)
            _missing(res, members, info.anonymous)
            st.caption(t("prepost.alpha", pre=_num(res.pre.analysis.alpha), post=_num(res.post.analysis.alpha)))
            ids = storage().pseudonyms(info.id) if info.anonymous else None  # an anonymous class: opaque ids
            st.download_button(t("prepost.csv"), results_csv(info.code, res, rows, ids=ids),
                               file_name=f"prepost-{info.code}.csv", mime="text/csv", icon=":material/download:",
                               key=CSV_KEY, on_click="ignore")
        _quiz_analysis(quiz_report(quiz_rows, [q.id for q in load_questions(lang())]))
        st.markdown(t("prepost.method"))


def _flags(flags: frozenset[Flag]) -> str:
    return t("prepost.flag_sep").join(t(f"prepost.flag_{f}") for f in sorted(flags)) or "–"


def _gains_table(res) -> None:  # noqa: ANN001 - ClassResults
    """Per item: facility before and after, its gain, post-test discrimination, flags and response times."""
    bound = bound_t()
    titles = {q.id: q.title for q in concept.questions("a", lang())}
    post, pre = res.post.analysis, res.pre.analysis
    st.subheader(t("prepost.items_title"), anchor=False)
    st.dataframe(pd.DataFrame({
        bound("prepost.col_item"): [titles[g.item_id] for g in res.items],
        bound("prepost.col_pre"): [_num(g.pre, "{:.0%}") for g in res.items],
        bound("prepost.col_post"): [_num(g.post, "{:.0%}") for g in res.items],
        bound("prepost.col_gain"): [_num(g.gain) for g in res.items],
        bound("prepost.col_discrimination"): [f"{_num(a)} / {_num(b)}" for a, b in
                                               zip(pre.discrimination, post.discrimination, strict=True)],
        bound("prepost.col_flags"): [_flags(f) for f in post.flags],
        bound("prepost.col_median"): [_num(res.post.timing[g.item_id].median, "{:.0f}") for g in res.items],
        bound("prepost.col_p90"): [_num(res.post.timing[g.item_id].p90, "{:.0f}") for g in res.items],
    }), hide_index=True, width="stretch")
    st.caption(t("prepost.items_caption"))


def _missing(res, members, anonymous: bool = False) -> None:  # noqa: ANN001 - ClassResults, StudentRows
    """Students who took only one test, or neither: reported, never dropped silently (an anonymous class's as
    counts only)."""
    m = res.matched
    missing = [(sid, "post") for sid in m.only_pre] + [(sid, "pre") for sid in m.only_post] + [
        (sid, "both") for sid in res.took_neither]
    st.subheader(t("prepost.missing_title", n=len(missing)), anchor=False)
    if not missing:
        st.caption(t("prepost.missing_none"))
        return
    if anonymous:
        st.caption(t("prepost.missing_counts", post=len(m.only_pre), pre=len(m.only_post),
                     both=len(res.took_neither)))
        return
    bound = bound_t()
    st.dataframe(pd.DataFrame({
        bound("prepost.col_name"): [shown_name(res.names.get(sid, "")) for sid, _ in missing],
        bound("prepost.col_missing"): [bound(f"prepost.missing_{which}") for _, which in missing],
    }), hide_index=True, width="stretch")


def _quiz_analysis(report: ItemReport) -> None:
    """Moodle's item analysis over the class's quiz answers."""
    st.subheader(t("prepost.quiz_title"), anchor=False)
    if not report.item_ids:
        st.caption(t("prepost.quiz_none"))
        return
    bound = bound_t()
    titles = {q.id: q.title for q in load_questions(lang())}
    a = report.analysis
    st.dataframe(pd.DataFrame({
        bound("prepost.col_question"): [titles.get(q, q) for q in report.item_ids],
        bound("prepost.col_facility"): [_num(f) for f in a.facility],
        bound("prepost.col_discrimination"): [_num(d) for d in a.discrimination],
        bound("prepost.col_flags"): [_flags(f) for f in a.flags],
    }), hide_index=True, width="stretch")
    st.caption(t("prepost.quiz_caption", n=a.n_students, alpha=_num(a.alpha)))


# --- student ---

def _answer_key(test: str, item_id: str) -> str:
    return f"prepost_pick_{test}_{item_id}"


def _on_answer(m: Member, test: str, item_id: str) -> None:
    choice = st.session_state.get(_answer_key(test, item_id))
    if choice is None:
        _flash(LabError("prepost_pick_first"))
        return
    try:
        _store().answer(m, test, item_id, choice)
    except LabError as err:
        _flash(err)


def student_panel(m: Member) -> None:
    """The open test, one question at a time (its time runs from when it is first shown); nothing when no test
    is open."""
    try:
        store = _store()
        test = store.open_test(m.class_id)
        if test is None:
            return
        done = {r.item_id for r in store.rows(m.class_id, student_id=m.student_id)
                if r.test == test and r.choice is not None}
    except LabError as err:
        render.show_error(err)
        return
    name = t(f"prepost.test_{test}")
    with st.container(border=True):
        st.subheader(t("prepost.student_title", test=name), anchor=False)
        render.show_flash(FLASH_KEY)
        todo = [i for i in concept.items() if i.id not in done]
        if not todo:
            st.success(t("prepost.done", test=name), icon=":material/check:")
            return
        st.caption(t("prepost.student_intro"))
        item = todo[0]
        form = concept.form_for(m.code, m.key, test)
        q = concept.question(item.id, form, lang())
        try:
            store.open_item(m, test, item.id)
        except LabError as err:
            render.show_error(err)
            return
        st.progress(len(done) / len(concept.items()),
                    text=t("prepost.progress", i=len(done) + 1, n=len(concept.items())))
        st.markdown(q.stem)
        texts = {o.id: o.text for o in q.options}
        st.radio(t("prepost.choose"), presented_order(q, student_seed(m.key)),
                 key=_answer_key(test, item.id), index=None, format_func=texts.__getitem__)
        st.button(t("prepost.submit"), key=f"prepost_submit_{test}_{item.id}", type="primary",
                  icon=":material/send:", on_click=_on_answer, args=(m, test, item.id))

