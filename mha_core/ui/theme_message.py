"""Every run's "new session" message, a fragment run's too, carries the config's six [theme] sections, and Streamlit
builds each afresh: a scan of all the config's options under its lock and a regex per option set. Under a live
lesson of 60 students that was about a quarter of the event loop's time (a live lesson's polls and votes are runs
too; py-spy, issue 26). Here each section is built by Streamlit's own function once per state of its options, and
merged in as bytes: the same message, read from the same live options. An option's value is a function that
``ConfigOption.set_value`` replaces on every write (a theme option has no computed default), so the tuple of a
section's value functions names its values exactly; the key holds them, so their ids are never reused.
"""

from __future__ import annotations

from functools import lru_cache

from streamlit import config
from streamlit.config_option import ConfigOption
from streamlit.proto.NewSession_pb2 import CustomThemeConfig
from streamlit.runtime import app_session

# Streamlit's own, also when this module is imported again after ``install`` (see run_handoff).
_streamlit_populate = getattr(app_session._populate_theme_msg, "__wrapped__",  # noqa: SLF001 - no public hook
                              app_session._populate_theme_msg)  # noqa: SLF001


@lru_cache(maxsize=16)
def _section_keys(section: str) -> tuple[str, ...]:
    """The keys of one section's options (fixed when Streamlit defines them: a re-parse keeps the keys)."""
    return tuple(k for k, o in config.get_config_options().items() if o.section == section)


def section_options(section: str) -> tuple[ConfigOption, ...]:
    """The live option objects of one section (looked up afresh: a re-parsed config is a new dict of new options)."""
    options = config.get_config_options()
    return tuple(options[k] for k in _section_keys(section))


@lru_cache(maxsize=64)
def _section_bytes(section: str, values: tuple[object, ...]) -> bytes:
    """One section as Streamlit builds it, serialised; ``values`` (its options' value functions) is the key only."""
    msg = CustomThemeConfig()
    _streamlit_populate(msg, section)
    return msg.SerializeToString()


def populate_theme_msg(msg: CustomThemeConfig, section: str = "theme") -> None:
    """Streamlit's ``_populate_theme_msg``, built once per state of the section's options."""
    values = tuple(option._get_val_func for option in section_options(section))  # noqa: SLF001 - see above
    data = _section_bytes(section, values)
    if data:  # an empty section leaves the field unset, as Streamlit's own returns early
        msg.MergeFromString(data)


populate_theme_msg.__wrapped__ = _streamlit_populate  # type: ignore[attr-defined]


def install() -> None:
    """Put it in Streamlit's place (idempotent; AppSession looks the function up in its module at each call)."""
    app_session._populate_theme_msg = populate_theme_msg  # noqa: SLF001
