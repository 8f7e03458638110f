"""How a student reaches a class: the join link and its QR code (the teacher's join card and the presenter's bar)."""

from __future__ import annotations

import io
from urllib.parse import urlencode, urlsplit, urlunsplit

import segno
import streamlit as st

from mha_core.ui.nav import spec
from mha_core.ui.student import CLASS_PARAM


def join_link(code: str) -> str:
    """The classroom page's address with ?class=CODE (relative when the page's own URL is unknown)."""
    try:
        here = st.context.url or ""
    except Exception:  # noqa: BLE001 - no browser context (tests)
        here = ""
    parts = urlsplit(here)
    page = spec("classroom").key
    if not parts.scheme:
        return f"/{page}?{urlencode({CLASS_PARAM: code})}"
    path = parts.path.rstrip("/")
    if not path.endswith(f"/{page}"):
        path = f"{path}/{page}"
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode({CLASS_PARAM: code}), ""))


def qr_png(link: str) -> bytes:
    """The join link as a QR code (PNG, large modules for the back row)."""
    out = io.BytesIO()
    segno.make(link, error="m").save(out, kind="png", scale=12, border=2)
    return out.getvalue()
