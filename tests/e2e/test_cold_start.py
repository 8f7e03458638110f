"""The cold path, as a user meets it: a fresh server whose very first request is a deep link to a page.

Streamlit 1.67 runs ``pages/<key>.py`` alone on a fresh process's first run (the legacy ``pages/`` folder mode);
mha_core/ui/frame.py runs app.py in place. Here every page is a first request of one fresh server (the languages
alternate, so both are met): the page must be drawn once, inside the frame (sidebar language switch), with no
exception and no "page not found".
"""

from __future__ import annotations

import pytest
from servers import start_server, stop_server, wait_ready

from mha_core.i18n import LANGS, translate
from mha_core.ui.nav import available_pages

pytestmark = pytest.mark.e2e
PAGES = [p.key for p in available_pages()]
DEFAULT = "overview"  # app.py's default page lives at "/"


def test_every_deep_link_as_a_fresh_servers_first_request_runs_inside_the_frame(browser):
    """One fresh server; a tab per page opens its deep link at once, so every page is a first request (all
    connect within a second, long before the first run has imported the lab and reached st.navigation). The
    language alternates from page to page (one server per language cost 3 minutes of CI for the same path)."""
    langs = {key: LANGS[i % len(LANGS)] for i, key in enumerate(PAGES)}
    proc, base = start_server()
    try:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
        tabs = {}
        for key in PAGES:
            tabs[key] = context.new_page()
            tabs[key].goto(f"{base}/{'' if key == DEFAULT else key}?lang={langs[key]}", wait_until="commit")
        for key, page in tabs.items():
            path, lang = ("" if key == DEFAULT else key), langs[key]
            wait_ready(page, timeout_ms=120_000)
            titles = page.locator('[data-testid="stMain"] h1')
            assert titles.count() == 1, key
            assert titles.first.inner_text().strip() == translate(lang, f"{key}.title").replace("**", "").strip()
            # the frame's language switch (a widget's code may load a moment after the run has finished)
            page.locator('[data-testid="stSidebar"] [role="radiogroup"]').first.wait_for(timeout=60_000)
            assert page.locator('[data-testid="stException"]').count() == 0, key
            assert "not found" not in page.locator("body").inner_text().lower(), key
            assert page.url.split("?")[0] == f"{base}/{path}", key
        context.close()
    finally:
        stop_server(proc)
