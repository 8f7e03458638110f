"""Predict, then reveal — or, while a class is live, the same question as a class vote (mha_core.ui.live).

Its own module because it is the one place that knows both: render (drawing) stays below live in the import graph.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from mha_core.lesson.live import vote_key
from mha_core.ui import live
from mha_core.ui.i18n import t


def predict(key: str, prompt: str, options: Sequence[str], answer: int, explanation: str) -> None:
    """Predict, then reveal: the student commits a guess before the page shows the answer.

    ``key`` should name the settings the answer depends on, so moving a slider asks again; it must be stable and
    language-free: while a class is live, the prediction is a class vote keyed on (this page, ``key``).
    """
    if live.active_vote_role() is not None:
        live.vote_box(vote_key(live.current_page(), key), prompt, options, answer, explanation)
        return
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
