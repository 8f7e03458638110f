"""Step 1 — split: X → Q, K, V → h heads of d_head columns each."""

import numpy as np
import streamlit as st

from mha_core import merge_heads, split_heads
from mha_core.charts import base, pipeline
from mha_core.inputs import split_dims
from mha_core.ui import chart_downloads, prediction, render, state, t
from mha_core.ui.pipeline import SPLIT_WHICH_KEY

render.page_header("split")
PER_HEAD = pipeline.PER_HEAD_COLUMNS  # columns drawn per head block; wider heads are cut, and the caption says so

s = state.current()
wt = render.walkthrough_or_stop(s)
trace = wt.trace
labels = wt.labels

st.latex(r"Q = XW^Q,\quad K = XW^K,\quad V = XW^V")
st.latex(r"(n\times d_{\text{model}})\,(d_{\text{model}}\times h\,d_{\text{head}})")
st.markdown(t("split.explain", h=trace.n_heads, d_head=trace.d_head, d_model=trace.d_model,
              width=trace.n_heads * trace.d_head))

n_tok, h, d = len(labels), trace.n_heads, trace.d_head
shapes_asked = [f"{n_tok} × {h * d}", f"{h} × {n_tok} × {d}", f"{d} × {h} × {n_tok}", f"{n_tok} × {d}"]
prediction.predict(f"split-{n_tok}-{h}-{d}", t("split.predict", n=n_tok, h=h, d_head=d), shapes_asked,
               shapes_asked.index(" × ".join(map(str, trace.q_heads.shape))), t("split.predict_why"))

st.subheader(t("split.x_title"))
d_c, d_p = split_dims(trace.d_model)
st.caption(t("split.x_caption", d_c=d_c, d_p=d_p))
x_cols = pipeline.column_subset(trace.d_model, 2, 64)  # first 64 dims of each half
render.chart(base.heatmap, trace.x[:, x_cols], labels, [str(j) for j in x_cols], signed=True,
             row_title=t("split.token"), col_title=t("split.dim"), value_title=t("split.value"), show_col_labels=False,
             export=chart_downloads.matrix(trace.x, labels, [str(j) for j in range(trace.d_model)], "x"))
if len(x_cols) < trace.d_model:
    st.caption(t("split.cut_x", shown=len(x_cols), total=trace.d_model))

which = st.segmented_control(t("split.which"), ["Q", "K", "V"], default="Q", key=SPLIT_WHICH_KEY) or "Q"
full = {"Q": trace.q, "K": trace.k, "V": trace.v}[which]
per_head = {"Q": trace.q_heads, "K": trace.k_heads, "V": trace.v_heads}[which]

st.subheader(t("split.blocks_title", m=which))
render.chart(pipeline.columns_by_head, full, trace.n_heads, labels, head_label=t("split.head"),
             row_title=t("split.token"), col_title=t("split.column"), per_head=PER_HEAD,
             largest_title=t("split.block_largest"), export=chart_downloads.Export("columns"))
st.caption(t("split.blocks_caption", m=which, h=trace.n_heads, d_head=trace.d_head))
if trace.d_head > PER_HEAD:
    st.caption(t("split.cut_heads", shown=PER_HEAD, d_head=trace.d_head))

st.subheader(t("split.heads_title", m=which, h=trace.n_heads, n=len(labels), d_head=trace.d_head))
keep = np.arange(min(trace.d_head, PER_HEAD))
render.chart(pipeline.head_grid, per_head[:, :, keep], labels, [str(c) for c in keep],
             [render.head_title(wt, i) for i in range(trace.n_heads)], row_title=t("split.token"),
             col_title=t("split.dim"), value_title=t("split.value"), signed=True, show_col_labels=False, size=150,
             export=chart_downloads.Export("heads"))

st.subheader(t("split.check_title"))
c1, c2 = st.columns(2)
roundtrip = float(np.max(np.abs(merge_heads(split_heads(trace.q, trace.n_heads)) - trace.q)))
block = trace.x @ wt.weights.w_q[:, : trace.d_head]
own = float(np.max(np.abs(block - trace.q_heads[0])))
c1.metric(t("split.roundtrip"), f"{roundtrip:.1e}")
c2.metric(t("split.block_check"), f"{own:.1e}")
st.caption(t("split.check_caption"))

render.shapes([
    ("X", trace.x.shape, "split.m_x"),
    ("W^Q", wt.weights.w_q.shape, "split.m_wq"),
    ("Q = XW^Q", trace.q.shape, "split.m_q"),
    ("split_heads(Q)", trace.q_heads.shape, "split.m_qh"),
    ("split_heads(K), split_heads(V)", trace.k_heads.shape, "split.m_kvh"),
])
render.source(split_heads, merge_heads)
render.check_yourself("split")
render.next_steps("attend")
