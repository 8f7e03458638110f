"""Every page, each language, opened ONCE in headless Chromium, checking there what only a browser can see: the
browser's locale picks the language, no exception, the main slider changes the figures, no WCAG 2.0/2.1 A/AA
violation of the app's own (axe-core, tests/e2e/axe_allow.toml), Tab alone reaches every control (in English: the
controls are the same in both languages); then, in the same visit, the window narrows to a 390 px phone: still no
exception, the slider still answers (the sidebar opened for it when it lives there), and screenshots at 1280 and
390 px are saved. The overview also follows a sidebar link by keyboard, the split page switches the language.
That a page renders, translated, from each default is AppTest's job (tests/test_pages.py)."""

from __future__ import annotations

import pytest
from a11y import allow_list, axe_violations, need_axe, tab_walk

from harness.server import PAGE_TEXT, wait_changed, wait_ready
from mha_core.i18n import LANGS, translate
from mha_core.ui.nav import PAGES as REGISTERED

pytestmark = pytest.mark.e2e

PAGES = list(REGISTERED)
# The slider that drives each page (its widget key); pages without one are driven otherwise.
# d_model is kept fixed by default: the walkthrough's h is the divisor slider h_div
MAIN_SLIDER = {"overview": "h_div", "prereq": "prereq_sharp", "split": "h_div", "attend": "h_div", "concat": "h_div",
               "why": "h_div", "myths": "h_div", "cost": "cost_h_div"}
LOCALES = {"zh": "zh-CN", "en": "en-US"}
WIDE, PHONE = 1280, 390
EXPAND = '[data-testid="stExpandSidebarButton"]'
SIDEBAR = '[data-testid="stSidebar"]'
# Streamlit collapses the sidebar itself when the window narrows to a phone; its data-collapsed says when it has
COLLAPSED = "() => document.querySelector('[data-testid=\"stSidebar\"]')?.dataset.collapsed === 'true'"


@pytest.fixture(scope="module")
def axe_used() -> dict[tuple[str, str], set[tuple[str, str]]]:
    """Per (page, language) visited: the allow-list entries (rule, selector) its axe run needed."""
    return {}


def _text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text() + page.locator('[data-testid="stSidebar"]').inner_text()


def _no_exception(page, where: str) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, where


def _sidebar_open(page) -> bool:
    """The sidebar's own state (not whether a button is drawn yet: a busy page draws its header late)."""
    return page.locator(SIDEBAR).first.get_attribute("data-collapsed") == "false"


def _move_slider(page, key: str, arrow: str) -> None:
    """Press an arrow on the page's main slider: the figures (not just the slider's label) change, no exception."""
    slider = page.locator(f".st-key-{key} input[type=range]")
    slider.first.wait_for(state="attached", timeout=15_000)  # drawn just after the run ends
    assert slider.count() == 1, f"no slider with key {key}"
    before = page.evaluate(PAGE_TEXT)
    slider.focus()
    page.keyboard.press(arrow)
    wait_changed(page, before, timeout_ms=30_000)
    wait_ready(page)
    assert page.evaluate(PAGE_TEXT) != before


def _screenshot(page, path) -> None:  # noqa: ANN001 - a Playwright page and a Path
    """The whole page: the window made as tall as the main area (at most 12000 px), then put back to 900 px."""
    width = page.viewport_size["width"]
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": min(max(900, height), 12000)})
    page.wait_for_timeout(400)
    page.screenshot(path=str(path))
    page.set_viewport_size({"width": width, "height": 900})


def _follow_a_sidebar_link_by_keyboard(page, lang: str) -> None:
    nxt = PAGES[1].key
    page.locator(f'[data-testid="stSidebarNav"] a[href$="/{nxt}"]').first.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/{nxt}*")
    wait_ready(page)
    assert translate(lang, f"{nxt}.title").replace("**", "").strip() in page.locator("h1").first.inner_text()
    _no_exception(page, nxt)


def _switch_language(page, lang: str) -> None:
    other = "en" if lang == "zh" else "zh"
    page.get_by_text(translate(other, "common.lang_name"), exact=True).click()
    page.wait_for_function(
        "([t]) => document.querySelector('[data-testid=\"stMain\"]').innerText.includes(t)",
        arg=[translate(other, "split.title")], timeout=30_000,
    )
    wait_ready(page)
    assert translate(lang, "split.title") not in page.locator('[data-testid="stMain"]').inner_text()


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("spec", PAGES, ids=[p.key for p in PAGES])
def test_one_visit_per_page_and_language(browser, server, shots, axe_used, spec, lang):
    need_axe()
    ctx = browser.new_context(viewport={"width": WIDE, "height": 900}, locale=LOCALES[lang])
    page = ctx.new_page()
    key = MAIN_SLIDER.get(spec.key)
    try:
        page.goto(server if spec.key == "overview" else f"{server}/{spec.key}")
        wait_ready(page)
        _no_exception(page, f"{spec.key} at {WIDE}")
        text = _text(page)
        assert translate(lang, f"nav.{spec.key}") in text          # the browser locale picked the language
        assert "⟦" not in text

        violations = axe_violations(page)
        axe_used[(spec.key, lang)] = {(v["rule"], v["allowed"]) for v in violations if v["allowed"]}
        own = [f"{v['rule']}: {v['target']} {v['html']} — {v['why']}" for v in violations if not v["allowed"]]
        assert not own, "axe-core violations:\n" + "\n".join(own)

        if lang == "en":
            n, unreached = tab_walk(page)
            assert n > 3, f"only {n} controls found"
            assert not unreached, f"Tab never reaches {len(unreached)} of {n}: {unreached[:6]}"

        if key:
            _move_slider(page, key, "ArrowRight")
        _no_exception(page, f"{spec.key} at {WIDE}, moved")
        _screenshot(page, shots / f"{spec.key}-{lang}-{WIDE}.png")

        # the same visit on a phone
        page.set_viewport_size({"width": PHONE, "height": 900})
        page.wait_for_function(COLLAPSED, timeout=10_000)
        in_sidebar = bool(key) and page.locator(f'[data-testid="stSidebar"] .st-key-{key}').count() == 1
        if in_sidebar and not _sidebar_open(page):
            page.locator(EXPAND).click()
        if key:
            _move_slider(page, key, "ArrowLeft")
        _no_exception(page, f"{spec.key} at {PHONE}")
        if _sidebar_open(page):  # closed, as a phone shows the page
            page.locator('[data-testid="stSidebarCollapseButton"] button').first.click()
            page.wait_for_function(COLLAPSED, timeout=10_000)
        _screenshot(page, shots / f"{spec.key}-{lang}-{PHONE}.png")

        page.set_viewport_size({"width": WIDE, "height": 900})
        if spec.key == PAGES[0].key:
            if not _sidebar_open(page):
                page.locator(EXPAND).click()
            _follow_a_sidebar_link_by_keyboard(page, lang)
        if spec.key == "split":
            if not _sidebar_open(page):
                page.locator(EXPAND).click()
            _switch_language(page, lang)
    finally:
        ctx.close()


def test_every_allow_list_entry_is_still_needed(axe_used):
    """An allow-list entry that no page needs any more must go (runs after every visit above, in file order)."""
    if len(axe_used) < len(PAGES) * len(LANGS):
        pytest.skip("needs every page visit above in the same run")
    used = set().union(*axe_used.values())
    stale = [e for e in allow_list() if (e["rule"], e["selector"]) not in used]
    assert not stale, f"allow-list entries no page needs any more (remove them): {stale}"
