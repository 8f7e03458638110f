"""Which database: ``MHA_DATABASE_URL``, else ``database_url`` in Streamlit secrets, else a local SQLite file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

DATABASE_ENV = "MHA_DATABASE_URL"
DATABASE_SECRET = "database_url"
ROOT = Path(__file__).resolve().parents[2]
DEFAULT_FILE = ROOT / "data" / "mha_lab.sqlite3"


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file (its folder is created on first use)."""
    return f"sqlite:///{path}"


def database_url(env: Mapping[str, str], secrets: Mapping[str, object]) -> str:
    """Any SQLAlchemy URL from the environment or secrets; the default SQLite file otherwise."""
    value = env.get(DATABASE_ENV) or secrets.get(DATABASE_SECRET)
    return value if isinstance(value, str) and value.strip() else sqlite_url(DEFAULT_FILE)
