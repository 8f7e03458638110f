"""Heatmaps drawn as pixels: one small PNG per panel instead of one Vega mark per cell.

A browser draws (and re-encodes on every rerun) each Vega mark; the real model's 72 heads × 32 × 32 cells are 73,728
marks, a large share of the page's main-thread time. An image is decoded once. Colours are Vega's own schemes,
sampled at 256 steps (assets/charts/viridis.json and blueorange.json, checked against Vega in tests/test_charts.py),
so a picture drawn as pixels and one drawn as marks read alike.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image

SCHEMES = Path(__file__).resolve().parents[2] / "assets" / "charts"  # <scheme>.json: Vega's colours at 256 steps
TARGET_PX = 96  # a panel is at least this many pixels wide: small grids are scaled up by whole pixels, no blur


@cache
def scheme(name: str = "viridis") -> np.ndarray:
    """(256, 3) uint8: Vega's scheme ``name`` (viridis, blueorange) at value i / 255."""
    hexes = json.loads((SCHEMES / f"{name}.json").read_text(encoding="utf-8"))["rgb"]
    table = np.array([[int(h[k:k + 2], 16) for k in (0, 2, 4)] for h in hexes], dtype=np.uint8)
    table.setflags(write=False)  # one table for the process: no caller can change it for the others
    return table


def colours(values: np.ndarray, name: str = "viridis") -> np.ndarray:
    """(…) values in [0, 1] → (…, 3) uint8 RGB on Vega's scheme ``name`` (the value's nearest of 256 steps)."""
    steps = np.rint(np.clip(np.nan_to_num(values, nan=0.0), 0.0, 1.0) * 255).astype(np.intp)
    return scheme(name)[steps]


def on_scale(m: np.ndarray, domain: Sequence[float], name: str) -> np.ndarray:
    """(rows, cols) values → (rows, cols, 4) uint8 RGBA, as a Vega colour scale over ``domain`` with scheme
    ``name`` fills each cell; a missing value (NaN, ±inf: a masked score) is transparent, as Vega leaves it."""
    lo, hi = float(domain[0]), float(domain[1])
    m = np.asarray(m, dtype=float)
    rgb = colours((m - lo) / (hi - lo if hi > lo else 1.0), name)
    alpha = np.where(np.isfinite(m), 255, 0).astype(np.uint8)[..., None]
    return np.concatenate([rgb, alpha], axis=-1)


def png_uri(grid: np.ndarray) -> str:
    """One (rows, cols) grid of values in [0, 1] as a PNG data URI, each cell a square of whole pixels."""
    return rgb_png_uri(colours(grid))


def rgb_png_uri(cells: np.ndarray) -> str:
    """(rows, cols, 3 or 4) uint8 cell colours (RGB or RGBA) as a PNG data URI, each cell a square of whole pixels."""
    scale = max(1, -(-TARGET_PX // max(cells.shape[:2])))
    rgb = np.repeat(np.repeat(cells, scale, axis=0), scale, axis=1)
    buf = io.BytesIO()
    Image.fromarray(rgb, mode="RGBA" if rgb.shape[-1] == 4 else "RGB").save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
