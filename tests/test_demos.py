"""The lesson pages' demonstrations: each claim asserted from numbers the core computes."""

from __future__ import annotations

import numpy as np
import pytest

from mha_core import LabError
from mha_core.demos import (
    REFRESHER_KIND,
    emergence,
    ensemble_check,
    one_head,
    refresher_query,
    role_positions,
    score_ranks,
    single_head,
    two_targets,
)
from mha_core.i18n import LANGS, translate
from mha_core.inputs import tokenize


@pytest.mark.parametrize("d_model,h", [(32, 4), (64, 8), (48, 3), (64, 1)])
def test_a_heads_q_is_a_column_block_of_one_projection(d_model, h):
    check = ensemble_check("the cat sat on the mat", d_model, h)
    assert len(check.max_diff_per_head) == h and max(check.max_diff_per_head) < 1e-12
    assert check.inputs_identical and check.params_multi == check.params_single == 4 * d_model * d_model


@pytest.mark.parametrize("d_model,n", [(64, 24), (128, 40), (32, 10)])
def test_score_matrix_rank_is_limited_by_d_head(d_model, n):
    points = score_ranks(d_model, n)
    assert [p.n_heads for p in points] == [h for h in range(1, min(d_model, 64) + 1) if d_model % h == 0]
    for p in points:
        assert p.d_head * p.n_heads == d_model
        assert p.rank <= p.d_head and p.rank <= n
        assert p.rank == min(n, p.d_head)          # random weights reach the bound
    assert any(p.rank < n for p in points)         # too many heads: some patterns become impossible


@pytest.mark.parametrize("lang", LANGS)
def test_the_why_example_is_a_verb_with_its_subject_and_object(lang):
    """The page's example: the catalog names the verb, subject and object of the default sentence."""
    sentence = translate(lang, "common.default_sentence")
    roles = [translate(lang, f"why.{r}") for r in ("verb", "subject", "object")]
    query, (a, b) = role_positions(sentence, *roles)
    tokens = tokenize(sentence).tokens
    assert [tokens[query], tokens[a], tokens[b]] == roles            # whole tokens, not pieces of a word
    assert a < query < b                                             # subject before the verb, object after it
    demo = two_targets(sentence, query, (a, b))
    assert demo.tokens == tokens and demo.targets == (a, b)
    assert int(np.argmax(demo.two_heads[0])) == a and int(np.argmax(demo.two_heads[1])) == b


@pytest.mark.parametrize("sentence,roles", [
    ("The cat that chased the dog was tired .", ("chased", "cat", "dog")),
    ("The cat chased the ball because it was happy.", ("chased", "cat", "ball")),
    ("小猫追着球跑，因为它很开心。", ("追着", "小猫", "球")),
    ("老师表扬了学生，因为他很努力。", ("表扬", "老师", "学生")),
])
def test_one_softmax_row_cannot_hold_two_targets_but_two_heads_can(sentence, roles):
    query, (a, b) = role_positions(sentence, *roles)
    demo = two_targets(sentence, query, (a, b))
    assert demo.one_head[a] < 0.7 and demo.one_head[b] < 0.7      # the single head splits its weight…
    assert demo.one_head[a] > 0.3 and demo.one_head[b] > 0.3      # …between both targets: two peaks, one row
    assert demo.two_heads[0, a] > 0.8 and demo.two_heads[1, b] > 0.8
    assert demo.recover_two < 0.1 < demo.recover_one


def test_short_sentences_and_bad_roles_are_explained():
    with pytest.raises(LabError) as info:
        two_targets("hi there", 0, (1, 1))
    assert info.value.key == "why_short"
    with pytest.raises(LabError) as info:
        two_targets("the cat saw the dog", 1, (0, 3))                # "the" twice: one question, not two
    assert info.value.key == "why_targets"
    with pytest.raises(LabError) as info:
        role_positions("the cat saw the dog", "chased", "cat", "dog")
    assert info.value.key == "why_word"


@pytest.mark.parametrize("lang", LANGS)
def test_the_refreshers_default_shows_a_real_distribution(lang):
    """Not one token taking weight ~1.00 (the old default: query 0 of a previous-word head looked at itself)."""
    sentence = translate(lang, "common.default_sentence")
    n = len(tokenize(sentence).tokens)
    head = single_head(sentence, REFRESHER_KIND)
    step = one_head(head.q, head.k, head.v, refresher_query(n))
    assert step.weights.max() < 0.5
    assert (step.weights > 0.1).sum() >= 3
    assert abs(step.weights.sum() - 1) < 1e-12


@pytest.mark.parametrize("lang", LANGS)
def test_the_refresher_page_opens_on_that_default(lang):
    """The select boxes open on the default kind and query (a select box's own default is its first option)."""
    from apphelpers import open_page

    at = open_page("pages/prereq.py", lang)
    assert not at.exception
    n = len(tokenize(translate(lang, "common.default_sentence")).tokens)
    assert at.selectbox(key="prereq_kind").value == REFRESHER_KIND
    assert at.selectbox(key="prereq_query").value == refresher_query(n) != 0


def test_one_head_steps_match_the_formula():
    head = single_head("the cat sat on the mat", "previous")
    step = one_head(head.q, head.k, head.v, query=3)
    d = head.q.shape[1]
    expected = np.exp(head.k @ head.q[3] / np.sqrt(d))
    expected /= expected.sum()
    np.testing.assert_allclose(step.weights, expected)
    np.testing.assert_allclose(step.output, expected @ head.v)
    assert int(np.argmax(step.weights)) == 2                     # the previous-word head looks one back
    sharper = one_head(head.q, head.k, head.v, query=3, temperature=0.25)
    assert sharper.weights.max() > step.weights.max()


def test_roles_emerge_from_random_initialisation():
    shots = emergence(steps=200, every=50, n_seqs=32)
    first, last = shots[0], shots[-1]
    assert first.induction[-1].max() < 0.3 and first.previous_token[0].max() < 0.3
    assert last.induction[-1].max() > 0.8 and last.previous_token[0].max() > 0.4
    assert last.loss < first.loss / 10
