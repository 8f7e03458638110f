"""Misconceptions (常见误区), each refuted by a live demonstration rather than a paragraph."""

from dataclasses import asdict

import numpy as np
import streamlit as st

from mha_core.charts import base, pipeline
from mha_core.presets import head_spread
from mha_core.ui import chart_downloads, demos, render, state, t
from mha_core.ui.pipeline import KEPT, MYTHS_REPLAY_KEY, MYTHS_REPLAYED_KEY, MYTHS_TAB_KEY

render.page_header("myths")
state.keep(KEPT)
MAX_ROWS = 64  # rows of W^Q drawn; the check below uses all of them

s = state.current()
wt = render.walkthrough_or_stop(s)
# Only the open tab is drawn (a move of h redraws one misconception's demonstration, not three), as on the heads
# and generation pages; opening another tab reruns the page.
one, two, three = st.tabs([t("myths.tab1"), t("myths.tab2"), t("myths.tab3")], key=MYTHS_TAB_KEY, on_change="rerun")

with one:
    if one.open:
        st.markdown(t("myths.m1_claim"))
        check = demos.ensemble_check(s.sentence, s.d_model, s.n_heads)
        st.markdown(t("myths.m1_how", h=s.n_heads, d_head=s.d_head, d_model=s.d_model))
        rows = min(s.d_model, MAX_ROWS)  # a 1024-row chart is unreadable and heavy on a phone
        render.chart(pipeline.columns_by_head, wt.weights.w_q[:rows], s.n_heads, [str(r) for r in range(rows)],
                     title=t("myths.m1_wq"), head_label=t("split.head"), row_title="d_model", col_title="h · d_head",
                     largest_title=t("split.block_largest"), export=chart_downloads.Export("wq"))
        if rows < s.d_model or s.d_head > pipeline.PER_HEAD_COLUMNS:
            st.caption(t("myths.m1_cut", rows=rows, d_model=s.d_model, cols=min(s.d_head, pipeline.PER_HEAD_COLUMNS),
                         d_head=s.d_head))
        c1, c2, c3 = st.columns(3)
        c1.metric(t("myths.m1_diff"), f"{max(check.max_diff_per_head):.1e}")
        c2.metric(t("myths.m1_same_x"), t("myths.yes") if check.inputs_identical else t("myths.no"))
        c3.metric(t("myths.m1_params"), f"{check.params_multi:,} = {check.params_single:,}")
        st.markdown(t("myths.m1_verdict"))

with two:
    if two.open:
        st.markdown(t("myths.m2_claim"))
        n = 24
        ranks = demos.score_ranks(s.d_model if s.fixed_d_model else 64, n)
        d_model = ranks[0].d_head
        hs = [p.n_heads for p in ranks]
        render.chart(base.lines, hs, {t("myths.m2_rank"): [p.rank for p in ranks],
                                      t("myths.m2_dhead"): [p.d_head for p in ranks]},
                     title=t("myths.m2_rank_title", d_model=d_model, n=n), x_title="h", y_title=t("myths.m2_dims"),
                     log_x=True, export=chart_downloads.Export("rank"))
        st.markdown(t("myths.m2_rank_explain", n=n))
        toy = demos.heads_vs_accuracy()
        acc = toy["mean_accuracy"]
        toy_h = sorted(int(h) for h in acc)
        render.chart(base.lines, toy_h, {t("myths.m2_acc"): [acc[str(h)] for h in toy_h]},
                     title=t("myths.m2_acc_title", d_model=toy["d_model"], steps=toy["steps"],
                             registers=toy["n_registers"]),
                     x_title="h", y_title=t("myths.m2_acc"), log_x=True, export=chart_downloads.Export("accuracy"))
        st.caption(t("myths.m2_acc_caption", command=toy["command"], seeds=len(toy["seeds"]), tab=t("heads.tab_count"),
                     page=t("nav.heads")))
        st.markdown(t("myths.m2_verdict", **asdict(head_spread())))

with three:
    if three.open:
        st.markdown(t("myths.m3_claim"))
        left, right = st.columns(2)
        with left:
            st.markdown(f"**{t('myths.m3_built')}**")
            kinds = wt.weights.head_kinds or ()
            st.markdown("\n".join(f"- {render.head_title(wt, i)}" for i in range(len(kinds))) or t("myths.m3_random"))
            st.caption(t("common.illustrative_note"))
        with right:
            st.markdown(f"**{t('myths.m3_trained')}**")
            st.dataframe({t("myths.col_head"): [f"L{layer} H{head}" for layer, head, *_ in demos.trained_roles()],
                          t("myths.col_role"): [t(f"myths.role_{label}") for _, _, label, *_ in demos.trained_roles()],
                          t("myths.col_prev"): [round(p, 2) for *_, p, _ in demos.trained_roles()],
                          t("myths.col_ind"): [round(i, 2) for *_, i in demos.trained_roles()]},
                         hide_index=True, width="stretch")
        st.button(t("myths.m3_replay"), icon=":material/replay:", key=MYTHS_REPLAY_KEY,
                  on_click=lambda: st.session_state.update({MYTHS_REPLAYED_KEY: True}))
        if st.session_state.get(MYTHS_REPLAYED_KEY):
            with st.spinner(t("myths.m3_training")):
                shots = demos.emergence()
            steps = [snap.step for snap in shots]
            render.chart(base.lines, steps, {
                t("myths.m3_prev_line"): [float(np.max(snap.previous_token[0])) for snap in shots],
                t("myths.m3_ind_line"): [float(np.max(snap.induction[-1])) for snap in shots],
            }, title=t("myths.m3_chart"), x_title=t("myths.m3_step"), y_title=t("myths.m3_score"),
               export=chart_downloads.Export("training"))
            first, last = shots[0], shots[-1]
            st.markdown(t("myths.m3_replay_explain", first=first.step, last=last.step,
                          prev0=float(np.max(first.previous_token[0])), prev1=float(np.max(last.previous_token[0])),
                          ind0=float(np.max(first.induction[-1])), ind1=float(np.max(last.induction[-1]))))
        st.markdown(t("myths.m3_verdict"))

render.check_yourself("myths", ("myth_ensemble", "myth_more_heads", "myth_designed"))
render.next_steps("why", "heads", "cost")
