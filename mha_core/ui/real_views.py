"""The real-model page's two longer sections, drawn as the page script drew them: heads that behave alike (the
Jensen–Shannon map and its groups) and the minimal pair (does a head follow what "it" means?)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from mha_core import head_similarity, head_types, minimal_pair, pretrained
from mha_core.charts import real as charts
from mha_core.errors import LabError
from mha_core.ui import real as real_ui
from mha_core.ui import render
from mha_core.ui.i18n import t
from mha_core.units import head_name
from mha_core.walkthrough import token_labels


def similarity_section(loaded: pretrained.Loaded, r: pretrained.Run, sentence: str,
                       stats: head_types.HeadStats) -> None:
    """Every pair of heads' distance on this sentence, grouped at the student's threshold, beside type and entropy."""
    st.subheader(t("real.sim_title"))
    st.markdown(t("real.sim_explain", max=head_similarity.JS_MAX))
    st.latex(r"\begin{aligned}D(A,B)&=\tfrac1n\textstyle\sum_{i}\sqrt{\mathrm{JSD}(A_i,B_i)}\\ "
             r"\mathrm{JSD}(p,q)&=\tfrac12\mathrm{KL}(p\,\|\,m)+\tfrac12\mathrm{KL}(q\,\|\,m)\\ "
             r"m&=\tfrac12(p+q)\end{aligned}")
    n_all = loaded.n_layers * loaded.n_heads
    asked = st.toggle(t("real.sim_run", n=r.n, heads=n_all), key=real_ui.SIMILARITY_KEY,
                      help=t("real.sim_run_help", heads=n_all))
    if not asked:
        return
    dist, entropy = real_ui.similarity_asked(loaded, r, sentence)
    names = tuple(head_name(i // loaded.n_heads, i % loaded.n_heads) for i in range(n_all))
    threshold = st.select_slider(t("real.sim_threshold"), real_ui.GROUP_STEPS, key=real_ui.GROUP_KEY,
                                 help=t("real.sim_threshold_help", max=head_similarity.JS_MAX))
    grouping = head_similarity.group_heads(dist, threshold)
    group_of = {h: g for g, members in enumerate(grouping.groups) for h in members}
    kinds = [head_types.head_label(stats, i // loaded.n_heads, i % loaded.n_heads).kind for i in range(n_all)]
    render.chart(charts.similarity_map, dist, names, grouping.order, title=t("real.sim_map"),
                 value_title=t("real.sim_value"), max_value=head_similarity.JS_MAX)
    real_ui.similarity_table(list(names), grouping.order, group_of, kinds, entropy)
    alike = [g for g in grouping.groups if len(g) > 1]
    st.caption(t("real.sim_summary", groups=len(grouping.groups), alike=len(alike),
                 largest=max(len(g) for g in grouping.groups), threshold=threshold, ln_n=float(np.log(r.n))))


def pair_section(loaded: pretrained.Loaded) -> None:
    """A minimal pair side by side: one chosen head's weights from the pronoun, and the census over every head."""
    st.subheader(t("real.pair_title"))
    st.markdown(t("real.pair_explain"))
    pair_i = st.radio(t("real.pair_pick"), range(len(minimal_pair.PAIRS)), key=real_ui.PAIR_KEY, horizontal=True,
                      format_func=lambda i: " / ".join(minimal_pair.PAIRS[i].changed))
    pair = minimal_pair.PAIRS[pair_i]
    try:
        sides = real_ui.pair_sides(loaded, pair_i)
    except LabError as err:
        render.show_error(err)
        sides = None
    if sides is not None:
        real_ui.default_pair_head(loaded, pair_i, sides)
        c1, c2 = st.columns(2)
        p_layer = c1.selectbox(t("real.layer"), range(loaded.n_layers), key=real_ui.PAIR_LAYER_KEY,
                               format_func=lambda i: f"L{i}")
        p_head = c2.selectbox(t("real.head"), range(loaded.n_heads), key=real_ui.PAIR_HEAD_KEY,
                              format_func=lambda i: f"H{i}")
        cmp = minimal_pair.compare(sides, p_layer, p_head)
        for col, sd, i in zip(st.columns(2), sides, range(2), strict=True):
            with col:
                st.markdown(f"**{t('real.pair_sentence', k=i + 1)}** {sd.sentence}")
                st.caption(t("real.pair_means", pronoun=pair.pronoun, noun=pair.nouns[sd.referent]))
                render.chart(charts.pair_row, sd.rows[p_layer, p_head], tuple(token_labels(sd.tokens)), sd.nouns,
                             title=t("real.pair_chart", head=head_name(p_layer, p_head), pronoun=pair.pronoun),
                             value_title=t("common.weight"))
                for noun, w in zip(pair.nouns, cmp.weights[i], strict=True):
                    st.metric(t("real.pair_weight", pronoun=pair.pronoun, noun=noun), f"{w:.2f}")
        nouns = [pair.nouns[k] for k in cmp.preferred]
        st.info(t(f"real.pair_verdict_{cmp.verdict}", head=head_name(p_layer, p_head), pronoun=pair.pronoun,
                  noun0=nouns[0], noun1=nouns[1], a=cmp.weights[0, cmp.preferred[0]],
                  b=cmp.weights[1, cmp.preferred[1]], ref0=pair.nouns[sides[0].referent],
                  ref1=pair.nouns[sides[1].referent]),
                icon=":material/compare_arrows:")
        cen = real_ui.pair_census(loaded, pair_i, sides)
        st.markdown(t("real.pair_census", total=cen.total, subject=cen.counts["subject"], same=cen.counts["same"],
                      follows=cen.counts["follows"], against=cen.counts["against"], noun0=pair.nouns[0],
                      noun1=pair.nouns[1], pronoun=pair.pronoun))
        if cen.counts["follows"]:
            st.markdown(t("real.pair_follows_best", w=cen.follows_best, pronoun=pair.pronoun))
        unknown, pieces = real_ui.unknown_tokens(loaded, pretrained.ZH_EXAMPLES[0].sentence)
        if unknown:
            st.caption(t("real.pair_english_only", sentence=pretrained.ZH_EXAMPLES[0].sentence, unk=unknown, n=pieces))
    st.markdown(t("real.pair_reading"))

