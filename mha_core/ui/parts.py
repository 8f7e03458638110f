"""A part of a page whose own controls change only that part (a generation step, the cross-attention page's pair and
h, the cost lab's shape, attend's mask and head), run as a fragment: a click inside it reruns the part alone, not
app.py's frame (the navigation, the sidebar, the rest of the page), and the browser renders only the part again: a
generation step and attend's mask took about a tenth less of the browser's main thread at 1x and a quarter less at
6x (two alternating benchmarks.bench_speed pairs, issue 26; README).

Not while a class is live: the presenter's bar publishes, and a follower's banner and ballot are drawn, by full
runs, so for the presenter and a following student every run of the page stays full.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from mha_core.ui import live, url
from mha_core.ui.frame import PageRun, drawing, page_run
from mha_core.ui.nav import spec


def part(draw: Callable[[], None]) -> None:
    """Draw ``draw`` in place: as a fragment outside a live lesson, with the page's chart keys as the full run had
    them where the part began, so that a fragment run repaints the same charts instead of building new ones; a
    fragment run mirrors the settings into the address as app.py does (attend's mask and head are in a link)."""
    if live.presenting() or live.active_vote_role() is not None:
        draw()
        return
    run = page_run()
    key, before = (run.key, frozenset(run.taken)) if run is not None else ("", frozenset())

    @st.fragment
    def fragment() -> None:
        if page_run() is not None:  # inside the page's full run
            draw()
            return
        url.write(spec(key).pipeline)
        with drawing(PageRun(key, set(before))):
            draw()

    fragment()
