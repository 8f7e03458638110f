"""Real pretrained heads: a real model with BERT's architecture, offline — its heads, what each measurably does,
one tempting reading tested on a minimal pair, and the core checked against every layer."""

import streamlit as st

from mha_core import head_types, layer_check, multi_head_attention, pretrained
from mha_core.charts import lines
from mha_core.charts import real as charts
from mha_core.errors import LabError
from mha_core.markdown import escape
from mha_core.ui import chart_downloads, real_views, render, state, t
from mha_core.ui import real as real_ui
from mha_core.ui.i18n import bound_t
from mha_core.units import head_name
from mha_core.walkthrough import token_labels

render.page_header("real")
state.keep(real_ui.KEPT)
ss = st.session_state

# --- model and sentence ---
models = real_ui.offered_models()
name = st.selectbox(t("real.model"), tuple(models), key=real_ui.MODEL_KEY,
                    help=t("real.model_help", name=pretrained.PACKAGED))
st.caption(t("real.zh_note"))
loaded = real_ui.load(models.get(name, pretrained.PACKAGED_CHOICE))  # only a name the server offers picks a folder
if loaded is None and name != pretrained.PACKAGED:
    st.info(t("real.fallback", name=pretrained.PACKAGED), icon=":material/undo:")
    loaded = real_ui.load(pretrained.PACKAGED_CHOICE)
if loaded is None:
    st.stop()
st.caption(t("real.model_line", source=escape(loaded.name), arch=escape(loaded.model_type),
             L=loaded.n_layers, H=loaded.n_heads, d=loaded.d_model))
st.selectbox(t("real.example"), range(len(real_ui.EXAMPLES)), index=None, key=real_ui.EXAMPLE_KEY,
             on_change=real_ui.use_example,
             placeholder=t("real.example_placeholder"), format_func=lambda i: real_ui.EXAMPLES[i].sentence)
sentence = st.text_input(t("real.sentence"), key=real_ui.SENTENCE_KEY, max_chars=pretrained.MAX_SENTENCE_CHARS,
                         help=t("real.sentence_help", max=pretrained.MAX_REAL_TOKENS))
real_ui.prepare(loaded, sentence)  # in turn with the class; says how many sentences are ahead while it waits
try:
    r = real_ui.run(loaded, sentence)
except LabError as err:
    render.show_error(err)
    st.stop()
labels = tuple(token_labels(r.tokens))
st.markdown(t("real.tokens", n=r.n) + " " + " ".join(real_ui.code_span(tok) for tok in r.tokens))
stats = real_ui.stats(loaded, r, sentence)

# --- model view ---
st.subheader(t("real.model_view"))
st.caption(t("real.model_view_help"))
render.chart(charts.model_view, r.attentions, labels, layer_title=t("real.layer"), head_title=t("real.head"),
             query_title=t("common.query"), key_title=t("common.key"), weight_title=t("common.weight"))
if r.n > charts.MODEL_VIEW_CELLS:
    st.caption(t("real.model_view_pooled", n=r.n, size=-(-r.n // charts.MODEL_VIEW_CELLS)))

# --- head types ---
st.subheader(t("real.types"))
st.latex(r"\begin{aligned}\text{prev}&=\tfrac1{|I|}\textstyle\sum_{i\in I}A_{i,i-1}\\ "
         r"\text{next}&=\tfrac1{|I|}\textstyle\sum_{i\in I}A_{i,i+1}\\ "
         r"\text{self}&=\tfrac1{|I|}\textstyle\sum_{i\in I}A_{i,i}\\ "
         r"\text{sink}&=\tfrac1{|I|}\textstyle\sum_{i\in I}\sum_{j\in S}A_{ij}\\ "
         r"\text{entropy}&=\tfrac1{|I|}\textstyle\sum_{i\in I}H(A_i)/\log n\\ "
         r"H(A_i)&=\textstyle-\sum_j A_{ij}\log A_{ij}\\ "
         r"\text{to word}&=\textstyle\sum_{j\in w}A_{p,j}\end{aligned}")
st.caption(t("real.types_help"))
bound = bound_t()
kind = st.selectbox(t("real.kind"), (*head_types.HEAD_TYPES, "pick"), key=real_ui.KIND_KEY,
                    format_func=lambda k: bound(f"real.kind_{k}"))
if kind == "pick":
    real_ui.default_pick(loaded, r, sentence)  # an example opens on its pronoun → referent
    c1, c2 = st.columns(2)
    source = c1.selectbox(t("real.pick_from"), range(r.n), key=real_ui.PICK_FROM_KEY, format_func=labels.__getitem__)
    target = c2.selectbox(t("real.pick_to"), range(r.n), key=real_ui.PICK_TO_KEY, format_func=labels.__getitem__)
    try:
        score = head_types.word_scores(r.attentions, source, head_types.word_span(r.tokens, target))
    except LabError as err:
        render.show_error(err)
        score = None
else:
    score = stats.score(kind)
if score is not None:
    left, right = st.columns([2, 3])
    with left:
        real_ui.ranked_heads(head_types.top_heads(score, 6), real_ui.top_key(kind))
    with right:
        render.chart(charts.score_map, score, title=t("real.score_map", kind=t(f"real.kind_{kind}")),
                     layer_title=t("real.layer"), head_title=t("real.head"), value_title=t("real.score"))

# --- head view ---
st.subheader(t("real.head_view"))
best = head_types.top_heads(stats.previous, 1)[0]  # first visit: open the clearest head
real_ui.fit_head_view(loaded, best)
c1, c2 = st.columns(2)
layer = c1.selectbox(t("real.layer"), range(loaded.n_layers), key=real_ui.LAYER_KEY, format_func=lambda i: f"L{i}")
head = c2.selectbox(t("real.head"), range(loaded.n_heads), key=real_ui.HEAD_KEY, format_func=lambda i: f"H{i}")
render.chart(charts.head_heatmap, r.attentions[layer, head], labels,
             title=t("real.head_title", name=head_name(layer, head)), row_title=t("common.query"),
             col_title=t("common.key"), value_title=t("common.weight"),
             export=chart_downloads.matrix(r.attentions[layer, head], labels, labels, "head",
                                           head=head_name(layer, head)))
if charts.drawn_as_pixels(r.n):
    st.caption(t("real.head_pixels", n=r.n, cells=r.n * r.n))
m = st.columns(5)
for col, k in zip(m, ("previous", "next", "self", "sink", "broad"), strict=True):
    col.metric(t(f"real.kind_{k}"), f"{stats.score(k)[layer, head]:.2f}")
lab = head_types.head_label(stats, layer, head)
st.markdown(t("real.label_line", head=head_name(layer, head), kind=t(f"real.kind_{lab.kind}"),
              value=lab.value, share=head_types.LABEL_SHARE, entropy=head_types.BROAD_ENTROPY))

# --- token lines of the same head ---
st.subheader(t("real.lines_title", name=head_name(layer, head)))
top_k = lines.top_k_for(1, r.n)
render.chart(lines.token_lines, r.attentions[layer, head][None], labels, (head_name(layer, head),), top_k=top_k,
             query_title=t("common.query"), key_title=t("common.key"), weight_title=t("common.weight"),
             head_title=t("real.head"))
st.caption(t("lines.help_one"))
if top_k is not None:
    st.caption(t("lines.top_k", n=r.n, k=top_k, share=lines.shown_share(r.attentions[layer, head], top_k)))

# --- heads that behave alike ---
real_views.similarity_section(loaded, r, sentence, stats)

# --- a minimal pair: does the head follow what "it" means? ---
real_views.pair_section(loaded)

# --- the core, on the model's own weights ---
st.subheader(t("real.core_title"))
if not loaded.bert_like:
    render.show_error(LabError("arch_unsupported", arch=loaded.model_type))
else:
    st.markdown(t("real.core_explain"))
    st.latex(r"\begin{aligned}Q_h&=XW_Q^h+b_Q^h,\quad K_h=XW_K^h+b_K^h\\ V_h&=XW_V^h+b_V^h\\ "
             r"A_h&=\operatorname{softmax}\big(Q_hK_h^{\top}/\sqrt{d_{\text{head}}}\big)\\ "
             r"O&=\operatorname{Concat}_h(A_hV_h)\,W_O+b_O\end{aligned}")
    checks = real_ui.checks(loaded, r, sentence)
    check_layer = st.selectbox(t("real.check_layer"), range(loaded.n_layers), key=real_ui.CHECK_LAYER_KEY,
                               format_func=lambda i: f"L{i}")
    c = checks[check_layer]
    m1, m2 = st.columns(2)
    m1.metric(t("real.diff_weights"), f"{c.weights_diff:.1e}")
    m2.metric(t("real.diff_output"), f"{c.output_diff:.1e}")
    verdict = max(max(x.weights_diff, x.output_diff) for x in checks)
    if all(x.ok for x in checks):
        st.success(t("real.all_pass", L=loaded.n_layers, worst=f"{verdict:.1e}", tol=f"{layer_check.TOLERANCE:.0e}"),
                   icon=":material/verified:")
    else:
        st.warning(t("real.some_fail", worst=f"{verdict:.1e}", tol=f"{layer_check.TOLERANCE:.0e}"),
                   icon=":material/warning:")
    render.source(layer_check.check_layer, multi_head_attention)

# --- ablation ---
st.subheader(t("real.ablate_title"))
if loaded.bert_like:
    st.markdown(t("real.ablate_explain"))
    n_all = loaded.n_layers * loaded.n_heads
    real_ui.fit_off(n_all)
    off = st.multiselect(t("real.off"), range(n_all), key=real_ui.OFF_KEY, placeholder=t("real.off_placeholder"),
                         format_func=lambda i, H=loaded.n_heads: head_name(i // H, i % H))
    cos = real_ui.ablate(loaded, r, sentence, [(i // loaded.n_heads, i % loaded.n_heads) for i in off])
    st.metric(t("real.cosine"), f"{cos:.4f}", help=t("real.cosine_help"))
    if st.toggle(t("real.importance_run", n=r.n, heads=n_all), key=real_ui.IMPORTANCE_KEY,
                 help=t("real.importance_run_help")):
        with st.spinner(t("real.importance_wait")):
            imp = real_ui.importance(loaded, r, sentence)
        render.chart(charts.score_map, imp, title=t("real.importance"), layer_title=t("real.layer"),
                     head_title=t("real.head"), value_title=t("real.importance_value"))
        st.caption(t("real.importance_help"))
else:
    render.show_error(LabError("arch_unsupported", arch=loaded.model_type))
render.next_steps("quiz")
