"""Step 2 — attend: every head runs scaled dot-product attention in its own subspace."""

import zlib

import numpy as np
import streamlit as st

from mha_core import scaled_dot_product_attention
from mha_core.charts import base, lines, pipeline
from mha_core.settings import CAUSAL, HEAD
from mha_core.ui import chart_downloads, compute, parts, prediction, render, state, t
from mha_core.walkthrough import weights_without_scaling

render.page_header("attend")


def body() -> None:
    """The page under its title: the mask and the head rerun only this part, not the navigation and sidebar."""
    c1, c2 = st.columns(2)
    c1.toggle(t(CAUSAL.label), key=CAUSAL.key, help=t(CAUSAL.help))
    s = state.current()
    wt = render.walkthrough_or_stop(s)
    trace = wt.trace
    labels = wt.labels
    state.valid_choice(HEAD.key, range(trace.n_heads), 0)
    head_names = [render.head_title(wt, i) for i in range(trace.n_heads)]
    head = int(c2.selectbox(t(HEAD.label), range(trace.n_heads), key=HEAD.key, format_func=head_names.__getitem__))

    formula = r"\text{head}_i=\operatorname{softmax}\!\Big(\frac{Q_iK_i^{\top}}{\sqrt{d_{\text{head}}}}+M\Big)V_i"
    if s.causal:  # the mask on its own line: one line is too wide for a phone
        formula = r"\begin{gathered}" + formula + r"\\ M_{ij}=-\infty\ \text{if}\ j>i\end{gathered}"
    st.latex(formula)
    st.markdown(t("attend.explain", h=trace.n_heads, n=len(labels), d_head=trace.d_head))

    query = len(labels) // 2
    row = trace.weights[head, query]
    picks = sorted({int(row.argmax()), 0, query, max(0, query - 1), min(len(labels) - 1, query + 1)})
    # The key names what the answer depends on, language-free and the same in every process (a class vote's key).
    asked = f"{s.n_heads}-{s.d_head}-{s.weight_mode}-{s.seed}-{int(s.causal)}-{zlib.crc32(s.sentence.encode()):08x}"
    prediction.predict(f"attend-{asked}-{head}", t("attend.predict", head=head_names[head], token=labels[query]),
                   [labels[j] for j in picks], picks.index(int(row.argmax())),
                   t("attend.predict_why", weight=float(row.max())))

    st.subheader(t("attend.grid_title", h=trace.n_heads))
    titles = tuple(render.head_title(wt, i) for i in range(trace.n_heads))  # one heatmap per head, in one chart
    render.chart(pipeline.head_grid, trace.weights, tuple(labels), tuple(labels), titles, row_title=t("common.query"),
                 col_title=t("common.key"), value_title=t("common.weight"),
                 export=chart_downloads.heads(trace.weights, titles, labels, labels, t("common.weight"), "heads"))
    st.caption(t("common.illustrative_note") if wt.weights.head_kinds else t("common.random_note"))

    st.subheader(t("lines.title"))
    line_k = lines.top_k_for(trace.n_heads, len(labels))
    render.chart(lines.token_lines, trace.weights, tuple(labels), tuple(head_names), top_k=line_k,
                 query_title=t("common.query"), key_title=t("common.key"), weight_title=t("common.weight"),
                 head_title=t("lines.legend"))
    st.caption(t("lines.help_heads"))
    if line_k is not None:
        st.caption(t("lines.top_k", n=len(labels), k=line_k, share=lines.shown_share(trace.weights, line_k)))

    st.subheader(t("attend.one_title", head=render.head_title(wt, head)))
    left, right = st.columns(2)
    shown_scores = trace.scores[head] if trace.mask is None else np.where(trace.mask, trace.scores[head], np.nan)
    with left:
        render.chart(base.heatmap, np.nan_to_num(shown_scores, nan=0.0), labels, labels, signed=True,
                     title=t("attend.before"), row_title=t("common.query"), col_title=t("common.key"),
                     value_title=t("common.score"), size=300,
                     export=chart_downloads.matrix(shown_scores, labels, labels, "scores", head=head))
    with right:
        render.chart(base.heatmap, trace.weights[head], labels, labels, domain=(0.0, 1.0), title=t("attend.after"),
                     row_title=t("common.query"), col_title=t("common.key"), value_title=t("common.weight"), size=300,
                     export=chart_downloads.weights(trace, head, labels))
    st.caption(t("attend.softmax_caption") + (" " + t("attend.mask_caption") if s.causal else ""))

    st.subheader(t("attend.scale_title"))
    unscaled = weights_without_scaling(trace)
    demo = compute.scale(trace.d_head)
    st.markdown(t("attend.demo_intro", d_head=trace.d_head))
    m1, m2, m3 = st.columns(3)
    m1.metric(t("attend.raw_std"), f"{demo.raw_std:.2f}", help=t("attend.sqrt_help", root=np.sqrt(trace.d_head)))
    m2.metric(t("attend.scaled_std"), f"{demo.scaled_std:.2f}")
    m3.metric(t("attend.max_weight"), f"{demo.max_weight_raw:.2f} / {demo.max_weight_scaled:.2f}")
    e1, e2 = st.columns(2)
    e1.metric(t("attend.entropy_unscaled"), f"{demo.entropy_raw:.2f}")
    e2.metric(t("attend.entropy_scaled"), f"{demo.entropy_scaled:.2f}")
    render.chart(base.heatmap, unscaled[head], labels, labels, domain=(0.0, 1.0), title=t("attend.no_scale"),
                 row_title=t("common.query"), col_title=t("common.key"), value_title=t("common.weight"), size=260,
                 export=chart_downloads.matrix(unscaled[head], labels, labels, "unscaled", head=head))
    st.markdown(t("attend.scale_explain", d_head=trace.d_head, root=np.sqrt(trace.d_head)))

    render.shapes([
        ("Q_i, K_i, V_i", trace.q_heads.shape[1:], "attend.m_qkv"),
        ("Q_i K_i^T / √d_head", trace.scores.shape[1:], "attend.m_scores"),
        ("softmax(·)", trace.weights.shape, "attend.m_weights"),
        ("head_i", trace.head_outputs.shape, "attend.m_out"),
    ])
    render.source(scaled_dot_product_attention)
    render.check_yourself("attend")


parts.part(body)
render.next_steps("concat")
