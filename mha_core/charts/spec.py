"""A chart as the browser gets it: the Vega-Lite spec apart from its data (cached, sent once), drawn on a canvas.

Nothing here imports Altair or pandas (0.27 s and 0.26 s of a fresh server's first page, which draws no Altair
chart): a builder that returns an Altair chart has imported both, so ``spec_and_data`` finds them loaded; a
builder may instead return a finished Vega-Lite spec (a dict), as the projector's vote charts do.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

# A chart drawn as pixels (base.with_pictures, pipeline.columns_by_head, real's head views) carries its pictures in
# the frame's IMAGE column and marks the rows the browser draws in DRAW; the rest of the frame is every cell, for the
# table view and the CSV (ui.render.rows_to_draw, ui.render.drawn_as_pixels).
IMAGE = "_image"
DRAW = "_draw"


def spec_and_data(chart: alt.TopLevelMixin | dict) -> tuple[dict, pd.DataFrame | None]:
    """A chart as (Vega-Lite spec without its data, the data frame): the spec can be cached and the
    data sent as Arrow, instead of Altair walking every row into JSON on each rerun. Layered charts
    (small) keep their data inline and return None. (Streamlit attaches such a frame to the top-level view
    only: a chart of panels must facet by an encoding channel, as ``pipeline.head_grid`` does, not by
    ``.facet()``, whose panels would be drawn empty.) A builder may also return a finished spec (a dict) whose
    data sets are inline, as ``lines.token_lines`` does."""
    if isinstance(chart, dict):
        return for_browser(chart), None
    alt, pd = sys.modules["altair"], sys.modules["pandas"]  # loaded by the builder that made this Altair chart
    if isinstance(chart, (alt.Chart, alt.LayerChart)) and isinstance(chart.data, pd.DataFrame):  # layers share it
        bare = chart.copy(deep=False)
        bare.data = alt.Undefined
        spec = bare.to_dict(validate=False)
        spec.pop("data", None)       # Altair's empty placeholder; Streamlit attaches the frame
        spec.pop("datasets", None)
        for layer in spec.get("layer", []):  # Altair's stand-in for "no data" would hide the frame from the layers
            if layer.get("data") == {"name": "empty"}:
                del layer["data"]
        return for_browser(in_data_order(spec, chart.data)), chart.data
    return for_browser(stable_names(chart.to_dict(validate=False))), None


def stable_names(spec: dict) -> dict:
    """Rename Altair's inline data sets (``data-<hash of the rows>``) to ``data_0``, ``data_1``, … in order.

    Streamlit sends a spec's named data sets apart from the spec and rebuilds the browser's Vega view only when the
    spec itself changes; a name made of the rows' hash changed the spec with every new number, so a layered chart
    was rebuilt on every slider move instead of taking its new rows.
    """
    names = {old: f"data_{i}" for i, old in enumerate(spec.get("datasets", {})) if old.startswith("data-")}
    if not names:
        return spec

    def rename(node: object) -> object:
        if isinstance(node, dict):
            out = {k: rename(v) for k, v in node.items() if k != "datasets" or node is not spec}
            if isinstance(node.get("data"), dict) and node["data"].get("name") in names:
                out["data"] = {**node["data"], "name": names[node["data"]["name"]]}
            return out
        if isinstance(node, list):
            return [rename(v) for v in node]
        return node

    renamed = rename(spec)
    renamed["datasets"] = {names.get(k, k): v for k, v in spec["datasets"].items()}
    return renamed


def in_data_order(spec: dict, data: pd.DataFrame) -> dict:
    """Drop each explicit sort list that only repeats the data's own order: the browser then draws the same chart
    with no per-datum sort formula.

    Vega-Lite compiles ``sort: [a, b, …]`` into a formula ``datum.col === a ? 0 : datum.col === b ? 1 : …`` that
    Streamlit's CSP-safe Vega interpreter evaluates for every cell (a 128-column heatmap: 1,024 cells × up to 128
    comparisons, on every slider move); ``sort: null`` keeps the order of first appearance, which our long-form
    frames already have. A sort is kept when the data has a missing value (it could filter a first appearance
    away). Vega-Lite's "is this a valid number" check is left as it is: ``invalid: null`` only moves it from the
    data into every mark's encoding, at the same per-datum cost.
    """
    if data.isna().to_numpy().any():
        return spec
    for channel in spec.get("encoding", {}).values():
        if isinstance(channel, dict) and isinstance(channel.get("sort"), list) and channel.get("field") in data:
            seen = [str(v) for v in dict.fromkeys(data[channel["field"]].tolist())]
            if seen == [str(v) for v in channel["sort"]]:
                channel["sort"] = None
    return spec


def for_browser(spec: dict) -> dict:
    """Draw on a canvas, without an ARIA label per mark: the browser's cost of a chart, not what it shows.

    vega-embed's default renderer is SVG (one DOM element per mark, restyled on every redraw; Streamlit switches to
    canvas only above 2,000 marks), and Vega-Lite's default gives every mark a ``description`` ("row: …; value: …")
    computed per datum by Vega's CSP-safe expression interpreter, which Streamlit runs. Tooltips work the same on a
    canvas; screen readers get the numbers from the table view (sidebar switch), not from hundreds of cell labels.
    """
    spec["usermeta"] = {**spec.get("usermeta", {}), "embedOptions": {"renderer": "canvas"}}
    spec["config"] = {**spec.get("config", {}), "aria": False}
    return spec


def as_table(df: pd.DataFrame) -> pd.DataFrame:
    """A heatmap's long-form frame back as a matrix (rows × columns, in drawing order)."""
    rows = list(dict.fromkeys(df["row"]))
    cols = list(dict.fromkeys(df["col"]))
    return df.pivot(index="row", columns="col", values="value").reindex(index=rows, columns=cols)


def arguments_digest(args: tuple, kwargs: Mapping[str, object]) -> bytes:
    """Every input of a chart as one digest, the key of its cache: an array by its shape, type and every byte (not a
    sample), a label by its exact text. About 30x cheaper than Streamlit's own argument hashing (0.03 ms against
    0.85 ms for split's 10 x 128 heatmap), paid by every chart of every run of every session. TypeError for an
    argument whose text might not say all of it (an arbitrary object): a builder takes arrays, numbers, text, enum
    members, dataclass values, and tuples, lists or dicts of them."""
    h = hashlib.blake2b(digest_size=20)

    def feed(v: object) -> None:
        if isinstance(v, np.ndarray):
            h.update(f"A{v.shape}{v.dtype.str}:".encode())
            h.update(np.ascontiguousarray(v).tobytes())
        elif isinstance(v, tuple | list):      # a builder reads both alike
            h.update(b"(")
            for x in v:
                feed(x)
            h.update(b")")
        elif isinstance(v, dict):
            h.update(b"{")
            for k in sorted(v):
                feed(k)
                feed(v[k])
            h.update(b"}")
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):  # a value object: its type and every field
            h.update(f"D{type(v).__module__}.{type(v).__qualname__}(".encode())
            for f in dataclasses.fields(v):
                feed(f.name)
                feed(getattr(v, f.name))
            h.update(b")")
        elif isinstance(v, enum.Enum):
            h.update(f"E{type(v).__module__}.{type(v).__qualname__}.{v.name};".encode())
        elif v is None or isinstance(v, bool | int | float | str | bytes | np.generic):
            h.update(f"{type(v).__name__}:{v!r};".encode())  # repr: exact, and a string's own quotes delimit it
        else:
            raise TypeError(f"a chart argument must be an array, a number, text or a collection of them: {type(v)}")

    feed(args)
    feed(dict(kwargs))
    return h.digest()
