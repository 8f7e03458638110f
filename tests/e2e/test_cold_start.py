"""The cold path, as a user meets it: a fresh server whose very first requests are deep links to a page.

Streamlit 1.67 runs ``pages/<key>.py`` alone on a fresh process's first run (the legacy ``pages/`` folder mode);
mha_core/ui/frame.py runs app.py in place. That every page takes this path is checked without a browser
(tests/test_pages.py::test_a_cold_server_still_runs_each_page_inside_the_frame: AppTest starts every run like a
fresh server); here the real runtime does it once: two tabs (one per language) open two pages' deep links at once
as the fresh server's first requests, so one lone run may find the process-wide flag already cleared by the other.
Each page must be drawn once, inside the frame (sidebar language switch), with no exception and no "page not found".
"""

from __future__ import annotations

import pytest

from harness.server import start_server, stop_server, wait_ready
from mha_core.i18n import LANGS, translate

pytestmark = pytest.mark.e2e
FIRST = {"attend": LANGS[0], "cost": LANGS[1]}  # two pages of the pages/ folder (not app.py's default at "/")


def test_deep_links_as_a_fresh_servers_first_requests_run_inside_the_frame(browser):
    proc, base = start_server()
    try:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
        tabs = {}
        for key, lang in FIRST.items():
            tabs[key] = context.new_page()
            tabs[key].goto(f"{base}/{key}?lang={lang}", wait_until="commit")
        for key, page in tabs.items():
            wait_ready(page, timeout_ms=120_000)
            titles = page.locator('[data-testid="stMain"] h1')
            assert titles.count() == 1, key
            assert titles.first.inner_text().strip() == translate(FIRST[key], f"{key}.title").replace("**", "").strip()
            # the frame's language switch (a widget's code may load a moment after the run has finished)
            page.locator('[data-testid="stSidebar"] [role="radiogroup"]').first.wait_for(timeout=60_000)
            assert page.locator('[data-testid="stException"]').count() == 0, key
            assert "not found" not in page.locator("body").inner_text().lower(), key
            assert page.url.split("?")[0] == f"{base}/{key}", key
        context.close()
    finally:
        stop_server(proc)
