"""Median script time of every page through AppTest, at default and at maximum slider settings.

A rerun with the same settings is what a student's slider release costs once a value was seen; the
first run at a setting includes the (cached afterwards) core computation. Both are printed.
Usage: python -m benchmarks.bench_pages [--repeats 15]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from benchmarks.timing import median_ms
from mha_core.ui.nav import PAGES

ROOT = Path(__file__).resolve().parents[1]

SETTINGS = {
    "default": {},
    "max": {"fixed": False, "h": 16, "d_head": 64, "sentence": " ".join(f"w{i}" for i in range(24))},
}


def bench(script: str, state: dict, repeats: int) -> tuple[float, float]:
    """(first run at these settings in ms, median of reruns in ms)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    for key, value in state.items():
        at.session_state[key] = value
    at.switch_page(script)
    t0 = time.perf_counter()
    at.run()
    first = (time.perf_counter() - t0) * 1000
    assert not at.exception, at.exception
    return first, median_ms(at.run, repeats, warmup=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--pages", nargs="*", default=None, help="page keys (default: every page)")
    a = ap.parse_args()
    print(f"{'page':<10} {'settings':<8} {'first ms':>9} {'median ms':>10}")
    for spec in PAGES:
        if a.pages and spec.key not in a.pages:
            continue
        for name, state in SETTINGS.items():
            if name == "max" and not spec.pipeline:
                continue
            first, med = bench(spec.script, state, a.repeats)
            print(f"{spec.key:<10} {name:<8} {first:9.1f} {med:10.1f}")


if __name__ == "__main__":
    main()
