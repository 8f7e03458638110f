"""The packaged pretrained model, offline: it loads, has a previous-token head, the core reproduces every layer,
head ablation is what it claims, and models that cannot be had give a clear LabError, not a traceback."""

from __future__ import annotations

import json
import socket
import time

import numpy as np
import pytest

from mha_core import multi_head_attention
from mha_core import pretrained as P
from mha_core.errors import LabError

# Ordinary English sentences (no pronoun games): the previous-token score is averaged over them.
SENTENCES = (
    "The cat sat on the warm mat near the kitchen door.",
    "We walked to the station and caught the early train to the city.",
    "She planted tomatoes, beans and carrots in the small garden behind the house.",
    "Scientists measured the temperature of the lake every morning for a year.",
    "The old library opens at nine and closes late on Thursdays.",
    "My brother bought a new bicycle because his old one was stolen.",
)


@pytest.fixture(scope="module")
def model() -> P.Loaded:
    return P.load(P.PACKAGED)


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a connection fails the test."""
    def refuse(*_args, **_kwargs):
        raise AssertionError("the lab tried to use the network")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


# --- loading ---

def test_packaged_model_is_found_via_importlib_and_loads(model):
    d = P.packaged_dir()
    assert (d / "config.json").is_file() and d.name == "model" and d.parent.name == P.PACKAGED_MODULE
    assert (model.n_layers, model.n_heads, model.d_model) == (6, 12, 384)
    assert model.model_type == "bert" and model.bert_like and model.label == P.PACKAGED
    assert model.model.config._attn_implementation == "eager"
    assert not model.model.training


def test_empty_name_means_the_packaged_model():
    assert P.resolve("") == P.resolve(P.PACKAGED) == str(P.packaged_dir())


def test_unknown_model_id_fails_fast_without_network(no_network):
    t0 = time.perf_counter()
    with pytest.raises(LabError) as err:
        P.load("no-such-org/no-such-model-for-mha-lab")
    assert err.value.key == "model_not_found" and err.value.params["name"] == "no-such-org/no-such-model-for-mha-lab"
    assert time.perf_counter() - t0 < 10


def test_missing_directory(tmp_path, no_network):
    with pytest.raises(LabError) as err:
        P.load(str(tmp_path / "nowhere"))
    assert err.value.key == "model_dir_missing"


def test_directory_that_is_not_a_model(tmp_path, no_network):
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(LabError) as err:
        P.load(str(tmp_path))
    assert err.value.key == "not_a_model"
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}), encoding="utf-8")
    with pytest.raises(LabError) as err:
        P.load(str(tmp_path))
    assert err.value.key == "not_a_model"


# --- running and head types ---

def test_run_shapes_tokens_and_rows_that_sum_to_one(model):
    r = P.run(model, SENTENCES[0])
    assert r.tokens[0] == "[CLS]" and r.tokens[-1] == "[SEP]" and r.special[[0, -1]].all() and not r.special[1:-1].any()
    assert r.attentions.shape == (6, 12, r.n, r.n)
    np.testing.assert_allclose(r.attentions.sum(-1), 1.0, atol=1e-5)
    assert r.layer_inputs.shape == r.attn_outputs.shape == (6, r.n, 384)
    assert r.punct[r.tokens.index(".")] and not r.punct[1]


def test_long_sentences_are_cut_to_the_token_cap(model):
    r = P.run(model, " ".join(["word"] * 50))
    assert r.n == P.MAX_REAL_TOKENS and r.dropped == 52 - P.MAX_REAL_TOKENS


def test_empty_sentence_is_a_lab_error(model):
    with pytest.raises(LabError) as err:
        P.run(model, "   ")
    assert err.value.key == "empty_sentence"


def test_a_previous_token_head_is_found(model):
    """previous = mean over ordinary tokens i (not [CLS]/[SEP]) of A[i, i−1], averaged over the sentences."""
    scores = np.mean([P.head_stats(r.attentions, r.special, r.punct).previous
                      for r in (P.run(model, s) for s in SENTENCES)], axis=0)
    best = P.top_heads(scores, 1)[0]
    print(f"best previous-token head L{best.layer}·H{best.head}: {best.score:.4f}")
    assert best.score >= 0.9


def test_head_stats_on_hand_made_heads():
    n = 5
    special = np.array([True, False, False, False, True])
    prev = np.eye(n, k=-1)
    prev[0, 0] = 1
    nxt = np.eye(n, k=1)
    nxt[-1, -1] = 1
    sink = np.zeros((n, n))
    sink[:, 0] = 1
    uniform = np.full((n, n), 1 / n)
    s = P.head_stats(np.stack([prev, nxt, sink, uniform])[None], special, np.zeros(n, bool))
    np.testing.assert_allclose(s.previous[0], [1, 0, 1 / 3, 0.2], atol=1e-12)  # row 1 → [CLS] is also "previous"
    np.testing.assert_allclose(s.next[0], [0, 1, 0, 0.2], atol=1e-12)
    np.testing.assert_allclose(s.sink[0], [1 / 3, 1 / 3, 1, 0.4], atol=1e-12)
    np.testing.assert_allclose(s.entropy[0], [0, 0, 0, 1], atol=1e-9)
    assert [(h.layer, h.head) for h in P.top_heads(s.score("focused"), 3)] == [(0, 0), (0, 1), (0, 2)]
    assert P.top_heads(s.score("broad"), 1)[0].head == 3


def test_word_pieces_and_spans():
    tokens = ("[CLS]", "the", "em", "##bed", "##ding", "is", "it", "[SEP]")
    assert P.word_pieces(tokens, "Embedding") == [2, 3, 4]
    assert P.word_pieces(tokens, "it") == [6]
    assert P.word_pieces(tokens, "absent") == []
    assert P.word_span(tokens, 2) == [2, 3, 4] and P.word_span(tokens, 5) == [5]


def test_coreference_probe_ranks_heads_by_pronoun_to_antecedent(model):
    ex = P.EXAMPLES[0]
    r = P.run(model, ex.sentence)
    p, a = P.word_pieces(r.tokens, ex.pronoun), P.word_pieces(r.tokens, ex.antecedent)
    assert p and a
    score = P.coref_scores(r.attentions, p[0], a)
    assert score.shape == (6, 12) and np.all((score >= 0) & (score <= 1))
    best = P.top_heads(score, 1)[0]
    assert best.score == pytest.approx(r.attentions[best.layer, best.head, p[0], a].sum())
    with pytest.raises(LabError):
        P.coref_scores(r.attentions, p[0], [p[0]])


# --- the core against the model ---

@pytest.mark.parametrize("sentence", [SENTENCES[1], P.EXAMPLES[1].sentence])
def test_core_reproduces_every_layer(model, sentence):
    r = P.run(model, sentence)
    checks = P.check_all(model, r)
    assert len(checks) == 6
    for c in checks:
        print(f"layer {c.layer}: weights {c.weights_diff:.2e}, output {c.output_diff:.2e}")
        assert c.weights_diff < P.TOLERANCE and c.output_diff < P.TOLERANCE and c.ok
        assert c.trace.weights.shape == (12, r.n, r.n) and c.trace.d_head == 32


def test_layer_weights_are_the_linear_layers_transposed(model):
    w = P.layer_weights(model, 2)
    q = model.model.encoder.layer[2].attention.self.query
    np.testing.assert_array_equal(w.w_q, q.weight.detach().double().numpy().T)
    np.testing.assert_array_equal(w.b_q, q.bias.detach().double().numpy())
    assert w.w_o.shape == (384, 384) and w.b_o.shape == (384,)


# --- ablation ---

def test_no_head_off_keeps_the_sentence_and_switching_off_moves_it(model):
    s = SENTENCES[2]
    assert P.ablate(model, s, []) == pytest.approx(1.0, abs=1e-6)
    assert P.ablate(model, s, [(layer, h) for layer in range(3) for h in range(12)]) < 0.99


def test_the_hook_zeroes_exactly_that_heads_slice(model):
    """With head (l, h) off, the out-projection equals the core's concat with that head's block zeroed, @ W_O + b_O."""
    layer, head, d = 1, 4, 32
    mask = np.ones((6, 12))
    mask[layer, head] = 0
    r = P.run(model, SENTENCES[3], mask)
    p = P.layer_weights(model, layer)
    tr = multi_head_attention(r.layer_inputs[layer], p.w_q, p.w_k, p.w_v, p.w_o, 12,
                              b_q=p.b_q, b_k=p.b_k, b_v=p.b_v, b_o=p.b_o)
    concat = tr.concat.copy()
    concat[:, head * d:(head + 1) * d] = 0
    np.testing.assert_allclose(r.attn_outputs[layer], concat @ p.w_o + p.b_o, atol=1e-4)
    assert np.max(np.abs(r.attn_outputs[layer] - tr.output)) > 1e-3  # and it did change something


def test_batched_importance_matches_one_head_at_a_time(model):
    s = SENTENCES[4]
    imp = P.importance(model, s)
    assert imp.shape == (6, 12) and np.all(imp > -1e-5)
    base = P.run(model, s)
    for layer, head in [(0, 2), (3, 7), (5, 11)]:
        assert imp[layer, head] == pytest.approx(1 - P.ablate(model, s, [(layer, head)], base), abs=1e-4)
