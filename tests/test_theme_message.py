"""Every run's new-session message (mha_core.ui.theme_message): its six [theme] sections, built once per state of
their options, are what Streamlit's own function builds, for the app's config and after an option changes."""

from __future__ import annotations

import importlib

from streamlit import config
from streamlit.config_option import ConfigOption
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime import app_session

import mha_core.ui  # noqa: F401 - installs it, as every page's import does
from mha_core.ui import theme_message

SECTIONS = ("theme", *(f"theme.{c.value}" for c in config.CustomThemeCategories))


def _new_session_themes(populate) -> bytes:
    """The theme part of a new-session message, filled as AppSession fills it (one call per section)."""
    msg = ForwardMsg()
    theme = msg.new_session.custom_theme
    targets = {"theme": theme, "theme.light": theme.light, "theme.dark": theme.dark, "theme.sidebar": theme.sidebar,
               "theme.light.sidebar": theme.light.sidebar, "theme.dark.sidebar": theme.dark.sidebar}
    for section in SECTIONS:
        populate(targets[section], section)
    return msg.SerializeToString(deterministic=True)


def test_installed_when_the_ui_is_imported() -> None:
    assert app_session._populate_theme_msg is theme_message.populate_theme_msg  # noqa: SLF001


def test_the_apps_themes_as_streamlit_builds_them(app_config: None) -> None:
    ours, streamlits = (_new_session_themes(theme_message.populate_theme_msg),
                        _new_session_themes(theme_message.populate_theme_msg.__wrapped__))
    assert ours == streamlits
    msg = ForwardMsg.FromString(ours).new_session.custom_theme
    assert msg.light.primary_color == config.get_option("theme.light.primaryColor") == "#0072B2"
    assert not msg.HasField("sidebar")  # a section the app leaves empty stays unset, as Streamlit leaves it


def test_a_changed_option_is_built_again(app_config: None) -> None:
    _new_session_themes(theme_message.populate_theme_msg)  # the app's themes, kept
    config.set_option("theme.light.primaryColor", "#123456")
    config.set_option("theme.sidebar.textColor", "#654321")
    ours = _new_session_themes(theme_message.populate_theme_msg)
    assert ours == _new_session_themes(theme_message.populate_theme_msg.__wrapped__)
    msg = ForwardMsg.FromString(ours).new_session.custom_theme
    assert (msg.light.primary_color, msg.sidebar.text_color) == ("#123456", "#654321")
    config.get_config_options(force_reparse=True)  # a re-read config file: a new dict of new options
    assert ForwardMsg.FromString(_new_session_themes(theme_message.populate_theme_msg)).new_session.custom_theme \
        .light.primary_color == "#0072B2"


def test_an_options_value_function_is_replaced_on_every_write(app_config: None) -> None:
    """The premise of the key: if the pinned Streamlit computes a theme value or sets it in place, this fails."""
    for section in SECTIONS:
        for option in theme_message.section_options(section):
            assert isinstance(option, ConfigOption) and option.key.startswith(f"{section}.")
            before = option._get_val_func  # noqa: SLF001
            assert before.__qualname__ == "ConfigOption.set_value.<locals>.<lambda>"  # a constant, not computed
            option.set_value(option.value, option.where_defined)
            assert option._get_val_func is not before  # noqa: SLF001
    assert {o.section for s in SECTIONS for o in theme_message.section_options(s)} == set(SECTIONS)


def test_a_reload_wraps_streamlits_function_not_ours() -> None:
    reloaded = importlib.reload(theme_message)
    reloaded.install()
    assert app_session._populate_theme_msg.__wrapped__.__module__ == "streamlit.runtime.app_session"  # noqa: SLF001
