"""Heads at work: a tiny transformer in which previous-token and induction heads emerge (no Streamlit here).

Typical use: ``model = load_default()``; ``score_model(model)`` for every head's scores and label;
``inspect_sequence(model, ids)`` for one sequence's attention; ``train(config, ..., callback=...)``
to watch the heads form; ``ablate`` / ``importance`` / ``pruning_curve`` to switch heads off;
``sequence_report`` / ``train_run`` / ``removable`` for what the heads page shows.

This package is the toy lab's one public surface: pages, tests and benchmarks import from ``mha_core.toy``, and
each name below is listed once, beside the module that defines it. Importing it loads torch; the model's shape
and recipe as plain values (what the session defaults read) live outside it, in ``mha_core.toy_config``.
"""

from mha_core.toy.ablation import (
    GroupAblation,
    Importance,
    PruningCurve,
    ablate,
    importance,
    mask_without,
    pruning_curve,
)
from mha_core.toy.data import RepeatBatch, data_rng, make_batch
from mha_core.toy.evaluate import (
    RepeatMetrics,
    SequenceView,
    attention,
    held_out_batch,
    inspect_sequence,
    repeat_metrics,
    score_model,
    task_metrics,
)
from mha_core.toy.experiment import HeadsResult, RunResult
from mha_core.toy.generation import Generation, GenStep, KVCache, cache_bytes, decode_step, generate
from mha_core.toy.lab import (
    D_MODELS,
    EVERY,
    HEAD_CHOICES,
    HEADS_RESULT,
    LAYER_CHOICES,
    MAX_SEQ,
    MAX_STEPS,
    MIN_D_HEAD,
    PAGE_STREAM,
    PRUNE_TOLERANCE,
    STEP_SIZE,
    SYMBOLS,
    ProgressPoint,
    SequenceReport,
    Snapshot,
    TrainRun,
    TrainSettings,
    copyable,
    format_sequence,
    generate_sequence,
    head_choices,
    load_heads_result,
    parse_sequence,
    position_labels,
    reached,
    register_example,
    removable,
    repeated,
    sequence_report,
    sequence_scores,
    snapshot_steps,
    symbol,
    task_example,
    task_held_out,
    train_run,
)
from mha_core.toy.model import LayerWeights, ToyOutput, ToyTransformer, full_head_mask, layer_weights
from mha_core.toy.registers import REGISTER_NAMES
from mha_core.toy.scores import (
    BROAD_ENTROPY_MIN,
    FIRST_TOKEN_MIN,
    INDUCTION_MIN,
    PREVIOUS_TOKEN_MIN,
    SELF_MIN,
    HeadScores,
    ScoreTable,
    induction_keys,
    pattern_score,
    score_attention,
)
from mha_core.toy.tasks import SEP, TASK_KEYS, TASKS, Emerged, Expected, Task, TaskBatch, get_task
from mha_core.toy.train import TrainHistory, train, train_recipe
from mha_core.toy.weights import DEFAULT_WEIGHTS, load_default, load_model, save_model
from mha_core.toy_config import DEFAULT_RECIPE, ToyConfig, TrainRecipe

__all__ = [
    "BROAD_ENTROPY_MIN", "DEFAULT_RECIPE", "DEFAULT_WEIGHTS", "D_MODELS", "EVERY", "FIRST_TOKEN_MIN", "HEADS_RESULT",
    "HEAD_CHOICES", "INDUCTION_MIN", "LAYER_CHOICES", "MAX_SEQ", "MAX_STEPS", "MIN_D_HEAD", "PAGE_STREAM",
    "PREVIOUS_TOKEN_MIN", "PRUNE_TOLERANCE", "REGISTER_NAMES", "SELF_MIN", "SEP", "STEP_SIZE", "SYMBOLS", "TASKS",
    "TASK_KEYS", "Emerged", "Expected", "GenStep", "Generation", "GroupAblation", "HeadScores", "HeadsResult",
    "Importance", "KVCache", "LayerWeights", "ProgressPoint", "PruningCurve", "RepeatBatch", "RepeatMetrics",
    "RunResult", "ScoreTable", "SequenceReport", "SequenceView", "Snapshot", "Task", "TaskBatch", "ToyConfig",
    "ToyOutput", "ToyTransformer", "TrainHistory", "TrainRecipe", "TrainRun", "TrainSettings", "ablate", "attention",
    "cache_bytes", "copyable", "data_rng", "decode_step", "format_sequence", "full_head_mask", "generate",
    "generate_sequence", "get_task", "head_choices", "held_out_batch", "importance", "induction_keys",
    "inspect_sequence", "layer_weights", "load_default", "load_heads_result", "load_model", "make_batch",
    "mask_without", "parse_sequence", "pattern_score", "position_labels", "pruning_curve", "reached",
    "register_example", "removable", "repeat_metrics", "repeated", "save_model", "score_attention", "score_model",
    "sequence_report", "sequence_scores", "snapshot_steps", "symbol", "task_example", "task_held_out",
    "task_metrics", "train", "train_recipe", "train_run",
]
