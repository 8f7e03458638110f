"""Heads at work: a tiny transformer in which previous-token and induction heads emerge (no Streamlit here).

Typical use: ``model = load_default()``; ``score_model(model)`` for every head's scores and label;
``inspect_sequence(model, ids)`` for one sequence's attention; ``train(config, ..., callback=...)``
to watch the heads form; ``ablate`` / ``importance`` / ``pruning_curve`` to switch heads off;
``sequence_report`` / ``train_run`` / ``removable`` for what the heads page shows.

This package is the toy lab's one public surface: pages, tests and benchmarks import from ``mha_core.toy``, and
each name below is listed once, beside the module that defines it. Names load on first use (PEP 562), so that
reading the session defaults (``mha_core.toy.config``, torch-free) does not load torch on every page.
"""

from __future__ import annotations

import importlib
import sys
import types

_SOURCES: dict[str, tuple[str, ...]] = {
    "ablation": ("GroupAblation", "Importance", "PruningCurve", "ablate", "importance", "mask_without",
                 "pruning_curve"),
    "config": ("DEFAULT_RECIPE", "ToyConfig", "TrainRecipe"),
    "data": ("RepeatBatch", "data_rng", "make_batch"),
    "evaluate": ("RepeatMetrics", "SequenceView", "attention", "held_out_batch", "inspect_sequence",
                 "repeat_metrics", "score_model", "task_metrics"),
    "experiment": ("HeadsResult", "RunResult"),
    "generation": ("GenStep", "Generation", "KVCache", "cache_bytes", "decode_step", "generate"),
    "lab": ("D_MODELS", "EVERY", "HEAD_CHOICES", "HEADS_RESULT", "LAYER_CHOICES", "MAX_SEQ", "MAX_STEPS",
            "MIN_D_HEAD", "PAGE_STREAM", "PRUNE_TOLERANCE", "STEP_SIZE", "SYMBOLS", "ProgressPoint",
            "SequenceReport", "Snapshot", "TrainRun", "TrainSettings", "copyable", "format_sequence",
            "generate_sequence", "head_choices", "load_heads_result", "parse_sequence", "position_labels",
            "reached", "register_example", "removable", "repeated", "sequence_report", "sequence_scores",
            "snapshot_steps", "symbol", "task_example", "task_held_out", "train_run"),
    "model": ("LayerWeights", "ToyOutput", "ToyTransformer", "full_head_mask", "layer_weights"),
    "registers": ("REGISTER_NAMES",),
    "scores": ("BROAD_ENTROPY_MIN", "FIRST_TOKEN_MIN", "INDUCTION_MIN", "PREVIOUS_TOKEN_MIN", "SELF_MIN",
               "HeadScores", "ScoreTable", "induction_keys", "pattern_score", "score_attention"),
    "tasks": ("SEP", "TASKS", "TASK_KEYS", "Emerged", "Expected", "Task", "TaskBatch", "get_task"),
    "train": ("TrainHistory", "train", "train_recipe"),
    "weights": ("DEFAULT_WEIGHTS", "load_default", "load_model", "save_model"),
}
_WHERE = {name: module for module, names in _SOURCES.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> object:
    """Load a public name (or a submodule) from its module on first use."""
    if name in _WHERE:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    elif name in _SOURCES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Surface(types.ModuleType):
    """Importing a submodule binds it on the package; where a public name is also a submodule's name (``train``,
    the function, in ``train.py``), the public name keeps its place, as an eager ``__init__`` would leave it."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _WHERE and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Surface
