"""MHA Lab · 多头注意力实验室 — the frame: page config, language, shared sidebar, navigation."""

import streamlit as st

from mha_core.i18n import lang_from_locale
from mha_core.ui import sidebar, state, t
from mha_core.ui.nav import available_pages

st.set_page_config(page_title="MHA Lab · 多头注意力实验室", page_icon="assets/icon.png", layout="wide")

if "lang" not in st.session_state:
    st.session_state["lang"] = lang_from_locale(st.context.locale)
state.init_state()

specs = available_pages()
pages = {spec.key: st.Page(spec.script, title=t(f"nav.{spec.key}"), icon=spec.icon, url_path=spec.key,
                           default=spec.key == "overview") for spec in specs}
sections: dict[str, list[st.Page]] = {}
for spec in specs:
    sections.setdefault(t(spec.section), []).append(pages[spec.key])
current = st.navigation(sections)

st.logo("assets/icon.png", size="large")
sidebar.language_switch()
if next(s for s in specs if pages[s.key] == current).pipeline:
    sidebar.pipeline_controls()
current.run()
