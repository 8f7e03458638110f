"""The class vote's charts on the projector: the histogram of one round, and how the answers moved between the
vote and the vote again (Peer Instruction). Pure builders from a tally (``mha_core.lesson.votes``) and the
options' (translated) labels, drawn with ``render.chart``.

They return finished Vega-Lite specs (their few rows inline, under ``datasets`` as Altair writes them), not Altair
charts: every page's "predict first" box can become a class vote, so this module is imported by every page, and
importing Altair would cost a fresh server's first page 0.27 s. tests/test_live_page.py validates both specs
against the Vega-Lite schema.
"""

from __future__ import annotations

from collections.abc import Sequence

from mha_core.charts.palette import OKABE_ITO

RIGHT, OTHER = OKABE_ITO[2], OKABE_ITO[0]      # the right option (once revealed) and every other bar
ROUND_COLOURS = (OKABE_ITO[1], OKABE_ITO[0])   # round 1, round 2
FONT = 18  # read from the back of a lecture hall: these charts are drawn on the projector
DATA = "votes"  # the name of the spec's one data set
_COUNT_AXIS = {"tickMinStep": 1, "format": "d", "labelFontSize": FONT - 2, "titleFontSize": FONT - 2}
_FIT_WIDTH = {"type": "fit-x", "contains": "padding"}  # as charts.base.FIT_WIDTH


def _bars(rows: list[dict], names: list[str], encoding: dict, *, title: str, count_title: str,
          height: int) -> dict:
    """Horizontal bars of ``count`` per ``option`` (in the options' order), with ``encoding``'s extra channels."""
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "data": {"name": DATA},
        "datasets": {DATA: rows},
        "mark": {"type": "bar"},
        "title": title,
        "encoding": {
            "y": {"field": "option", "type": "nominal", "sort": names, "title": None,
                  "axis": {"labelLimit": 420, "labelFontSize": FONT}},
            "x": {"field": "count", "type": "quantitative", "title": count_title, "axis": dict(_COUNT_AXIS)},
            **encoding,
        },
        "width": "container",
        "height": height,
        "autosize": dict(_FIT_WIDTH),
    }


def histogram(counts: Sequence[int], labels: Sequence[str], *, answer: int | None = None, title: str = "",
              count_title: str = "", height: int = 0) -> dict:
    """One bar per option with how many students chose it; the right option coloured once ``answer`` is given
    (before the reveal every bar has the same colour: the chart must not give the answer away)."""
    names = list(labels)
    colours = [RIGHT if i == answer else OTHER for i in range(len(names))]
    rows = [{"option": n, "count": int(c)} for n, c in zip(names, counts, strict=True)]
    return _bars(rows, names, {
        "color": {"field": "option", "type": "nominal", "scale": {"domain": names, "range": colours},
                  "legend": None},
        "tooltip": [{"field": "option", "type": "nominal"}, {"field": "count", "type": "quantitative"}],
    }, title=title, count_title=count_title, height=height or 52 * len(names))


def shift_bars(before: Sequence[int], after: Sequence[int], labels: Sequence[str], *,
               round_titles: tuple[str, str], title: str = "", count_title: str = "", height: int = 0) -> dict:
    """Round 1 beside round 2 for each option (grouped bars): how the class's answers moved after discussing."""
    names, rounds = list(labels), list(round_titles)
    rows = [{"option": n, "round": r, "count": int(c)}
            for r, counts in zip(rounds, (before, after), strict=True)
            for n, c in zip(names, counts, strict=True)]
    return _bars(rows, names, {
        "yOffset": {"field": "round", "type": "nominal", "sort": rounds},
        "color": {"field": "round", "type": "nominal", "sort": rounds,
                  "scale": {"domain": rounds, "range": list(ROUND_COLOURS)},
                  "legend": {"title": None, "orient": "top", "labelFontSize": FONT - 2}},
        "tooltip": [{"field": "option", "type": "nominal"}, {"field": "round", "type": "nominal"},
                    {"field": "count", "type": "quantitative"}],
    }, title=title, count_title=count_title, height=height or 72 * len(names))
