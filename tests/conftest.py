"""Test-wide setup: make AppTest behave like a running server after its first run.

AppTest re-detects the ``pages/`` folder on every run (a real server does it once per process), so
each page run would go through frame.ensure()'s cold-start rerun, and a button's one-run return value
would be lost in it. ``cold_start`` (below) turns the real behaviour back on for the test of that path.
"""

from __future__ import annotations

import pytest
from streamlit.runtime.pages_manager import PagesManager

_original_init = PagesManager.__init__


def _warm_init(self, *args, **kwargs):
    _original_init(self, *args, **kwargs)
    PagesManager.uses_pages_directory = False  # what st.navigation sets on a server's first run


PagesManager.__init__ = _warm_init


@pytest.fixture
def cold_start(monkeypatch):
    """Every AppTest run is a server's very first run (the pages/ folder is seen the old way)."""
    monkeypatch.setattr(PagesManager, "__init__", _original_init)


@pytest.fixture(scope="session", autouse=True)
def _own_class_database(tmp_path_factory):
    """Every test run has its own class database: the quiz page opens one on every view, and a test must never
    read or write the developer's ``data/mha_lab.sqlite3``. A test that needs another URL sets it itself."""
    import os

    saved = os.environ.get("MHA_DATABASE_URL")
    if saved is None:
        os.environ["MHA_DATABASE_URL"] = f"sqlite:///{tmp_path_factory.mktemp('classdb') / 'mha_lab.sqlite3'}"
    yield
    if saved is None:
        os.environ.pop("MHA_DATABASE_URL", None)
