"""Why many low-dimensional heads beat one full-width head: one softmax row holds one distribution."""

import streamlit as st

from mha_core import demos
from mha_core.charts import base
from mha_core.markdown import escape as esc
from mha_core.ui import chart_downloads, prediction, render, state, t
from mha_core.ui.demos import two_targets
from mha_core.walkthrough import token_labels

render.page_header("why")
s = state.current()
render.walkthrough_or_stop(s)          # the sidebar's sentence must still be valid; this page uses its own

st.markdown(t("why.setup"))
# The default sentence of this language, whose verb, subject and object the catalog names.
sentence = t("common.default_sentence")
query, (first, second) = demos.role_positions(sentence, t("why.verb"), t("why.subject"), t("why.object"))
demo = two_targets(sentence, query, (first, second))
labels = token_labels(demo.tokens)
words = {"token": esc(demo.tokens[query]), "a": esc(demo.tokens[first]), "b": esc(demo.tokens[second])}
st.markdown(t("why.question", sentence=esc(sentence), **words))

prediction.predict("why-two-targets", t("why.predict", **words),
               [t("why.predict_one"), t("why.predict_two"), t("why.predict_none")], 1, t("why.predict_why"))

left, right = st.columns(2)
with left:
    render.chart(base.bar, demo.one_head, labels, title=t("why.one_head"), value_title=t("common.weight"),
                 colours=[base.head_colour(5)] * len(labels), height=22 * len(labels),
                 export=chart_downloads.Export("one-head"))
    st.metric(t("why.recover"), f"{demo.recover_one:.0%}")
with right:
    render.chart(base.lines, list(range(len(labels))), {t("why.head_a"): list(demo.two_heads[0]),
                                                        t("why.head_b"): list(demo.two_heads[1])},
                 title=t("why.two_heads"), x_title=t("common.key"), y_title=t("common.weight"),
                 height=22 * len(labels) - 40, export=chart_downloads.Export("two-heads"))
    st.metric(t("why.recover"), f"{demo.recover_two:.0%}")
st.markdown(t("why.explain", share=float(demo.one_head[first] + demo.one_head[second])))
st.caption(t("why.built", **words))

st.subheader(t("why.geometry_title"))
st.markdown(t("why.geometry"))

st.subheader(t("why.analogies_title"))
left, right = st.columns(2)
with left:
    st.markdown(t("overview.analogy"))
with right:
    st.markdown(t("why.cnn"))

render.check_yourself("why", ("why",))
render.next_steps("myths", "heads", "real")
