"""Median script time of the cost lab, rerun through AppTest: default settings and the largest preset.

Usage: python -m benchmarks.bench_cost [N]   (target: median <= 150 ms)
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from mha_core.presets import PRESETS, Preset
from mha_core.ui.nav import spec

ROOT = Path(__file__).resolve().parents[1]

TARGET_MS = 150.0


def largest() -> Preset:
    """The preset with the most attention parameters (the heaviest case for the page)."""
    return max(PRESETS, key=lambda p: p.n_layers * p.shape.layer_params()["total"])


def median_ms(at: AppTest, n: int) -> float:
    """Median wall time of n reruns of the page as it stands."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - start) * 1000)
        if at.exception:
            raise RuntimeError(at.exception[0].value)
    return statistics.median(times)


def changing_ms(at: AppTest, n: int) -> float:
    """Median wall time when the sequence length changes before every run, so no chart comes from the cache."""
    times = []
    for i in range(n):
        at.number_input(key="cost_seq").set_value(1000 + i)
        start = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main(n: int = 20) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["lang"] = "en"
    at.run()
    at.switch_page(spec("cost").script)
    at.run()  # warm-up: imports, first chart build
    default = median_ms(at, n)
    big = largest()
    at.selectbox(key="cost_preset").select(big.key).run()
    heavy = median_ms(at, n)
    for name, ms in (("default settings", default), (f"largest preset ({big.name})", heavy)):
        print(f"{name:<40} median {ms:7.1f} ms over {n} runs  {'ok' if ms <= TARGET_MS else 'OVER TARGET'}")
    print(f"{'same, new seq_len every run (no cache)':<40} median {changing_ms(at, n):7.1f} ms (for information)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="?", type=int, default=20, help="timed runs per setting (default 20)")
    main(ap.parse_args().runs)
