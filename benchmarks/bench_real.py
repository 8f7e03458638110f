"""The real-model page's costs: cold load of the packaged model, one 32-token sentence (forward + every head's
statistics), the layer check of every layer, and the batched per-head importance; then, at n = 32, 64 and 128
word pieces, each view the page draws for a long input: the time to build its spec and data on the server (what
render.chart caches) and how many bytes it sends (the spec as JSON plus its Arrow table), and the head-similarity
distances in float64 and float32.

Prints medians and p95 (and the machine's load average, since these boxes are shared); nothing here is asserted by
tests. With --browser: in headless Chromium, the time from pressing Enter on a new sentence of n pieces to the
settled page (server run, transfer, and every chart drawn), a new sentence each time (nothing cached) and the same
sentence again (cached). With --class 1,10,30: a class on the page, for each size a fresh server and that many
websocket sessions at once (harness.websocket_client.Student), each typing its own distinct 128-piece sentence: p50/p95
of the time to the finished page, the server's RSS at start, peak and after everyone left, and how many pages
differ from the same sentence's page computed alone (every element but spinners, byte for byte).
Usage: python -m benchmarks.bench_real [--repeats 20] [--cold 3] [--lengths 32 64 128] [--long-only] [--browser]
[--port 8602] [--class 1,10,30] [--settle 20]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.timing import percentile, settled_ms
from harness.server import PAGE_TEXT, start_server, stop_server, wait_ready

ROOT = Path(__file__).resolve().parents[1]
COLD = ("import time; t0 = time.perf_counter(); import torch; t1 = time.perf_counter(); "
        "from mha_core import pretrained; m = pretrained.load(); t2 = time.perf_counter(); "
        "print(f'{t1 - t0:.3f} {t2 - t1:.3f}')")
SENTENCE = ("The animal didn't cross the busy street because it was too tired after the long walk "
            "home from the market near the river on a cold and windy evening in late november")


def cold(runs: int) -> None:
    """A fresh process per run: import torch, then import transformers and load the packaged model."""
    torch_s, load_s = [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", COLD], cwd=ROOT, capture_output=True, text=True, check=True,
                             env={**os.environ, "HF_HUB_OFFLINE": "1"})
        a, b = map(float, out.stdout.split()[-2:])
        torch_s.append(a)
        load_s.append(b)
    print(f"cold load, median of {runs} fresh processes:")
    print(f"  import torch                        {statistics.median(torch_s):6.2f} s")
    print(f"  transformers + packaged model       {statistics.median(load_s):6.2f} s")
    total = statistics.median([a + b for a, b in zip(torch_s, load_s, strict=True)])
    print(f"  total                               {total:6.2f} s")


def warm(repeats: int) -> None:
    """In one process: a second load (what st.cache_resource saves), a 32-token run + stats, checks, importance."""
    from mha_core import head_types, layer_check, pretrained

    m = pretrained.load()
    t0 = time.perf_counter()
    pretrained.load()
    reload_s = time.perf_counter() - t0
    r = pretrained.run(m, SENTENCE)
    assert r.n == 32, r.n
    parts: dict[str, list[float]] = {"forward + stats": [], "layer check (all 6)": [], "importance (72 heads)": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = pretrained.run(m, SENTENCE)
        head_types.head_stats(r.attentions, r.special, r.punct)
        t1 = time.perf_counter()
        checks = layer_check.check_all(m, r)
        t2 = time.perf_counter()
        parts["forward + stats"].append((t1 - t0) * 1000)
        parts["layer check (all 6)"].append((t2 - t1) * 1000)
    for _ in range(max(3, repeats // 5)):
        t0 = time.perf_counter()
        pretrained.importance(m, SENTENCE)
        parts["importance (72 heads)"].append((time.perf_counter() - t0) * 1000)
    print(f"warm, {r.n} tokens, torch threads = {__import__('torch').get_num_threads()}:")
    print(f"  reload without the cache            {reload_s * 1000:8.1f} ms (st.cache_resource: ~0 after the first)")
    for k, v in parts.items():
        print(f"  {k:34s} {statistics.median(v):8.1f} ms (median of {len(v)})")
    print("  max |Δ| per layer (weights, output): "
          + ", ".join(f"L{c.layer} {c.weights_diff:.1e}/{c.output_diff:.1e}" for c in checks))


def _views(r, labels: tuple[str, ...]) -> dict[str, tuple]:
    """The long-input views of the page: (builder, args, kwargs) as pages/real.py calls render.chart."""
    import numpy as np

    from mha_core import head_similarity
    from mha_core.charts import lines
    from mha_core.charts import real as charts

    flat = r.attentions.reshape(-1, r.n, r.n)
    g = head_similarity.group_heads(head_similarity.js_distances(flat, np.float32), 0.3)
    names = tuple(f"L{i // 12}·H{i % 12}" for i in range(flat.shape[0]))
    titles = {"query_title": "q", "key_title": "k", "weight_title": "w"}
    return {
        "model view (pooled)": (charts.model_view, (r.attentions, labels), {"layer_title": "L", "head_title": "H",
                                                                             **titles}),
        "head view heatmap": (charts.head_heatmap, (r.attentions[2, 3], labels),
                              {"title": "t", "row_title": "q", "col_title": "k", "value_title": "w"}),
        "token lines (one head)": (lines.token_lines, (r.attentions[2, 3][None], labels, ("L2·H3",)),
                                   {"top_k": lines.top_k_for(1, r.n), **titles, "head_title": "h"}),
        "similarity map (72 heads)": (charts.similarity_map,
                                      (head_similarity.js_distances(flat, np.float32), names, g.order),
                                      {"title": "t", "value_title": "d", "max_value": head_similarity.JS_MAX}),
    }


def long_inputs(lengths: list[int], repeats: int) -> None:
    """Per view and length: server build time (spec + Arrow, what render.chart caches) and bytes sent."""
    import numpy as np
    import pyarrow as pa

    from mha_core import head_similarity, head_types, pretrained
    from mha_core.charts.base import spec_and_data

    m = pretrained.load()
    print(f"long inputs, {repeats} repeats each (build = builder + spec + Arrow table; bytes = JSON spec + Arrow):")
    for n in lengths:
        sentence = " ".join(["word"] * (n - 2))
        r = pretrained.run(m, sentence)
        assert r.n == n, r.n
        labels = tuple(f"{i} {tok}" for i, tok in enumerate(r.tokens))
        t_run = []
        for _ in range(max(3, repeats // 4)):
            t0 = time.perf_counter()
            head_types.head_stats(pretrained.run(m, sentence).attentions, r.special, r.punct)
            t_run.append((time.perf_counter() - t0) * 1000)
        print(f"  n = {n:3d}  forward + stats        p50 {statistics.median(t_run):7.1f} ms  "
              f"p95 {percentile(t_run, 0.95):7.1f}")
        flat = r.attentions.reshape(-1, n, n)
        for dtype in (np.float64, np.float32):
            ts = []
            for _ in range(max(3, repeats // 4)):
                t0 = time.perf_counter()
                head_similarity.js_distances(flat, dtype)
                ts.append((time.perf_counter() - t0) * 1000)
            print(f"          JS distances {np.dtype(dtype).name:8s} p50 {statistics.median(ts):7.1f} ms  "
                  f"p95 {percentile(ts, 0.95):7.1f}")
        for name, (builder, args, kwargs) in _views(r, labels).items():
            ts = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                spec, frame = spec_and_data(builder(*args, **kwargs))
                table = None if frame is None else pa.Table.from_pandas(frame, preserve_index=False)
                ts.append((time.perf_counter() - t0) * 1000)
            size = len(json.dumps(spec).encode()) + (0 if table is None else table.nbytes)
            print(f"          {name:26s} p50 {statistics.median(ts):7.1f} ms  p95 {percentile(ts, 0.95):7.1f}"
                  f"  {size / 1024:8.1f} KiB")


def browser(lengths: list[int], repeats: int, port: int | None) -> None:
    """Enter on a sentence of n word pieces -> settled page, in Chromium (a fresh server of our own)."""
    from playwright.sync_api import sync_playwright

    from harness.server import CHROMIUM, CHROMIUM_FLAGS

    words = ("cat", "dog", "sun", "tree", "rain", "book", "road", "fish", "bird", "door", "ship", "song")
    proc, base = start_server(port=port)
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            page = b.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{base}/real?lang=en", wait_until="domcontentloaded")
            wait_ready(page, timeout_ms=180_000)
            box = page.get_by_label("Sentence", exact=True)
            print(f"browser, Enter on a new sentence -> settled page (1280 px, {repeats} each):")
            for n in lengths:
                first, again, prev = [], [], None

                def enter(sentence: str) -> float:
                    before = page.evaluate(PAGE_TEXT)
                    box.fill(sentence)
                    t0 = time.time()
                    box.press("Enter")
                    return settled_ms(page, before, t0, timeout_ms=120_000)

                for i in range(repeats):
                    sentence = " ".join([words[i % len(words)], *["word"] * (n - 3)])  # n pieces with [CLS]/[SEP]
                    first.append(enter(sentence))
                    if prev is not None:
                        again.append(enter(prev))  # back to the one before: every view cached
                    prev = sentence
                print(f"  n = {n:3d}: new sentence p50 {statistics.median(first):7.0f} ms  p95 "
                      f"{percentile(first, 0.95):7.0f}  | seen sentence p50 {statistics.median(again):7.0f} ms  "
                      f"p95 {percentile(again, 0.95):7.0f}")
            b.close()
    finally:
        stop_server(proc)


CLASS_WORDS = ("cat", "dog", "sun", "tree", "rain", "book", "road", "fish", "bird", "door", "ship", "song", "lamp",
               "milk", "snow", "wind", "hill", "lake", "star", "bell", "coat", "king", "leaf", "moon", "nest",
               "rock", "salt", "tent", "wall", "yard", "boat", "cake", "desk", "farm", "gold", "hand", "iron")
TRANSIENT = {"spinner", "progress", "toast", "empty", "skeleton"}  # what a waiting page shows, not a result


def class_sentences(count: int, pieces: int = 128) -> list[str]:
    """``count`` distinct sentences of exactly ``pieces`` word pieces ([CLS]/[SEP] included) for the packaged model."""
    import random

    from mha_core import pretrained

    tok = pretrained.load().tokenizer
    out = []
    for i in range(count):
        rnd = random.Random(i)
        words = [rnd.choice(CLASS_WORDS) for _ in range(pieces - 2)]
        while len(tok.tokenize(" ".join(words))) > pieces - 2:
            words.pop()
        out.append(" ".join(words))
        assert len(tok.tokenize(out[-1])) == pieces - 2, out[-1]
    assert len(set(out)) == count
    return out


@dataclass(frozen=True)
class ResultDigest:
    """A Student's ``observe``: (kind, sha1 of the element) for each element that is a result, to compare pages."""

    waiting: tuple[str, ...]   # the starts of the alerts a waiting page shows (its queue place, "computing")

    @classmethod
    def english(cls) -> ResultDigest:
        from mha_core.i18n import translate

        return cls((translate("en", "real.queue", n=0).split("0")[0], translate("en", "real.computing")))

    def __call__(self, el) -> tuple[str, str] | None:  # noqa: ANN001 - a streamlit Element proto
        kind = el.WhichOneof("type")
        if kind is None or kind in TRANSIENT or (kind == "alert" and el.alert.body.startswith(self.waiting)):
            return None
        return kind, hashlib.sha1(getattr(el, kind).SerializeToString(deterministic=True)).hexdigest()


async def _open_and_type(base: str, sentence: str, digest: ResultDigest) -> tuple[list, float, list[str]]:
    """One student: open the real page, type the sentence; (result digests, seconds for the sentence, exceptions)."""
    from harness.websocket_client import Student

    s = Student(base, "none", {"lang": "en"}, observe=digest)
    await s.connect()
    try:
        first = await s.run("real", timeout=600)
        mine = await s.run("real", {first.widget_id("real_sentence"): ("string_value", sentence)}, timeout=600)
        return mine.observed, mine.seconds, first.exceptions + mine.exceptions
    finally:
        await s.close()


def _server_for_class() -> tuple:
    """A fresh server, warmed by one session on the default sentence; (process, base URL, its RSS in MiB)."""
    import asyncio

    from benchmarks.timing import rss_mib
    from harness.websocket_client import Student

    proc, base = start_server(timeout=180)

    async def warm() -> None:
        s = Student(base, "none", {"lang": "en"})
        await s.connect()
        await s.run("real", timeout=600)
        await s.close()

    asyncio.run(warm())
    time.sleep(2)
    return proc, base, rss_mib(proc.pid)


def a_class(sizes: list[int], settle: float) -> None:
    """For each class size: N sessions at once with distinct 128-piece sentences against a fresh server."""
    import asyncio
    import threading

    from benchmarks.timing import rss_mib

    digest = ResultDigest.english()
    sentences = class_sentences(max(sizes))
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    # the page each sentence gets alone: one session after another on a server of its own
    proc, base, _ = _server_for_class()
    alone = {}
    try:
        for sent in sentences:
            alone[sent], _, exc = asyncio.run(_open_and_type(base, sent, digest))
            assert not exc, exc
    finally:
        stop_server(proc)
    print(f"{'sessions':>8} {'p50 s':>7} {'p95 s':>7} {'max s':>7} {'start MiB':>10} {'peak MiB':>9} "
          f"{'final MiB':>10} {'differ':>7} {'errors':>7} {'load':>6}")
    for n in sizes:
        proc, base, start = _server_for_class()
        peak = [start]
        done = threading.Event()

        def sample(pid: int = proc.pid, done: threading.Event = done, peak: list = peak) -> None:
            while not done.is_set():
                peak[0] = max(peak[0], rss_mib(pid))
                time.sleep(0.1)

        th = threading.Thread(target=sample, daemon=True)
        th.start()
        load = os.getloadavg()[0]
        try:
            async def everyone(n: int = n, base: str = base) -> list:
                return await asyncio.gather(*(_open_and_type(base, s, digest) for s in sentences[:n]))

            got = asyncio.run(everyone())
            time.sleep(settle)  # everyone has left: what the server gives back
            final = rss_mib(proc.pid)
        finally:
            done.set()
            th.join()
            stop_server(proc)
        secs = [g[1] for g in got]
        differ = sum(g[0] != alone[s] for g, s in zip(got, sentences, strict=False))
        errors = sum(bool(g[2]) for g in got)
        print(f"{n:8d} {statistics.median(secs):7.1f} {percentile(secs, 0.95):7.1f} {max(secs):7.1f} {start:10.0f} "
              f"{peak[0]:9.0f} {final:10.0f} {differ:7d} {errors:7d} {load:6.2f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--cold", type=int, default=3)
    ap.add_argument("--lengths", type=int, nargs="+", default=[32, 64, 128])
    ap.add_argument("--long-only", action="store_true", help="only the long-input views")
    ap.add_argument("--browser", action="store_true", help="only the browser timing")
    ap.add_argument("--port", type=int, default=None, help="--browser: server port (default: any free port)")
    ap.add_argument("--class", dest="sizes", default=None, help="a class: comma-separated sizes, e.g. 1,10,30")
    ap.add_argument("--settle", type=float, default=20.0, help="--class: seconds after everyone left before the "
                    "final RSS")
    args = ap.parse_args()
    if args.sizes:
        a_class([int(x) for x in args.sizes.split(",")], args.settle)
        return
    if args.browser:
        browser(args.lengths, args.repeats, args.port)
        return
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if not args.long_only:
        cold(args.cold)
        warm(args.repeats)
    long_inputs(args.lengths, args.repeats)


if __name__ == "__main__":
    main()
