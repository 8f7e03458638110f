"""Tokenising, embedding, the hand-built heads and the walkthrough's demonstrations."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mha_core import LabError, multi_head_attention
from mha_core.i18n import LANGS, translate
from mha_core.inputs import MAX_TOKENS, embed, illustrative_weights, random_weights, tokenize
from mha_core.settings import Settings
from mha_core.walkthrough import (
    averaging_matrix,
    build_walkthrough,
    fuse_with_head_gains,
    head_contributions,
    recovery_error,
    scale_demo,
    token_labels,
    weights_without_scaling,
)


def test_english_and_chinese_split_into_words_and_punctuation():
    assert tokenize("The cat sat.").tokens == ("The", "cat", "sat", ".")
    assert tokenize("小猫追着球跑，因为它很开心。").tokens == (
        "小猫", "追着", "球", "跑", "，", "因为", "它", "很", "开心", "。")      # words, not characters
    assert tokenize("老师表扬了学生。").tokens == ("老师", "表扬", "了", "学生", "。")
    assert tokenize("it's 3.5 猫!").tokens == ("it's", "3.5", "猫", "!")
    assert tokenize("abc小猫").tokens == ("abc", "小猫")                        # a script change ends a word


@pytest.mark.parametrize("sentence", ["我们在北京大学学习人工智能，注意力机制很有用。", "㐀丽小猫", "ひらがな小猫"])
def test_chinese_segmentation_keeps_every_character(sentence):
    tokens = tokenize(sentence, max_tokens=100).tokens
    assert "".join(tokens) == sentence
    assert len(tokens) < len(sentence)                                           # some words are longer than 1


def test_the_default_sentences_are_words_within_the_cap():
    for lang in LANGS:
        toks = tokenize(translate(lang, "common.default_sentence"))
        assert toks.dropped == 0 and 6 <= len(toks.tokens) <= MAX_TOKENS
    assert "小猫" in tokenize(translate("zh", "common.default_sentence")).tokens


def test_segmenting_chinese_prints_nothing_and_fetches_nothing(capfd, monkeypatch):
    """jieba logs its dictionary build to stderr and would cache it in the temp folder: neither here."""
    import socket
    import tempfile

    from mha_core import inputs

    def no_network(*args, **kwargs):
        raise AssertionError("the segmenter tried to open a connection")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    inputs._build_segmenter.cache_clear()
    temp = Path(tempfile.gettempdir())
    before = set(temp.glob("jieba*.cache"))
    assert tokenize("老师表扬了学生。").tokens == ("老师", "表扬", "了", "学生", "。")   # not in the shipped table
    assert inputs._segmenter() is inputs._segmenter()                              # built once per process
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert set(temp.glob("jieba*.cache")) == before


def test_the_app_s_own_chinese_sentence_is_cut_as_jieba_cuts_it_without_building_its_dictionary(monkeypatch):
    """assets/segments.zh.json is jieba's own cut of the default sentence with the installed jieba (regenerate:
    ``python -c "from mha_core import inputs, i18n; inputs.known_segments((i18n.translate('zh',
    'common.default_sentence'),), write=True)"``); tokenising that sentence reads it and builds no dictionary
    (0.75 s of a fresh server's first Chinese page), another sentence still goes to jieba, and a table written with
    another jieba is not used."""
    import jieba

    from mha_core import inputs

    sentence = translate("zh", "common.default_sentence")
    assert json.loads(inputs.SEGMENTS_FILE.read_text(encoding="utf-8")) == inputs.known_segments((sentence,))
    want = tokenize(sentence).tokens
    inputs._build_segmenter.cache_clear()
    inputs._known.cache_clear()
    assert tokenize(sentence).tokens == want
    assert inputs._build_segmenter.cache_info().currsize == 0                     # the table, not the dictionary
    tokenize("老师表扬了学生。")
    assert inputs._build_segmenter.cache_info().currsize == 1
    monkeypatch.setattr(jieba, "__version__", "0.0.0")
    inputs._known.cache_clear()
    try:
        assert dict(inputs._known()) == {}
    finally:
        monkeypatch.undo()
        inputs._known.cache_clear()


def test_long_sentences_are_capped_and_say_so():
    toks = tokenize(" ".join(["word"] * (MAX_TOKENS + 7)))
    assert len(toks.tokens) == MAX_TOKENS and toks.dropped == 7


@pytest.mark.parametrize("sentence", ["", "   ", "\n\t", None])
def test_empty_sentences_are_a_lab_error(sentence):
    with pytest.raises(LabError) as info:
        tokenize(sentence)
    assert info.value.key == "empty_sentence"


def test_embedding_is_deterministic_and_the_same_word_gets_the_same_meaning():
    toks = tokenize("the cat saw the dog").tokens
    a, b = embed(toks, 32), embed(toks, 32)
    np.testing.assert_array_equal(a, b)
    d_c = 16
    np.testing.assert_array_equal(a[0, :d_c], a[3, :d_c])       # "the" twice: same content half
    assert not np.allclose(a[0, d_c:], a[3, d_c:])              # different positions
    assert not np.allclose(a[1, :d_c], a[4, :d_c])              # cat ≠ dog


SENTENCE = "the quick brown fox jumps over the lazy dog and the cat sleeps"


@pytest.mark.parametrize("n_heads,d_head", [(6, 8), (6, 16), (12, 32), (3, 64)])
def test_illustrative_heads_ask_the_question_they_are_labelled_with(n_heads, d_head):
    toks = tokenize(SENTENCE).tokens
    n = len(toks)
    w = illustrative_weights(n_heads * d_head, n_heads, d_head)
    tr = multi_head_attention(embed(toks, n_heads * d_head), w.w_q, w.w_k, w.w_v, w.w_o, n_heads)
    for i, kind in enumerate(w.head_kinds):
        look = tr.weights[i].argmax(axis=1)
        if kind == "previous":
            assert list(look[1:]) == list(range(n - 1))
        elif kind == "next":
            assert list(look[:-1]) == list(range(1, n))
        elif kind == "two_back":
            assert list(look[2:]) == list(range(n - 2))
        elif kind == "same_word":  # the second and third "the" look at an earlier/later "the"
            firsts = [j for j, t in enumerate(toks) if t == "the"]
            for q in firsts:
                assert toks[int(look[q])] == "the"
            assert tr.weights[i][firsts[1], firsts[0]] > 0.2
        elif kind == "broad":
            np.testing.assert_allclose(tr.weights[i], 1.0 / n)


def test_random_weights_are_seeded():
    a, b, c = random_weights(16, 4, 4, seed=1), random_weights(16, 4, 4, seed=1), random_weights(16, 4, 4, seed=2)
    np.testing.assert_array_equal(a.w_q, b.w_q)
    assert not np.allclose(a.w_q, c.w_q)


def test_walkthrough_demonstrations_hold():
    s = Settings(SENTENCE, d_model=32, n_heads=4, d_head=8, weight_mode="random", seed=3, causal=True)
    wt = build_walkthrough(s)
    trace, w_o = wt.trace, wt.weights.w_o
    np.testing.assert_allclose(head_contributions(trace, w_o).sum(0), trace.output, atol=1e-12)
    np.testing.assert_allclose(fuse_with_head_gains(trace, w_o, np.ones(4)), trace.output, atol=1e-12)
    muted = fuse_with_head_gains(trace, w_o, np.array([1.0, 0.0, 1.0, 1.0]))
    np.testing.assert_allclose(muted, trace.output - head_contributions(trace, w_o)[1], atol=1e-12)
    assert recovery_error(trace, trace.output, w_o) < 1e-9          # W^O is square and full rank
    avg = averaging_matrix(4, 8)
    np.testing.assert_allclose(trace.concat @ avg, trace.head_outputs.mean(0), atol=1e-12)
    assert recovery_error(trace, trace.concat @ avg, avg) > 0.3       # averaging loses who said what
    unscaled = weights_without_scaling(trace)
    assert np.all(unscaled[:, 0, 1:] == 0)                     # the causal mask still holds
    assert len(set(token_labels(wt.tokens.tokens))) == len(wt.tokens.tokens)


def test_scaling_keeps_score_spread_near_one_while_raw_grows_like_sqrt_d():
    for d in (4, 16, 64):
        demo = scale_demo(d)
        assert abs(demo.raw_std / np.sqrt(d) - 1) < 0.1
        assert abs(demo.scaled_std - 1) < 0.1
    assert scale_demo(64).max_weight_raw > scale_demo(64).max_weight_scaled + 0.3
