"""Command line: ``python -m mha_core.toy {train [--n-kv-heads G],scores,ablation,experiment [--task registers|copy]}``;
prints JSON."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace
from pathlib import Path

import torch

from mha_core.counts import attention_kind, kv_cache_bytes
from mha_core.errors import LabError
from mha_core.files import WriteFailed, atomic_write, write_failed
from mha_core.toy import scores as sc
from mha_core.toy.ablation import ablate, importance, pruning_curve
from mha_core.toy.evaluate import (
    EVAL_SEED,
    EVAL_SEQS,
    SAME_ACCURACY_TOL,
    SAME_LOSS_TOL,
    SAME_SCORE_TOL,
    held_out_batch,
    repeat_metrics,
    sameness,
    score_model,
)
from mha_core.toy.experiment import TASKS, heads_vs_accuracy
from mha_core.toy.generation import variant_weights
from mha_core.toy.train import DEFAULT_RECIPE, train_recipe
from mha_core.toy.weights import ASSETS, DEFAULT_WEIGHTS, load_model, save_model
from mha_core.toy_config import TrainRecipe

EXPERIMENT_OUT = {"registers": ASSETS / "heads_vs_accuracy.json", "copy": ASSETS / "heads_vs_accuracy_copy.json"}


def _print(obj: object) -> None:
    print(json.dumps(obj, indent=2))


def _cannot_write(path: Path, err: WriteFailed) -> int:
    """One line on stderr (this developer's command speaks English, as its JSON does) and exit code 1: the file at
    ``path`` is as it was (mha_core.files.atomic_write)."""
    print(f"python -m mha_core.toy: cannot write {path}: {err}", file=sys.stderr)
    return 1


def _recipe(n_kv_heads: int | None) -> TrainRecipe:
    """The default recipe, with ``n_kv_heads`` K/V heads when given (GQA; 1 = MQA)."""
    if n_kv_heads is None:
        return DEFAULT_RECIPE
    return replace(DEFAULT_RECIPE, config=replace(DEFAULT_RECIPE.config, n_kv_heads=n_kv_heads))


def default_out(n_kv_heads: int | None) -> Path:
    """The shipped weights for the default recipe; ``assets/toy/kv{G}.pt`` for G K/V heads (never the shipped file)."""
    return variant_weights(n_kv_heads)


def cmd_train(args: argparse.Namespace) -> int:
    """Train the default recipe (with --n-kv-heads G: G shared K/V heads); write it to --out, or with --check compare
    it with the file instead: exit 0 when it behaves the same (evaluate.sameness), bit-identical or not."""
    try:
        recipe = _recipe(args.n_kv_heads)
    except LabError as err:
        print(f"python -m mha_core.toy train: {err}", file=sys.stderr)
        return 2
    args.out = args.out or default_out(args.n_kv_heads)
    cfg = recipe.config
    model, history = train_recipe(recipe)
    out = {"seconds": round(history.seconds, 2), "final_loss": history.loss[-1], "steps": recipe.steps,
           "n_heads": cfg.n_heads, "n_kv_heads": cfg.kv_heads, "attention": attention_kind(cfg.n_heads, cfg.kv_heads),
           "kv_cache_bytes_full_context": kv_cache_bytes(n_layers=cfg.n_layers, n_kv_heads=cfg.kv_heads,
                                                         d_head=cfg.d_head, seq_len=cfg.n_ctx, bytes_per_value=4)}
    if args.check:  # the same behaviour, not the same bits: another CPU's vector unit rounds some sums otherwise
        same = sameness(load_model(args.out), model)
        out |= {"compared_with": str(args.out), "max_abs_diff": same.max_weight_diff, "identical": same.identical,
                "held_out_loss_diff": same.loss_diff, "held_out_accuracy_diff": same.accuracy_diff,
                "max_head_score_diff": same.max_score_diff, "labels_differ": list(same.labels_differ),
                "tolerances": {"loss": SAME_LOSS_TOL, "accuracy": SAME_ACCURACY_TOL, "head_scores": SAME_SCORE_TOL},
                "same": same.same}
        _print(out)
        return 0 if same.same else 1
    try:
        save_model(model, args.out, recipe)
    except WriteFailed as err:
        return _cannot_write(args.out, err)
    _print(out | {"written": str(args.out), "bytes": args.out.stat().st_size})
    return 0


def cmd_scores(args: argparse.Namespace) -> int:
    """Every head's scores and label on the held-out set, plus the model's repeated-part metrics."""
    model = load_model(args.weights)
    batch = held_out_batch(model.config)
    table = score_model(model, batch)
    _print({
        "weights": str(args.weights),
        "held_out": {"n_seqs": EVAL_SEQS, "seed": EVAL_SEED},
        "thresholds": {"previous_token": sc.PREVIOUS_TOKEN_MIN, "induction": sc.INDUCTION_MIN,
                       "first_token": sc.FIRST_TOKEN_MIN, "self": sc.SELF_MIN, "broad": sc.BROAD_ENTROPY_MIN},
        "repeat": asdict(repeat_metrics(model, batch)),
        "heads": [asdict(h) for h in table.heads],
    })
    return 0


def cmd_ablation(args: argparse.Namespace) -> int:
    """Switch off all induction heads, then each alone; single-head importance; pruning curve."""
    model = load_model(args.weights)
    batch = held_out_batch(model.config)
    induction = score_model(model, batch).labelled("induction")
    group = ablate(model, batch, induction)
    imp = importance(model, batch)
    curve = pruning_curve(model, batch, imp)
    _print({
        "base": asdict(group.base),
        "all_induction_off": asdict(group.ablated) | {"heads": induction, "loss_factor": group.loss_factor},
        "single_induction_off": [
            asdict(a.ablated) | {"head": a.heads[0], "loss_factor": a.loss_factor}
            for a in (ablate(model, batch, [h]) for h in induction)
        ],
        "importance_loss_increase": imp.loss_increase.round(4).tolist(),
        "importance_accuracy_drop": imp.accuracy_drop.round(4).tolist(),
        "pruning": {"order": curve.order, "accuracy": curve.accuracy, "loss": curve.loss},
    })
    return 0


def cmd_experiment(args: argparse.Namespace) -> int:
    """Heads-vs-accuracy sweep at fixed d_model; write the JSON result file."""
    out = args.out or EXPERIMENT_OUT[args.task]
    result = heads_vs_accuracy(args.task).to_json_dict()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, (json.dumps(result, indent=2) + "\n").encode())
    except OSError as err:  # mkdir's own error (a file where the folder should be, no permission)
        return _cannot_write(out, write_failed(err, out))
    except WriteFailed as err:
        return _cannot_write(out, err)
    _print({"written": str(out), "task": args.task, "seconds": result["seconds"], "stats": result["stats"]})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mha_core.toy", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("train", help="reproduce the shipped weights from the seed")
    p.add_argument("--out", type=Path, default=None,
                   help="default: the shipped assets/toy/default.pt; with --n-kv-heads G, assets/toy/kvG.pt")
    p.add_argument("--check", action="store_true",
                   help="compare with --out instead of overwriting it (held-out loss and head scores within tolerance)")
    p.add_argument("--n-kv-heads", type=int, default=None, metavar="G",
                   help="K/V heads shared by the query heads (grouped-query attention; 1 = multi-query); "
                        "default: one per query head, as the shipped model")
    p.set_defaults(func=cmd_train)
    for name, func in (("scores", cmd_scores), ("ablation", cmd_ablation)):
        p = sub.add_parser(name, help=func.__doc__)
        p.add_argument("--weights", type=Path, default=DEFAULT_WEIGHTS)
        p.set_defaults(func=func)
    p = sub.add_parser("experiment", help="heads-vs-accuracy sweep (misconception two)")
    p.add_argument("--task", choices=TASKS, default=TASKS[0],
                   help="registers: several relations at once (the shipped file); copy: the repeated-segment task")
    p.add_argument("--out", type=Path, default=None, help="default: the task's file in assets/toy/")
    p.set_defaults(func=cmd_experiment)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # a short-lived CLI process: one thread is fastest on a shared 2-core box
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
