"""Heads at work: a tiny transformer in which previous-token and induction heads emerge (no Streamlit here).

Typical use: ``model = load_default()``; ``score_model(model)`` for every head's scores and label;
``inspect_sequence(model, ids)`` for one sequence's attention; ``train(config, ..., callback=...)``
to watch the heads form; ``ablate`` / ``importance`` / ``pruning_curve`` to switch heads off.
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
)
from mha_core.toy.model import LayerWeights, ToyConfig, ToyOutput, ToyTransformer, full_head_mask, layer_weights
from mha_core.toy.scores import HeadScores, ScoreTable, score_attention
from mha_core.toy.train import DEFAULT_RECIPE, TrainHistory, TrainRecipe, train, train_recipe
from mha_core.toy.weights import DEFAULT_WEIGHTS, load_default, load_model, save_model

__all__ = [
    "DEFAULT_RECIPE", "DEFAULT_WEIGHTS", "GroupAblation", "HeadScores", "Importance", "LayerWeights", "PruningCurve",
    "RepeatBatch", "RepeatMetrics", "ScoreTable", "SequenceView", "ToyConfig", "ToyOutput", "ToyTransformer",
    "TrainHistory", "TrainRecipe", "ablate", "attention", "data_rng", "full_head_mask", "held_out_batch",
    "importance", "inspect_sequence", "layer_weights", "load_default", "load_model", "make_batch", "mask_without",
    "pruning_curve", "repeat_metrics", "save_model", "score_attention", "score_model", "train", "train_recipe",
]
