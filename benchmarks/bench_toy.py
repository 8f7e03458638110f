"""The toy transformer: load + score + one sequence's attention, generation with a KV cache (per step, beside a
full recomputation of the prefix), the generation page's step (three models, core and whole page run), and a
training run up to an induction head.

Prints medians over repeated runs (and the machine's load average, since these boxes are shared);
nothing here is asserted by the tests.
Usage: python -m benchmarks.bench_toy [--repeats 20] [--train-runs 3] [--threads 1] [--page-steps 16] [--only page]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import torch

from benchmarks.timing import percentile
from mha_core.toy import (
    DEFAULT_RECIPE,
    generate,
    held_out_batch,
    inspect_sequence,
    load_default,
    load_model,
    score_model,
)
from mha_core.toy import generation as gen
from mha_core.toy.train import train_recipe

INDUCTION_TARGET = 0.8  # "reached an induction head": best last-layer induction score on held-out data


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def bench_inference(repeats: int) -> None:
    """Median of load_default(), score_model() on the held-out set, inspect_sequence() on one sequence."""
    load_default()  # warm-up (file cache, lazy imports)
    parts: dict[str, list[float]] = {"load": [], "scores": [], "one_sequence": [], "total": []}
    for _ in range(repeats):
        model, t_load = timed(load_default)
        batch = held_out_batch(model.config)
        _, t_scores = timed(lambda m=model, b=batch: score_model(m, b))
        _, t_seq = timed(lambda m=model, b=batch: inspect_sequence(m, b.tokens[0]))
        for k, v in zip(parts, (t_load, t_scores, t_seq, t_load + t_scores + t_seq), strict=True):
            parts[k].append(v * 1000)
    n = held_out_batch(DEFAULT_RECIPE.config).tokens.shape[0]
    print(f"inference, median of {repeats} ({n} held-out sequences scored):")
    for k, v in parts.items():
        print(f"  {k:13s} {statistics.median(v):8.1f} ms")


def bench_generation(repeats: int, new_tokens: int = 20) -> None:
    """Per generated token: a cached step (the new row only) vs the model rerun on the whole prefix, same run."""
    model = load_default()
    prompt = [1, 2, 3]
    cached, full = [], []
    for rep in range(repeats):
        gen, t = timed(lambda r=rep: generate(model, prompt, new_tokens, temperature=1.0, seed=r))
        cached.append(t * 1000 / len(gen.steps))
        ids = gen.tokens

        def rerun(ids=ids) -> None:
            with torch.no_grad():
                for n in range(1, len(ids)):
                    model(torch.tensor([ids[:n]]))

        _, t = timed(rerun)
        full.append(t * 1000 / (len(ids) - 1))
    print(f"generation, {repeats} runs of {len(prompt)} + {new_tokens} tokens, ms per token:")
    print(f"  cached step  p50 {statistics.median(cached):6.2f}  p95 {percentile(cached, 95):6.2f}")
    print(f"  full rerun   p50 {statistics.median(full):6.2f}  p95 {percentile(full, 95):6.2f}  "
          f"(x{statistics.median(full) / statistics.median(cached):.1f})")


def bench_page_step_core(repeats: int) -> None:
    """What one Next step of the generation page computes: three models (MHA, GQA, MQA) each draw a token and read
    it, extending its cached state by one row (the page keeps every state, so this is the whole model cost)."""
    models = [load_model(gen.variant_weights(g)) for g in gen.VARIANTS]
    prompt = gen.prompt_ids(gen.DEFAULT_PROMPT, DEFAULT_RECIPE.config.n_ctx)
    per_step: list[float] = []
    for rep in range(repeats):
        states = [gen.read(m, prompt) for m in models]
        for step in range(DEFAULT_RECIPE.config.n_ctx - len(prompt)):
            t0 = time.perf_counter()
            seed = gen.step_seed(rep, step)
            states = [gen.extend(m, s, gen.draw(s.logits, 1.0, None, seed)[1]) for m, s in zip(models, states,
                                                                                                strict=True)]
            per_step.append((time.perf_counter() - t0) * 1000)
    print(f"generation page, model work of one step (3 models), {len(per_step)} steps:")
    print(f"  p50 {statistics.median(per_step):6.2f} ms  p95 {percentile(per_step, 95):6.2f} ms")


def bench_page_step(steps: int) -> None:
    """The whole page run after pressing Next step (AppTest, one session: charts built anew for every step, as a
    student sees it), and a rerun with nothing changed."""
    from streamlit.testing.v1 import AppTest

    from mha_core.i18n import translate
    from mha_core.ui import generate as ui

    root = Path(__file__).resolve().parents[1]
    at = AppTest.from_file(str(root / "app.py"), default_timeout=120)
    at.session_state["lang"] = "en"
    at.run()
    at.switch_page("pages/generate.py")
    t0 = time.perf_counter()
    at.run()
    first = (time.perf_counter() - t0) * 1000
    times, reruns = [], []
    for _ in range(steps):
        button = next(b for b in at.button if b.label == translate("en", "generate.next"))
        t0 = time.perf_counter()
        button.click().run()
        times.append((time.perf_counter() - t0) * 1000)
        assert not at.exception, at.exception
        t0 = time.perf_counter()
        at.run()
        reruns.append((time.perf_counter() - t0) * 1000)
        if ui.full(at.session_state[ui.DEMO_KEY]):
            break
    print(f"generation page through AppTest: first run {first:.0f} ms; {len(times)} Next steps:")
    print(f"  step   p50 {statistics.median(times):6.1f} ms  p95 {percentile(times, 95):6.1f} ms")
    print(f"  rerun  p50 {statistics.median(reruns):6.1f} ms  p95 {percentile(reruns, 95):6.1f} ms")


def bench_training(runs: int) -> None:
    """Wall time of the shipped recipe, and the step/time at which an induction head first appears.

    Scoring inside the callback is excluded from both figures (a page would pay it for its live chart).
    """
    probe = held_out_batch(DEFAULT_RECIPE.config, 64)
    totals, reach = [], []
    for run in range(runs):
        found: list[tuple[int, float]] = []
        start = time.perf_counter()
        callback_time = [0.0]

        def callback(step: int, loss: float, model, found=found, start=start, callback_time=callback_time) -> None:
            t = time.perf_counter()
            if not found and score_model(model, probe).best("induction", layer=1).induction >= INDUCTION_TARGET:
                found.append((step, t - start - callback_time[0]))
            callback_time[0] += time.perf_counter() - t

        _, history = train_recipe(DEFAULT_RECIPE, callback=callback, every=25)
        train_only = history.seconds - history.callback_seconds
        totals.append(train_only)
        if found:
            reach.append(found[0][1])
            print(f"  run {run}: {DEFAULT_RECIPE.steps} steps in {train_only:5.2f} s; induction >= "
                  f"{INDUCTION_TARGET} at step {found[0][0]} after {found[0][1]:5.2f} s")
        else:
            print(f"  run {run}: {DEFAULT_RECIPE.steps} steps in {train_only:5.2f} s; no induction head")
    print(f"training, median of {runs}: full recipe {statistics.median(totals):.2f} s"
          + (f", to induction {statistics.median(reach):.2f} s" if reach else ""))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--train-runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch threads for inference (training uses its own)")
    ap.add_argument("--page-steps", type=int, default=16, help="Next steps pressed on the generation page")
    ap.add_argument("--only", choices=("page",), default=None, help="page: only the generation page's figures")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, "
          f"{a.threads} inference thread(s)")
    if a.only != "page":
        _, t_opt = timed(lambda: torch.optim.AdamW(torch.nn.Linear(1, 1).parameters()))
        print(f"first optimizer of the process (imports torch._dynamo, paid once per process): {t_opt:.2f} s")
        bench_inference(a.repeats)
        bench_generation(a.repeats)
    bench_page_step_core(a.repeats)
    bench_page_step(a.page_steps)
    if a.only != "page":
        bench_training(a.train_runs)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
