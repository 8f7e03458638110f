"""How a student reaches a class: the join link and its QR code (the teacher's join card and the presenter's bar)."""

from __future__ import annotations

import io
from urllib.parse import urlencode, urlsplit, urlunsplit

import segno
import streamlit as st

from mha_core.errors import LabError
from mha_core.ui import render
from mha_core.ui.class_services import storage
from mha_core.ui.i18n import t
from mha_core.ui.nav import spec
from mha_core.ui.student import CLASS_PARAM

TURNOUT_POLL_S = 2.0


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


@st.fragment(run_every=TURNOUT_POLL_S)
def turnout(class_id: int) -> None:
    """On the presenter's bar: how many joined and how many voted in the open round, so that a flood of fake
    students shows on the projector."""
    try:
        now = storage().turnout(class_id)
    except LabError as err:
        render.show_error(err)
        return
    if now.voted is None:
        st.markdown(f":material/group: {t('classroom.turnout_no_vote', joined=now.joined)}")
    else:
        st.markdown(f":material/group: {t('classroom.turnout', joined=now.joined, voted=now.voted)}")
