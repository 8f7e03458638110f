"""The packaged pretrained model, offline: it loads, has a previous-token head, the core reproduces every layer,
head ablation is what it claims, and models that cannot be had give a clear LabError, not a traceback."""

from __future__ import annotations

import json
import socket
import threading

import numpy as np
import pytest

from harness.sentences import fresh_sentence
from mha_core import head_types, layer_check, minimal_pair, multi_head_attention, pretrained
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
def model() -> pretrained.Loaded:
    return pretrained.load()


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a connection fails the test."""
    def refuse(*_args, **_kwargs):
        raise AssertionError("the lab tried to use the network")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


# --- loading ---

def test_packaged_model_is_found_via_importlib_and_loads(model):
    d = pretrained.packaged_dir()
    assert (d / "config.json").is_file() and d.name == "model" and d.parent.name == pretrained.PACKAGED_MODULE
    assert (model.n_layers, model.n_heads, model.d_model) == (6, 12, 384)
    assert model.model_type == "bert" and model.bert_like and model.name == pretrained.PACKAGED
    assert model.model.config._attn_implementation == "eager"
    assert not model.model.training


def test_the_packaged_model_comes_first_then_the_server_s_list_from_its_configuration():
    """MHA_REAL_MODELS ("name=folder,…"), else the secrets' [real_models] table, as every setting is declared."""
    env = {pretrained.MODELS_ENV: " zh = /srv/models/bert-base-chinese ,bad,=/x,empty=, zh=/other,"
                                  f"{pretrained.PACKAGED}=/elsewhere,multi=bert-base-multilingual-cased"}
    secrets = {pretrained.MODELS_SECRET: {"fromsecrets": "/srv/models/s"}}
    assert pretrained.installed_models({}, {}) == (pretrained.PACKAGED_CHOICE,)
    assert pretrained.installed_models(env, secrets) == (
        pretrained.PACKAGED_CHOICE, pretrained.ModelChoice("zh", "/srv/models/bert-base-chinese"),
        pretrained.ModelChoice("multi", "bert-base-multilingual-cased"))  # the environment wins over secrets
    assert pretrained.installed_models({}, secrets) == (pretrained.PACKAGED_CHOICE,
                                                        pretrained.ModelChoice("fromsecrets", "/srv/models/s"))
    assert pretrained.installed_models({}, {pretrained.MODELS_SECRET: "not a table"}) == (pretrained.PACKAGED_CHOICE,)


def test_an_offered_folder_loads_under_its_name_and_the_core_reproduces_its_layers(tiny_model_dir, no_network):
    loaded = pretrained.load(pretrained.ModelChoice("tiny", str(tiny_model_dir)))
    shape = (loaded.n_layers, loaded.n_heads, loaded.d_model)
    assert (loaded.name, loaded.model_type, shape) == ("tiny", "bert", (2, 2, 32)) and loaded.bert_like
    r = pretrained.run(loaded, SENTENCES[0])
    assert r.attentions.shape == (2, 2, r.n, r.n) and all(c.ok for c in layer_check.check_all(loaded, r))


def test_an_offered_model_that_cannot_load_is_named_and_never_its_folder(tmp_path, no_network, caplog):
    """One message whatever is wrong (no folder, not a model, an unknown architecture, an id not cached): the page
    cannot tell a student which folders exist on the server. The reason goes to the server's log."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "notes.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}), encoding="utf-8")
    for where in (str(tmp_path / "nowhere"), str(tmp_path / "notes"), str(tmp_path / "odd"),
                  "no-such-org/no-such-model-for-mha-lab"):
        with pytest.raises(LabError) as err:
            pretrained.load(pretrained.ModelChoice("mine", where))
        assert err.value.key == "model_unavailable" and err.value.params == {"name": "mine"}, where
        assert where in caplog.text


# --- running and head types ---

def test_run_shapes_tokens_and_rows_that_sum_to_one(model):
    r = pretrained.run(model, SENTENCES[0])
    assert r.tokens[0] == "[CLS]" and r.tokens[-1] == "[SEP]" and r.special[[0, -1]].all() and not r.special[1:-1].any()
    assert r.attentions.shape == (6, 12, r.n, r.n)
    np.testing.assert_allclose(r.attentions.sum(-1), 1.0, atol=1e-5)
    assert r.layer_inputs.shape == r.attn_outputs.shape == (6, r.n, 384)
    assert r.punct[r.tokens.index(".")] and not r.punct[1]


def test_up_to_the_cap_runs_and_one_piece_more_is_a_translated_lab_error(model):
    r = pretrained.run(model, " ".join(["word"] * (pretrained.MAX_REAL_TOKENS - 2)))  # + [CLS] and [SEP]
    cap = json.loads((pretrained.packaged_dir() / "config.json").read_text())["max_position_embeddings"]
    assert r.n == pretrained.MAX_REAL_TOKENS == cap == 512  # the model's own limit, from its published config
    assert r.attentions.shape == (6, 12, 512, 512)
    with pytest.raises(LabError) as err:
        pretrained.run(model, " ".join(["word"] * (pretrained.MAX_REAL_TOKENS - 1)))
    assert err.value.key == "too_many_pieces" and err.value.params == {"n": 513, "max": 512}
    from mha_core.i18n import LANGS, translate

    for lang in LANGS:
        text = translate(lang, "errors.too_many_pieces", **err.value.params)
        assert "513" in text and "512" in text and "⟦" not in text


def test_empty_sentence_is_a_lab_error(model):
    with pytest.raises(LabError) as err:
        pretrained.run(model, "   ")
    assert err.value.key == "empty_sentence"


def test_a_previous_token_head_is_found(model):
    """previous = mean over ordinary tokens i (not [CLS]/[SEP]) of A[i, i−1], averaged over the sentences."""
    scores = np.mean([head_types.head_stats(r.attentions, r.special, r.punct).previous
                      for r in (pretrained.run(model, s) for s in SENTENCES)], axis=0)
    best = head_types.top_heads(scores, 1)[0]
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
    own = np.eye(n)
    mixed = 0.4 * np.eye(n) + 0.3 * np.eye(n, k=1) + 0.3 * np.eye(n, k=-1)
    mixed[0, 0], mixed[-1, -1] = 1, 1
    s = head_types.head_stats(np.stack([prev, nxt, sink, uniform, own, mixed])[None], special, np.zeros(n, bool))
    np.testing.assert_allclose(s.previous[0, :5], [1, 0, 1 / 3, 0.2, 0], atol=1e-12)  # row 1 → [CLS] is "previous"
    np.testing.assert_allclose(s.next[0, :5], [0, 1, 0, 0.2, 0], atol=1e-12)
    np.testing.assert_allclose(s.own[0, :5], [0, 0, 0, 0.2, 1], atol=1e-12)
    np.testing.assert_allclose(s.sink[0, :5], [1 / 3, 1 / 3, 1, 0.4, 0], atol=1e-12)
    np.testing.assert_allclose(s.entropy[0, :5], [0, 0, 0, 1, 0], atol=1e-9)
    assert [(h.layer, h.head) for h in head_types.top_heads(s.score("focused"), 3)] == [(0, 0), (0, 1), (0, 2)]
    assert head_types.top_heads(s.score("broad"), 1)[0].head == 3
    labels = [head_types.head_label(s, 0, h) for h in range(6)]
    assert [lab.kind for lab in labels] == ["previous", "next", "sink", "broad", "self", "mixed"]
    assert labels[2].value == pytest.approx(1.0) and labels[5].value == pytest.approx(0.4)


def test_every_label_names_a_measured_pattern(model):
    """A label is one of the measured patterns (or "mixed"), and its value is that pattern's measurement."""
    r = pretrained.run(model, pretrained.EXAMPLES[0].sentence)
    s = head_types.head_stats(r.attentions, r.special, r.punct)
    for layer in range(model.n_layers):
        for head in range(model.n_heads):
            lab = head_types.head_label(s, layer, head)
            assert lab.kind in (*head_types.HEAD_TYPES, "mixed") and lab.kind not in ("focused",)
            if lab.kind == "mixed":
                assert lab.value < head_types.LABEL_SHARE and s.entropy[layer, head] < head_types.BROAD_ENTROPY
            else:
                assert lab.value == pytest.approx(s.score(lab.kind)[layer, head])


def test_word_pieces_and_spans():
    tokens = ("[CLS]", "the", "em", "##bed", "##ding", "is", "it", "[SEP]")
    assert head_types.word_pieces(tokens, "Embedding") == [2, 3, 4]
    assert head_types.word_pieces(tokens, "it") == [6]
    assert head_types.word_pieces(tokens, "absent") == []
    assert head_types.word_span(tokens, 2) == [2, 3, 4] and head_types.word_span(tokens, 5) == [5]


def test_token_to_word_probe_ranks_heads(model):
    ex = pretrained.EXAMPLES[0]
    r = pretrained.run(model, ex.sentence)
    p, a = head_types.word_pieces(r.tokens, ex.pronoun), head_types.word_pieces(r.tokens, ex.antecedent)
    assert p and a
    score = head_types.word_scores(r.attentions, p[0], a)
    assert score.shape == (6, 12) and np.all((score >= 0) & (score <= 1))
    best = head_types.top_heads(score, 1)[0]
    assert best.score == pytest.approx(r.attentions[best.layer, best.head, p[0], a].sum())
    with pytest.raises(LabError) as err:
        head_types.word_scores(r.attentions, p[0], [p[0]])
    assert err.value.key == "pick_distinct"


# --- the minimal pair (issue 13, item 2) ---

def _sides(model: pretrained.Loaded,
           pair: minimal_pair.MinimalPair) -> tuple[minimal_pair.PairSide, minimal_pair.PairSide]:
    runs = [pretrained.run(model, s) for s in pair.sentences]
    return tuple(minimal_pair.side(r.attentions, r.tokens, pair, i) for i, r in enumerate(runs))


@pytest.mark.parametrize("pair", minimal_pair.PAIRS, ids=lambda p: "/".join(p.changed))
def test_the_most_coreference_like_head_attends_to_the_subject_in_both_sentences(model, pair):
    """The head a one-sentence probe would call a coreference head keeps "it" on the subject noun when one word
    changes what "it" means: it is labelled by that (subject), not as a coreference head."""
    sides = _sides(model, pair)
    assert [s.tokens[s.pronoun] for s in sides] == ["it", "it"]
    layer, head = minimal_pair.most_referent_like(sides)
    ref0 = sides[0].to_nouns[..., sides[0].referent]
    assert ref0[layer, head] == ref0.max()
    cmp = minimal_pair.compare(sides, layer, head)
    for i, s in enumerate(sides):  # the weights are the model's own attention, summed over each noun's pieces
        for k, noun in enumerate(pair.nouns):
            pieces = head_types.word_pieces(s.tokens, noun)
            attn = pretrained.run(model, pair.sentences[i]).attentions
            assert cmp.weights[i, k] == pytest.approx(attn[layer, head, s.pronoun, pieces].sum())
    print(f"{'/'.join(pair.changed)}: L{layer}·H{head} weights {cmp.weights.round(3).tolist()} → {cmp.verdict}")
    assert cmp.preferred == (0, 0) and cmp.verdict == "subject"
    assert pair.referents == (0, 1)  # "it" means a different noun in the second sentence: the head did not move
    assert cmp.weights[1, 0] > cmp.weights[1, 1]


def test_verdicts_name_what_was_measured():
    assert minimal_pair.verdict_of((0, 0), (0, 1)) == "subject"
    assert minimal_pair.verdict_of((1, 1), (0, 1)) == "same"
    assert minimal_pair.verdict_of((0, 1), (0, 1)) == "follows"
    assert minimal_pair.verdict_of((1, 0), (0, 1)) == "against"


def test_census_counts_every_head_like_a_direct_count(model):
    pair = minimal_pair.PAIRS[0]
    sides = _sides(model, pair)
    c = minimal_pair.census(sides)
    assert c.total == model.n_layers * model.n_heads == sum(c.counts.values())
    a, b = sides[0].to_nouns, sides[1].to_nouns   # (L, H, 2): an independent, vectorised count
    follows = (a[..., 0] > a[..., 1]) & (b[..., 1] > b[..., 0])
    subject = (a[..., 0] > a[..., 1]) & (b[..., 0] > b[..., 1])
    assert c.counts["follows"] == follows.sum() and c.counts["subject"] == subject.sum()
    best = np.minimum(a[..., 0], b[..., 1])[follows].max() if follows.any() else 0.0
    assert c.follows_best == pytest.approx(best)


def test_a_pair_whose_words_the_tokenizer_lost_is_a_lab_error():
    tokens = ("[CLS]", "the", "anim", "##al", "[SEP]")
    with pytest.raises(LabError) as err:
        minimal_pair.side(np.zeros((1, 1, 5, 5)), tokens, minimal_pair.PAIRS[0], 0)
    assert err.value.key == "pair_words_missing"


def test_the_packaged_model_does_not_know_chinese(model):
    unknown, pieces = pretrained.unknown_tokens(model, pretrained.ZH_EXAMPLES[0].sentence)
    tokens = model.tokenizer.tokenize(pretrained.ZH_EXAMPLES[0].sentence)
    assert pieces == len(tokens) and unknown == tokens.count("[UNK]") and unknown > pieces / 2
    assert pretrained.unknown_tokens(model, pretrained.EXAMPLES[0].sentence)[0] == 0


# --- the core against the model ---

@pytest.mark.parametrize("sentence", [SENTENCES[1], pretrained.EXAMPLES[1].sentence])
def test_core_reproduces_every_layer(model, sentence):
    r = pretrained.run(model, sentence)
    checks = layer_check.check_all(model, r)
    assert len(checks) == 6
    for c in checks:
        print(f"layer {c.layer}: weights {c.weights_diff:.2e}, output {c.output_diff:.2e}")
        assert c.weights_diff < layer_check.TOLERANCE and c.output_diff < layer_check.TOLERANCE and c.ok
        assert c.trace.weights.shape == (12, r.n, r.n) and c.trace.d_head == 32


def test_layer_weights_are_the_linear_layers_transposed(model):
    w = layer_check.layer_weights(model, 2)
    q = model.model.encoder.layer[2].attention.self.query
    np.testing.assert_array_equal(w.w_q, q.weight.detach().double().numpy().T)
    np.testing.assert_array_equal(w.b_q, q.bias.detach().double().numpy())
    assert w.w_o.shape == (384, 384) and w.b_o.shape == (384,)


# --- ablation ---

def test_no_head_off_keeps_the_sentence_and_switching_off_moves_it(model):
    s = SENTENCES[2]
    assert pretrained.ablate(model, s, []) == pytest.approx(1.0, abs=1e-6)
    assert pretrained.ablate(model, s, [(layer, h) for layer in range(3) for h in range(12)]) < 0.99


def test_the_head_mask_zeroes_exactly_that_heads_slice(model):
    """With head (l, h) off, the out-projection equals the core's concat with that head's block zeroed, @ W_O + b_O."""
    layer, head, d = 1, 4, 32
    mask = np.ones((6, 12))
    mask[layer, head] = 0
    r = pretrained.run(model, SENTENCES[3], mask)
    p = layer_check.layer_weights(model, layer)
    tr = multi_head_attention(r.layer_inputs[layer], p.w_q, p.w_k, p.w_v, p.w_o, 12,
                              b_q=p.b_q, b_k=p.b_k, b_v=p.b_v, b_o=p.b_o)
    concat = tr.concat.copy()
    concat[:, head * d:(head + 1) * d] = 0
    np.testing.assert_allclose(r.attn_outputs[layer], concat @ p.w_o + p.b_o, atol=1e-4)
    assert np.max(np.abs(r.attn_outputs[layer] - tr.output)) > 1e-3  # and it did change something


def test_batched_importance_matches_one_head_at_a_time(model):
    s = SENTENCES[4]
    imp = pretrained.importance(model, s)
    assert imp.shape == (6, 12) and np.all(imp > -1e-5)
    base = pretrained.run(model, s)
    for layer, head in [(0, 2), (3, 7), (5, 11)]:
        assert imp[layer, head] == pytest.approx(1 - pretrained.ablate(model, s, [(layer, head)], base), abs=1e-4)


# --- many sessions on one shared model (issue 28, item 1) ---

def test_the_forward_equals_the_model_s_own_and_leaves_no_hooks(model, monkeypatch):
    """run() takes every layer apart without hooks: the same attentions and last state as model(**enc), bit for bit."""
    import torch

    def refuse(*_args, **_kwargs):
        raise AssertionError("a hook on the shared model")

    s = pretrained.EXAMPLES[0].sentence
    with monkeypatch.context() as m:  # nothing is attached to the shared model, not even for a moment
        m.setattr(torch.nn.Module, "register_forward_hook", refuse)
        m.setattr(torch.nn.Module, "register_forward_pre_hook", refuse)
        r = pretrained.run(model, s)
        pretrained.ablate(model, s, [(1, 2)], r)
        pretrained.importance(model, s)
    enc, *_ = pretrained._encode(model, s)
    with torch.no_grad():
        out = model.model(**enc, output_attentions=True)
    np.testing.assert_array_equal(r.attentions, torch.stack([a[0] for a in out.attentions]).numpy())
    np.testing.assert_array_equal(r.sentence_vec, out.last_hidden_state[0].mean(0).numpy())
    assert r.attentions.dtype == r.layer_inputs.dtype == r.attn_outputs.dtype == np.float32
    assert not r.attentions.flags.writeable  # shared between sessions through the page's caches


def test_concurrent_runs_ablations_and_importance_equal_the_sequential_results_exactly(model):
    """4 threads of run (each its own sentence) + ablate + importance at once, three rounds: every result is
    bit-for-bit the one computed alone. Before the fix the hooks of one call landed in another's forward."""
    sentences = SENTENCES[:4]
    off = [(layer, h) for layer in range(6) for h in range(0, 12, 2)]
    alone = {s: pretrained.run(model, s) for s in sentences}
    alone_ablate = pretrained.ablate(model, SENTENCES[4], off)
    alone_importance = pretrained.importance(model, SENTENCES[5])
    rounds = 3
    gate = threading.Barrier(6)
    got: dict[int, list] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            gate.wait(timeout=60)
            if i < 4:
                got[i] = [pretrained.run(model, sentences[i]) for _ in range(rounds)]
            elif i == 4:
                got[i] = [pretrained.ablate(model, SENTENCES[4], off) for _ in range(rounds)]
            else:
                got[i] = [pretrained.importance(model, SENTENCES[5]) for _ in range(rounds)]
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    wrong = [(i, k) for i in range(4) for k, r in enumerate(got[i])
             if not (np.array_equal(r.attentions, alone[sentences[i]].attentions)
                     and np.array_equal(r.attn_outputs, alone[sentences[i]].attn_outputs)
                     and np.array_equal(r.layer_inputs, alone[sentences[i]].layer_inputs))]
    assert wrong == []
    assert got[4] == [alone_ablate] * rounds
    assert all(np.array_equal(imp, alone_importance) for imp in got[5])
    for i in range(4):  # and the layer check still passes on every one
        assert all(c.ok for c in layer_check.check_all(model, got[i][-1]))


def test_the_speed_benchmark_s_fresh_sentences_are_32_word_pieces_each_and_new(model):
    """bench_speed's real case times a new 32-piece sentence per move (issue 26's target): each must be one."""
    sentences = [fresh_sentence(f"seed-{i}") for i in range(5)]
    assert len(set(sentences)) == 5
    assert {pretrained.run(model, s).n for s in sentences} == {32}
