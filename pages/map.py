"""Where this knowledge point sits: relations to neighbouring topics, real examples, further reading."""

import streamlit as st

from mha_core.diagrams import relations_dot
from mha_core.i18n import cite_style
from mha_core.presets import preset
from mha_core.sources import reading_list
from mha_core.ui import lang, render, state, t
from mha_core.ui.nav import PAGES
from mha_core.ui.teacher_downloads import MAP_HANDOUT_KEY, handout_button

render.page_header("map")
NODES = ("kp002", "mha", "kp023", "kp029", "kp008", "kp024", "kp020", "kp030")
EDGES = (("kp002", "mha", "e_builds"), ("kp030", "mha", "e_subspaces"), ("mha", "kp023", "e_shares"),
         ("mha", "kp029", "e_composes"), ("mha", "kp008", "e_block"), ("mha", "kp024", "e_prunes"),
         ("mha", "kp020", "e_channels"))
st.graphviz_chart(relations_dot({n: t(f"map.n_{n}") for n in NODES}, "mha",
                                [(a, b, t(f"map.{e}")) for a, b, e in EDGES]), width="stretch")

pages = {p.key: p for p in PAGES}
st.subheader(t("map.where_title"))
for node, page_key in (("kp002", "prereq"), ("kp030", "split"), ("kp023", "cost"), ("kp029", "heads"),
                       ("kp024", "heads"), ("kp020", "why"), ("kp008", None)):
    st.markdown(t(f"map.rel_{node}"))
    if page_key in pages:
        render.page_link(page_key)

st.subheader(t("map.examples_title"))
# The Llama example's shapes come from mha_core.presets (never typed into the text).
LLAMA = {f"{name}{field}": value for name, key in (("l2_7b", "llama2_7b"), ("l2_70b", "llama2_70b"),
                                                   ("l3_8b", "llama3_8b"))
         for field, value in (("", preset(key).name), ("_h", preset(key).n_heads), ("_g", preset(key).n_kv_heads))}
for example, page_key in (("clark", "real"), ("voita", "heads"), ("induction", "heads"), ("llama", "cost")):
    with st.container(border=True):
        st.markdown(t(f"map.ex_{example}", **(LLAMA if example == "llama" else {})))
        if page_key in pages:
            render.page_link(page_key)

st.subheader(t("map.reading_title"))
st.caption(t("map.reading_lead"))
st.markdown(reading_list(lang(), cite_style(lang())))  # every entry of assets/sources.toml, in full

st.divider()
handout_button(state.current(), key=MAP_HANDOUT_KEY)   # the class's settings, printed (mha_core/handout)
