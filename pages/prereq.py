"""Prerequisite refresher (kp-002): scaled dot-product attention for one head, one query, step by step."""

import numpy as np
import streamlit as st

from mha_core import scaled_dot_product_attention
from mha_core.charts import base
from mha_core.demos import REFRESHER_KIND, one_head, refresher_query
from mha_core.inputs import HEAD_KINDS
from mha_core.ui import bound_t, chart_downloads, render, state, t
from mha_core.ui.demos import single_head
from mha_core.ui.pipeline import KEPT, PREREQ_KIND_KEY, PREREQ_QUERY_KEY, PREREQ_SHARP_KEY

render.page_header("prereq")
state.keep(KEPT)
s = state.current()
wt = render.walkthrough_or_stop(s)
labels = wt.labels
st.latex(r"\operatorname{Attention}(Q,K,V)=\operatorname{softmax}\!\Big(\frac{QK^{\top}}{\sqrt{d}}\Big)V")
st.markdown(t("prereq.intro"))

bound = bound_t()
c1, c2, c3 = st.columns(3)
state.valid_choice(PREREQ_KIND_KEY, HEAD_KINDS, REFRESHER_KIND)
kind = c1.selectbox(t("prereq.kind"), HEAD_KINDS, key=PREREQ_KIND_KEY, format_func=lambda k: bound(f"kinds.{k}"))
state.valid_choice(PREREQ_QUERY_KEY, range(len(labels)), refresher_query(len(labels)))
query = c2.selectbox(t("prereq.query"), range(len(labels)), key=PREREQ_QUERY_KEY,
                     format_func=labels.__getitem__)
sharp = c3.slider(t("prereq.sharpness"), 0.1, 3.0, step=0.1, key=PREREQ_SHARP_KEY, help=t("prereq.sharpness_help"))

head = single_head(s.sentence, kind)
step = one_head(head.q, head.k, head.v, min(query, len(labels) - 1), temperature=1 / sharp)
st.markdown(t("prereq.step1", token=labels[step.query], d=head.q.shape[1]))
left, right = st.columns(2)
with left:
    render.chart(base.bar, step.scores, labels, title=t("prereq.scores"), value_title=t("common.score"),
                 colours=[base.head_colour(4)] * len(labels), height=22 * len(labels),
                 export=chart_downloads.Export("scores"))
with right:
    render.chart(base.bar, step.weights, labels, title=t("prereq.weights"), value_title=t("common.weight"),
                 colours=[base.head_colour(0)] * len(labels), height=22 * len(labels),
                 export=chart_downloads.Export("weights"))
top = int(np.argmax(step.weights))
st.markdown(t("prereq.step2", top=labels[top], weight=float(step.weights[top]), total=float(step.weights.sum())))
st.markdown(t("prereq.step3", d=head.v.shape[1]))
render.table({t("prereq.col_token"): labels, t("prereq.col_weight"): step.weights,
              t("prereq.col_share"): [f"{w:.0%}" for w in step.weights]})
st.markdown(t("prereq.bridge"))

render.source(scaled_dot_product_attention)
render.next_steps("overview", "split")
