"""Downloads under every chart: its SVG, PNG and CSV, named after the page and the settings it shows.

The files are built only when a button is clicked: each button gets a callable (Streamlit runs it on the click,
on its own thread), and render.py caches the images on the chart's own cache key. A page run therefore pays for
a few small buttons, never for rendering an image — which matters in a live lesson, where every teacher move
redraws every follower's page.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from mha_core import figure_files
from mha_core.attention import Trace
from mha_core.ui import frame, state
from mha_core.ui.i18n import t
from mha_core.ui.nav import spec as page_spec

KEY_PREFIX = "export"   # widget keys: export_<chart>_<svg|png|csv>
FALLBACK_PAGE = "figure"  # a chart drawn outside a page (app.py's frame) is named this
MIMES = {"svg": "image/svg+xml", "png": "image/png", "csv": "text/csv"}

Bytes = Callable[[], bytes]


@dataclass(frozen=True)
class Export:
    """How a chart's files are named and what its CSV holds; pages pass one to ``render.chart(..., figure_files=)``.

    The name is ``<page>_<h, d_head on pipeline pages>_<settings>_<name>.<ext>``; without an Export the name ends
    in the chart builder's name and the CSV holds the chart's own data (numbers rounded as drawn).
    """
    name: str = ""                                              # which figure of the page ("scores"); may be ""
    settings: Mapping[str, object] = field(default_factory=dict)  # the page's own settings, e.g. {"head": 3}
    csv: Bytes | None = None                                    # the exact numbers, built on click


def weights(trace: Trace, head: int, labels: Sequence[str], name: str = "", **settings: object) -> Export:
    """One head's attention weights, exactly as the Trace holds them (a row per query, a column per key)."""
    corner = f"{t('export.query')} \\ {t('export.key')}"
    return Export(name, {**settings, "head": head},
                  functools.partial(figure_files.weights_csv, trace, head, tuple(labels), corner))


def matrix(m: np.ndarray, rows: Sequence[str], cols: Sequence[str], name: str = "", **settings: object) -> Export:
    """A matrix as drawn in a heatmap, its numbers in full precision (not the chart's rounded ones)."""
    return Export(name, settings, functools.partial(figure_files.matrix_csv, np.asarray(m), tuple(rows), tuple(cols),
                                                    t("export.corner")))


def heads(mats: np.ndarray, titles: Sequence[str], rows: Sequence[str], cols: Sequence[str], value: str,
          name: str = "heads", **settings: object) -> Export:
    """One matrix per head (a grid of heatmaps) in long form: head, query, key, value, in full precision."""
    names = (t("export.head"), t("export.query"), t("export.key"), value)
    return Export(name, settings, functools.partial(figure_files.heads_csv, np.asarray(mats), tuple(titles),
                                                    tuple(rows),
                                                    tuple(cols), names))


def _page_settings(page: str) -> dict[str, object]:
    """The shared settings a pipeline page shows (h and d_head); other pages name their own."""
    try:
        shows_pipeline = page_spec(page).pipeline
    except KeyError:
        return {}
    if not shows_pipeline:
        return {}
    s = state.current()
    return {"h": s.n_heads, "dh": s.d_head}


def file_names(builder: str, ex: Export | None, exts: Sequence[str]) -> dict[str, str]:
    """ext -> file name of one chart: the page, its settings, then the figure's name (or the builder's)."""
    run = frame.page_run()
    page = run.key if run is not None and run.key else FALLBACK_PAGE
    what = ex.name if ex is not None else builder.rsplit(".", 1)[-1]
    settings = {**_page_settings(page), **(ex.settings if ex is not None else {})}
    if what:
        settings[what] = ""
    return {ext: figure_files.file_name(page, ext, **settings) for ext in exts}


def chart_key(page: str, builder: str, name: str, n: int = 1) -> str:
    """The widget key of the n-th chart of a builder and figure name on a page (the same in every run)."""
    base = f"{KEY_PREFIX}_" + hashlib.blake2b(f"{page}|{builder}|{name}".encode(), digest_size=5).hexdigest()
    return base if n == 1 else f"{base}_{n}"


def widget_key(builder: str, ex: Export | None) -> str:
    """A key per chart that stays the same across runs (it does not depend on the data) and is unique on the
    page: the n-th chart of a builder and figure name on a page gets the same key every run."""
    run = frame.page_run()
    page = run.key if run is not None else FALLBACK_PAGE
    name = ex.name if ex is not None else ""
    key, n = chart_key(page, builder, name), 1
    if run is None:
        return key
    while key in run.taken:
        n += 1
        key = chart_key(page, builder, name, n)
    run.taken.add(key)
    return key


def menu_key(key: str) -> str:
    """The key of a chart's download menu (its open state)."""
    return f"{key}_menu"


def buttons(key: str, names: Callable[[], Mapping[str, str]], files: Callable[[], Mapping[str, Bytes]],
            texts: str = "") -> None:
    """A small "Download" menu with one button per file (``files`` gives ext -> callable building its bytes;
    ``names`` the files' names; both are asked only while the menu is open); labels and tooltips are
    ``figure_files.<texts><ext>`` and ``figure_files.<texts><ext>_help``.

    The menu is lazy: its buttons are drawn only while it is open (opening it reruns the page), so a page run,
    e.g. every follower's on each teacher move in a live lesson, pays for one closed menu per chart.
    """
    with st.popover(t(f"export.{texts}menu"), icon=":material/download:", type="tertiary",
                    help=t(f"export.{texts}menu_help"), key=menu_key(key), on_change="rerun") as menu:
        if not menu.open:
            return
        names = names()
        for ext, build in files().items():
            st.download_button(
                t(f"export.{texts}{ext}"), build, file_name=names[ext], mime=MIMES[ext], key=f"{key}_{ext}",
                help=t(f"export.{texts}{ext}_help", name=names[ext]), on_click="ignore", type="tertiary",
                icon=":material/download:",
            )


def diagram_button(key: str, page_svg: Callable[[], str], name: str = "pipeline") -> None:
    """The download button of a diagram (its SVG built on click), named like the charts of the page."""
    names = functools.partial(file_names, name, Export(name), ("svg",))
    buttons(f"{KEY_PREFIX}_{key}", names, lambda: {"svg": lambda: page_svg().encode("utf-8")}, texts="diagram_")
