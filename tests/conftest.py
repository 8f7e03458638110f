"""Test-wide setup: every test run has its own class database."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbhelpers import BACKENDS, empty_database

from mha_core.classroom import Storage


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


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Every browser test on one xdist worker (one server and one Chromium at a time, as without workers), the rest
    spread over both. (xdist's own --dist loadgroup cannot group under pytest 9: it renames items through
    ``item._nodeid``, which pytest 9 no longer reads.)"""
    from xdist.scheduler import LoadScopeScheduling  # lazy: only an xdist run has a scheduler to make

    class BrowserTestsTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return BROWSER_SCOPE if nodeid.startswith(f"{BROWSER_SCOPE}/") else nodeid

    return BrowserTestsTogether(config, log)


BROWSER_SCOPE = "tests/e2e"


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path) -> Iterator[Storage]:
    """A fresh, empty class store on each backend (PostgreSQL's tables dropped before and after); a test file that
    needs another store defines its own ``store``."""
    with empty_database(request.param, tmp_path) as url:
        s = Storage.open(url)
        yield s
        s.dispose()


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """A new event loop, not running, closed after the test: for tests that drive the server's loop by hand."""
    new = asyncio.new_event_loop()
    yield new
    new.close()


SHORT_BUSY_MS = 200  # a test that holds the database's lock waits this long, not production's 5 s


@pytest.fixture
def short_busy_timeout(monkeypatch):
    """The app's class database gives up on a held lock after SHORT_BUSY_MS: a test that locks the file on purpose
    checks what the page says then, and need not wait production's BUSY_TIMEOUT_MS (5 s, twice per click)."""
    from mha_core.classroom import Storage
    from mha_core.ui import class_services

    class ShortBusy(Storage):
        @classmethod
        def open(cls, url: str, busy_timeout_ms: int = SHORT_BUSY_MS) -> Storage:
            return Storage.open(url, busy_timeout_ms)

    monkeypatch.setattr(class_services.classroom, "Storage", ShortBusy)  # the name class_services opens
    class_services._storage.clear()
    yield
    class_services._storage.clear()


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A folder holding a small BERT (2 layers × 2 heads, d_model 32, random weights, the packaged tokenizer): a model
    the server's administrator could offer beside the packaged one (MHA_REAL_MODELS)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from mha_core import pretrained

    folder = tmp_path_factory.mktemp("tiny_model")
    tokenizer = AutoTokenizer.from_pretrained(pretrained.packaged_dir(), local_files_only=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture
def app_config(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The app's own .streamlit/config.toml, parsed afresh; the config as it was afterwards."""
    from streamlit import config

    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    config.get_config_options(force_reparse=True)
    yield
    config.get_config_options(force_reparse=True)
