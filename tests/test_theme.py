"""The themes' colours in .streamlit/config.toml meet WCAG AA contrast, computed from the file itself."""

from __future__ import annotations

import tomllib

import pytest

from mha_core.ui.nav import ROOT

THEME = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["theme"]
WHITE = "#FFFFFF"  # Streamlit 1.67 draws a primary button's label in colors.white on colors.primary (BaseButton)


def luminance(hex_colour: str) -> float:
    """WCAG 2 relative luminance of an sRGB colour written #RRGGBB."""
    channels = [int(hex_colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio, 1 to 21."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_the_contrast_formula():
    assert contrast("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert contrast("#56B4E9", WHITE) == pytest.approx(2.3, abs=0.05)  # the old dark primary the review measured


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_primary_buttons_text_and_the_page_text_reach_aa(mode):
    """Failed before for dark: white on #56B4E9 is 2.3:1."""
    colours = THEME[mode]
    assert contrast(WHITE, colours["primaryColor"]) >= 4.5               # a primary button's label
    assert contrast(colours["primaryColor"], colours["backgroundColor"]) >= 3.0  # a control against the page
    for surface in ("backgroundColor", "secondaryBackgroundColor"):
        assert contrast(colours["textColor"], colours[surface]) >= 4.5
        if "linkColor" in colours:
            assert contrast(colours["linkColor"], colours[surface]) >= 4.5
