"""The class vote's charts on the projector: the histogram of one round, and how the answers moved between the
vote and the vote again (Peer Instruction). Pure builders from a tally (``mha_core.lesson.votes``) and the
options' (translated) labels; drawn with ``render.chart``."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from mha_core.charts.base import FIT_WIDTH, OKABE_ITO

RIGHT, OTHER = OKABE_ITO[2], OKABE_ITO[0]      # the right option (once revealed) and every other bar
ROUND_COLOURS = (OKABE_ITO[1], OKABE_ITO[0])   # round 1, round 2
FONT = 18  # read from the back of a lecture hall: these charts are drawn on the projector
COUNT_AXIS = alt.Axis(tickMinStep=1, format="d", labelFontSize=FONT - 2, titleFontSize=FONT - 2)


def histogram(counts: Sequence[int], labels: Sequence[str], *, answer: int | None = None, title: str = "",
              count_title: str = "", height: int = 0) -> alt.Chart:
    """One bar per option with how many students chose it; the right option coloured once ``answer`` is given
    (before the reveal every bar has the same colour: the chart must not give the answer away)."""
    names = list(labels)
    colours = [RIGHT if i == answer else OTHER for i in range(len(names))]
    df = pd.DataFrame({"option": names, "count": [int(c) for c in counts]})
    return (
        alt.Chart(df, title=title)
        .mark_bar()
        .encode(
            y=alt.Y("option:N", sort=names, title=None, axis=alt.Axis(labelLimit=420, labelFontSize=FONT)),
            x=alt.X("count:Q", title=count_title, axis=COUNT_AXIS),
            color=alt.Color("option:N", scale=alt.Scale(domain=names, range=colours), legend=None),
            tooltip=["option:N", "count:Q"],
        )
        .properties(width="container", height=height or 52 * len(names), autosize=FIT_WIDTH)
    )


def shift_bars(before: Sequence[int], after: Sequence[int], labels: Sequence[str], *,
               round_titles: tuple[str, str], title: str = "", count_title: str = "", height: int = 0) -> alt.Chart:
    """Round 1 beside round 2 for each option (grouped bars): how the class's answers moved after discussing."""
    names = list(labels)
    df = pd.DataFrame({
        "option": names * 2,
        "round": [round_titles[0]] * len(names) + [round_titles[1]] * len(names),
        "count": [int(c) for c in before] + [int(c) for c in after],
    })
    return (
        alt.Chart(df, title=title)
        .mark_bar()
        .encode(
            y=alt.Y("option:N", sort=names, title=None, axis=alt.Axis(labelLimit=420, labelFontSize=FONT)),
            yOffset=alt.YOffset("round:N", sort=list(round_titles)),
            x=alt.X("count:Q", title=count_title, axis=COUNT_AXIS),
            color=alt.Color("round:N", sort=list(round_titles),
                            scale=alt.Scale(domain=list(round_titles), range=list(ROUND_COLOURS)),
                            legend=alt.Legend(title=None, orient="top", labelFontSize=FONT - 2)),
            tooltip=["option:N", "round:N", "count:Q"],
        )
        .properties(width="container", height=height or 72 * len(names), autosize=FIT_WIDTH)
    )
