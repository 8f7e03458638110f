"""The dashboard's chart: share of right answers per question (Altair, no Streamlit)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import pandas as pd

from mha_core.classroom.aggregates import QuestionStat


def share_chart(stats: Sequence[QuestionStat], titles: Mapping[str, str], *, x_title: str, y_title: str,
                n_title: str) -> alt.Chart:
    """Horizontal bars, one per question in bank order, 0–100 % right; the tooltip tells answered / right."""
    data = pd.DataFrame({
        "question": [titles.get(s.question_id, s.question_id) for s in stats],
        "share": [s.share for s in stats],
        "answered": [s.answered for s in stats],
        "right": [s.right for s in stats],
    })
    order = list(dict.fromkeys(data["question"]))
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("share:Q", title=x_title, scale=alt.Scale(domain=(0, 1)), axis=alt.Axis(format="%")),
        y=alt.Y("question:N", title=y_title, sort=order, axis=alt.Axis(labelLimit=260)),
        color=alt.Color("share:Q", scale=alt.Scale(domain=(0, 1), scheme="redyellowgreen"), legend=None),
        tooltip=[alt.Tooltip("question:N", title=y_title), alt.Tooltip("share:Q", format=".0%", title=x_title),
                 alt.Tooltip("answered:Q", title=n_title)],
    ).properties(height=alt.Step(26))
