"""The app's colours: colour-blind safe, and in an order that stays readable in greyscale (no Altair here: the
projector's vote charts are plain Vega-Lite specs and a first page must not pay for importing Altair)."""

from __future__ import annotations

import math

# Okabe & Ito (2008), the usual colour-blind-safe qualitative palette (black moved last).
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
WEIGHT_SCHEME = "viridis"       # weights in 0..1
MASKED_FILL = "#d9d9d9"         # a masked cell: weight exactly 0 by construction, not by chance
SIGNED_SCHEME = "blueorange"    # signed values
NEUTRAL = "#6B7280"             # grey: bars that are tokens, not heads (about 4.6:1 on white, 3.9:1 on the dark theme)
NOUN_COLOURS = (OKABE_ITO[0], OKABE_ITO[5])  # the minimal pair: blue for the subject noun, vermillion for the other
OTHER_COLOUR = "#8C8C8C"        # ... every other token (3.3 : 1 on white)
BASE_COLOUR, PICKED_COLOUR = OKABE_ITO[0], OKABE_ITO[1]  # the cost lab: every h, and the h picked
COST_DASHES = ((1, 0), (6, 3), (2, 2), (8, 3, 2, 3))      # ... its lines' dashes (px), apart in greyscale too


def head_colour(i: int) -> str:
    """The colour of head i everywhere in the app."""
    return OKABE_ITO[i % len(OKABE_ITO)]


def head_scale() -> dict:
    """A Vega-Lite colour scale giving the k-th head (in the data's order) ``head_colour(k)``, for any number of heads.

    Pair it with ``sort: null`` on the channel: the domain is then the heads in order of first appearance, and an
    ordinal scale cycles its range as ``head_colour`` does. No head names in the spec: the spec stays the same
    when h changes, and the browser updates the chart's data instead of rebuilding the chart.
    """
    return {"range": list(OKABE_ITO)}


# A signed colour scale's end, rounded up to one of these × 10^k: a small change of the data keeps the same scale,
# so the browser's chart only takes new data instead of being rebuilt (Streamlit rebuilds a Vega view whenever its
# spec changes), and the legend reads round numbers. The largest value still gets at least 75% of the colour.
NICE_STEPS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def nice_limit(lim: float) -> float:
    """The smallest ``step × 10^k`` (``NICE_STEPS``) at or above ``lim``; 1 for nothing to show."""
    if not math.isfinite(lim) or lim <= 0:
        return 1.0
    scale = 10.0 ** math.floor(math.log10(lim))
    for step in NICE_STEPS:
        if step * scale >= lim * (1 - 1e-12):
            return float(f"{step * scale:.12g}")
    return 10.0 * scale
