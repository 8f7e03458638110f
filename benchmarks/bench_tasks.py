"""Training each task of the heads page's "Train it yourself" tab to its target accuracy, with its own recipe.

For every task and seed: ``train_run`` as the page calls it (live scoring every 25 steps included, charts not),
the time from step 1 to the first live point at or above the task's target (probe of 64 held-out sequences),
the whole run, and the final accuracy on 256 held-out sequences; medians (and p95) over the seeds. The budget
is 10 s per task on the class server's 2 cores. Prints the load average, since these boxes are shared; nothing
here is asserted by the tests.
Usage: python -m benchmarks.bench_tasks [--seeds 5] [--tasks copy,sort]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from benchmarks.timing import percentile
from mha_core import toy
from mha_core.toy.train import TRAIN_THREADS


def bench_task(key: str, seeds: int) -> None:
    """One line per seed, then the medians of one task."""
    task = toy.get_task(key)
    reach, total, wall, acc, missed = [], [], [], [], 0
    for seed in range(seeds):
        settings = toy.TrainSettings.for_task(key, seed=seed)
        t0 = time.perf_counter()
        run = toy.train_run(settings)
        wall.append(time.perf_counter() - t0)
        hit = toy.reached(run.points, task.target)
        total.append(run.history.seconds)
        acc.append(run.metrics.accuracy)
        if hit is None:
            missed += 1
        else:
            reach.append(hit.seconds)
        emerged = ", ".join(f"{e.key} {e.best_score:.2f}" for e in run.emerged)
        print(f"  {key:8s} seed {seed}: target {task.target:.0%} "
              + (f"at step {hit.step:3d} after {hit.seconds:5.2f} s" if hit else "not reached")
              + f"; {settings.steps} steps {run.history.seconds:5.2f} s (call incl. scoring {wall[-1]:5.2f} s); "
              f"accuracy {run.metrics.accuracy:.3f}; best {emerged}", flush=True)
    line = (f"{key:8s} d_model {settings.d_model}, h {settings.n_heads}, {settings.n_layers} layer(s), "
            f"{settings.steps} steps: to target median {statistics.median(reach):.2f} s, "
            f"p95 {percentile(reach, 95):.2f} s"
            if reach else f"{key:8s}: target never reached")
    print(line + f"; whole run median {statistics.median(total):.2f} s (p95 {percentile(total, 95):.2f}); "
          f"accuracy median {statistics.median(acc):.3f} (min {min(acc):.3f}); missed {missed}/{seeds}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--tasks", default=",".join(toy.TASK_KEYS))
    a = ap.parse_args()
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
          f"training on {TRAIN_THREADS} thread(s)")
    toy.train_run(toy.TrainSettings.for_task("previous", seed=0))  # warm-up: torch's first optimizer, lazy imports
    for key in a.tasks.split(","):
        bench_task(key, a.seeds)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
