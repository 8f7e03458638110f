"""The class store's error, importable without SQLAlchemy: a page catches it on every visit, a database is reached
only in a class."""

from __future__ import annotations

from mha_core.errors import LabError


class DatabaseError(LabError):
    """The database is locked or unreachable: nothing was stored, and the caller should keep the data."""
