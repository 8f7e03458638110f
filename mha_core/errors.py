"""Errors the app can explain to a student in either language."""

from __future__ import annotations


class LabError(ValueError):
    """A ValueError that also carries an i18n key and its parameters.

    ``str(err)`` is a plain-English sentence (for logs and tests); pages show
    ``t(f"errors.{key}", **params)`` so the student reads it in their language.
    """

    def __init__(self, key: str, message: str, **params: object) -> None:
        super().__init__(message.format(**params))
        self.key = key
        self.params = params
