"""The app's colours: colour-blind safe, and in an order that stays readable in greyscale (no Altair here: the
projector's vote charts are plain Vega-Lite specs and a first page must not pay for importing Altair)."""

from __future__ import annotations

# Okabe & Ito (2008), the usual colour-blind-safe qualitative palette (black moved last).
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
WEIGHT_SCHEME = "viridis"       # weights in 0..1
SIGNED_SCHEME = "blueorange"    # signed values


def head_colour(i: int) -> str:
    """The colour of head i everywhere in the app."""
    return OKABE_ITO[i % len(OKABE_ITO)]
