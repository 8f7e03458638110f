"""Heads at work: a tiny trained transformer whose previous-token and induction heads emerged by themselves."""

import streamlit as st

from mha_core import toy
from mha_core.charts import toy as charts
from mha_core.errors import LabError
from mha_core.ui import heads as ui
from mha_core.ui import numbers, render, state, t
from mha_core.ui.i18n import bound_t
from mha_core.units import head_name

render.page_header("heads")
state.keep(ui.KEPT)
ss = st.session_state
ui.ensure_sequence()
try:
    model = ui.model()
except LabError as err:
    render.show_error(err)
    st.stop()
cfg = model.config
bound = bound_t()
held = ui.held_out_scores()
label = {(s.layer, s.head): s.label for s in held.heads}
titles = [[t("heads.head_title", head=head_name(la, h), label=t(f"heads.label_{label[la, h]}"))
           for h in range(cfg.n_heads)] for la in range(cfg.n_layers)]
tabs = st.tabs([t(f"heads.tab_{k}") for k in ("model", "train", "ablate", "count")], key=ui.TAB_KEY,
               on_change="rerun")

# ---- model view: one sequence, every layer × head -------------------------------------------------
with tabs[0]:
    if tabs[0].open:
        st.markdown(t("heads.model_intro", layers=cfg.n_layers, h=cfg.n_heads, d_model=cfg.d_model,
                      steps=toy.DEFAULT_RECIPE.steps))
        left, right = st.columns([4, 1], vertical_alignment="bottom")
        left.text_input(t("heads.seq_label"), key=ui.SEQ_KEY, max_chars=200, help=t("heads.seq_help"))
        right.button(t("heads.generate"), on_click=ui.on_generate, icon=":material/casino:", width="stretch")
        st.caption(t("heads.mapping", max=toy.MAX_SEQ))
        try:
            ids = toy.parse_sequence(ss[ui.SEQ_KEY])
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
                ui.attention_grid(rep.view.attn, ids, titles, heads=[(la, h) for h in range(cfg.n_heads)])
            st.metric(t("heads.copied"), f"{rep.correct} / {rep.total}", help=t("heads.copied_help"))
            st.subheader(t("heads.table_title"))
            src = st.radio(t("heads.score_source"), ("sequence", "held_out"), key=ui.SRC_KEY, horizontal=True,
                           format_func=lambda k: bound(f"heads.src_{k}"))
            shown = rep.scores if src == "sequence" else held
            st.dataframe(ui.score_frame(shown), hide_index=True, width="stretch")
            st.caption(t("heads.table_caption"))
        st.subheader(t("heads.mechanism_title"))
        st.markdown(t("heads.mechanism"))
        st.markdown(t("heads.emergent"))
        render.page_link("attend", t("heads.see_illustrative"), ":material/grid_on:")
        with st.expander(t("heads.formulas_title"), icon=":material/functions:"):
            st.markdown(t("heads.formulas_intro"))
            st.latex(r"s_{\text{prev}}=\frac{1}{n-1}\sum_{i=1}^{n-1}A_{i,\,i-1}")
            st.latex(r"s_{\text{ind}}=\frac{1}{|Q|}\sum_{i\in Q}\ \sum_{j\in S_i}A_{ij},\quad"
                     r"S_i=\{\,m+1 : m<i,\ x_m=x_i\,\}")
            st.latex(r"s_{\text{first}}=\frac{1}{n-1}\sum_{i=1}^{n-1}A_{i,0},\qquad"
                     r"s_{\text{self}}=\frac{1}{n-1}\sum_{i=1}^{n-1}A_{ii}")
            st.latex(r"s_{\text{ent}}=\frac{1}{n-1}\sum_{i=1}^{n-1}\frac{-\sum_{j\le i}A_{ij}\ln A_{ij}}{\ln(i+1)}")
            st.markdown(t("heads.thresholds", ind=toy.INDUCTION_MIN, prev=toy.PREVIOUS_TOKEN_MIN,
                          first=toy.FIRST_TOKEN_MIN, self=toy.SELF_MIN, broad=toy.BROAD_ENTROPY_MIN))

# ---- train it yourself ----------------------------------------------------------------------------
with tabs[1]:
    if tabs[1].open:
        st.markdown(t("heads.train_intro", every=toy.EVERY))
        task = st.radio(t("heads.task_label"), toy.TASK_KEYS, key=ui.TASK_KEY, horizontal=True,
                        format_func=lambda k: bound(f"heads.task_{k}"), on_change=ui.on_task_change)
        ui.task_intro(task)
        c1, c2, c3 = st.columns(3)
        d_model = c1.select_slider("d_model", toy.D_MODELS, key=ui.DM_KEY)
        options = toy.head_choices(int(d_model))
        state.valid_choice(ui.H_KEY, options, options[0])  # a new d_model: the nearest head count it allows
        n_heads = c2.select_slider(t("heads.t_h"), options, key=ui.H_KEY, help=t("heads.t_h_help"))
        layers = c3.select_slider(t("heads.t_layers"), toy.LAYER_CHOICES, key=ui.LAYERS_KEY)
        c4, c5 = st.columns([3, 1])
        steps = c4.slider(t("heads.t_steps"), toy.STEP_SIZE, toy.MAX_STEPS, step=toy.STEP_SIZE, key=ui.STEPS_KEY)
        seed = numbers.number_input(ui.SEED, t("heads.t_seed"), container=c5)
        recipe = toy.get_task(task)
        st.caption(t("heads.t_shape", d_head=int(d_model) // int(n_heads), batch=recipe.batch, lr=recipe.lr))
        settings = toy.TrainSettings(int(d_model), int(n_heads), int(layers), int(steps), int(seed), task)
        st.button(t("heads.train"), type="primary", icon=":material/model_training:", on_click=ui.request_training)
        pressed = ui.training_requested()
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
                col.toggle(titles[la][h], key=ui.toggle_key(la, h))
        off = ui.heads_off(cfg.n_layers, cfg.n_heads)
        base, now = ui.ablated(()), ui.ablated(off)
        m1, m2 = st.columns(2)
        m1.metric(t("heads.repeat_loss"), f"{now.loss:.3f}", delta=t("heads.times", x=now.loss / base.loss)
                  if off else None, delta_color="inverse", help=t("heads.repeat_loss_help"))
        m2.metric(t("heads.accuracy"), f"{now.accuracy:.1%}",
                  delta=t("heads.pp", pp=100 * (now.accuracy - base.accuracy)) if off else None)
        st.caption(t("heads.off_line", off=", ".join(head_name(*k) for k in off) or t("heads.none")))
        imp, curve = ui.importance_table(), ui.pruning()
        st.subheader(t("heads.importance_title"))
        render.chart(charts.importance_matrix, imp.loss_increase,
                     tuple(t("heads.layer", layer=la) for la in range(cfg.n_layers)),
                     tuple(f"H{h}" for h in range(cfg.n_heads)), value_title=t("heads.loss_increase"))
        st.caption(t("heads.importance_caption"))
        st.subheader(t("heads.pruning_title"))
        k = toy.removable(curve)
        render.chart(charts.pruning_chart, tuple(curve.n_removed), tuple(curve.accuracy),
                     ("", *(head_name(*hd) for hd in curve.order)), floor=curve.accuracy[0] - toy.PRUNE_TOLERANCE,
                     x_title=t("heads.n_removed"), y_title=t("heads.accuracy"), head_title=t("heads.removed_head"))
        st.markdown(t("heads.pruning_answer", k=k, total=len(curve.order), tol=100 * toy.PRUNE_TOLERANCE,
                      acc=curve.accuracy[k], heads=", ".join(head_name(*hd) for hd in curve.order[:k]),
                      next=head_name(*curve.order[k]) if k < len(curve.order) else "-",
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
        render.chart(charts.heads_accuracy, tuple(r.n_heads for r in res.runs), tuple(r.d_head for r in res.runs),
                     tuple(r.seed for r in res.runs), tuple(r.accuracy for r in res.runs), x_title=t("heads.h_axis"),
                     y_title=t("heads.count_accuracy"), seed_title=t("heads.t_seed"))
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
                render.chart(charts.importance_matrix, weights[h], tuple(f"H{i}" for i in range(h)), tuple(names),
                             title=t("heads.count_heads_h", h=h, d_head=res.d_model // h),
                             value_title=t("heads.count_weight"), height=40 + 28 * h)
        st.caption(t("heads.count_heads_caption", seed=res.seeds[0]))
        st.caption(t("heads.count_command", torch=res.torch_version, machine=res.machine, seconds=res.seconds))
        st.code(res.command, language="bash")

render.next_steps("real", "quiz")
