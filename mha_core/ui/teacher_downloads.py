"""Download buttons for the printable handout (PDF) and the quiz bank as Moodle XML.

The PDF takes a few seconds to typeset, so the button gets a callable: Streamlit runs it only when the teacher
clicks (on its own thread), and ``st.cache_data`` keeps each (language, h, d_head, sentence) built once. The
arguments are checked first, in the page run, so a bad sentence shows its translated message, never a traceback.
"""

from __future__ import annotations

import functools

import streamlit as st

from mha_core.errors import LabError
from mha_core.handout import QUESTION_IDS, check_handout, handout_pdf
from mha_core.quiz.moodle import DEFAULT_VARIANTS, moodle_xml
from mha_core.settings import Settings
from mha_core.ui import render
from mha_core.ui.i18n import lang, t

MOODLE_SEED = 0  # the numeric questions' draw in the export (the CLI's default --seed)
# Widget keys of the buttons where they are placed (one button per key on a page).
MAP_HANDOUT_KEY = "map_handout"
TEACHER_HANDOUT_KEY = "teacher_handout"
TEACHER_MOODLE_KEY = "teacher_moodle"


@st.cache_data(max_entries=16, show_spinner=False)
def _handout(code: str, h: int, d_head: int, sentence: str) -> bytes:
    """The handout's PDF bytes (cached on its arguments)."""
    return handout_pdf(code, h, d_head, sentence)


@st.cache_data(max_entries=8, show_spinner=False)
def _moodle(code: str, seed: int) -> bytes:
    """The quiz bank as Moodle XML (cached on language and seed)."""
    return moodle_xml(code, seed)


def handout_button(s: Settings, key: str) -> None:
    """A download button for the handout of these settings (h, d_head, sentence) in the UI language."""
    code = lang()
    try:
        check_handout(code, s.n_heads, s.d_head, s.sentence)
    except LabError as err:
        render.show_error(err)
        return
    st.download_button(
        t("handout.download"), functools.partial(_handout, code, s.n_heads, s.d_head, s.sentence),
        file_name=f"mha-handout-{code}-h{s.n_heads}-dh{s.d_head}.pdf", mime="application/pdf", key=key,
        help=t("handout.download_help", n=len(QUESTION_IDS)), on_click="ignore", icon=":material/picture_as_pdf:",
    )


def moodle_button(key: str) -> None:
    """A download button for the quiz bank as Moodle XML in the UI language."""
    code = lang()
    try:
        data = _moodle(code, MOODLE_SEED)
    except LabError as err:
        render.show_error(err)
        return
    st.download_button(
        t("handout.moodle_download"), data, file_name=f"mha-quiz-moodle-{code}.xml", mime="application/xml",
        key=key, help=t("handout.moodle_help", variants=DEFAULT_VARIANTS), on_click="ignore", icon=":material/quiz:",
    )
