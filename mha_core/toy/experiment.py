"""Misconception two: at a fixed d_model, do more heads mean a better model? Train h = 1 .. 16 and compare.

Every run gets the same budget (steps, batch, lr) and the same seeds; only n_heads (hence
d_head = d_model / h) changes, so the parameter count is identical across runs. Two tasks:

- ``registers`` (shipped, the default): report the latest value of several registers at once
  (``mha_core.toy.registers``), which needs one relation per register in a single attention layer;
- ``copy``: the heads page's repeated-segment task, which one head already solves (kept for comparison).
"""

from __future__ import annotations

import platform
import statistics
import time
from dataclasses import asdict, dataclass, replace

import torch

from mha_core.toy.evaluate import held_out_batch, repeat_metrics, score_model
from mha_core.toy.registers import (
    DEFAULT_TASK,
    EVAL_SEQS,
    RegisterTask,
    chance_accuracy,
    held_out_registers,
    train_registers,
)
from mha_core.toy.train import DEFAULT_RECIPE, TrainRecipe, train_recipe

__all__ = ["HEADS", "SEEDS", "COMMAND", "COPY_COMMAND", "TASKS", "PLATEAU_TOLERANCE", "REGISTER_RECIPE", "RunResult",
           "HeadStats", "HeadsResult", "heads_vs_accuracy", "registers_vs_heads", "copy_vs_heads"]

HEADS = (1, 2, 4, 8, 16)
SEEDS = (0, 1, 2)
COMMAND = "python -m mha_core.toy experiment"          # the shipped file (registers task)
COPY_COMMAND = f"{COMMAND} --task copy"
TASKS = ("registers", "copy")
PLATEAU_TOLERANCE = 0.01  # "as good as the best": mean accuracy within 1 point of the best h
# the registers sweep's budget: d_model and schedule of the copy model, one layer, 300 steps
REGISTER_RECIPE = TrainRecipe(config=DEFAULT_TASK.model_config(d_model=64, n_heads=1), steps=300, batch=64, lr=1e-2)


@dataclass(frozen=True)
class RunResult:
    """One trained model of the sweep, measured on the held-out set."""

    n_heads: int
    d_head: int
    seed: int
    accuracy: float      # copy: next-token accuracy on the repeated part; registers: whole answer right
    loss: float          # cross-entropy on the same positions
    n_params: int
    seconds: float
    best_previous_token: float | None = None  # copy: highest layer-0 previous-token score
    best_induction: float | None = None       # copy: highest last-layer induction score
    register_weight: list[list[float]] | None = None  # registers: (heads, R) mean weight on each latest assignment


@dataclass(frozen=True)
class HeadStats:
    """Accuracy of one h over the seeds."""

    n_heads: int
    d_head: int
    mean: float
    std: float  # sample standard deviation over seeds (0 for one seed)
    low: float
    high: float


@dataclass(frozen=True)
class HeadsResult:
    """The whole sweep, as written to ``assets/toy/heads_vs_accuracy.json``."""

    command: str
    d_model: int
    heads: tuple[int, ...]
    seeds: tuple[int, ...]
    steps: int
    batch: int
    lr: float
    runs: tuple[RunResult, ...]
    mean_accuracy: dict[int, float]  # n_heads -> mean accuracy over seeds
    torch_version: str
    machine: str
    task: str = "copy"
    n_layers: int = 2
    n_ctx: int = 24
    n_registers: int = 0   # registers task only
    n_values: int = 0      # registers task only
    held_out: int = 0      # held-out sequences behind each accuracy
    chance: float = 0.0    # accuracy of guessing
    seconds: float = 0.0   # wall time of the whole sweep

    def stats(self) -> dict[int, HeadStats]:
        """Mean, standard deviation and range of the accuracy per h (in ``heads`` order)."""
        out = {}
        for h in self.heads:
            accs = [r.accuracy for r in self.runs if r.n_heads == h]
            out[h] = HeadStats(n_heads=h, d_head=self.d_model // h, mean=statistics.fmean(accs),
                               std=statistics.stdev(accs) if len(accs) > 1 else 0.0, low=min(accs), high=max(accs))
        return out

    def first_within(self, tolerance: float = PLATEAU_TOLERANCE) -> int:
        """The smallest h whose mean accuracy is within ``tolerance`` of the best mean ("enough heads")."""
        best = max(self.mean_accuracy.values())
        return min(h for h, acc in self.mean_accuracy.items() if acc >= best - tolerance)

    def to_json_dict(self) -> dict:
        d = asdict(self)
        d["mean_accuracy"] = {str(k): v for k, v in self.mean_accuracy.items()}
        d["stats"] = {str(h): asdict(s) for h, s in self.stats().items()}
        return d


def _n_params(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def copy_vs_heads(base: TrainRecipe = DEFAULT_RECIPE, heads: tuple[int, ...] = HEADS,
                  seeds: tuple[int, ...] = SEEDS, command: str = COPY_COMMAND) -> HeadsResult:
    """Train the copy recipe ``base`` with each n_heads in ``heads`` and each seed; same budget, same d_model."""
    runs, start = [], time.perf_counter()
    for h in heads:
        for seed in seeds:
            recipe = replace(base, config=replace(base.config, n_heads=h), seed=seed)
            t0 = time.perf_counter()
            model, _ = train_recipe(recipe)
            seconds = time.perf_counter() - t0
            batch = held_out_batch(model.config)
            metrics, scores = repeat_metrics(model, batch), score_model(model, batch)
            runs.append(RunResult(
                n_heads=h, d_head=model.config.d_head, seed=seed, accuracy=metrics.accuracy, loss=metrics.loss,
                n_params=_n_params(model), seconds=round(seconds, 2),
                best_previous_token=scores.best("previous_token", layer=0).previous_token,
                best_induction=scores.best("induction", layer=model.config.n_layers - 1).induction,
            ))
    return _result(base, heads, seeds, runs, command, time.perf_counter() - start, task="copy",
                   held_out=len(held_out_batch(base.config).tokens), chance=1.0 / base.config.vocab_size)


def registers_vs_heads(task: RegisterTask = DEFAULT_TASK, base: TrainRecipe = REGISTER_RECIPE,
                       heads: tuple[int, ...] = HEADS, seeds: tuple[int, ...] = SEEDS,
                       command: str = COMMAND) -> HeadsResult:
    """Train one-layer models on the registers ``task`` for each h and seed; same budget, same d_model."""
    held = held_out_registers(task)
    runs, start = [], time.perf_counter()
    for h in heads:
        for seed in seeds:
            run = train_registers(task, base.config.d_model, h, base.steps, base.batch, base.lr, seed, held)
            runs.append(RunResult(
                n_heads=h, d_head=run.model.config.d_head, seed=seed, accuracy=run.metrics.accuracy,
                loss=run.metrics.loss, n_params=_n_params(run.model), seconds=round(run.seconds, 2),
                register_weight=[[round(float(w), 4) for w in row] for row in run.head_weights],
            ))
    return _result(base, heads, seeds, runs, command, time.perf_counter() - start, task="registers",
                   n_layers=1, n_ctx=task.n_ctx, n_registers=task.n_registers, n_values=task.n_values,
                   held_out=EVAL_SEQS, chance=chance_accuracy(task))


def heads_vs_accuracy(task: str = "registers", heads: tuple[int, ...] = HEADS,
                      seeds: tuple[int, ...] = SEEDS) -> HeadsResult:
    """The sweep of ``task`` ("registers", shipped, or "copy") with its default recipe."""
    if task == "copy":
        return copy_vs_heads(heads=heads, seeds=seeds)
    return registers_vs_heads(heads=heads, seeds=seeds)


def _result(base: TrainRecipe, heads: tuple[int, ...], seeds: tuple[int, ...], runs: list[RunResult], command: str,
            seconds: float, **task: object) -> HeadsResult:
    mean = {h: statistics.fmean(r.accuracy for r in runs if r.n_heads == h) for h in heads}
    fields = {"n_layers": base.config.n_layers, "n_ctx": base.config.n_ctx} | task
    return HeadsResult(
        command=command, d_model=base.config.d_model, heads=tuple(heads), seeds=tuple(seeds), steps=base.steps,
        batch=base.batch, lr=base.lr, runs=tuple(runs), mean_accuracy=mean, torch_version=torch.__version__,
        machine=platform.machine(), seconds=round(seconds, 1), **fields,
    )
