"""Heads at work: a tiny trained transformer whose previous-token and induction heads emerged by themselves."""

import streamlit as st

from mha_core import toy_charts
from mha_core.errors import LabError
from mha_core.toy import lab
from mha_core.toy.scores import BROAD_ENTROPY_MIN, FIRST_TOKEN_MIN, INDUCTION_MIN, PREVIOUS_TOKEN_MIN, SELF_MIN
from mha_core.ui import heads as ui
from mha_core.ui import render, state, t
from mha_core.ui.i18n import bound_t, lang

render.page_header("heads")
ss = st.session_state
ss.setdefault(ui.SEQ_KEY, lab.format_sequence(lab.generate_sequence(0)))
try:
    model = ui.model()
except LabError as err:
    render.show_error(err)
    st.stop()
cfg = model.config
tr = bound_t()
held = ui.held_out_scores()
label = {(s.layer, s.head): s.label for s in held.heads}
titles = [[t("heads.head_title", head=ui.head_name(la, h), label=t(f"heads.label_{label[la, h]}"))
           for h in range(cfg.n_heads)] for la in range(cfg.n_layers)]
tabs = st.tabs([t(f"heads.tab_{k}") for k in ("model", "train", "ablate", "count")], key="heads_tab",
               on_change="rerun")

# ---- model view: one sequence, every layer × head -------------------------------------------------
with tabs[0]:
    if tabs[0].open:
        st.markdown(t("heads.model_intro", layers=cfg.n_layers, h=cfg.n_heads, d_model=cfg.d_model,
                      steps=lab.DEFAULT_RECIPE.steps))
        left, right = st.columns([4, 1], vertical_alignment="bottom")
        left.text_input(t("heads.seq_label"), key=ui.SEQ_KEY, max_chars=200, help=t("heads.seq_help"))
        right.button(t("heads.generate"), on_click=ui.on_generate, icon=":material/casino:", width="stretch")
        st.caption(t("heads.mapping", max=lab.MAX_SEQ))
        try:
            ids = lab.parse_sequence(ss[ui.SEQ_KEY])
        except LabError as err:
            render.show_error(err)
            ids = None
        if ids is not None:
            rep = ui.report(tuple(int(i) for i in ids))
            if rep.has_repeat:
                st.caption(t("heads.repeat_mark"))
            else:
                st.info(t("heads.no_repeat"), icon=":material/info:")
            for la in range(cfg.n_layers):
                st.markdown(f"**{t('heads.layer', layer=la)}**")
                ui.attention_grid(rep.view.attn, ids, titles, ("heads.view", tuple(ids)),
                                  heads=[(la, h) for h in range(cfg.n_heads)])
            st.metric(t("heads.copied"), f"{rep.correct} / {rep.total}", help=t("heads.copied_help"))
            st.subheader(t("heads.table_title"))
            src = st.radio(t("heads.score_source"), ("sequence", "held_out"), key="heads_src", horizontal=True,
                           format_func=lambda k, tr=tr: tr(f"heads.src_{k}"))
            shown = rep.scores if src == "sequence" else held
            st.dataframe(ui.score_frame(shown), hide_index=True, width="stretch")
            st.caption(t("heads.table_caption"))
        st.subheader(t("heads.mechanism_title"))
        st.markdown(t("heads.mechanism"))
        st.markdown(t("heads.emergent"))
        st.page_link("pages/attend.py", label=t("heads.see_illustrative"), icon=":material/grid_on:")
        with st.expander(t("heads.formulas_title"), icon=":material/functions:"):
            st.markdown(t("heads.formulas_intro"))
            st.latex(r"s_{\text{prev}}=\frac{1}{n-1}\sum_{i=1}^{n-1}A_{i,\,i-1}")
            st.latex(r"s_{\text{ind}}=\frac{1}{|Q|}\sum_{i\in Q}\ \sum_{j\in S_i}A_{ij},\quad"
                     r"S_i=\{\,m+1 : m<i,\ x_m=x_i\,\}")
            st.latex(r"s_{\text{first}}=\frac{1}{n-1}\sum_{i=1}^{n-1}A_{i,0},\qquad"
                     r"s_{\text{self}}=\frac{1}{n-1}\sum_{i=1}^{n-1}A_{ii}")
            st.latex(r"s_{\text{ent}}=\frac{1}{n-1}\sum_{i=1}^{n-1}\frac{-\sum_{j\le i}A_{ij}\ln A_{ij}}{\ln(i+1)}")
            st.markdown(t("heads.thresholds", ind=INDUCTION_MIN, prev=PREVIOUS_TOKEN_MIN, first=FIRST_TOKEN_MIN,
                          self=SELF_MIN, broad=BROAD_ENTROPY_MIN))

# ---- train it yourself ----------------------------------------------------------------------------
with tabs[1]:
    if tabs[1].open:
        st.markdown(t("heads.train_intro"))
        defaults = lab.TrainSettings()
        for key, value in (("heads_t_dm", defaults.d_model), ("heads_t_h", defaults.n_heads),
                           ("heads_t_layers", defaults.n_layers), ("heads_t_steps", defaults.steps),
                           ("heads_t_seed", defaults.seed)):
            ss.setdefault(key, value)
        c1, c2, c3 = st.columns(3)
        d_model = c1.select_slider("d_model", lab.D_MODELS, key="heads_t_dm")
        options = lab.head_choices(int(d_model))
        if ss["heads_t_h"] not in options:
            ss["heads_t_h"] = min(options, key=lambda h: abs(h - int(ss["heads_t_h"])))
        n_heads = c2.select_slider(t("heads.t_h"), options, key="heads_t_h", help=t("heads.t_h_help"))
        layers = c3.select_slider(t("heads.t_layers"), lab.LAYER_CHOICES, key="heads_t_layers")
        c4, c5 = st.columns([3, 1])
        steps = c4.slider(t("heads.t_steps"), lab.STEP_SIZE, lab.MAX_STEPS, step=lab.STEP_SIZE, key="heads_t_steps")
        seed = c5.number_input(t("heads.t_seed"), 0, 9999, step=1, key="heads_t_seed")
        st.caption(t("heads.t_shape", d_head=int(d_model) // int(n_heads), batch=lab.DEFAULT_RECIPE.batch,
                     lr=lab.DEFAULT_RECIPE.lr))
        settings = lab.TrainSettings(int(d_model), int(n_heads), int(layers), int(steps), int(seed))
        st.button(t("heads.train"), type="primary", icon=":material/model_training:", on_click=ui.request_training)
        pressed = ss.pop(ui.TRAIN_KEY, False)
        run = ui.runs().get(settings)
        if run is not None and not pressed:
            st.caption(t("heads.cached"))
        if pressed:
            run = ui.train_live(settings)
        if run is None:
            st.info(t("heads.train_hint"), icon=":material/touch_app:")
        else:
            ui.show_run(run)

# ---- ablation and pruning -------------------------------------------------------------------------
with tabs[2]:
    if tabs[2].open:
        st.markdown(t("heads.ablate_intro", n=len(ui.batch().tokens)))
        induction = tuple(held.labelled("induction"))
        b1, b2 = st.columns(2)
        b1.button(t("heads.all_on"), on_click=ui.set_heads, args=((),), icon=":material/toggle_on:", width="stretch")
        b2.button(t("heads.induction_off"), on_click=ui.set_heads, args=(induction,), icon=":material/toggle_off:",
                  width="stretch")
        for la in range(cfg.n_layers):
            cols = st.columns(cfg.n_heads)
            for h, col in enumerate(cols):
                ss.setdefault(ui.toggle_key(la, h), True)
                col.toggle(titles[la][h], key=ui.toggle_key(la, h))
        off = tuple((la, h) for la in range(cfg.n_layers) for h in range(cfg.n_heads) if not ss[ui.toggle_key(la, h)])
        base, now = ui.ablated(()), ui.ablated(off)
        m1, m2 = st.columns(2)
        m1.metric(t("heads.repeat_loss"), f"{now.loss:.3f}", delta=t("heads.times", x=now.loss / base.loss)
                  if off else None, delta_color="inverse", help=t("heads.repeat_loss_help"))
        m2.metric(t("heads.accuracy"), f"{now.accuracy:.1%}",
                  delta=t("heads.pp", pp=100 * (now.accuracy - base.accuracy)) if off else None)
        st.caption(t("heads.off_line", off=", ".join(ui.head_name(*k) for k in off) or t("heads.none")))
        imp, curve = ui.importance_table(), ui.pruning()
        st.subheader(t("heads.importance_title"))
        render.chart(lambda: toy_charts.importance_matrix(
            imp.loss_increase, [t("heads.layer", layer=la) for la in range(cfg.n_layers)],
            [f"H{h}" for h in range(cfg.n_heads)], value_title=t("heads.loss_increase")), "heads.importance", lang())
        st.caption(t("heads.importance_caption"))
        st.subheader(t("heads.pruning_title"))
        k = lab.removable(curve)
        render.chart(lambda: toy_charts.pruning_chart(
            curve.n_removed, curve.accuracy, ["", *(ui.head_name(*hd) for hd in curve.order)],
            floor=curve.accuracy[0] - lab.PRUNE_TOLERANCE, x_title=t("heads.n_removed"), y_title=t("heads.accuracy"),
            head_title=t("heads.removed_head")), "heads.pruning", lang())
        st.markdown(t("heads.pruning_answer", k=k, total=len(curve.order), tol=100 * lab.PRUNE_TOLERANCE,
                      acc=curve.accuracy[k], heads=", ".join(ui.head_name(*hd) for hd in curve.order[:k]),
                      next=ui.head_name(*curve.order[k]) if k < len(curve.order) else "-",
                      after=curve.accuracy[min(k + 1, len(curve.order))]))
        alone = [ui.ablated((hd,)).loss / base.loss for hd in induction] or [1.0]
        st.markdown(t("heads.redundancy", n=len(induction), lo=min(alone), hi=max(alone),
                      all=ui.ablated(induction).loss / base.loss))

# ---- how many heads? --------------------------------------------------------------------------------
with tabs[3]:
    if tabs[3].open:
        try:
            res = ui.heads_result()
        except LabError as err:
            render.show_error(err)
            st.stop()
        stats, enough = res.stats(), res.first_within()
        names = [ui.register_name(r) for r in range(res.n_registers)]
        st.markdown(t("heads.count_intro", registers=res.n_registers, names=", ".join(names), top=res.n_values - 1,
                      answers=res.n_values ** res.n_registers, chance=res.chance, d_model=res.d_model,
                      params=f"{res.runs[0].n_params:,}", steps=res.steps, batch=res.batch, seeds=len(res.seeds),
                      heads=", ".join(map(str, res.heads)), held_out=res.held_out))
        st.code("  ".join(ui.register_example()), language=None, wrap_lines=True)
        st.caption(t("heads.count_example"))
        render.chart(lambda: toy_charts.heads_accuracy(
            [r.n_heads for r in res.runs], [r.d_head for r in res.runs], [r.seed for r in res.runs],
            [r.accuracy for r in res.runs], x_title=t("heads.h_axis"), y_title=t("heads.count_accuracy"),
            seed_title=t("heads.t_seed")), "heads.count", lang())
        st.markdown(t("heads.count_table", rows="\n".join(
            f"| {h} | {s.d_head} | {s.mean:.1%} | {100 * s.std:.1f} | {s.low:.1%} – {s.high:.1%} |"
            for h, s in stats.items())))
        one, two, last = stats[res.heads[0]], stats[res.heads[1]], stats[res.heads[-1]]
        weights = ui.register_weights(res, seed=res.seeds[0])
        st.markdown(t("heads.count_reading", one=one.mean, one_lo=one.low, one_hi=one.high, two=two.mean,
                      chance=res.chance, enough=enough, enough_dh=stats[enough].d_head, enough_acc=stats[enough].mean,
                      registers=res.n_registers, last=last.n_heads, last_dh=last.d_head, last_acc=last.mean,
                      seed=res.seeds[0], values=res.n_values, one_w=float(weights[res.heads[0]].max())))
        st.subheader(t("heads.count_heads_title"))
        shown = tuple(dict.fromkeys((res.heads[0], res.heads[1], enough)))  # one head, two heads, enough heads
        for col, h in zip(st.columns(len(shown)), shown, strict=True):
            with col:
                render.chart(lambda h=h: toy_charts.importance_matrix(
                    weights[h], [f"H{i}" for i in range(h)], names, title=t("heads.count_heads_h", h=h,
                                                                           d_head=res.d_model // h),
                    value_title=t("heads.count_weight"), height=40 + 28 * h), "heads.count_w", h, lang())
        st.caption(t("heads.count_heads_caption", seed=res.seeds[0]))
        st.caption(t("heads.count_command", torch=res.torch_version, machine=res.machine, seconds=res.seconds))
        st.code(res.command, language="bash")

state.remember("heads_tab", ui.SEQ_KEY, "heads_src", "heads_t_dm", "heads_t_h", "heads_t_layers", "heads_t_steps",
               "heads_t_seed", *(ui.toggle_key(la, h) for la in range(cfg.n_layers) for h in range(cfg.n_heads)))
render.next_steps("real", "quiz")
