"""A config option read without Streamlit's lock (mha_core.ui.config_reads): the value Streamlit's own read gives,
for every option, after a write and after a parse; Streamlit's own read while a parse is not finished."""

from __future__ import annotations

import importlib

import pytest
from streamlit import config

import mha_core.ui  # noqa: F401 - installs it, as every page's import does
from mha_core.ui import config_reads


def test_installed_when_the_ui_is_imported() -> None:
    assert config.get_option is config_reads.get_option


def test_every_option_reads_as_streamlit_reads_it(app_config: None) -> None:
    keys = list(config.get_config_options())
    assert len(keys) > 100 and config_reads.PARSED.options is config._config_options  # noqa: SLF001
    assert [config.get_option(k) for k in keys] == [config_reads.get_option.__wrapped__(k) for k in keys]
    assert config.get_option("runner.postScriptGC") is False  # the app's config.toml, not Streamlit's default
    with pytest.raises(RuntimeError, match="not defined"):
        config.get_option("no.suchOption")


def test_a_write_and_a_new_parse_are_read(app_config: None) -> None:
    config.set_option("theme.light.primaryColor", "#123456")
    assert config.get_option("theme.light.primaryColor") == "#123456"
    before = config._config_options  # noqa: SLF001
    config.get_config_options(force_reparse=True)   # a new dict of new options
    assert config._config_options is not before and config_reads.PARSED.options is config._config_options  # noqa: SLF001
    assert config.get_option("theme.light.primaryColor") == "#0072B2"


def test_a_parse_not_finished_is_read_under_streamlits_lock(app_config: None, monkeypatch) -> None:
    """A parse fills a new dict under the lock and signals at its end: until then the lock-free read is not used."""
    calls = []
    own = config_reads.get_option.__wrapped__
    monkeypatch.setattr(config_reads, "_streamlit_get_option", lambda key: calls.append(key) or own(key))
    monkeypatch.setattr(config_reads.PARSED, "options", {})   # a dict other than the one Streamlit holds now
    config.get_option("server.port")
    assert calls == ["server.port"]


def test_a_reload_wraps_streamlits_function_not_ours() -> None:
    reloaded = importlib.reload(config_reads)
    reloaded.install()
    assert config.get_option.__wrapped__.__module__ == "streamlit.config"
