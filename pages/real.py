"""Real pretrained heads: a real BERT-family model, offline — its heads, their types, the core proven on it."""

import streamlit as st

from mha_core import charts, multi_head_attention
from mha_core import pretrained as P
from mha_core.errors import LabError
from mha_core.ui import frame, render, state, t
from mha_core.ui import real as R
from mha_core.ui.i18n import bound_t, lang
from mha_core.walkthrough import token_labels

frame.ensure()

ss = st.session_state
EXAMPLES = P.EXAMPLES + P.ZH_EXAMPLES
ss.setdefault("real_model", P.PACKAGED)
ss.setdefault("real_sentence", EXAMPLES[0].sentence)
render.page_header("real")


def _use_example() -> None:
    if ss.get("real_example") is not None:
        ss["real_sentence"] = EXAMPLES[ss["real_example"]].sentence


# --- model and sentence ---
st.text_input(t("real.model"), key="real_model", help=t("real.model_help"))
st.caption(t("real.zh_note"))
loaded = R.load(ss["real_model"])
if loaded is None:
    st.info(t("real.fallback", name=P.PACKAGED), icon=":material/undo:")
    loaded = R.load(P.PACKAGED)
    if loaded is None:
        st.stop()
st.caption(t("real.model_line", source=loaded.label, arch=loaded.model_type, L=loaded.n_layers,
             H=loaded.n_heads, d=loaded.d_model))
st.selectbox(t("real.example"), range(len(EXAMPLES)), index=None, key="real_example", on_change=_use_example,
             placeholder=t("real.example_placeholder"), format_func=lambda i: EXAMPLES[i].sentence)
sentence = st.text_input(t("real.sentence"), key="real_sentence", max_chars=300)
try:
    r = R.run(loaded, sentence)
except LabError as err:
    render.show_error(err)
    st.stop()
if r.dropped:
    st.info(t("real.truncated", max=P.MAX_REAL_TOKENS, dropped=r.dropped), icon=":material/content_cut:")
labels = token_labels(r.tokens)
st.markdown(t("real.tokens", n=r.n) + " " + " ".join(f"`{tok}`" for tok in r.tokens))
stats = R.stats(loaded, r, sentence)
key = (loaded.name, sentence, lang())

# --- model view ---
st.subheader(t("real.model_view"))
st.caption(t("real.model_view_help"))
render.chart(lambda: R.model_view(r.attentions, labels, (t("real.layer"), t("real.head"), t("common.query"),
                                                         t("common.key"), t("common.weight"))), *key, "model")

# --- head types ---
st.subheader(t("real.types"))
st.latex(r"\begin{aligned}\text{prev}&=\tfrac1{|I|}\textstyle\sum_{i\in I}A_{i,i-1}\\ "
         r"\text{next}&=\tfrac1{|I|}\textstyle\sum_{i\in I}A_{i,i+1}\\ "
         r"\text{sink}&=\tfrac1{|I|}\textstyle\sum_{i\in I}\sum_{j\in S}A_{ij}\\ "
         r"\text{entropy}&=\tfrac1{|I|}\textstyle\sum_{i\in I}H(A_i)/\log n\\ "
         r"H(A_i)&=\textstyle-\sum_j A_{ij}\log A_{ij}\\ "
         r"\text{coref}&=\textstyle\sum_{j\in\text{antecedent}}A_{p,j}\end{aligned}")
st.caption(t("real.types_help"))
tb = bound_t()
kind = st.selectbox(t("real.kind"), (*P.HEAD_TYPES, "coref"), key="real_kind",
                    format_func=lambda k: tb(f"real.kind_{k}"))
if kind == "coref":
    if ss.get("real_coref_for") != (loaded.name, sentence):
        ex = next((e for e in EXAMPLES if e.sentence == sentence), None)
        pro = P.word_pieces(r.tokens, ex.pronoun) if ex else []
        ant = P.word_pieces(r.tokens, ex.antecedent) if ex else []
        ss["real_pronoun"], ss["real_antecedent"] = (pro or [1])[0], (ant or [min(2, r.n - 1)])[0]
        ss["real_coref_for"] = (loaded.name, sentence)
    c1, c2 = st.columns(2)
    pronoun = c1.selectbox(t("real.pronoun"), range(r.n), key="real_pronoun", format_func=labels.__getitem__)
    antecedent = c2.selectbox(t("real.antecedent"), range(r.n), key="real_antecedent",
                              format_func=labels.__getitem__)
    try:
        score = P.coref_scores(r.attentions, pronoun, P.word_span(r.tokens, antecedent))
    except LabError as err:
        render.show_error(err)
        score = None
else:
    score = stats.score(kind)
if score is not None:
    left, right = st.columns([2, 3])
    with left:
        st.caption(t("real.top_caption"))
        R.ranked_table(P.top_heads(score, 6), f"real_top_{kind}", t(f"real.kind_{kind}"))
    with right:
        R.score_map(score, (*key, "score", kind, ss.get("real_pronoun"), ss.get("real_antecedent")),
                    t("real.score_map", kind=t(f"real.kind_{kind}")), t("real.score"))

# --- head view ---
st.subheader(t("real.head_view"))
best = P.top_heads(stats.previous, 1)[0]  # first visit: open the clearest head
ss["real_layer"] = min(int(ss.get("real_layer", best.layer)), loaded.n_layers - 1)
ss["real_head"] = min(int(ss.get("real_head", best.head)), loaded.n_heads - 1)
c1, c2 = st.columns(2)
layer = c1.selectbox(t("real.layer"), range(loaded.n_layers), key="real_layer", format_func=lambda i: f"L{i}")
head = c2.selectbox(t("real.head"), range(loaded.n_heads), key="real_head", format_func=lambda i: f"H{i}")
render.chart(lambda: charts.heatmap(r.attentions[layer, head], labels, labels, domain=(0.0, 1.0),
                                    title=t("real.head_title", name=R.head_name(layer, head)),
                                    row_title=t("common.query"), col_title=t("common.key"),
                                    value_title=t("common.weight"), size=max(300, 22 * r.n)), *key, "head", layer, head)
m = st.columns(4)
for col, k, val in zip(m, ("previous", "next", "sink", "broad"), (stats.previous, stats.next, stats.sink,
                                                                    stats.entropy), strict=True):
    col.metric(t(f"real.kind_{k}"), f"{val[layer, head]:.2f}")

# --- the core, on the model's own weights ---
st.subheader(t("real.core_title"))
if not loaded.bert_like:
    render.show_error(LabError("arch_unsupported", "", arch=loaded.model_type))
else:
    st.markdown(t("real.core_explain"))
    st.latex(r"\begin{aligned}Q_h&=XW_Q^h+b_Q^h,\quad K_h=XW_K^h+b_K^h\\ V_h&=XW_V^h+b_V^h\\ "
             r"A_h&=\operatorname{softmax}\big(Q_hK_h^{\top}/\sqrt{d_{\text{head}}}\big)\\ "
             r"O&=\operatorname{Concat}_h(A_hV_h)\,W_O+b_O\end{aligned}")
    checks = R.checks(loaded, r, sentence)
    check_layer = st.selectbox(t("real.check_layer"), range(loaded.n_layers), key="real_check_layer",
                               format_func=lambda i: f"L{i}")
    c = checks[check_layer]
    m1, m2 = st.columns(2)
    m1.metric(t("real.diff_weights"), f"{c.weights_diff:.1e}")
    m2.metric(t("real.diff_output"), f"{c.output_diff:.1e}")
    verdict = max(max(x.weights_diff, x.output_diff) for x in checks)
    if all(x.ok for x in checks):
        st.success(t("real.all_pass", L=loaded.n_layers, worst=f"{verdict:.1e}", tol=f"{P.TOLERANCE:.0e}"),
                   icon=":material/verified:")
    else:
        st.warning(t("real.some_fail", worst=f"{verdict:.1e}", tol=f"{P.TOLERANCE:.0e}"), icon=":material/warning:")
    render.source(P.check_layer, multi_head_attention)

# --- ablation ---
st.subheader(t("real.ablate_title"))
if loaded.bert_like:
    st.markdown(t("real.ablate_explain"))
    n_all = loaded.n_layers * loaded.n_heads
    ss["real_off"] = [i for i in ss.get("real_off", []) if i < n_all]
    off = st.multiselect(t("real.off"), range(n_all), key="real_off", placeholder=t("real.off_placeholder"),
                         format_func=lambda i, H=loaded.n_heads: R.head_name(i // H, i % H))
    cos = R.ablate(loaded, r, sentence, [(i // loaded.n_heads, i % loaded.n_heads) for i in off])
    st.metric(t("real.cosine"), f"{cos:.4f}", help=t("real.cosine_help"))
    with st.spinner(t("real.importance_wait")):
        imp = R.importance(loaded, sentence)
    R.score_map(imp, (*key, "importance"), t("real.importance"), t("real.importance_value"))
    st.caption(t("real.importance_help"))
else:
    render.show_error(LabError("arch_unsupported", "", arch=loaded.model_type))
state.remember("real_model", "real_sentence", "real_kind", "real_layer", "real_head", "real_check_layer", "real_off")
render.next_steps("quiz")
