"""The app's pages, in teaching order. app.py turns this list into ``st.navigation``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class PageSpec:
    """One page: its stable key (URL path, i18n prefix ``nav.<key>``), script and section.

    The script is ``pages/<key>.py``; its first call is ``render.page_header(key)`` (see mha_core/ui/frame.py).
    """

    key: str
    script: str
    icon: str
    section: str            # i18n key of the navigation section
    pipeline: bool = False  # shows the shared h / d_head controls in the sidebar


PAGES: tuple[PageSpec, ...] = (
    PageSpec("overview", "pages/overview.py", ":material/hub:", "nav.section_learn", True),
    PageSpec("prereq", "pages/prereq.py", ":material/school:", "nav.section_learn", True),
    PageSpec("split", "pages/split.py", ":material/call_split:", "nav.section_learn", True),
    PageSpec("attend", "pages/attend.py", ":material/grid_on:", "nav.section_learn", True),
    PageSpec("concat", "pages/concat.py", ":material/merge:", "nav.section_learn", True),
    PageSpec("why", "pages/why.py", ":material/diversity_3:", "nav.section_learn", True),
    PageSpec("myths", "pages/myths.py", ":material/report:", "nav.section_learn", True),
    PageSpec("cross", "pages/cross.py", ":material/translate:", "nav.section_learn"),
    PageSpec("cost", "pages/cost.py", ":material/calculate:", "nav.section_labs"),
    PageSpec("heads", "pages/heads.py", ":material/psychology:", "nav.section_labs"),
    PageSpec("generate", "pages/generate.py", ":material/text_increase:", "nav.section_labs"),
    PageSpec("real", "pages/real.py", ":material/travel_explore:", "nav.section_labs"),
    PageSpec("quiz", "pages/quiz.py", ":material/quiz:", "nav.section_check"),
    PageSpec("classroom", "pages/classroom.py", ":material/groups:", "nav.section_check"),
    PageSpec("map", "pages/map.py", ":material/map:", "nav.section_more"),
    PageSpec("glossary", "pages/glossary.py", ":material/menu_book:", "nav.section_more"),
)


def spec(key: str) -> PageSpec:
    """The page with this key."""
    return next(p for p in PAGES if p.key == key)
