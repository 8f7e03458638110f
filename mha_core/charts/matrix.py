"""Matrix charts as the browser draws them: the colour of every cell, its value and the chart's labels, for the app's
own canvas (assets/charts/canvas/*.js, mounted by ``ui.canvas``) instead of a Vega view.

Vega builds a chart's scenegraph, axes and legend anew on every slider move, in Streamlit's CSP-safe expression
interpreter: three heatmaps took 78-118 ms of the browser's main thread per move at 1x, a canvas that only paints
the cells 45-54 ms (benchmarks/bench_canvas.py). Here the server computes everything the canvas paints: each
cell's colour on Vega's own scheme (``raster``), the legend's ramp, and the labels; the browser decodes two arrays
and paints. The Altair builders of the same charts stay (``base.heatmap``, ``pipeline.head_grid``,
``pipeline.columns_by_head``): their specs make the SVG and PNG downloads, their frames the table view and the CSV.
Each function here takes exactly its builder's arguments (tests/test_matrix_canvas.py checks the signatures). The
token lines (``LinesCanvas``) are here too; bar charts are in ``charts.bars``, charts over an x axis in
``charts.plot``.

No Altair or pandas here: a page's first chart must not wait for them to draw.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from mha_core.charts import raster
from mha_core.charts.palette import (
    MASKED_FILL,
    OKABE_ITO,
    SIGNED_SCHEME,
    WEIGHT_SCHEME,
    head_colour,
    nice_limit,
)
from mha_core.units import head_name

# The Altair builders (whose specs make the SVG and PNG downloads) draw a heatmap, grid or column blocks of more cells
# as one image instead of a Vega mark per cell (issue 26: at h = 16 and 24 tokens attend's head grid was 9,216 marks,
# 400 ms of a move at 1x); the canvas paints any size alike.
PIXEL_CELLS = 2_048
PER_HEAD_COLUMNS = 16  # columns of each head drawn by columns_by_head (see column_subset)
MIN_OPACITY = 0.12     # a cell of value 0 still shows its head's colour this much
LEGEND_STOPS = 16      # colours of a legend's ramp (a CSS-like linear gradient between them)
ROW_LABELS = 32        # labels on a heatmap's row axis at most (every k-th), as base.AXIS_LABELS
BLOCK_ROW_LABELS = 16  # ... on columns_by_head's (W^Q's 64 rows: every 4th)
NEW = OKABE_ITO[5]     # the generation page's newest cache slot and key (vermillion)
FREE = "#eeeeee"       # a cache position not reached yet
CACHE_CELL = 16        # px per cache row (a phone still shows every label)
MODEL_VIEW_CELLS = 32  # rows and columns per head in the real model's model view; longer inputs are pooled (``pool``)
MODEL_VIEW_ROW = 64    # px per layer of the model view at most
HEAD_VIEW_CELLS = 10_000  # the real model's head view: Vega draws more cells as one image (charts.real.head_pixels)


@dataclass(frozen=True)
class Panel:
    """One matrix of a chart: its title (a head's, or none) and, for each cell in row-major order, its RGBA colour
    and its value (NaN: masked, drawn transparent)."""

    title: str
    n_rows: int
    n_cols: int
    rgba: str    # base64 of n_rows · n_cols · 4 bytes
    values: str  # base64 of n_rows · n_cols little-endian float32
    note_of: str = ""  # base64 of n_rows · n_cols bytes: each cell's index into the chart's notes ("": no notes)


@dataclass(frozen=True)
class Legend:
    """A colour ramp over ``domain`` (heatmaps) or one swatch per head (column blocks)."""

    title: str
    ramp: tuple[str, ...] = ()                 # "#rrggbb" at LEGEND_STOPS even steps of the domain
    domain: tuple[float, float] = (0.0, 1.0)
    swatches: tuple[tuple[str, str], ...] = ()  # (label, "#rrggbb")


class CanvasChart:
    """A chart the app's canvas paints: a dataclass whose fields are what the browser gets."""

    def payload(self) -> dict:
        """The chart as JSON for the browser, with a digest of it that the canvas skips an unchanged redraw by."""
        return with_digest(asdict(self))  # type: ignore[call-overload]  # every subclass is a dataclass


@dataclass(frozen=True)
class MatrixCanvas(CanvasChart):
    """Everything the canvas draws of one chart; ``payload()`` is what the browser gets."""

    title: str
    panels: tuple[Panel, ...]
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    row_title: str
    col_title: str
    value_title: str
    legend: Legend
    height: int                       # a single panel's plot height, px (a grid's panels are square, at most this)
    per_row: int = 0                  # panels to a row at most (0: one panel, as wide as the column)
    show_col_labels: bool = True
    row_labels: int = ROW_LABELS
    col_heads: tuple[str, ...] = ()   # each column's head (column blocks), named in its tooltip
    head_starts: tuple[int, ...] = ()  # the first column of each head's block: a thin line between blocks
    notes: tuple[str, ...] = ()       # a last tooltip line per kind of cell (a masked map's open / masked / ignored)
    gaps: bool = False                # a thin white line between cells, as Vega's white cell stroke
    outline: tuple[tuple[int, int], ...] = ()  # (row, column) of each cell outlined in outline_colour (the newest)
    outline_colour: str = ""
    row_colours: tuple[str, ...] = ()  # each row label's colour (default: the text's)
    row_axis_title: bool = True        # row_title beside the rows (else only in the tooltip)
    show_values: bool = True           # the tooltip names the cell's value (a cache slot has none)
    col_notes: tuple[str, ...] = ()    # a tooltip line per column, after col_note_title (the token at a position)
    col_note_title: str = ""
    lattice: tuple[int, ...] = ()      # (rows, columns) of small panels with no labels of their own (the model view)
    lattice_rows: tuple[str, ...] = ()  # each lattice row's label (layers), and its columns' (heads)
    lattice_cols: tuple[str, ...] = ()
    lattice_row_title: str = ""
    lattice_col_title: str = ""


def with_digest(out: dict) -> dict:
    """A chart's JSON with its digest: the browser repaints only when the digest changes."""
    out["digest"] = hashlib.blake2b(repr(out).encode(), digest_size=10).hexdigest()
    return out


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode("ascii")


def panel(title: str, rgba: np.ndarray, values: np.ndarray, note_of: np.ndarray | None = None) -> Panel:
    """A panel of (n, m, 4) uint8 colours, (n, m) values and, optionally, (n, m) indices of each cell's note."""
    n, m = values.shape
    notes = "" if note_of is None else _b64(np.asarray(note_of, dtype=np.uint8))
    return Panel(title, n, m, _b64(rgba.astype(np.uint8)), _b64(np.asarray(values, dtype="<f4")), notes)


def ramp(scheme: str) -> tuple[str, ...]:
    """LEGEND_STOPS colours of Vega's ``scheme``, low to high."""
    table = raster.scheme(scheme)
    picks = np.rint(np.linspace(0, len(table) - 1, LEGEND_STOPS)).astype(int)
    return tuple("#{:02x}{:02x}{:02x}".format(*table[k]) for k in picks)


def heat_domain(m: np.ndarray, signed: bool, domain: tuple[float, float] | None = None) -> tuple[float, float]:
    """A heatmap's colour domain: the one given, else 0..(round end of the largest |value|), ± for signed values."""
    if domain is not None:
        return float(domain[0]), float(domain[1])
    finite = m[np.isfinite(m)]
    lim = nice_limit(float(np.max(np.abs(finite)))) if finite.size else 1.0  # a round end: see nice_limit
    return (-lim, lim) if signed else (0.0, lim)


def heatmap(
    m: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    title: str = "",
    row_title: str = "",
    col_title: str = "",
    value_title: str = "value",
    signed: bool = False,
    domain: tuple[float, float] | None = None,
    size: int = 220,
    show_col_labels: bool = True,
    pixel_cells: int | None = PIXEL_CELLS,  # noqa: ARG001 - base.heatmap's switch to an image
) -> MatrixCanvas:
    """base.heatmap's chart: one panel, the column's width, ``size`` px high."""
    lo, hi = heat_domain(m, signed, domain)
    scheme = SIGNED_SCHEME if signed else WEIGHT_SCHEME
    return MatrixCanvas(title, (panel("", raster.on_scale(m, (lo, hi), scheme), m),), as_labels(rows), as_labels(cols),
                        row_title, col_title, value_title, Legend(value_title, ramp(scheme), (lo, hi)), size,
                        show_col_labels=show_col_labels)


def head_grid(
    mats: np.ndarray, rows: Sequence[str], cols: Sequence[str], titles: Sequence[str], *, row_title: str = "",
    col_title: str = "", value_title: str = "value", signed: bool = False, show_col_labels: bool = True,
    per_row: int = 4, size: int = 170,
) -> MatrixCanvas:
    """pipeline.head_grid's chart: one square panel per head, ``per_row`` to a row at most, on one colour scale
    (weights 0..1; signed values ± the round end of the largest |value| of any head)."""
    lo, hi = heat_domain(mats, signed, None if signed else (0.0, 1.0))
    scheme = SIGNED_SCHEME if signed else WEIGHT_SCHEME
    panels = tuple(panel(str(titles[i]), raster.on_scale(mats[i], (lo, hi), scheme), mats[i])
                   for i in range(mats.shape[0]))
    return MatrixCanvas("", panels, as_labels(rows), as_labels(cols), row_title, col_title, value_title,
                        Legend(value_title, ramp(scheme), (lo, hi)), size, per_row=per_row,
                        show_col_labels=show_col_labels)


def column_subset(width: int, n_heads: int, per_head: int = PER_HEAD_COLUMNS) -> np.ndarray:
    """Indices of at most ``per_head`` leading columns of each head's block (all when narrow).

    A 1024-column heatmap is unreadable on a projector and heavy to send; charts say when they cut.
    """
    d = width // n_heads
    return np.concatenate([np.arange(i * d, i * d + min(d, per_head)) for i in range(n_heads)])


def block_colours(strength: np.ndarray, head_of_col: np.ndarray) -> np.ndarray:
    """(n, c) strengths in [0, 1] and each column's head → (n, c, 3) uint8: the head's colour at the opacity the
    marks' version gives the cell (MIN_OPACITY..1) over white, as the browser would blend it."""
    rgb = np.array([_rgb(c) for c in OKABE_ITO], dtype=float)
    alpha = (MIN_OPACITY + (1 - MIN_OPACITY) * np.clip(strength, 0, 1))[..., None]
    colour = rgb[head_of_col % len(OKABE_ITO)][None, :, :]
    return np.rint(alpha * colour + (1 - alpha) * 255).astype(np.uint8)


def columns_by_head(
    m: np.ndarray, n_heads: int, rows: Sequence[str], *, title: str = "", head_label: str = "head",
    row_title: str = "", col_title: str = "", size: int = 220, per_head: int = PER_HEAD_COLUMNS,
    largest_title: str = "largest |value|",  # noqa: ARG001 - the Vega picture's per-head tooltip; here every cell has one
) -> MatrixCanvas:
    """pipeline.columns_by_head's chart: (n, h·d) as column blocks, one colour per head, stronger where |value| is
    larger; each cell's tooltip names its head, row, column and value."""
    n, width = m.shape
    d = width // n_heads
    keep = column_subset(width, n_heads, per_head)
    shown = np.asarray(m[:, keep], dtype=float)
    strength = np.abs(shown) / max(float(np.max(np.abs(m))), 1e-12)
    rgb = block_colours(strength, keep // d)
    rgba = np.concatenate([rgb, np.full((*rgb.shape[:2], 1), 255, np.uint8)], axis=-1)
    heads = [f"{head_label} {i}" for i in range(n_heads)]
    starts = tuple(int(k) for k in np.flatnonzero(np.r_[True, np.diff(keep // d) != 0]))
    legend = Legend("", swatches=tuple((heads[i], head_colour(i)) for i in range(n_heads)))
    return MatrixCanvas(title, (panel("", rgba, shown),), as_labels(rows), as_labels(str(j) for j in keep), row_title,
                        col_title, "value", legend, size, show_col_labels=False, row_labels=BLOCK_ROW_LABELS,
                        col_heads=tuple(heads[j // d] for j in keep), head_starts=starts)


def masked_map(
    m: np.ndarray, rows: Sequence[str], cols: Sequence[str], allowed: np.ndarray, *,
    ignored_rows: Sequence[bool] | None = None, states: tuple[str, str, str] = ("open", "masked", "ignored"),
    title: str = "", row_title: str = "", col_title: str = "", value_title: str = "value", size: int = 200,
) -> MatrixCanvas:
    """cross.masked_map's chart: weights on viridis 0..1 where ``allowed``, masked cells grey, rows in
    ``ignored_rows`` (padding queries) at 30% opacity; each cell's tooltip ends with its state."""
    allowed = np.broadcast_to(np.asarray(allowed, dtype=bool), m.shape)
    ignored = np.broadcast_to(np.asarray(ignored_rows if ignored_rows is not None else [False] * m.shape[0],
                                         dtype=bool)[:, None], m.shape)
    rgba = raster.on_scale(m, (0.0, 1.0), WEIGHT_SCHEME)
    rgba[~allowed] = [*_rgb(MASKED_FILL), 255]
    rgba[ignored, 3] = round(0.3 * 255)
    state = np.where(ignored, 2, (~allowed).astype(int))
    return MatrixCanvas(title, (panel("", rgba, m, state),), as_labels(rows), as_labels(cols), row_title, col_title,
                        value_title, Legend(value_title, ramp(WEIGHT_SCHEME), (0.0, 1.0)), size,
                        notes=tuple(states), gaps=True)


def cache_grid(rows: np.ndarray, n_ctx: int, tokens: Sequence[str], *, row_names: Sequence[str],
               kv_names: Sequence[str], title: str = "", position_title: str = "", kv_title: str = "",
               token_title: str = "") -> MatrixCanvas:
    """generate.cache_grid's chart: a row per (layer, K/V head) in its K/V head's colour up to the positions it
    holds (the newest outlined, at full strength), grey beyond; a tooltip names the row, position and token."""
    layers, g = rows.shape
    held = rows.reshape(-1)[:, None]
    pos = np.arange(n_ctx)[None, :]
    colours = np.array([_rgb(head_colour(j % g)) for j in range(layers * g)], dtype=np.uint8)[:, None, :]
    rgb = np.where((pos >= held)[..., None], np.array(_rgb(FREE), np.uint8), colours)
    alpha = np.where(pos == held - 1, 255, round(0.55 * 255)).astype(np.uint8)[..., None]
    rgba = np.concatenate([rgb, alpha], axis=-1)
    newest = tuple((int(r), int(h - 1)) for r, h in enumerate(held[:, 0]) if h > 0)
    return MatrixCanvas(title, (panel("", rgba, np.zeros(rgba.shape[:2])),), as_labels(row_names),
                        as_labels(range(n_ctx)), kv_title, position_title, "", Legend(""), CACHE_CELL * layers * g,
                        gaps=True, outline=newest, outline_colour=NEW, row_axis_title=False, show_values=False,
                        col_notes=tuple(str(tokens[p]) if p < len(tokens) else "" for p in range(n_ctx)),
                        col_note_title=token_title)


def query_attention(attn: np.ndarray, positions: Sequence[str], row_names: Sequence[str], groups: Sequence[int], *,
                    title: str = "", row_title: str = "", col_title: str = "", value_title: str = "") -> MatrixCanvas:
    """generate.query_attention's chart: the newest query of every layer and head (rows) over the cached keys on
    viridis 0..1, the newest key outlined, each row's label in the colour of the K/V head it reads."""
    n_rows, t = attn.shape
    return MatrixCanvas(title, (panel("", raster.on_scale(attn, (0.0, 1.0), WEIGHT_SCHEME), attn),),
                        as_labels(row_names), as_labels(positions), row_title, col_title, value_title,
                        Legend(value_title, ramp(WEIGHT_SCHEME), (0.0, 1.0)), 22 * n_rows,
                        outline=tuple((r, t - 1) for r in range(n_rows)), outline_colour=NEW,
                        row_colours=tuple(head_colour(int(j)) for j in groups))


def score_map(score: np.ndarray, *, title: str, layer_title: str, head_title: str, value_title: str) -> MatrixCanvas:
    """real.score_map's chart: an (L, H) score, rows L0…, columns H0…, on the heatmap's round colour scale."""
    return heatmap(score, [f"L{i}" for i in range(score.shape[0])], [f"H{j}" for j in range(score.shape[1])],
                   title=title, row_title=layer_title, col_title=head_title, value_title=value_title,
                   size=26 * score.shape[0])


def head_view_pixels(n: int) -> bool:
    """Whether the real model's n-token head view has more than HEAD_VIEW_CELLS cells (Vega draws it as one image)."""
    return n * n > HEAD_VIEW_CELLS


def head_view_height(n: int) -> int:
    """The real model's head view's plot height for n tokens, px: 22 per token up to 640, 2 per token as pixels."""
    return min(max(300, (2 if head_view_pixels(n) else 22) * n), 640)


def head_heatmap(m: np.ndarray, labels: Sequence[str], *, title: str, row_title: str, col_title: str,
                 value_title: str) -> MatrixCanvas:
    """real.head_heatmap's chart: one head's (n, n) weights on viridis 0..1, up to MiniLM's 512 tokens; every cell
    has its own tooltip (the Vega picture above HEAD_VIEW_CELLS had one per query row)."""
    return heatmap(m, labels, labels, title=title, row_title=row_title, col_title=col_title, value_title=value_title,
                   domain=(0.0, 1.0), size=head_view_height(len(labels)))


def similarity_map(dist: np.ndarray, names: Sequence[str], order: Sequence[int], *, title: str, value_title: str,
                   max_value: float) -> MatrixCanvas:
    """real.similarity_map's chart: distances between heads (H, H) with rows and columns in ``order`` (alike heads
    side by side) on a fixed 0..``max_value`` scale, dark = alike."""
    o = list(order)
    shown = [names[i] for i in o]
    return heatmap(dist[np.ix_(o, o)], shown, shown, title=title, value_title=value_title, domain=(0.0, max_value),
                   size=min(8 * len(o), 600))


def pool(attn: np.ndarray, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """(…, n, n) → (…, c, c) with c = ceil(n / ceil(n / cells)) blocks of consecutive tokens: a block's value is
    the weight its queries give its keys (mean over the block's queries of the sum over its keys), so rows still
    sum to 1. Also the first token of every block (…, c)."""
    n = attn.shape[-1]
    size = -(-n // cells)  # tokens per block
    starts = np.arange(0, n, size)
    summed = np.add.reduceat(np.add.reduceat(attn, starts, axis=-1), starts, axis=-2)
    counts = np.diff(np.append(starts, n))
    return summed / counts[:, None], starts


def pooled(attn: np.ndarray, labels: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """The model view's input: ``attn`` (…, n, n) and its labels, pooled into MODEL_VIEW_CELLS blocks of
    consecutive tokens above that many (a block labelled by its first and last token)."""
    n_tokens = attn.shape[-1]
    if n_tokens <= MODEL_VIEW_CELLS:
        return attn, list(labels)
    attn, starts = pool(attn, MODEL_VIEW_CELLS)
    ends = np.append(starts[1:], n_tokens) - 1
    return attn, [f"{labels[a]} … {labels[b]}" if b > a else labels[a] for a, b in zip(starts, ends, strict=True)]


def model_view(attn: np.ndarray, labels: Sequence[str], *, layer_title: str, head_title: str, query_title: str,
               key_title: str, weight_title: str) -> MatrixCanvas:
    """real.model_view's chart: every layer × head of ``attn`` (L, H, n, n) as a small heatmap on viridis 0..1,
    layers as the lattice's rows and heads as its columns (pooled as ``pooled`` says); each cell's tooltip names
    its head, query, key and weight."""
    attn, shown = pooled(attn, labels)
    n_layers, n_heads = attn.shape[:2]
    panels = tuple(panel(head_name(i, j), raster.on_scale(attn[i, j], (0.0, 1.0), WEIGHT_SCHEME), attn[i, j])
                   for i in range(n_layers) for j in range(n_heads))
    return MatrixCanvas("", panels, as_labels(shown), as_labels(shown), query_title, key_title, weight_title,
                        Legend(weight_title, ramp(WEIGHT_SCHEME), (0.0, 1.0)), MODEL_VIEW_ROW * n_layers,
                        show_col_labels=False, row_axis_title=False, lattice=(n_layers, n_heads),
                        lattice_rows=tuple(f"L{i}" for i in range(n_layers)),
                        lattice_cols=tuple(f"H{j}" for j in range(n_heads)), lattice_row_title=layer_title,
                        lattice_col_title=head_title)


LINE_BUDGET = 2048            # token lines per chart at most: more only slow the browser
DASHED_FROM = len(OKABE_ITO)  # head colours come round again after 8 heads: the later heads' lines are dashed


def top_k_for(n_heads: int, n: int, budget: int = LINE_BUDGET) -> int | None:
    """Keys kept per query so that heads × n × k token lines fit the budget; None when every line fits."""
    if n_heads * n * n <= budget:
        return None
    return max(1, budget // (n_heads * n))


def kept_lines(weights: np.ndarray, top_k: int | None) -> np.ndarray:
    """(h, n, m) bool: the token lines drawn — weight > 0, and among each query's ``top_k`` largest (ties: the
    lower key)."""
    keep = weights > 0
    if top_k is not None and top_k < weights.shape[-1]:
        order = np.argsort(-weights, axis=-1, kind="stable")[..., :top_k]
        top = np.zeros_like(keep)
        np.put_along_axis(top, order, True, axis=-1)
        keep &= top
    return keep


def shown_share(weights: np.ndarray, top_k: int | None) -> float:
    """The share of the attention the drawn lines carry (1 when all are drawn), averaged over heads and queries."""
    w = np.asarray(weights, dtype=float)
    return float(np.where(kept_lines(w, top_k), w, 0.0).sum(-1).mean())


@dataclass(frozen=True)
class LinesCanvas(CanvasChart):
    """Token lines as the canvas draws them: queries on the left, keys on the right, one line per (head, query,
    key) in its head's colour (dashed after DASHED_FROM heads) at the weight's opacity; ``payload()`` is what the
    browser gets. There a token under the pointer, or tapped, keeps only its lines, and a head tapped in the legend
    keeps only the heads tapped."""

    title: str
    queries: tuple[str, ...]
    keys: tuple[str, ...]
    heads: tuple[str, ...]
    colours: tuple[str, ...]    # each head's colour (head_colour)
    dashed: tuple[bool, ...]    # each head's lines dashed
    line_head: tuple[int, ...]  # each line's head, query and key (indices) and weight (4 decimals, as Vega's data)
    line_q: tuple[int, ...]
    line_k: tuple[int, ...]
    weights: tuple[float, ...]
    query_title: str
    key_title: str
    weight_title: str
    head_title: str
    step: int                   # px per token row
    kind: str = "lines"


def token_lines(weights: np.ndarray, labels: Sequence[str], head_names: Sequence[str], *,
                top_k: int | None = None, title: str = "", query_title: str = "", key_title: str = "",
                weight_title: str = "", head_title: str = "", key_labels: Sequence[str] | None = None,
                step: int | None = None) -> LinesCanvas:
    """lines.token_lines's chart: a line from every query (left) to every key (right) of ``weights`` (h, n, m),
    one colour per head, opacity = weight; ``top_k`` keeps each query's strongest keys only."""
    w = np.asarray(weights, dtype=float)
    h, n, m = w.shape
    head, q, k = np.nonzero(kept_lines(w, top_k))
    rows = max(n, m)
    return LinesCanvas(
        title, as_labels(labels), as_labels(key_labels if key_labels is not None else labels), as_labels(head_names),
        tuple(head_colour(i) for i in range(h)), tuple(i >= DASHED_FROM for i in range(h)),
        tuple(head.tolist()), tuple(q.tolist()), tuple(k.tolist()), tuple(np.round(w[head, q, k], 4).tolist()),
        query_title, key_title, weight_title, head_title, step or (20 if rows <= 16 else 16 if rows <= 32 else 12))


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[k:k + 2], 16) for k in (1, 3, 5))  # type: ignore[return-value]


def as_labels(xs: Sequence[str] | object) -> tuple[str, ...]:
    return tuple(str(x) for x in xs)  # type: ignore[union-attr]
