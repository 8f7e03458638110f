"""Accessibility in a real browser. axe-core (the npm package, pinned in .ci/node/package.json and installed by
.ci/run) is injected into every page in both languages: no WCAG 2.0/2.1 A or AA violation may come from the app's
own content; what Streamlit's own navigation list gets wrong is recorded, rule by rule and element by element, in
tests/e2e/axe_allow.toml. And the keyboard alone: Tab reaches every control of every page, and the whole quiz is
completed without a mouse (Tab / Shift+Tab to move, arrows, Space, Enter and typing to act)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from mha_core.i18n import LANGS, translate
from mha_core.ui.nav import available_pages

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / ".ci" / "node" / "node_modules" / "axe-core" / "axe.min.js"
ALLOW = Path(__file__).with_name("axe_allow.toml")
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
LOCALES = {"zh": "zh-CN", "en": "en-US"}
PAGES = list(available_pages())

# Every violation node, with the allow-list entry (its selector) that covers it, if any.
AXE_RUN = """async ([tags, allow]) => {
  const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  const out = [];
  for (const v of r.violations) for (const n of v.nodes) {
    const el = n.target.length === 1 ? document.querySelector(n.target[0]) : null;
    const hit = allow.find(a => a.rule === v.id && el !== null && el.matches(a.selector));
    out.push({rule: v.id, target: n.target.join(' >>> '), html: n.html.slice(0, 160),
              why: (n.failureSummary || '').split('\\n').slice(0, 2).join(' '), allowed: hit ? hit.selector : null});
  }
  return out;
}"""

# The page's keyboard-reachable controls (visible, enabled, tabIndex >= 0); radios count once per group.
CONTROLS = """() => {
  const sel = 'a[href], button, input, select, textarea, summary, [tabindex], [contenteditable="true"]';
  const visible = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden'
                       && !e.closest('[aria-hidden="true"], [inert]');
  return [...document.querySelectorAll(sel)].filter(e => e.tabIndex >= 0 && !e.disabled && visible(e));
}"""
MARK_FOCUS = """() => { if (!window.__kb) { window.__kb = true;
  document.addEventListener('focusin', e => e.target.setAttribute('data-kb-seen', '1'), true); } }"""
# A composite widget is one Tab stop, its items reached with the arrow keys (WAI-ARIA radio group and toolbar
# patterns): a radio group (same name) and Streamlit's segmented control and pills (react-aria button groups).
UNREACHED = "() => { const all = (" + CONTROLS + """)();
  const group = e => e.type === 'radio' ? 'radio:' + e.name : e.closest('[data-testid="stButtonGroup"]');
  const seen = new Set(all.filter(e => e.hasAttribute('data-kb-seen')).map(group).filter(g => g));
  return all.filter(e => !e.hasAttribute('data-kb-seen') && !seen.has(group(e)))
            .map(e => e.outerHTML.slice(0, 140)); }"""


def _need_axe() -> None:
    if not AXE.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run axe-core, but {AXE} is missing (.ci/run: npm ci --prefix .ci/node)")
        pytest.skip(f"axe-core: npm ci --prefix .ci/node (installs {AXE.relative_to(ROOT)})")


def allow_list() -> list[dict[str, str]]:
    """The allow-list entries: rule, selector, why (each with a sentence)."""
    entries = tomllib.loads(ALLOW.read_text(encoding="utf-8"))["allow"]
    for e in entries:
        assert set(e) == {"rule", "selector", "why"} and e["why"].strip().endswith("."), e
    return entries


def axe_violations(page) -> list[dict]:
    """Run axe-core in ``page`` (injected from the repo's own copy); every violation node with its allow entry."""
    _need_axe()
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(AXE_RUN, [TAGS, [{"rule": e["rule"], "selector": e["selector"]} for e in allow_list()]])


def _goto(page, server: str, key: str, query: str = "") -> None:
    from servers import wait_ready

    page.goto(f"{server}/{'' if key == 'overview' else key}{query}")
    wait_ready(page)


def test_allow_list_entries_say_why():
    assert len(allow_list()) >= 1
    assert all(e["selector"].strip() and "stSidebarNav" in e["selector"] for e in allow_list())


def _visit_all(page, server: str, lang: str):  # noqa: ANN202 - yields each PageSpec once its page is ready
    """Every page in navigation order in one browser tab: the first by URL, the rest by the sidebar's own links
    (no reload per page: a class moves through the pages this way, and it keeps the e2e suite short)."""
    from servers import wait_ready

    for i, spec in enumerate(PAGES):
        if i == 0:
            _goto(page, server, spec.key, f"?lang={lang}")
        else:
            page.locator(f'[data-testid="stSidebarNav"] a[href$="/{spec.key}"]').first.focus()
            page.keyboard.press("Enter")  # following a link by keyboard
            page.wait_for_url(f"**/{spec.key}*")
            wait_ready(page)
        assert translate(lang, f"nav.{spec.key}") in page.locator("body").inner_text()
        yield spec


def _tab_walk(page) -> tuple[int, list[str]]:
    """From the top of the page, Tab alone: (controls on the page, the ones Tab never reached)."""
    page.evaluate(MARK_FOCUS)
    n = page.evaluate("() => (" + CONTROLS + ")().length")
    page.evaluate("() => document.querySelectorAll('[data-kb-seen]').forEach(e => e.removeAttribute('data-kb-seen'))")
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    unreached: list[str] = []
    for _ in range(3):  # a generous number of presses; Tab wraps round at the end of the page
        for _ in range(n + 10):
            page.keyboard.press("Tab")
        unreached = page.evaluate(UNREACHED)
        if not unreached:
            break
    return n, unreached


@pytest.mark.parametrize("lang", LANGS)
def test_every_page_passes_axe_and_tab_reaches_every_control(browser, server, lang):
    """Every page, default view: zero WCAG 2.1 A/AA violations outside the allow-list, and every allow-list entry
    still needed. In English (the controls are the same in both languages) Tab from the top of each page visits
    every visible, enabled control (a composite widget once: its items are reached with the arrow keys)."""
    _need_axe()
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale=LOCALES[lang])
    page = ctx.new_page()
    found, used, untabbable = [], set(), []
    try:
        for spec in _visit_all(page, server, lang):
            for v in axe_violations(page):
                if v["allowed"]:
                    used.add((v["rule"], v["allowed"]))
                else:
                    found.append(f"{spec.key} [{lang}] {v['rule']}: {v['target']} {v['html']} — {v['why']}")
            if lang == "en":
                n, unreached = _tab_walk(page)
                assert n > 3, f"{spec.key}: only {n} controls found"
                if unreached:
                    untabbable.append(f"{spec.key}: {len(unreached)} of {n}: {unreached[:6]}")
    finally:
        ctx.close()
    assert not found, "axe-core violations:\n" + "\n".join(found)
    stale = [e for e in allow_list() if (e["rule"], e["selector"]) not in used]
    assert not stale, f"allow-list entries no page needs any more (remove them): {stale}"
    assert not untabbable, "Tab never reaches:\n" + "\n".join(untabbable)


FOCUSED_IN = "sel => { const e = document.activeElement; return !!e && e !== document.body && !!e.closest(sel); }"


# As a keyboard user moves: Shift+Tab when the control is above the focus, Tab when it is below (or nothing has focus).
DIRECTION = """sel => { const a = document.activeElement, t = document.querySelector(sel);
  if (!a || a === document.body || !t) return 'Tab';
  return a.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_PRECEDING ? 'Shift+Tab' : 'Tab'; }"""


def _tab_to(page, selector: str, limit: int = 80) -> None:
    """Press Tab (or Shift+Tab) until the focused element is (inside) ``selector``; fails if it never gets there."""
    key = page.evaluate(DIRECTION, selector)
    for _ in range(limit):
        if page.evaluate(FOCUSED_IN, selector):
            return
        page.keyboard.press(key)
    raise AssertionError(f"{key} did not reach {selector} in {limit} presses")


def _press(page, key: str) -> None:
    """Press a key and wait until the rerun it caused has finished (and stayed finished for 100 ms)."""
    from servers import wait_ready

    page.keyboard.press(key)
    wait_ready(page, settle_ms=100)


def test_the_whole_quiz_by_keyboard_alone(browser, server):
    """One question at a time, as a student without a mouse: Tab / Shift+Tab to each control, arrows / Space /
    typing / Enter to answer, Enter on Check and Next; every answer right at the end, axe-core clean on the result."""
    from servers import wait_ready

    from mha_core.quiz import load_questions
    from mha_core.quiz.model import Kind
    from mha_core.quiz.store import new_student_id, student_seed
    from mha_core.ui.quiz import answer_key, button_key
    from quizhelpers import STATED, short_text, torch_expected

    student = new_student_id()
    questions = load_questions("en", student_seed(student))
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
    page = ctx.new_page()
    try:
        _goto(page, server, "quiz", f"?student={student}&mode=one&lang=en")
        page.locator("body").focus()
        for i, q in enumerate(questions):
            box = f".st-key-{answer_key(q.id)}"
            texts = {o.id: o.text for o in q.options}
            if q.kind is Kind.SINGLE:
                _tab_to(page, f"{box} input[type=radio]")  # the group's first (Tab) or last (Shift+Tab) radio
                page.keyboard.press("Space")  # choose it; then the arrows move the choice round the group
                checked = f"{box} label:has(input:checked)"
                page.locator(checked).wait_for(timeout=10_000)
                for _ in q.options:
                    now = page.locator(checked).inner_text().strip()
                    if now == texts[q.correct[0]]:
                        break
                    page.keyboard.press("ArrowDown")  # the browser moves the choice at once; the reruns queue
                    page.wait_for_function("([sel, was]) => { const l = document.querySelector(sel); "
                                           "return l && l.innerText.trim() !== was; }", arg=[checked, now])
                wait_ready(page, settle_ms=100)
                assert page.locator(f"{box} label:has(input:checked)").inner_text().strip() == texts[q.correct[0]]
            elif q.kind is Kind.MULTIPLE:
                for o in q.correct:
                    _tab_to(page, f".st-key-{answer_key(q.id, o)} input[type=checkbox]")
                    _press(page, "Space")
            elif q.kind is Kind.NUMERIC:
                _tab_to(page, f"{box} input")
                page.keyboard.type(f"{(torch_expected(q) / STATED[q.unit]).numerator:,}")
                _press(page, "Enter")
            elif q.kind is Kind.SHORT:
                _tab_to(page, f"{box} input")
                page.keyboard.type(short_text(q, True))
                _press(page, "Enter")
            elif q.kind is Kind.ORDERING:
                for o in q.correct:  # type to filter, Enter to pick: the order picked is the answer
                    _tab_to(page, f"{box} input")
                    page.keyboard.type(texts[o])
                    page.get_by_role("option", name=texts[o], exact=True).wait_for(timeout=10_000)
                    _press(page, "Enter")
                page.keyboard.press("Escape")
            if q.kind is Kind.TEXT:
                _tab_to(page, f"{box} textarea")
                page.keyboard.type("W^O learns how to fuse the heads.")
                _tab_to(page, f".st-key-{button_key('reveal', q.id)} button")  # leaving the box keeps the text
                _press(page, "Enter")
                _tab_to(page, f".st-key-{button_key('self_right', q.id)} button")
                _press(page, "Enter")
            else:
                _tab_to(page, f".st-key-{button_key('check', q.id)} button")
                _press(page, "Enter")
            shown = translate("en", "quiz.progress", answered=i + 1, total=len(questions))
            assert page.get_by_text(shown, exact=True).count() == 1, f"{q.id} ({q.kind.value}) was not graded"
            if i < len(questions) - 1:
                _tab_to(page, ".st-key-quiz_next button")
                _press(page, "Enter")
        text = page.locator('[data-testid="stMain"]').inner_text()
        total = len(questions)
        assert translate("en", "quiz.score", right=total, total=total).replace("**", "") in text
        assert page.locator('[data-testid="stException"]').count() == 0
        own = [v for v in axe_violations(page) if not v["allowed"]]  # the feedback and summary views too
        assert not own, own
    finally:
        ctx.close()
