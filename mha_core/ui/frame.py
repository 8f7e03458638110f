"""Every page runs inside app.py's frame (language, sidebar, navigation) — even on a server's very first run.

Why this module exists: Streamlit 1.67 decides once per process, when the first session starts, whether the app
uses the legacy ``pages/`` folder (``PagesManager.uses_pages_directory``: a folder named ``pages`` beside the
entry file). Until the first ``st.navigation`` call clears that flag, a link straight to ``/attend`` runs
``pages/attend.py`` alone, without app.py. The design keeps the ``pages/`` folder, so the one place that copes
with it is here: ``render.page_header`` — the first call of every page — calls ``ensure()``, which, when the page
was run alone, runs app.py right there (its ``st.navigation`` resolves the same page and runs it inside the frame)
and then stops the lone run. Nothing is rerun, so a button's one-run value is not lost, and no Streamlit internals
are written: app.py's own ``st.navigation`` clears the flag.
"""

from __future__ import annotations

import base64
import runpy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache

import streamlit as st

from mha_core.i18n import translate
from mha_core.ui import shared_body
from mha_core.ui.nav import PAGES, ROOT

IN_FRAME = "_in_frame"
PAGE = "_page_run"  # the PageRun of the page this run draws (while it runs)


@dataclass(frozen=True)
class PageRun:
    """The page a run draws (its key names downloaded files) and the widget keys its charts' downloads took."""
    key: str
    taken: set[str] = field(default_factory=set)


@cache
def icon() -> str:
    """The app's icon (tab and sidebar logo) as a data URL, read once per process: given a file, ``st.set_page_config``
    and ``st.logo`` read it, open it with PIL and register it as a media file in every run of every session (0.24 ms a
    call, issue 26); a data URL is passed on as it is (3 µs)."""
    return "data:image/png;base64," + base64.b64encode((ROOT / "assets" / "icon.png").read_bytes()).decode("ascii")


def run(page: st.Page, key: str = "", view: shared_body.View | None = None) -> None:
    """For app.py: run the page, marked as inside the frame for exactly this run (race-free per session); for a
    following member (``view``: their class's live state), a recording of the same page's body if one matches."""
    with drawing(PageRun(key or page.url_path)):
        shared_body.draw(page.run, key or page.url_path, view)


@contextmanager
def drawing(run: PageRun) -> Iterator[None]:
    """While the page (or a fragment of it: ``ui.parts``) draws: inside the frame, drawing ``run``'s page."""
    ss = st.session_state
    ss[IN_FRAME], ss[PAGE] = True, run
    try:
        yield
    finally:
        ss.pop(IN_FRAME, None)
        ss.pop(PAGE, None)


def page_run() -> PageRun | None:
    """The page this run draws, None outside a page (app.py's frame itself)."""
    return st.session_state.get(PAGE)


def ensure() -> None:
    """If Streamlit ran this page file on its own, run it through app.py now and end the lone run.

    The marker is per session and per run: on a cold server several sessions start at once, and the
    process-wide pages-folder flag may already be cleared by another session when this page runs alone.
    """
    if st.session_state.get(IN_FRAME):
        return
    runpy.run_path(str(ROOT / "app.py"), run_name="__main__")
    st.stop()


@st.cache_resource(max_entries=4, show_spinner=False)
def _navigation(lang: str) -> tuple[tuple[str, st.Page], ...]:
    """Every page as (section title, st.Page) in one language, built once per process: building a page resolves its
    script's path on disk, 16 times in every run of every follower otherwise."""
    return tuple((translate(lang, p.section), st.Page(ROOT / p.script, title=translate(lang, f"nav.{p.key}"),
                                                      icon=p.icon, url_path=p.key, default=p.key == "overview"))
                 for p in PAGES)


def page(key: str, lang: str) -> st.Page:
    """The navigation's page of ``key``, for ``st.page_link``: given a page, a link names it by its hash, where a
    script path is resolved on disk at every link of every run (a dozen file-system calls, each of which lets go of
    the GIL while a class's redraws wait for it)."""
    return _navigation(lang)[[p.key for p in PAGES].index(key)][1]


def sections(lang: str) -> dict[str, list[st.Page]]:
    """For app.py's ``st.navigation``: this run's pages by section, copies of the built ones (``st.navigation``
    marks the page it picks as runnable, so no two runs may share one)."""
    out: dict[str, list[st.Page]] = {}
    for section, page in _navigation(lang):
        out.setdefault(section, []).append(_copy(page))
    return out


def _copy(page: st.Page) -> st.Page:
    """``copy.copy(page)`` without its reduce protocol (a Page is a plain object: its fields are its ``__dict__``):
    0.3 µs against 2.3, 16 times in every run (py-spy counted the copies in 5% of a live lesson's samples, issue 26)."""
    new = object.__new__(type(page))
    new.__dict__.update(page.__dict__)
    return new
