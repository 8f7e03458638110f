"""The glossary: every term the app uses, in the current language with the other languages' terms beside it."""

import streamlit as st

from mha_core.glossary import GROUPS, load_glossary, search
from mha_core.i18n import LANGS
from mha_core.ui import lang, render, t
from mha_core.ui.pipeline import GLOSSARY_SEARCH_KEY

render.page_header("glossary")
here = lang()
others = [code for code in LANGS if code != here]
query = st.text_input(t("glossary.search"), key=GLOSSARY_SEARCH_KEY, placeholder=t("glossary.search_placeholder"))
found = search(load_glossary(), query)
if not found:
    st.info(t("glossary.none_found"))
for group in GROUPS:
    terms = [term for term in found if term.group == group]
    if not terms:
        continue
    st.subheader(t(f"glossary.group_{group}"))
    render.table({
        t("glossary.col_term"): [term.term(here) for term in terms],
        t("glossary.col_other"): [" · ".join(term.term(o) for o in others) for term in terms],
        t("glossary.col_symbol"): [term.symbol for term in terms],
        t("glossary.col_definition"): [term.definition(here) for term in terms],
    })
