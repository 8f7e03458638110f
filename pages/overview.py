"""Overview: the definition, why it matters, the pipeline drawn for the current h, the analogy."""

import streamlit as st

from mha_core import multi_head_attention
from mha_core.diagrams import pipeline_svg
from mha_core.ui import compute, prediction, render, state, t

render.page_header("overview")
s = state.current()
wt = render.walkthrough_or_stop(s)
trace = wt.trace

st.info(t("overview.definition"), icon=":material/lightbulb:")

st.subheader(t("overview.pipeline_title"))
names = [t(f"kinds.{k}") for k in wt.weights.head_kinds] if wt.weights.head_kinds else []
stage_labels = {k: t(f"overview.stage_{k}") for k in ("input", "concat", "wo", "output")}
stage_labels["head"] = t("common.head_title", i="{i}")
shape = (trace.n_heads, len(wt.labels), trace.d_model, trace.d_head, names, stage_labels)
render.svg_diagram(pipeline_svg(*shape, title=t("overview.pipeline_title")), "pipeline",
                   alt=t("overview.pipeline_alt", h=trace.n_heads, n=len(wt.labels), d_model=trace.d_model,
                         d_head=trace.d_head))
st.latex(r"\text{head}_i=\operatorname{Attention}(XW_i^Q,\;XW_i^K,\;XW_i^V)")
st.latex(r"\begin{aligned}&\operatorname{MultiHead}(X)\\&\quad=\operatorname{Concat}(\text{head}_1,\dots,"
         r"\text{head}_h)\,W^O\end{aligned}")  # two lines: one is too wide for a phone
st.markdown(t("overview.pipeline_caption", h=trace.n_heads, d_head=trace.d_head, d_model=trace.d_model,
              n=len(wt.labels)))

mine, single = compute.counts(s)
ratio = 0 if mine["total"] > single["total"] else 1 if mine["total"] == single["total"] else 2
prediction.predict(f"overview-{s.n_heads}-{s.d_model}", t("overview.predict", h=s.n_heads, d_model=s.d_model),
               [t("overview.predict_more", h=s.n_heads), t("overview.predict_same"),
                t("overview.predict_less", h=s.n_heads)], ratio,
               t("overview.predict_why", total=mine["total"], single=single["total"]))

st.subheader(t("overview.live_title"))
pick = st.selectbox(t("overview.pick_token"), range(len(wt.labels)), index=len(wt.labels) // 2,
                    format_func=lambda i: wt.labels[i])
render.table({
    t("overview.col_head"): [render.head_title(wt, i) for i in range(trace.n_heads)],
    t("overview.col_looks_at"): [wt.labels[int(trace.weights[i, pick].argmax())] for i in range(trace.n_heads)],
    t("overview.col_weight"): [float(trace.weights[i, pick].max()) for i in range(trace.n_heads)],
})
st.caption(t("common.illustrative_note") if wt.weights.head_kinds else t("common.random_note"))

left, right = st.columns(2)
with left:
    st.subheader(t("overview.why_title"))
    st.markdown(t("overview.why"))
with right:
    st.subheader(t("overview.analogy_title"))
    st.markdown(t("overview.analogy"))

render.shapes([
    ("X", trace.x.shape, "overview.m_x"),
    ("head_i", trace.head_outputs.shape[1:], "overview.m_head"),
    ("Concat", trace.concat.shape, "overview.m_concat"),
    ("W^O", wt.weights.w_o.shape, "overview.m_wo"),
    ("MultiHead(X)", trace.output.shape, "overview.m_out"),
])
render.source(multi_head_attention)
render.check_yourself("overview")
render.next_steps("split", "attend", "concat")
