"""A config option read without Streamlit's config lock. Streamlit takes one process-wide lock for every read
(``config.get_option``): at every message whose hash it computes, every page config, navigation and logo, and on the
event loop for every run's new-session message, about twenty reads a following student's redraw. With 60 script
threads and the event loop handing the GIL over every millisecond (mha_core.threads), a thread preempted while it
held the lock held up every other reader until it ran again: under cProfile, a sixth of a follower's run went to
waiting in ``get_option`` (a live lesson of 60, issue 26).

A read needs no lock once the config is parsed: an option's value is a function that ``ConfigOption.set_value``
replaces whole (read at once under the GIL). A parse makes a new dict of options and fills it under the lock; until
it says it is done (its ``_on_config_parsed`` signal), a read of that dict is Streamlit's own, under the lock. The
same values as Streamlit's own; writes and parsing still take the lock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from streamlit import config

# Streamlit's own, also when this module is imported again after ``install`` (see run_handoff).
_streamlit_get_option = getattr(config.get_option, "__wrapped__", config.get_option)


@dataclass
class Parsed:
    """The options' dict Streamlit last finished parsing (None: none yet)."""

    options: dict[str, Any] | None = None


PARSED = Parsed()  # process-wide, as Streamlit's config is


def _parsed(_sender: object = None) -> None:
    """Streamlit has finished a parse (its signal, sent under the lock): its dict is complete."""
    PARSED.options = config._config_options  # noqa: SLF001 - see the module


def get_option(key: str) -> Any:
    """Streamlit's ``config.get_option`` (the same value, the same error for an unknown key), without its lock once
    the config is parsed."""
    options = config._config_options  # noqa: SLF001 - see the module
    if options is None or options is not PARSED.options:
        return _streamlit_get_option(key)  # not parsed yet, or being parsed again: Streamlit's own, under its lock
    try:
        option = options[key]
    except KeyError:
        raise RuntimeError(f'Config key "{key}" not defined.') from None
    return option.value


get_option.__wrapped__ = _streamlit_get_option  # type: ignore[attr-defined]


def install() -> None:
    """Put it in Streamlit's place (idempotent; Streamlit's modules call it through the config module)."""
    config._on_config_parsed.connect(_parsed, weak=False)  # noqa: SLF001 - see the module
    with config._config_lock:  # noqa: SLF001 - a parse going on now finishes first
        if config._config_options:  # noqa: SLF001
            _parsed()
    config.get_option = get_option
