"""Generation and the KV cache: three toy models (MHA, GQA, MQA) write token by token while their caches grow."""

import streamlit as st

from mha_core import toy
from mha_core.charts import generate as charts
from mha_core.charts import toy as toy_charts
from mha_core.errors import LabError
from mha_core.markdown import escape
from mha_core.settings import GEN_SEED, GEN_TEMPERATURE, GEN_TOP_K
from mha_core.ui import generate as ui
from mha_core.ui import numbers, parts, render, state, t
from mha_core.ui.i18n import bound_t
from mha_core.units import format_bytes, format_params, head_name

render.page_header("generate")
state.keep(ui.KEPT)
ss = st.session_state
bound = bound_t()
try:
    models = ui.models()
except LabError as err:
    render.show_error(err)
    st.stop()
cfg = models[0].config
variants = range(len(models))
names = [ui.variant_name(i) for i in variants]
tabs = st.tabs([t("generate.tab_steps"), t("generate.tab_share")], key=ui.TAB_KEY, on_change="rerun")


# ---- step by step: the query of the newest token reads the cached keys -------------------------------
def controls() -> None:
    """The prompt and the sampling controls (a change reruns the page)."""
    with st.container(border=True):
        st.text_input(t("generate.prompt"), key=ui.PROMPT_KEY, max_chars=200,
                      help=t("generate.prompt_help", top=cfg.vocab_size - 1))
        clamped = ui.clean_controls()  # a forged value (temperature 1e-320, seed NaN …) made valid first
        c1, c2, c3 = st.columns([3, 3, 2])
        c1.slider(t(GEN_TEMPERATURE.label), *GEN_TEMPERATURE.bounds, step=GEN_TEMPERATURE.step,
                  key=GEN_TEMPERATURE.key, help=t(GEN_TEMPERATURE.help))
        c2.select_slider(t(GEN_TOP_K.label), ui.TOP_KS, key=GEN_TOP_K.key, help=t(GEN_TOP_K.help),
                         format_func=lambda k: bound("generate.top_k_all", n=k) if k == ui.TOP_KS[-1] else str(k))
        numbers.number_input(GEN_SEED, t(GEN_SEED.label), container=c3, help=t(GEN_SEED.help))
        if clamped:
            st.info(t("generate.clamped", names=t("generate.list_sep").join(t(k) for k in clamped)),
                    icon=":material/tune:")


def step_by_step() -> None:
    """The three caches, their next tokens and the newest query: a step reruns only this part."""
    try:
        prompt = ui.prompt()
    except LabError as err:
        render.show_error(err)
        prompt = None
    if prompt is not None:
        demo = ui.demo(prompt)
        full = ui.full(demo)
        b1, b2, b3 = st.columns(3)
        b1.button(t("generate.next"), type="primary", on_click=ui.on_next, disabled=full,
                  icon=":material/skip_next:", width="stretch")
        b2.button(t("generate.run_all"), on_click=ui.on_run_all, disabled=full, icon=":material/fast_forward:",
                  width="stretch")
        b3.button(t("generate.reset"), on_click=ui.on_reset, disabled=demo.steps == 0,
                  icon=":material/restart_alt:", width="stretch")
        states = [ui.decoded(i, demo.tokens(i)) for i in variants]
        length = states[0].cache.length
        st.markdown(t("generate.status", step=demo.steps, prompt=len(prompt), n=length, n_ctx=cfg.n_ctx)
                    + (" " + t("generate.full") if full else ""))
        mha_bytes = toy.generation.cache_bytes(models[0], length)
        for i, col in zip(variants, st.columns(len(models)), strict=True):
            with col, st.container(border=True):
                m, s = models[i], states[i]
                st.markdown(f"**{names[i]}**")
                st.markdown(ui.written_line(demo, i))
                counted = toy.generation.cache_bytes(m, length)
                st.metric(t("generate.cache_now"), format_bytes(counted),
                          delta=ui.vs_mha(m, counted, mha_bytes), delta_color="inverse",
                          help=t("generate.cache_help", layers=cfg.n_layers, g=m.config.kv_heads,
                                 d_head=cfg.d_head, n=length, bytes=toy.generation.BYTES_PER_VALUE,
                                 counted=f"{counted:,}", measured=f"{s.cache.nbytes:,}"))
                render.chart(charts.cache_grid, toy.generation.cache_rows(s.cache), cfg.n_ctx,
                             tuple(toy.symbol(x) for x in s.tokens), row_names=ui.cache_row_names(m),
                             kv_names=ui.kv_names(m), title=t("generate.cache_title"),
                             position_title=t("generate.position"), kv_title=t("generate.kv_head"),
                             token_title=t("generate.token"))
                if not full:
                    render.chart(charts.next_token_bars, ui.next_probs(demo, i), toy.SYMBOLS[:cfg.vocab_size],
                                 top=ui.NEXT_TOP, title=t("generate.next_title", top=ui.NEXT_TOP),
                                 value_title=t("generate.probability"))
        st.caption(t("generate.cache_caption", d_head=cfg.d_head))

        st.subheader(t("generate.query_title"))
        view = st.radio(t("generate.view"), variants, key=ui.VIEW_KEY, horizontal=True,
                        format_func=lambda i: names[i])
        m, s = models[view], states[view]
        # the step's token above the chart, not in its spec: a spec that changed every step made the browser
        # build the chart anew each time instead of taking the new rows
        st.markdown(f"**{t('generate.query_chart', token=escape(toy.symbol(s.tokens[-1])), position=length - 1)}**")
        render.chart(charts.query_attention, s.attn.reshape(-1, s.attn.shape[-1]),
                     tuple(toy.position_labels(s.tokens)), ui.query_row_names(m), ui.query_groups(m),
                     row_title=t("generate.query_rows"), col_title=t("generate.cached_keys"),
                     value_title=t("common.weight"))
        r = cfg.n_heads // m.config.kv_heads
        sharing = t("generate.query_shared" if r > 1 else "generate.query_own", g=m.config.kv_heads, r=r)
        st.caption(t("generate.query_caption", sharing=sharing))


with tabs[0]:
    if tabs[0].open:
        st.markdown(t("generate.intro", layers=cfg.n_layers, h=cfg.n_heads, n_ctx=cfg.n_ctx))
        controls()
        parts.part(step_by_step)
        st.subheader(t("generate.why_title"))
        st.markdown(t("generate.why_kv"))
        st.markdown(t("generate.why_gqa", h=cfg.n_heads, g2=models[1].config.kv_heads, g1=models[2].config.kv_heads,
                      full_mha=format_bytes(ui.full_cache_bytes(0)), full_gqa=format_bytes(ui.full_cache_bytes(1)),
                      full_mqa=format_bytes(ui.full_cache_bytes(2)), n_ctx=cfg.n_ctx))
        render.source(toy.generation.decode_step)

# ---- sharing K/V heads: which query heads share, and what they still do differently -----------------------
with tabs[1]:
    if tabs[1].open:
        st.markdown(t("generate.share_intro", h=cfg.n_heads, d_model=cfg.d_model, layers=cfg.n_layers,
                      steps=toy.DEFAULT_RECIPE.steps, g2=models[1].config.kv_heads,
                      r2=cfg.n_heads // models[1].config.kv_heads))
        for i, col in zip(variants, st.columns(len(models)), strict=True):
            with col:
                render.chart(charts.sharing_diagram, cfg.n_heads, models[i].config.kv_heads,
                             query_names=tuple(f"H{h}" for h in range(cfg.n_heads)), kv_names=ui.kv_names(models[i]),
                             title=names[i])
        st.caption(t("generate.sharing_caption"))

        st.subheader(t("generate.compare_title"))
        results, n_seqs = [ui.held_out(i)[0] for i in variants], toy.evaluate.EVAL_SEQS
        render.table({
            t("generate.col_model"): names,
            t("generate.col_params"): [format_params(ui.attention_params(i)) for i in variants],
            t("generate.col_loss"): [r.loss for r in results],
            t("generate.col_accuracy"): [f"{r.accuracy:.1%}" for r in results],
            t("generate.col_cache", n=cfg.n_ctx): [format_bytes(ui.full_cache_bytes(i)) for i in variants],
        })
        st.markdown(t("generate.compare_reading", loss_mha=results[0].loss, loss_gqa=results[1].loss,
                      loss_mqa=results[2].loss, acc_lo=min(r.accuracy for r in results),
                      acc_hi=max(r.accuracy for r in results),
                      cache_mha=format_bytes(ui.full_cache_bytes(0)), cache_mqa=format_bytes(ui.full_cache_bytes(2)),
                      n_ctx=cfg.n_ctx, n_seqs=n_seqs))
        render.page_link("cost", t("generate.to_cost"), ":material/calculate:")

        st.subheader(t("generate.differ_title"))
        c1, c2 = st.columns(2)
        share = c1.radio(t("generate.share_model"), variants, key=ui.SHARE_KEY, horizontal=True,
                         format_func=lambda i: names[i])
        layer = c2.radio(t("generate.layer"), range(cfg.n_layers), key=ui.LAYER_KEY, horizontal=True,
                         format_func=lambda la: bound("generate.layer_n", layer=la))
        ids = ui.example(int(ss[ui.EXAMPLE_KEY]))
        left, right = st.columns([4, 1], vertical_alignment="bottom")
        left.code(toy.format_sequence(ids), language=None, wrap_lines=True)
        right.button(t("generate.another"), on_click=ui.on_example, icon=":material/casino:", width="stretch")
        m = models[share]
        view = toy.inspect_sequence(m, ids)
        scores = ui.held_out(share)[1]
        label = {(h.layer, h.head): bound(f"heads.label_{h.label}") for h in scores.heads}
        labels, targets = tuple(toy.position_labels(ids)), toy.induction_keys(ids[None])[0]
        r = cfg.n_heads // m.config.kv_heads
        for j, group_col in enumerate(st.columns(m.config.kv_heads)):
            with group_col, st.container(border=True):
                st.markdown(ui.group_title(m, j))
                for h, col in zip(range(j * r, (j + 1) * r), st.columns(r), strict=True):
                    with col:
                        st.markdown(f"**{head_name(layer, h)}** · {label[layer, h]}")
                        render.chart(toy_charts.attention_map, view.attn[layer, h], labels, targets,
                                     row_title=t("common.query"), col_title=t("common.key"),
                                     value_title=t("common.weight"), size=180)
        st.caption(t("generate.differ_caption", n_seqs=n_seqs))
        render.table(ui.score_columns(m, scores, layer))
        st.caption(t("generate.scores_caption", n_seqs=n_seqs))

render.next_steps("cost", "real")
