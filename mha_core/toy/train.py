"""Train the toy model on repeated-segment data (or a task of ``tasks.py``), deterministically from a seed, with a
progress callback."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch

from mha_core.errors import LabError
from mha_core.toy.data import TRAIN_STREAM, data_rng, make_batch
from mha_core.toy.evaluate import repeat_loss, task_loss
from mha_core.toy.model import ToyTransformer
from mha_core.toy.tasks import Task
from mha_core.toy_config import DEFAULT_RECIPE, ToyConfig, TrainRecipe

__all__ = ["TrainHistory", "TrainRecipe", "DEFAULT_RECIPE", "Callback", "train", "train_recipe", "TRAIN_THREADS",
           "make_optimizer"]

TRAIN_THREADS = 1  # more threads only compete with the server's other work on a small machine; 1 is reproducible

Callback = Callable[[int, float, ToyTransformer], None]


@dataclass
class TrainHistory:
    """Loss curve of one run (one entry per step) and its wall-clock time."""

    steps: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)  # cross-entropy on the repeated part (a task: its scored part)
    seconds: float = 0.0           # whole run, callbacks included
    callback_seconds: float = 0.0  # of which spent inside the callback


def train(
    config: ToyConfig,
    steps: int = DEFAULT_RECIPE.steps,
    batch: int = DEFAULT_RECIPE.batch,
    lr: float = DEFAULT_RECIPE.lr,
    seed: int = DEFAULT_RECIPE.seed,
    callback: Callback | None = None,
    every: int = 25,
    task: Task | None = None,
) -> tuple[ToyTransformer, TrainHistory]:
    """AdamW on next-token loss over the repeated part; same arguments -> bit-identical weights.

    Only the repeated part is predictable (the rest is uniform noise that adds gradient noise and
    nothing to learn), so the loss is taken there. ``seed`` fixes the initial weights (it overrides
    ``config.seed``) and the data stream. ``callback(step, loss, model)`` runs after step 1, every
    ``every`` steps and after the last one, under ``torch.no_grad`` with the model in eval mode.
    Runs on ``TRAIN_THREADS`` torch threads and restores the previous count afterwards. With a ``task``
    (``mha_core.toy.tasks``) the batches are that task's and the loss is taken on its scored positions; without
    one, the repeated-segment data of ``config`` as always.
    """
    if steps < 1 or batch < 1 or lr <= 0 or every < 1:
        raise LabError("toy_train", steps=steps, batch=batch, every=every, lr=lr)
    threads = torch.get_num_threads()
    torch.set_num_threads(TRAIN_THREADS)
    try:
        return _train(replace(config, seed=seed), steps, batch, lr, seed, callback, every, task)
    finally:
        torch.set_num_threads(threads)


def train_recipe(recipe: TrainRecipe = DEFAULT_RECIPE, callback: Callback | None = None,
                 every: int = 25) -> tuple[ToyTransformer, TrainHistory]:
    """``train`` with the arguments of ``recipe`` (the default reproduces the shipped weights)."""
    return train(recipe.config, recipe.steps, recipe.batch, recipe.lr, recipe.seed, callback, every)


def _lr_factor(step: int, warmup: int, steps: int) -> float:
    """Linear warm-up, then cosine decay to 10 % of ``lr`` (nanoGPT's schedule)."""
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return 0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, progress)))


def make_optimizer(model: torch.nn.Module, lr: float,
                   steps: int) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR]:
    """AdamW and its schedule (5 % warm-up, cosine to 10 %), shared by every toy task."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.98), weight_decay=0.01)
    warmup = max(1, steps // 20)
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _lr_factor(s, warmup, steps))


def _train(cfg: ToyConfig, steps: int, batch: int, lr: float, seed: int, callback: Callback | None, every: int,
           task: Task | None) -> tuple[ToyTransformer, TrainHistory]:
    model = ToyTransformer(cfg)
    opt, sched = make_optimizer(model, lr, steps)
    rng = data_rng(seed, TRAIN_STREAM)
    history = TrainHistory()
    start = time.perf_counter()
    for step in range(1, steps + 1):
        model.train()
        if task is None:
            data = make_batch(rng, batch, cfg.n_ctx, cfg.vocab_size, cfg.min_repeat, cfg.max_repeat, cfg.distinct)
            tokens, mask = data.torch_tokens(), data.torch_mask()
            loss = repeat_loss(model(tokens).logits, tokens, mask)
        else:
            data = task.make(rng, batch)
            loss = task_loss(model(torch.from_numpy(data.tokens)).logits, data)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        history.steps.append(step)
        history.loss.append(float(loss.detach()))
        if callback is not None and (step == 1 or step % every == 0 or step == steps):
            t = time.perf_counter()
            model.eval()
            with torch.no_grad():
                callback(step, history.loss[-1], model)
            history.callback_seconds += time.perf_counter() - t
    history.seconds = time.perf_counter() - start
    model.eval()
    return model, history
