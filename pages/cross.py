"""Cross-attention: the target sentence's tokens ask, the source sentence's tokens answer; and the three masks."""

import numpy as np
import streamlit as st

from mha_core import cross
from mha_core.charts import cross as charts
from mha_core.charts import pipeline
from mha_core.errors import LabError
from mha_core.inputs import MAX_TOKENS
from mha_core.markdown import escape as esc
from mha_core.markdown import escape_params
from mha_core.ui import cross as ui
from mha_core.ui import parts, prediction, render, state, t
from mha_core.walkthrough import token_labels

render.page_header("cross")
state.keep(ui.KEPT)


def body() -> None:
    """The page under its title: a pair, h or a mask reruns only this part (the navigation and sidebar stay)."""
    st.markdown(t("cross.intro"))
    st.markdown(t("cross.origin"))

    st.markdown(f"**{t('cross.examples')}**")
    for col, (i, pair) in zip(st.columns(len(cross.PAIRS)), enumerate(cross.PAIRS), strict=True):
        col.button(f"{pair.source} → {pair.target}", key=f"cross_pair_{i}", on_click=ui.use_pair, args=(i,),
                   width="stretch")
    left, right = st.columns(2)
    left.text_input(t("cross.source"), key=ui.SRC_KEY, max_chars=200, help=t("cross.pair_help", max=MAX_TOKENS))
    right.text_input(t("cross.target"), key=ui.TGT_KEY, max_chars=200, help=t("cross.pair_help", max=MAX_TOKENS))
    h = int(st.radio(t("cross.heads"), cross.HEAD_CHOICES, key=ui.H_KEY, horizontal=True,
                     help=t("cross.heads_help", d_model=cross.D_MODEL)))

    source, target = st.session_state[ui.SRC_KEY], st.session_state[ui.TGT_KEY]
    try:
        lesson = ui.lesson(source, target, h)
    except LabError as err:
        render.show_error(err)
        st.stop()
    for side, tokens in (("source", lesson.source), ("target", lesson.target)):
        if tokens.dropped:
            st.info(t(f"cross.truncated_{side}", max=MAX_TOKENS, dropped=tokens.dropped), icon=":material/content_cut:")
    trace, n, m = lesson.trace, lesson.n_tgt, lesson.n_src
    src_labels, tgt_labels = token_labels(lesson.source.tokens), token_labels(lesson.target.tokens)
    kinds = lesson.weights.head_kinds

    shapes = [t(f"cross.opt_{rows}", n=n, m=m) for rows in ("tt", "ts", "ss", "st")]   # the answer: target × source
    prediction.predict(f"cross-shape-{n}-{m}", t("cross.predict", n=n, m=m), shapes, 1, t("cross.predict_why"))
    st.caption(t("cross.standin"))
    st.latex(r"\begin{gathered}Q_i=X_{\text{tgt}}W_i^Q\\ K_i=X_{\text{src}}W_i^K,\quad V_i=X_{\text{src}}W_i^V\\"
             r"\text{head}_i=\operatorname{softmax}\!\Big(\frac{Q_iK_i^{\top}}{\sqrt{d_{\text{head}}}}\Big)V_i\end{gathered}")
    st.markdown(t("cross.explain", n=n, m=m))

    st.subheader(t("cross.grid_title", h=h))
    titles = tuple(t("common.head_title_kind", i=i, kind=t(f"cross.kind_{k}")) if kinds else t("common.head_title", i=i)
                   for i, k in enumerate(kinds or [None] * h))
    render.chart(pipeline.head_grid, trace.weights, tuple(tgt_labels), tuple(src_labels), titles,
                 row_title=t("cross.query"), col_title=t("cross.key"), value_title=t("common.weight"))
    if kinds:
        st.markdown(t("cross.heads_explain"))
        st.caption(t("cross.found", found=lesson.found, n=n) + " " + t("common.illustrative_note"))
        st.markdown(f"**{t('cross.align_title')}**")
        aligned = trace.weights[kinds.index("align")]   # (n, m): the first alignment head
        tops = [np.flatnonzero(np.isclose(row, row.max(), atol=1e-3)) for row in aligned]   # ties: all of them
        render.table({
            t("cross.col_target"): tgt_labels,
            t("cross.col_dict"): [" + ".join(src_labels[j] for j in row) or t("cross.no_entry")
                                  for row in lesson.links],
            t("cross.col_top"): [" + ".join(src_labels[j] for j in top) if len(top) < m else t("cross.spread")
                                 for top in tops],
            t("cross.col_weight"): [float(row.max()) for row in aligned],
        }, decimals=2)
    else:
        st.info(t("cross.random"), icon=":material/casino:")

    st.subheader(t("cross.shapes_title"))
    render.shapes([
        ("X_tgt", lesson.x_tgt.shape, "cross.m_xtgt"),
        ("X_src", lesson.x_src.shape, "cross.m_xsrc"),
        ("Q = X_tgt W^Q", trace.q.shape, "cross.m_q"),
        ("K = X_src W^K", trace.k.shape, "cross.m_k"),
        ("V = X_src W^V", trace.v.shape, "cross.m_v"),
        ("Q_i K_i^T / √d_head", trace.scores.shape[1:], "cross.m_scores"),
        ("softmax(·)", trace.weights.shape, "cross.m_weights"),
        ("Concat(head_i) W^O", trace.output.shape, "cross.m_out"),
    ])

    st.subheader(t("cross.masks_title"))
    st.markdown(t("cross.masks_intro"))
    views, pad = ui.masks(source, target, h)
    states = (t("cross.state_open"), t("cross.state_masked"), t("cross.state_ignored"))
    c1, c2, c3 = st.columns(3)
    with c1:
        render.chart(charts.masked_map, views.decoder_self.weights[0], tuple(tgt_labels), tuple(tgt_labels),
                     views.decoder_self.mask, states=states, title=t("cross.dec_self"), row_title=t("cross.query"),
                     col_title=t("cross.tgt_key"), value_title=t("common.weight"))
        st.caption(t("cross.dec_self_cap", n=n))
    with c2:
        render.chart(charts.masked_map, views.cross.weights[0], tuple(tgt_labels), tuple(src_labels),
                     np.ones((n, m), bool), states=states, title=t("cross.cross_one"), row_title=t("cross.query"),
                     col_title=t("cross.key"), value_title=t("common.weight"))
        st.caption(t("cross.cross_cap", n=n, m=m))
    with c3:
        render.chart(charts.masked_map, views.encoder_self.weights[0], tuple(src_labels), tuple(src_labels),
                     np.ones((m, m), bool), states=states, title=t("cross.enc_self"), row_title=t("cross.src_query"),
                     col_title=t("cross.key"), value_title=t("common.weight"))
        st.caption(t("cross.enc_self_cap", m=m))
    refusal = cross.causal_cross_refusal(lesson)
    st.markdown(t("cross.refusal"))
    st.info(t(f"errors.{refusal.key}", **escape_params(refusal.params)), icon=":material/block:")

    st.subheader(t("cross.pad_title"))
    b, word = pad.padded, t("cross.pad_token")
    m_pad, n_pad = pad.key_valid.shape[1], pad.query_valid.shape[1]
    pad_src = token_labels([*pad.sources[b].tokens, *[word] * (m_pad - len(pad.sources[b].tokens))])
    pad_tgt = token_labels([*pad.targets[b].tokens, *[word] * (n_pad - len(pad.targets[b].tokens))])
    st.markdown(t("cross.pad_intro", pad=word, short=esc(pad.texts[b]), long=esc(pad.texts[1 - b]), m=m_pad))
    left, right = st.columns(2)
    with left:
        render.chart(charts.masked_map, pad.encoder_self[b, 0], tuple(pad_src), tuple(pad_src),
                     pad.key_valid[b][None, :], ignored_rows=tuple(~pad.key_valid[b]), states=states,
                     title=t("cross.pad_enc"), row_title=t("cross.src_query"), col_title=t("cross.key"),
                     value_title=t("common.weight"))
    with right:
        render.chart(charts.masked_map, pad.cross[b, 0], tuple(pad_tgt), tuple(pad_src), pad.key_valid[b][None, :],
                     ignored_rows=tuple(~pad.query_valid[b]), states=states, title=t("cross.pad_cross"),
                     row_title=t("cross.query"), col_title=t("cross.key"), value_title=t("common.weight"))
    st.metric(t("cross.pad_share"), f"{pad.unmasked_pad_share:.0%}", help=t("cross.pad_share_help"))

    st.subheader(t("cross.models_title"))
    st.markdown(t("cross.models_intro"))
    mark = {True: t("cross.has"), False: t("cross.has_not")}
    render.table({
        t("cross.col_model"): [t(f"cross.row_{family}") for family, *_ in cross.MODEL_FAMILIES],
        t("cross.col_enc"): [mark[enc] for _, enc, _, _ in cross.MODEL_FAMILIES],
        t("cross.col_dec"): [mark[dec] for _, _, dec, _ in cross.MODEL_FAMILIES],
        t("cross.col_cross"): [mark[x] for *_, x in cross.MODEL_FAMILIES],
    })
    st.markdown(t("cross.models_cache"))

    render.source(cross.build_lesson, cross.align_head, cross.padded_attention)


parts.part(body)
render.next_steps("generate", "cost", "real")
