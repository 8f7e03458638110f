"""Accessibility checks shared by the browser tests: axe-core (the npm package, pinned in .ci/node/package.json and
installed by .ci/run) injected into a page, with tests/e2e/axe_allow.toml's allow-list of what Streamlit's own
navigation gets wrong; and a Tab walk that finds the controls the keyboard alone never reaches."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / ".ci" / "node" / "node_modules" / "axe-core" / "axe.min.js"
ALLOW = Path(__file__).with_name("axe_allow.toml")
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

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


def need_axe() -> None:
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
    need_axe()
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(AXE_RUN, [TAGS, [{"rule": e["rule"], "selector": e["selector"]} for e in allow_list()]])


def tab_walk(page) -> tuple[int, list[str]]:
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
