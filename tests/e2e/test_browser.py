"""Every page, both languages, in headless Chromium: it loads without an exception, its main
slider changes what the page shows, and screenshots at 1280 px and 390 px are saved."""

from __future__ import annotations

import time

import pytest
from servers import PAGE_TEXT, settled_ms

from mha_core.i18n import LANGS, translate
from mha_core.ui.nav import available_pages

pytestmark = pytest.mark.e2e

PAGES = list(available_pages())
# The slider that drives each page (its widget key); pages without one are driven otherwise.
# d_model is kept fixed by default: the walkthrough's h is the divisor slider h_div
MAIN_SLIDER = {"overview": "h_div", "prereq": "prereq_sharp", "split": "h_div", "attend": "h_div", "concat": "h_div",
               "why": "h_div", "myths": "h_div", "cost": "cost_h_div"}
LOCALES = {"zh": "zh-CN", "en": "en-US"}


def _open(browser, server, key: str, lang: str, width: int):
    from servers import wait_ready

    ctx = browser.new_context(viewport={"width": width, "height": 900}, locale=LOCALES[lang])
    page = ctx.new_page()
    page.goto(server if key == "overview" else f"{server}/{key}")
    wait_ready(page)
    return ctx, page


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text() + page.locator('[data-testid="stSidebar"]').inner_text()


def _figures(page) -> str:
    """The page's text without the sliders' own value labels (those change in the browser at once)."""
    return page.evaluate(PAGE_TEXT)


def _full_screenshot(page, path) -> None:
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": page.viewport_size["width"], "height": min(max(900, height), 12000)})
    page.wait_for_timeout(400)
    page.screenshot(path=str(path))


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("spec", PAGES, ids=[p.key for p in PAGES])
def test_page_loads_answers_its_slider_and_is_screenshotted(browser, server, shots, spec, lang, width):
    from servers import wait_ready

    ctx, page = _open(browser, server, spec.key, lang, width)
    try:
        assert page.locator('[data-testid="stException"]').count() == 0
        text = _main_text(page)
        assert translate(lang, f"nav.{spec.key}") in text            # the browser locale picked the language
        assert "⟦" not in text
        key = MAIN_SLIDER.get(spec.key)
        if key:
            slider = page.locator(f".st-key-{key} input[type=range]")
            slider.first.wait_for(state="attached", timeout=15_000)  # drawn just after the run ends
            assert slider.count() == 1, f"{spec.key}: no slider with key {key}"
            in_sidebar = page.locator(f'[data-testid="stSidebar"] .st-key-{key}').count() == 1
            if width < 600 and in_sidebar:  # the sidebar is collapsed on a phone
                page.locator('[data-testid="stExpandSidebarButton"]').click()
            before = _figures(page)
            slider.focus()
            page.keyboard.press("ArrowRight")
            settled_ms(page, before, time.time(), timeout_ms=30_000)  # the figures changed (not just the label)
            wait_ready(page)                                          # and the page has settled
            assert _figures(page) != before
            assert page.locator('[data-testid="stException"]').count() == 0
            if width < 600 and in_sidebar:  # close it again, so the screenshot shows the page
                page.locator('[data-testid="stSidebarCollapseButton"] button').first.click()
                page.locator('[data-testid="stExpandSidebarButton"]').wait_for(state="visible", timeout=10_000)
        _full_screenshot(page, shots / f"{spec.key}-{lang}-{width}.png")
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", LANGS)
def test_language_switch_changes_the_text(browser, server, lang):
    from servers import wait_ready

    ctx, page = _open(browser, server, "split", lang, 1280)
    try:
        other = "en" if lang == "zh" else "zh"
        assert translate(lang, "split.title") in _main_text(page)
        page.get_by_text(translate(other, "common.lang_name"), exact=True).click()
        page.wait_for_function(
            "([t]) => document.querySelector('[data-testid=\"stMain\"]').innerText.includes(t)",
            arg=[translate(other, "split.title")], timeout=30_000,
        )
        wait_ready(page)
        assert translate(lang, "split.title") not in _main_text(page)
    finally:
        ctx.close()
