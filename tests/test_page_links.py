"""Links to the lab's pages (``render.page_link``) name the page itself, as Streamlit's own lookup of its script path
would find it: a path is resolved on disk at every link of every run (issue 26), a page is not."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _both_links() -> None:
    """Streamlit's link by script path beside ours, for every page."""
    import streamlit as st

    from mha_core.ui import frame, render
    from mha_core.ui.nav import PAGES, ROOT

    st.navigation(frame.sections("en"), position="hidden")
    for p in PAGES:
        st.page_link(str(ROOT / p.script), label=f"nav.{p.key}", icon=p.icon)
        render.page_link(p.key, f"nav.{p.key}")


def test_a_link_names_the_page_streamlits_path_lookup_finds():
    from mha_core.ui.nav import PAGES

    at = AppTest.from_function(_both_links).run(timeout=30)
    links = [link.proto for link in at.get("page_link")]
    assert not at.exception and len(links) == 2 * len(PAGES)
    for theirs, ours in zip(links[::2], links[1::2], strict=True):
        assert (ours.page_script_hash, ours.page, ours.label, ours.icon) == (
            theirs.page_script_hash, theirs.page, theirs.label, theirs.icon)
    assert len({link.page_script_hash for link in links}) == len(PAGES)
