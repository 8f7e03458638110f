"""MHA Lab · 多头注意力实验室 — the frame: page config, language, shared sidebar, navigation."""

import streamlit as st

from mha_core import threads
from mha_core.i18n import lang_from_locale
from mha_core.settings import LANG
from mha_core.ui import frame, live, present, shared_body, sidebar, state, url
from mha_core.ui.i18n import lang
from mha_core.ui.nav import spec

st.set_page_config(page_title="MHA Lab · 多头注意力实验室", page_icon=frame.icon(), layout="wide")

url.restore()  # a shared link's settings win over defaults
if LANG.key not in st.session_state:  # the browser's language, unless a link chose one
    st.session_state[LANG.key] = lang_from_locale(st.context.locale)
# The sidebar's keys, and what each page registered (state.keep) the first time it ran.
state.init_state(sidebar.KEPT)

sections = frame.sections(lang())
live_presenting = live.presenting()  # a live lesson's presenter keeps the sidebar: students follow its settings
bare = present.presenting() and not live_presenting  # the projector: large type, no sidebar, previous / next
current = st.navigation(sections, position="hidden" if bare else "sidebar", expanded=True)
current_key = current.url_path or "overview"  # the default page's url_path is ""

st.logo(frame.icon(), size="large")
with live.turn():  # class members' full runs take turns (a teacher's move reruns every follower at once)
    # Before the sidebar's widgets: a following student's settings are set before drawn. The view: a following
    # member's class and its live state, what classmates' runs may share.
    view = live.frame(current_key)
    pipeline = spec(current_key).pipeline
    if not bare:
        shared_body.draw(lambda: sidebar.controls(pipeline), current_key, view, part="sidebar")
    url.write(pipeline)
    url.notice()
    present.presentation(current_key, live=live_presenting)
    frame.run(current, current_key, view)
    live.drawn()  # the page ran to its end: a following student's screen shows the teacher's state
threads.settle()  # what this run imported stays out of the garbage collector's full walks (see mha_core.threads)
