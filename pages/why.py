"""Why many low-dimensional heads beat one full-width head: one softmax row holds one distribution."""

import streamlit as st

from mha_core import charts
from mha_core.errors import LabError
from mha_core.ui import frame, lessons, render, state, t

frame.ensure()

s = state.current()
render.page_header("why")
wt = render.walkthrough_or_stop(s)
labels = wt.labels

st.markdown(t("why.setup"))
if len(labels) < 3:
    render.show_error(LabError("why_short", "The demonstration needs at least three tokens."))
    st.stop()
demo = lessons.two_targets(s.sentence)
query, (first, second) = demo.query, demo.targets
st.markdown(t("why.question", token=labels[query], a=labels[first], b=labels[second]))

render.predict(f"why-{s.sentence}", t("why.predict", token=labels[query]),
               [t("why.predict_one"), t("why.predict_two"), t("why.predict_none")], 1, t("why.predict_why"))

left, right = st.columns(2)
with left:
    render.chart(lambda: charts.bar(demo.one_head, labels, title=t("why.one_head"), value_title=t("common.weight"),
                                    colours=[charts.head_colour(5)] * len(labels), height=22 * len(labels)),
                 s, "why.one")
    st.metric(t("why.recover"), f"{demo.recover_one:.0%}")
with right:
    render.chart(lambda: charts.lines(list(range(len(labels))), {t("why.head_a"): list(demo.two_heads[0]),
                                                                t("why.head_b"): list(demo.two_heads[1])},
                                      title=t("why.two_heads"), x_title=t("common.key"),
                                      y_title=t("common.weight"), height=22 * len(labels) - 40), s, "why.two")
    st.metric(t("why.recover"), f"{demo.recover_two:.0%}")
st.markdown(t("why.explain", share=float(demo.one_head[first] + demo.one_head[second])))

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
