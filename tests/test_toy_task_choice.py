"""The tasks of "Train it yourself" (mha_core.toy.tasks): their data, their expected-head scores, short runs."""

from __future__ import annotations

import numpy as np
import pytest

from mha_core import toy
from mha_core.errors import LabError
from mha_core.toy import tasks
from mha_core.toy.evaluate import attention, task_metrics
from mha_core.toy.scores import induction_score, pattern_score, previous_token_score
from mha_core.toy.train import train

SPAN = tasks.SPAN


@pytest.fixture(scope="module")
def batches():
    return {k: toy.task_held_out(toy.get_task(k), n_seqs=32) for k in toy.TASK_KEYS}


def test_copy_reverse_sort_write_their_input_after_the_separator(batches):
    for key, order in (("copy", lambda x: x), ("reverse", lambda x: x[::-1]), ("sort", np.sort)):
        b = batches[key]
        assert b.tokens.shape == (32, 2 * SPAN + 1)
        assert (b.tokens[:, SPAN] == tasks.SEP).all() and (b.tokens[:, :SPAN] < tasks.N_SYMBOLS).all()
        for row in b.tokens:
            assert len(set(row[:SPAN])) == SPAN                       # distinct inputs
            assert list(row[SPAN + 1:]) == list(order(row[:SPAN]))    # the output is the rule applied


def test_previous_token_targets_are_the_sequence_shifted_right(batches):
    b = batches["previous"]
    assert (b.targets[:, 1:] == b.tokens[:, :-1]).all()
    assert not b.mask[:, 0].any() and b.mask[:, 1:].all()


def test_the_loss_mask_covers_exactly_the_answers(batches):
    for key in ("copy", "reverse", "sort"):
        b = batches[key]
        want = np.zeros(b.tokens.shape[1], dtype=bool)
        want[SPAN:2 * SPAN] = True                                    # the # and the outputs but the last
        assert (b.mask == want).all()
        assert (b.targets[b.mask] == b.tokens[:, 1:][b.mask[:, :-1]]).all()  # next-token prediction
    for key, b in batches.items():
        assert ((b.targets >= 0) == b.mask).all() and ((b.source >= 0) == b.mask).all()
        rows, cols = np.nonzero(b.mask)
        # the answer's key holds the answer, and lies before the query (a causal head can read it)
        assert (b.tokens[rows, b.source[rows, cols]] == b.targets[rows, cols]).all(), key
        assert (b.source[rows, cols] < cols + 1).all(), key


def test_the_repeat_task_is_the_shipped_data(batches):
    cfg = toy.DEFAULT_RECIPE.config
    shipped = toy.held_out_batch(cfg, n_seqs=32)
    b = batches["repeat"]
    assert (b.tokens == shipped.tokens).all() and (b.mask == shipped.repeat_mask).all()
    assert toy.TrainSettings.for_task("repeat") == toy.TrainSettings()
    assert toy.TrainSettings().recipe() == toy.DEFAULT_RECIPE       # the shipped recipe is unchanged


def test_pattern_score_is_the_mean_weight_on_the_marked_keys():
    attn = np.array([[1.0, 0.0, 0.0], [0.3, 0.7, 0.0], [0.2, 0.5, 0.3]])[None]  # (B=1, 3, 3)
    keys = np.zeros((1, 3, 3), dtype=bool)
    keys[0, 1, 0] = keys[0, 2, 0] = keys[0, 2, 2] = True
    queries = np.array([[False, True, True]])
    assert pattern_score(attn, keys, queries) == pytest.approx((0.3 + (0.2 + 0.3)) / 2)
    # previous-token keys on queries 1.. give the page's previous-token score
    prev_keys = np.eye(3, k=-1, dtype=bool)[None]
    assert pattern_score(attn, prev_keys, queries) == pytest.approx(previous_token_score(attn)) == (0.3 + 0.5) / 2
    with pytest.raises(ValueError):
        pattern_score(attn, keys, np.zeros((1, 3), dtype=bool))


def test_larger_keys_mark_the_tokens_still_to_write():
    b = tasks._answer_batch(np.array([[5, 2, 9]]), np.array([[1, 0, 2]]))  # 5 2 9 # 2 5 9
    keys, queries = tasks.larger_keys(b)
    assert list(b.tokens[0]) == [5, 2, 9, tasks.SEP, 2, 5, 9]
    assert [list(np.flatnonzero(keys[0, q])) for q in (3, 4, 5)] == [[0, 1, 2], [0, 2], [2]]
    assert list(queries[0]) == [False, False, False, True, True, True, False]


def test_emerged_names_the_heads_that_pass_in_the_expected_layers():
    e = tasks.Emerged(key="previous_token", threshold=0.4, layers=(0,),
                      scores=np.array([[0.1, 0.7, 0.45], [0.9, 0.2, 0.0]]))
    assert e.best == (0, 1) and e.best_score == 0.7
    assert e.matches == [(0, 1), (0, 2)] and e.elsewhere == [(1, 0)]
    assert tasks.Expected("x", -1, 0.5, tasks.source_keys).layers(3) == range(2, 3)
    assert tasks.Expected("x", None, 0.5, tasks.source_keys).layers(3) == range(3)


def test_on_the_shipped_model_the_repeat_expectations_are_the_page_s_scores():
    model = toy.load_default()
    held = toy.task_held_out(toy.get_task("repeat"), n_seqs=64)
    attn = attention(model, held.tokens)
    prev, ind = toy.get_task("repeat").measure(attn, held)
    np.testing.assert_allclose(prev.scores, previous_token_score(attn))
    np.testing.assert_allclose(ind.scores, induction_score(attn, held.tokens, held.mask))
    assert ind.layers == (1,) and len(ind.matches) == 4 and prev.layers == (0,)


@pytest.mark.parametrize("key,steps,floor", [("copy", 50, 0.5), ("reverse", 50, 0.5), ("sort", 100, 0.3),
                                             ("previous", 50, 0.5)])
def test_a_short_run_learns_well_above_chance(key, steps, floor):
    task = toy.get_task(key)
    cfg = task.config(d_model=32, n_heads=2, n_layers=1, seed=0)
    model, history = train(cfg, steps=steps, batch=task.batch, lr=task.lr, seed=0, task=task)
    held = toy.task_held_out(task, n_seqs=128)
    acc = task_metrics(model, held).accuracy
    assert acc > floor > 10 / tasks.N_SYMBOLS  # chance: about 1 in 62
    assert history.loss[-1] < history.loss[0]


def test_an_unknown_task_is_a_lab_error():
    with pytest.raises(LabError) as err:
        toy.TrainSettings(task="juggle")
    assert err.value.key == "toy_task"


def test_the_ui_s_default_task_is_the_core_s():
    from mha_core.ui import heads as ui

    assert ui.DEFAULT_TASK == tasks.DEFAULT_TASK == ui.KEPT[ui.TASK_KEY] == toy.TASK_KEYS[0]


def _even_over_input(batch: tasks.TaskBatch, has_sep: bool) -> np.ndarray:
    """(1, 1, B, n, n) attention of a head that compares nothing: even weight on the visible input tokens."""
    b, n = batch.tokens.shape
    visible = np.tril(np.ones((n, n), dtype=bool))[None]                                  # (1, n, n) causal
    ends = np.argmax(batch.tokens == tasks.SEP, axis=1) if has_sep else np.full(b, n)
    inputs = np.arange(n)[None, :] < ends[:, None]                                        # (B, n)
    keys = visible & inputs[:, None, :]                                                  # (B, n, n)
    keys = np.where(keys.any(-1, keepdims=True), keys, visible)                           # no input yet: all visible
    return (keys / keys.sum(-1, keepdims=True))[None, None]


@pytest.mark.parametrize("key", tasks.TASK_KEYS)
def test_a_head_that_compares_nothing_does_not_count_as_emerged(key):
    # Review finding: on sort, even weight over the input scored 0.5625 on "larger", above its old pass mark of 0.5.
    task = tasks.get_task(key)
    batch = task.make(np.random.default_rng(3), 64)
    even = _even_over_input(batch, has_sep=key in ("copy", "reverse", "sort"))
    for expected in task.expected:
        emerged = expected.measure(even, batch)
        assert emerged.best_score < expected.threshold, (key, expected.key, emerged.best_score)
        assert not emerged.matches
