"""A real server and a real browser: `streamlit run app.py` on a free port, driven by Playwright
with Debian's Chromium (no browser download). Skips with a reason where Chromium is missing,
except in CI, where it must run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.server import CHROMIUM, CHROMIUM_FLAGS, start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"


def _need_browser() -> None:
    missing = not Path(CHROMIUM).exists()
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing = True
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the browser tests, but {CHROMIUM} or playwright is missing")
        pytest.skip(f"browser tests need {CHROMIUM} (apt-get install chromium) and playwright (pip)")


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    """The app, started as a user would start it, on a free local port."""
    _need_browser()
    try:
        proc, base = start_server()
    except RuntimeError as err:
        pytest.fail(str(err))
    yield base
    stop_server(proc)


@pytest.fixture(scope="module")
def browser(server):  # noqa: ARG001 - the server fixture checks for the browser first
    """Chromium through Playwright's sync API, whose event loop runs in this thread while it is open: one per test
    module, closed after it, so that a test of another folder run after the browser tests on the same xdist worker
    can run an event loop of its own (43 did not, in one run, with "another loop is running"; pytest's package scope
    needs an __init__.py, which would change how these modules import their helpers)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def shots() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS
