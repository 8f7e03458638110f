"""Cost lab: parameters, FLOPs and KV cache of MHA / GQA / MQA, live, on published model shapes."""

import streamlit as st

from mha_core.charts import cost as cost_charts
from mha_core.cost_model import (
    ModelShape,
    cache_vs_weights,
    cost_report,
    flops_curve,
    heads_sweep,
    kv_crossover_tokens,
    kv_curves,
    model_params,
    seq_grid,
)
from mha_core.counts import attention_flops, attention_kind, divisors, kv_cache_bytes, param_counts
from mha_core.errors import LabError
from mha_core.presets import PRESET_KEYS, preset
from mha_core.ui import bound_t, numbers, parts, render, state, t
from mha_core.ui import cost as controls
from mha_core.ui.cost import (
    BIAS_KEY,
    BYTES_PER_VALUE,
    CUSTOM,
    DTYPE_KEY,
    FIXED_KEY,
    H_DIV_KEY,
    KV_KEY,
    PRESET_KEY,
    fill_from_preset,
    percent,
    show_chart,
    switch_mode,
    to_custom,
    vs_mha,
)
from mha_core.units import format_bytes, format_flops, format_params

render.page_header("cost")
state.keep(controls.KEPT)
ss = st.session_state
bound = bound_t()  # t for format_func lambdas, which may run outside this script run


def body() -> None:
    """The lab under its title: a preset, a shape or a length reruns only this part, not the navigation."""
    # ---- controls -------------------------------------------------------------------------------
    with st.container(border=True):
        st.selectbox(t("cost.preset"), (CUSTOM, *PRESET_KEYS), key=PRESET_KEY, on_change=fill_from_preset,
                     format_func=lambda k: bound("cost.custom") if k == CUSTOM else preset(k).name)
        shape_col, kv_col, load_col = st.columns(3)
        with shape_col:
            fixed = st.toggle(t("cost.fixed"), key=FIXED_KEY, on_change=switch_mode, help=t("cost.fixed_help"))
            if fixed:
                d_model = numbers.number_input(controls.D_MODEL, "d_model", increment=64, on_change=to_custom)
                options = divisors(d_model)
                state.valid_choice(H_DIV_KEY, options, options[-1])
                h = int(st.select_slider(t("cost.h"), options, key=H_DIV_KEY, on_change=to_custom,
                                         help=t("cost.h_div_help")))
                d_head = d_model // h
            else:
                h = numbers.number_input(controls.H, t("cost.h"), on_change=to_custom)
                d_head = numbers.number_input(controls.D_HEAD, "d_head", on_change=to_custom)
                d_model = h * d_head
        with kv_col:
            kv_options = divisors(h)[::-1]
            state.valid_choice(KV_KEY, kv_options, kv_options[0])
            g = int(st.selectbox(
                t("cost.kv"), kv_options, key=KV_KEY, on_change=to_custom, help=t("cost.kv_help"),
                format_func=lambda n, h=h: bound(f"cost.kv_{attention_kind(h, n).lower()}", g=n, h=h, r=h // n),
            ))
            layers = numbers.number_input(controls.LAYERS, t("cost.layers"), on_change=to_custom)
            bias = st.toggle(t("cost.bias"), key=BIAS_KEY, on_change=to_custom, help=t("cost.bias_help"))
        with load_col:
            seq_len = numbers.number_input(controls.SEQ, t("cost.seq_len"), increment=512, help=t("cost.seq_help"))
            batch = numbers.number_input(controls.BATCH, t("cost.batch"))
            dtype = st.radio(t("cost.dtype"), tuple(BYTES_PER_VALUE), key=DTYPE_KEY, horizontal=True,
                             format_func=lambda k: bound(f"cost.dtype_{k}"))

    picked = None if ss[PRESET_KEY] == CUSTOM else preset(ss[PRESET_KEY])
    st.caption(t("cost.source", source=picked.source) if picked else t("cost.source_custom"))
    if picked and picked.note:
        st.info(t(picked.note), icon=":material/info:")

    try:
        shape = ModelShape(d_model, h, g, d_head, layers, bias)
        r = cost_report(shape, seq_len=seq_len, batch=batch, bytes_per_value=BYTES_PER_VALUE[dtype])
    except LabError as err:
        render.show_error(err)
        st.stop()

    st.markdown(t("cost.shape_line", kind=shape.kind, d_model=d_model, h=h, d_head=d_head, g=g, r=h // g,
                  layers=layers))


    # ---- parameters -----------------------------------------------------------------------------
    st.subheader(t("cost.params_title"))
    rows = "\n".join(
        f"| {name} | {' × '.join(map(str, shape.matrix_shapes()[key]))}{' + ' + t('cost.bias_short') if bias else ''} "
        f"| {format_params(r.layer_params[key])} ({r.layer_params[key]:,}) |"
        for name, key in (("W_Q", "q"), ("W_K", "k"), ("W_V", "v"), ("W_O", "o"))
    )
    total = r.layer_params["total"]
    st.markdown(f"| {t('cost.col_matrix')} | {t('cost.col_shape')} | {t('cost.col_params')} |\n|---|---|---:|\n{rows}\n"
                f"| **{t('cost.layer_total')}** | | **{format_params(total)}** ({total:,}) |")
    left, right = st.columns(2)
    left.metric(t("cost.model_total", layers=layers), format_params(r.model_params),
                delta=vs_mha(r.model_params, r.mha_model_params), delta_color="inverse",
                help=t("cost.exact_params", n=f"{r.model_params:,}"))
    right.metric(t("cost.mha_equiv", h=h), format_params(r.mha_model_params),
                 help=t("cost.exact_params", n=f"{r.mha_model_params:,}"))
    st.caption(t("cost.params_caption"))

    # ---- KV cache -------------------------------------------------------------------------------
    st.subheader(t("cost.kv_title"))
    cols = st.columns(3)
    for col, label, value, mha in (
        (cols[0], t("cost.kv_token"), r.kv_per_token, r.mha_kv_batch // (seq_len * batch)),
        (cols[1], t("cost.kv_sequence", n=f"{seq_len:,}"), r.kv_per_sequence, r.mha_kv_batch // batch),
        (cols[2], t("cost.kv_batch", batch=batch), r.kv_batch, r.mha_kv_batch),
    ):
        col.metric(label, format_bytes(value), delta=vs_mha(value, mha), delta_color="inverse",
                   help=t("cost.exact_bytes", n=f"{value:,}"))
    st.caption(t("cost.kv_caption", layers=layers, g=g, d_head=d_head, bytes=BYTES_PER_VALUE[dtype], h=h))
    render.page_link("generate", t("cost.to_generate"), ":material/text_increase:")

    st.markdown(f"**{t('cost.vs_weights_title')}**")
    if picked and picked.body:
        cw = cache_vs_weights(shape, picked.body, seq_len=seq_len, batch=batch, bytes_per_value=BYTES_PER_VALUE[dtype])
        cols = st.columns(3)
        cols[0].metric(t("cost.weights", dtype=t(f"cost.dtype_{dtype}")), format_bytes(cw.weight_bytes),
                       help=t("cost.exact_weights", n=f"{cw.params:,}"))
        cols[1].metric(t("cost.cache_share"), percent(cw.share), help=t("cost.exact_bytes", n=f"{cw.cache_bytes:,}"))
        cols[2].metric(t("cost.crossover"), t("cost.tokens", n=f"{cw.crossover_tokens:,}"),
                       help=t("cost.crossover_help"))
        st.caption(t("cost.crossover_caption", name=picked.name, cross=f"{cw.crossover_tokens:,}",
                     seqs=f"{cw.crossover_tokens / seq_len:,.1f}", n=f"{seq_len:,}", batch=f"{batch:,}",
                     tokens=f"{cw.tokens:,}", pct=percent(cw.share)))
    else:
        st.caption(t("cost.crossover_custom"))

    # ---- FLOPs ----------------------------------------------------------------------------------
    st.subheader(t("cost.flops_title"))
    tok = r.flops.per_token()
    cols = [*st.columns(2), *st.columns(2)]  # 2 × 2: the labels stay whole on a laptop, stack on a phone
    for col, label, value in (
        (cols[0], t("cost.flops_proj"), tok.projections),
        (cols[1], t("cost.flops_attn", n=f"{seq_len:,}"), tok.attention),
        (cols[2], t("cost.flops_model_token", layers=layers), tok.total * layers),
        (cols[3], t("cost.flops_model_seq", n=f"{seq_len:,}"), r.flops.total * layers),
    ):
        col.metric(label, format_flops(value), help=t("cost.exact_flops", n=f"{value:,}"))
    st.caption(t("cost.flops_caption", share=f"{100 * tok.attention / tok.total:.0f}"))

    # ---- charts ---------------------------------------------------------------------------------
    st.subheader(t("cost.charts_title"))
    sweep = heads_sweep(d_model, seq_len=seq_len, bias=bias)
    left, right = st.columns(2)
    with left:
        show_chart(t("cost.ch_params_title", d_model=d_model), cost_charts.params_vs_heads, sweep, current_h=h,
                   x_title=t("cost.ch_h"), y_title=t("cost.ch_params_y"), d_head_title="d_head",
                   flops_title=t("cost.ch_flops_tip", n=seq_len))
        st.caption(t("cost.ch_params_caption", d_model=d_model, flops=format_flops(sweep[0].flops_per_token)))
    with right:
        show_chart(t("cost.ch_d_head_title", d_model=d_model), cost_charts.d_head_vs_heads, sweep, current_h=h,
                   x_title=t("cost.ch_h"), y_title="d_head")
        st.caption(t("cost.ch_d_head_caption"))
    grid = seq_grid(seq_len)
    left, right = st.columns(2)
    with left:
        show_chart(t("cost.ch_kv_title", batch=batch, dtype=t(f"cost.dtype_{dtype}")), cost_charts.kv_vs_seq_len,
                   kv_curves(shape, grid, batch=batch, bytes_per_value=BYTES_PER_VALUE[dtype]), x_title=t("cost.ch_n"),
                   y_title=t("cost.ch_kv_y"), series_title=t("cost.ch_series"))
        st.caption(t("cost.ch_kv_caption"))
    with right:
        show_chart(t("cost.ch_flops_title"), cost_charts.flops_vs_seq_len, flops_curve(shape, grid),
                   x_title=t("cost.ch_n"), y_title=t("cost.ch_flops_y"), series_title=t("cost.ch_series"),
                   projections=t("cost.ch_proj"), attention=t("cost.ch_attn"))
        st.caption(t("cost.ch_flops_caption"))

    st.subheader(t("cost.quality_title"))
    st.markdown(t("cost.quality"))

    render.source(param_counts, kv_cache_bytes, attention_flops, model_params, kv_crossover_tokens)


parts.part(body)
render.next_steps("heads", "quiz")
