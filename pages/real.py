"""Real pretrained heads: a real model with BERT's architecture, offline — its heads, what each measurably does,
one tempting reading tested on a minimal pair, and the core checked against every layer."""

import streamlit as st

from mha_core import charts, multi_head_attention
from mha_core import minimal_pair as M
from mha_core import pretrained as P
from mha_core.errors import LabError
from mha_core.markdown import escape
from mha_core.ui import real as R
from mha_core.ui import render, state, t
from mha_core.ui.i18n import bound_t, lang
from mha_core.walkthrough import token_labels

render.page_header("real")
ss = st.session_state
EXAMPLES = P.EXAMPLES + P.ZH_EXAMPLES
ss.setdefault("real_model", P.PACKAGED)
ss.setdefault("real_sentence", EXAMPLES[0].sentence)


def _use_example() -> None:
    if ss.get("real_example") is not None:
        ss["real_sentence"] = EXAMPLES[ss["real_example"]].sentence


# --- model and sentence ---
st.text_input(t("real.model"), key="real_model", help=t("real.model_help", max=P.MAX_NAME_CHARS))
st.caption(t("real.zh_note"))
loaded = R.load(ss["real_model"])
if loaded is None:
    st.info(t("real.fallback", name=P.PACKAGED), icon=":material/undo:")
    loaded = R.load(P.PACKAGED)
    if loaded is None:
        st.stop()
st.caption(t("real.model_line", source=escape(P.shown_name(loaded.label)), arch=escape(loaded.model_type),
             L=loaded.n_layers, H=loaded.n_heads, d=loaded.d_model))
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
st.markdown(t("real.tokens", n=r.n) + " " + " ".join(R.code_span(tok) for tok in r.tokens))
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
         r"\text{self}&=\tfrac1{|I|}\textstyle\sum_{i\in I}A_{i,i}\\ "
         r"\text{sink}&=\tfrac1{|I|}\textstyle\sum_{i\in I}\sum_{j\in S}A_{ij}\\ "
         r"\text{entropy}&=\tfrac1{|I|}\textstyle\sum_{i\in I}H(A_i)/\log n\\ "
         r"H(A_i)&=\textstyle-\sum_j A_{ij}\log A_{ij}\\ "
         r"\text{to word}&=\textstyle\sum_{j\in w}A_{p,j}\end{aligned}")
st.caption(t("real.types_help"))
tb = bound_t()
kind = st.selectbox(t("real.kind"), (*P.HEAD_TYPES, "pick"), key="real_kind",
                    format_func=lambda k: tb(f"real.kind_{k}"))
if kind == "pick":
    if ss.get("real_pick_for") != (loaded.name, sentence):  # an example opens on its pronoun → referent
        ex = next((e for e in EXAMPLES if e.sentence == sentence), None)
        pro = P.word_pieces(r.tokens, ex.pronoun) if ex else []
        ant = P.word_pieces(r.tokens, ex.antecedent) if ex else []
        ss["real_pick_from"], ss["real_pick_to"] = (pro or [1])[0], (ant or [min(2, r.n - 1)])[0]
        ss["real_pick_for"] = (loaded.name, sentence)
    c1, c2 = st.columns(2)
    source = c1.selectbox(t("real.pick_from"), range(r.n), key="real_pick_from", format_func=labels.__getitem__)
    target = c2.selectbox(t("real.pick_to"), range(r.n), key="real_pick_to", format_func=labels.__getitem__)
    try:
        score = P.word_scores(r.attentions, source, P.word_span(r.tokens, target))
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
        R.score_map(score, (*key, "score", kind, ss.get("real_pick_from"), ss.get("real_pick_to")),
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
m = st.columns(5)
for col, k in zip(m, ("previous", "next", "self", "sink", "broad"), strict=True):
    col.metric(t(f"real.kind_{k}"), f"{stats.score(k)[layer, head]:.2f}")
lab = P.head_label(stats, layer, head)
st.markdown(t("real.label_line", head=R.head_name(layer, head), kind=t(f"real.kind_{lab.kind}"),
              value=lab.value, share=P.LABEL_SHARE, entropy=P.BROAD_ENTROPY))

# --- a minimal pair: does the head follow what "it" means? ---
st.subheader(t("real.pair_title"))
st.markdown(t("real.pair_explain"))
pair_i = st.radio(t("real.pair_pick"), range(len(M.PAIRS)), key=R.PAIR_KEY, horizontal=True,
                  format_func=lambda i: " / ".join(M.PAIRS[i].changed))
pair = M.PAIRS[pair_i]
try:
    sides = R.pair_sides(loaded, pair_i)
except LabError as err:
    render.show_error(err)
    sides = None
if sides is not None:
    R.default_pair_head(loaded, pair_i, sides)
    c1, c2 = st.columns(2)
    p_layer = c1.selectbox(t("real.layer"), range(loaded.n_layers), key=R.PAIR_LAYER_KEY,
                           format_func=lambda i: f"L{i}")
    p_head = c2.selectbox(t("real.head"), range(loaded.n_heads), key=R.PAIR_HEAD_KEY, format_func=lambda i: f"H{i}")
    cmp = M.compare(sides, p_layer, p_head)
    for col, sd, i in zip(st.columns(2), sides, range(2), strict=True):
        with col:
            st.markdown(f"**{t('real.pair_sentence', k=i + 1)}** {sd.sentence}")
            st.caption(t("real.pair_means", pronoun=pair.pronoun, noun=pair.nouns[sd.referent]))
            render.chart(lambda sd=sd: M.row_chart(sd, p_layer, p_head, token_labels(sd.tokens),
                                                   title=t("real.pair_chart", head=R.head_name(p_layer, p_head),
                                                           pronoun=pair.pronoun),
                                                   value_title=t("common.weight")),
                         loaded.name, pair_i, i, p_layer, p_head, lang(), "pair")
            for noun, w in zip(pair.nouns, cmp.weights[i], strict=True):
                st.metric(t("real.pair_weight", pronoun=pair.pronoun, noun=noun), f"{w:.2f}")
    nouns = [pair.nouns[k] for k in cmp.preferred]
    st.info(t(f"real.pair_verdict_{cmp.verdict}", head=R.head_name(p_layer, p_head), pronoun=pair.pronoun,
              noun0=nouns[0], noun1=nouns[1], a=cmp.weights[0, cmp.preferred[0]], b=cmp.weights[1, cmp.preferred[1]],
              ref0=pair.nouns[sides[0].referent], ref1=pair.nouns[sides[1].referent]),
            icon=":material/compare_arrows:")
    cen = R.pair_census(loaded, pair_i, sides)
    st.markdown(t("real.pair_census", total=cen.total, subject=cen.counts["subject"], same=cen.counts["same"],
                  follows=cen.counts["follows"], against=cen.counts["against"], noun0=pair.nouns[0],
                  noun1=pair.nouns[1], pronoun=pair.pronoun))
    if cen.counts["follows"]:
        st.markdown(t("real.pair_follows_best", w=cen.follows_best, pronoun=pair.pronoun))
    unknown, pieces = R.unknown_tokens(loaded, P.ZH_EXAMPLES[0].sentence)
    if unknown:
        st.caption(t("real.pair_english_only", sentence=P.ZH_EXAMPLES[0].sentence, unk=unknown, n=pieces))
st.markdown(t("real.pair_reading"))

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
state.remember("real_model", "real_sentence", "real_kind", "real_layer", "real_head", R.PAIR_KEY, R.PAIR_LAYER_KEY,
               R.PAIR_HEAD_KEY, "real_check_layer", "real_off")
render.next_steps("quiz")
