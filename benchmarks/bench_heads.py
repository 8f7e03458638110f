"""The heads page: loading the shipped weights, the page's script time per tab, and a training run from the page.

Prints (nothing is asserted; the boxes are shared, so the load average is printed too):
* ``load_default()`` median (the weights file -> an eval-mode model);
* per tab, the first run in a fresh process (weights loaded, scores / ablations computed and cached) and the
  median of reruns through AppTest (what a student waits for once the server is warm); target <= 300 ms;
* a page training run: the Train button with the shipped recipe's shape (progress bar and live charts included),
  fresh seeds so the run cache cannot answer; target <= 15 s to an induction head.
Usage: python -m benchmarks.bench_heads [--repeats 15] [--train-runs 2]
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from benchmarks.timing import median_ms
from mha_core.i18n import translate
from mha_core.toy import TrainSettings, load_default
from mha_core.toy.scores import INDUCTION_MIN
from mha_core.ui.heads import runs
from mha_core.ui.nav import spec

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = spec("heads").script
TABS = ("model", "train", "ablate", "count")


def open_heads(tab: str, **state: object) -> tuple[AppTest, float]:
    """(AppTest on the heads page with ``tab`` open, ms of its first run there)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["lang"] = "en"
    at.run()
    at.session_state["heads_tab"] = translate("en", f"heads.tab_{tab}")
    for key, value in state.items():
        at.session_state[key] = value
    at.switch_page(SCRIPT)
    t0 = time.perf_counter()
    at.run()
    assert not at.exception, at.exception
    return at, (time.perf_counter() - t0) * 1000


def bench_load(repeats: int) -> float:
    """Median ms of loading the shipped weights."""
    return median_ms(load_default, repeats)


def bench_tab(tab: str, repeats: int) -> tuple[float, float]:
    """(first run ms, median rerun ms) of one tab."""
    at, first = open_heads(tab)
    return first, median_ms(at.run, repeats, warmup=False)


def bench_training(seed: int) -> tuple[float, float, int | None]:
    """(seconds of the page run with the Train click, training seconds, first step with an induction head)."""
    at, _ = open_heads("train", heads_t_seed=seed)
    at.button[0].click()
    t0 = time.perf_counter()
    at.run()
    page_s = time.perf_counter() - t0
    assert not at.exception, at.exception
    run = runs().get(TrainSettings(seed=seed))
    reached = next((p.step for p in run.points if p.induction >= INDUCTION_MIN), None)
    return page_s, run.history.seconds, reached


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--train-runs", type=int, default=2)
    a = ap.parse_args()
    logging.getLogger("streamlit").setLevel(logging.ERROR)  # "no runtime" notes from calling caches outside a run
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"load_default()      median {bench_load(a.repeats):8.1f} ms")
    print(f"{'tab':<8} {'first ms':>9} {'median ms':>10}   (target: median <= 300 ms)")
    for tab in TABS:
        first, med = bench_tab(tab, a.repeats)
        print(f"{tab:<8} {first:9.1f} {med:10.1f}")
    print("page training run (d_model 64, h 4, 2 layers, 300 steps; target <= 15 s to an induction head):")
    for i in range(a.train_runs):
        page_s, train_s, reached = bench_training(seed=1000 + i)
        print(f"  seed {1000 + i}: page {page_s:5.1f} s, training {train_s:5.1f} s, induction head at step {reached}")


if __name__ == "__main__":
    main()
