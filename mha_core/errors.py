"""Errors the app can explain to a student in either language: the catalog holds the only text."""

from __future__ import annotations

from mha_core.i18n import translate

LOG_LANG = "en"  # the language of str(err), for logs and tests; pages translate err.key themselves


class LabError(ValueError):
    """A ValueError that carries an i18n key and its parameters, never a sentence of its own.

    Raise ``LabError(key, **params)`` with a literal key; its text is ``errors.<key>`` in assets/i18n/<lang>/*.toml.
    ``str(err)`` is the English catalog text (for logs and tests); pages show
    ``t(f"errors.{key}", **params)`` so the student reads it in their language.
    """

    def __init__(self, key: str, /, **params: object) -> None:
        super().__init__(key)
        self.key = key
        self.params = params

    def __str__(self) -> str:
        """Rendered when read, not when raised: a caught error never loads the catalog."""
        return translate(LOG_LANG, f"errors.{self.key}", **self.params)

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle by key and parameters (the default would pass only args and lose the params)."""
        return _rebuild, (type(self), self.key, self.params)


def _rebuild(cls: type[LabError], key: str, params: dict[str, object]) -> LabError:
    """Unpickle a LabError (or subclass) from its key and parameters."""
    return cls(key, **params)
