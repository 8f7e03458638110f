"""Test-wide setup: every test run has its own class database."""

from __future__ import annotations

import pytest


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
