"""Heatmaps drawn as pixels: one small PNG per panel instead of one Vega mark per cell.

A browser draws (and re-encodes on every rerun) each Vega mark; the real model's 72 heads × 32 × 32 cells are 73,728
marks, a large share of the page's main-thread time. An image is decoded once. Colours are Vega's own scheme,
sampled at 256 steps (assets/charts/viridis.json, checked against Vega in tests/test_charts.py), so a picture
drawn as pixels and one drawn as marks read alike.
"""

from __future__ import annotations

import base64
import io
import json
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image

SCHEME_FILE = Path(__file__).resolve().parents[2] / "assets" / "charts" / "viridis.json"
TARGET_PX = 96  # a panel is at least this many pixels wide: small grids are scaled up by whole pixels, no blur


@cache
def viridis() -> np.ndarray:
    """(256, 3) uint8: Vega's viridis at value i / 255."""
    hexes = json.loads(SCHEME_FILE.read_text(encoding="utf-8"))["rgb"]
    table = np.array([[int(h[k:k + 2], 16) for k in (0, 2, 4)] for h in hexes], dtype=np.uint8)
    table.setflags(write=False)  # one table for the process: no caller can change it for the others
    return table


def colours(values: np.ndarray) -> np.ndarray:
    """(…) values in [0, 1] → (…, 3) uint8 RGB on Vega's viridis (the value's nearest of 256 steps)."""
    steps = np.rint(np.clip(np.nan_to_num(values, nan=0.0), 0.0, 1.0) * 255).astype(np.intp)
    return viridis()[steps]


def png_uri(grid: np.ndarray) -> str:
    """One (rows, cols) grid of values in [0, 1] as a PNG data URI, each cell a square of whole pixels."""
    return rgb_png_uri(colours(grid))


def rgb_png_uri(cells: np.ndarray) -> str:
    """(rows, cols, 3) uint8 cell colours as a PNG data URI, each cell a square of whole pixels."""
    scale = max(1, -(-TARGET_PX // max(cells.shape[:2])))
    rgb = np.repeat(np.repeat(cells, scale, axis=0), scale, axis=1)
    buf = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
