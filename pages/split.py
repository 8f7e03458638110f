"""Step 1 — split: X → Q, K, V → h heads of d_head columns each."""

import numpy as np
import streamlit as st

from mha_core import charts, merge_heads, split_heads
from mha_core.inputs import split_dims
from mha_core.ui import render, state, t

render.page_header("split")
PER_HEAD = charts.PER_HEAD_COLUMNS  # columns drawn per head block; wider heads are cut, and the caption says so

s = state.current()
wt = render.walkthrough_or_stop(s)
tr = wt.trace
labels = wt.labels

st.latex(r"Q = XW^Q,\quad K = XW^K,\quad V = XW^V")
st.latex(r"(n\times d_{\text{model}})\,(d_{\text{model}}\times h\,d_{\text{head}})")
st.markdown(t("split.explain", h=tr.n_heads, d_head=tr.d_head, d_model=tr.d_model, width=tr.n_heads * tr.d_head))

n_tok, h, d = len(labels), tr.n_heads, tr.d_head
shapes_asked = [f"{n_tok} × {h * d}", f"{h} × {n_tok} × {d}", f"{d} × {h} × {n_tok}", f"{n_tok} × {d}"]
render.predict(f"split-{n_tok}-{h}-{d}", t("split.predict", n=n_tok, h=h, d_head=d), shapes_asked,
               shapes_asked.index(" × ".join(map(str, tr.q_heads.shape))), t("split.predict_why"))

st.subheader(t("split.x_title"))
d_c, d_p = split_dims(tr.d_model)
st.caption(t("split.x_caption", d_c=d_c, d_p=d_p))
x_cols = charts.column_subset(tr.d_model, 2, 64)  # first 64 dims of each half
render.chart(lambda: charts.heatmap(tr.x[:, x_cols], labels, [str(j) for j in x_cols], signed=True,
                                    row_title=t("split.token"), col_title=t("split.dim"),
                                    value_title=t("split.value"), show_col_labels=False), s, "split.x")
if len(x_cols) < tr.d_model:
    st.caption(t("split.cut_x", shown=len(x_cols), total=tr.d_model))

which = st.segmented_control(t("split.which"), ["Q", "K", "V"], default="Q", key="split_which") or "Q"
full = {"Q": tr.q, "K": tr.k, "V": tr.v}[which]
per_head = {"Q": tr.q_heads, "K": tr.k_heads, "V": tr.v_heads}[which]

st.subheader(t("split.blocks_title", m=which))
render.chart(lambda: charts.columns_by_head(full, tr.n_heads, labels, head_label=t("split.head"),
                                            row_title=t("split.token"), col_title=t("split.column"),
                                            per_head=PER_HEAD), s, "split.blocks", which)
st.caption(t("split.blocks_caption", m=which, h=tr.n_heads, d_head=tr.d_head))
if tr.d_head > PER_HEAD:
    st.caption(t("split.cut_heads", shown=PER_HEAD, d_head=tr.d_head))

st.subheader(t("split.heads_title", m=which, h=tr.n_heads, n=len(labels), d_head=tr.d_head))
keep = np.arange(min(tr.d_head, PER_HEAD))
per_row = 4
for start in range(0, tr.n_heads, per_row):
    cols = st.columns(per_row)
    for j, i in enumerate(range(start, min(tr.n_heads, start + per_row))):
        with cols[j]:
            render.chart(lambda i=i: charts.heatmap(per_head[i][:, keep], labels, [str(c) for c in keep], signed=True,
                                                    title=render.head_title(wt, i), value_title=t("split.value"),
                                                    show_col_labels=False, size=180), s, "split.head", which, i)

st.subheader(t("split.check_title"))
c1, c2 = st.columns(2)
roundtrip = float(np.max(np.abs(merge_heads(split_heads(tr.q, tr.n_heads)) - tr.q)))
block = tr.x @ wt.weights.w_q[:, : tr.d_head]
own = float(np.max(np.abs(block - tr.q_heads[0])))
c1.metric(t("split.roundtrip"), f"{roundtrip:.1e}")
c2.metric(t("split.block_check"), f"{own:.1e}")
st.caption(t("split.check_caption"))

render.shapes([
    ("X", tr.x.shape, "split.m_x"),
    ("W^Q", wt.weights.w_q.shape, "split.m_wq"),
    ("Q = XW^Q", tr.q.shape, "split.m_q"),
    ("split_heads(Q)", tr.q_heads.shape, "split.m_qh"),
    ("split_heads(K), split_heads(V)", tr.k_heads.shape, "split.m_kvh"),
])
render.source(split_heads, merge_heads)
render.check_yourself("split")
render.next_steps("attend")
