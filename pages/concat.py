"""Step 3 — concat + W^O: the heads side by side, then a learned fusion back to d_model."""

import numpy as np
import streamlit as st

from mha_core import merge_heads
from mha_core.charts import base, pipeline
from mha_core.ui import chart_downloads, compute, prediction, render, state, t
from mha_core.ui.pipeline import concat_on_key
from mha_core.walkthrough import averaging_matrix, fuse_with_head_gains, head_contributions

render.page_header("concat")
s = state.current()
wt = render.walkthrough_or_stop(s)
trace, w_o, labels = wt.trace, wt.weights.w_o, wt.labels
heads = list(range(trace.n_heads))

st.latex(r"\operatorname{Concat}(\text{head}_1,\dots,\text{head}_h)\,W^O")
st.latex(r"=\sum_{i=1}^{h}\text{head}_i\,W^O_i")
st.markdown(t("concat.explain", h=trace.n_heads, d_head=trace.d_head, width=trace.n_heads * trace.d_head,
              d_model=trace.d_model))

st.subheader(t("concat.side_title"))
render.chart(pipeline.columns_by_head, trace.concat, trace.n_heads, labels, head_label=t("split.head"),
             row_title=t("split.token"), col_title=t("split.column"),
             largest_title=t("split.block_largest"), export=chart_downloads.Export("concat"))
st.caption(t("concat.side_caption"))

st.subheader(t("concat.fuse_title"))
short_names = [t("common.head_title", i=i) for i in heads]
on = st.pills(t("concat.listen"), heads, selection_mode="multi", default=heads, key=concat_on_key(trace.n_heads),
              format_func=short_names.__getitem__) or []
gains = np.array([1.0 if i in on else 0.0 for i in heads])
fused = fuse_with_head_gains(trace, w_o, gains)
change = float(np.linalg.norm(fused - trace.output) / max(np.linalg.norm(trace.output), 1e-12))
parts = np.linalg.norm(head_contributions(trace, w_o), axis=(1, 2)) * gains
left, right = st.columns(2)
with left:
    render.chart(base.bar, parts, [render.head_title(wt, i) for i in heads], title=t("concat.share_title"),
                 value_title=t("concat.share_axis"), step=26,
                 export=chart_downloads.Export("shares"))
with right:
    st.metric(t("concat.change"), f"{change:.0%}")
    st.caption(t("concat.change_caption"))
out_cols = pipeline.column_subset(trace.d_model, trace.n_heads)
render.chart(base.heatmap, fused[:, out_cols], labels, [str(j) for j in out_cols], signed=True,
             title=t("concat.output_title"), row_title=t("split.token"), col_title=t("split.dim"),
             value_title=t("split.value"), show_col_labels=False,
             export=chart_downloads.matrix(fused, labels, [str(j) for j in range(fused.shape[1])], "output"))

st.subheader(t("concat.avg_title"))
err_wo, err_avg = compute.recovery(s)
prediction.predict(f"concat-{trace.n_heads}-{trace.d_head}", t("concat.predict", h=trace.n_heads),
               [t("concat.predict_yes"), t("concat.predict_no")], 0 if err_avg < 1e-6 else 1,
               t("concat.predict_why", h=trace.n_heads))
avg = averaging_matrix(trace.n_heads, trace.d_head)
mean_heads = trace.concat @ avg
a1, a2 = st.columns(2)
a1.metric(t("concat.recover_wo"), f"{err_wo:.1%}")
a2.metric(t("concat.recover_avg"), f"{err_avg:.1%}")
st.markdown(t("concat.avg_explain", h=trace.n_heads, d_head=trace.d_head, width=trace.n_heads * trace.d_head))
avg_cols = np.arange(min(trace.d_head, 64))
render.chart(base.heatmap, mean_heads[:, avg_cols], labels, [str(j) for j in avg_cols], signed=True,
             title=t("concat.avg_map"), row_title=t("split.token"), col_title=t("split.dim"),
             value_title=t("split.value"), show_col_labels=False, size=200,
             export=chart_downloads.matrix(mean_heads, labels, [str(j) for j in range(mean_heads.shape[1])], "mean"))

render.shapes([
    ("head_i", trace.head_outputs.shape[1:], "concat.m_head"),
    ("Concat", trace.concat.shape, "concat.m_concat"),
    ("W^O", w_o.shape, "concat.m_wo"),
    ("W^O_i", (trace.d_head, trace.d_model), "concat.m_woi"),
    ("output", trace.output.shape, "concat.m_out"),
])
render.source(merge_heads, fuse_with_head_gains)
render.check_yourself("concat")
render.next_steps("cost", "quiz")
