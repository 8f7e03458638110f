"""A page's part as a fragment (mha_core.ui.parts): a control inside it reruns only the part, whose charts keep the
keys the full run drew them under, and the address follows a linked setting; in a live lesson every run stays full."""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs, urlencode

import pytest
import streamlit as st

from harness.websocket_client import Run, Student
from mha_core.i18n import translate
from mha_core.ui import parts


def _charts(run: Run) -> dict[str, str]:
    """The run's charts (the canvases' ids by key)."""
    return {k: wid for k, (wid, _, _) in run.widgets.items() if k.endswith("_canvas")}


def _full_then_part(page: str, control: str, kind: str, value: object) -> tuple[Run, Run, str]:
    """A fresh server's full run of ``page``, then the run a browser asks for when the widget labelled ``control``
    inside the page's part takes ``value``; and the address's query after it."""
    from harness.server import start_server, stop_server

    async def scenario(base: str) -> tuple[Run, Run, str]:
        s = Student(base, "test", query={"lang": "en"})
        await s.connect()
        try:
            full = await s.run(page)
            wid = next(wid for wid, _, sub in full.widgets.values() if getattr(sub, "label", "") == control)
            moved = await s.run(page, {wid: (kind, value)}, fragment_id=next(iter(full.fragments - {""}), ""))
            return full, moved, urlencode(s.query)
        finally:
            await s.close()

    proc, base = start_server()
    try:
        full, moved, query = asyncio.run(scenario(base))
    finally:
        stop_server(proc)
    assert not full.exceptions and not moved.exceptions, full.exceptions + moved.exceptions
    return full, moved, query


def _reran_its_part_alone(full: Run, moved: Run, charts: int) -> None:
    part = full.fragments - {""}
    assert len(part) == 1, "the page has one part, and the full run drew the rest of the page outside it"
    assert moved.fragments == part, "the control's run drew its part alone: no navigation, sidebar or rest of the page"
    assert moved.deltas < full.deltas
    assert len(_charts(full)) == charts
    assert _charts(moved) == _charts(full), "the same charts under the same keys: repainted, not rebuilt"


def test_a_generation_step_reruns_only_its_part_and_repaints_the_same_charts():
    full, step, _ = _full_then_part("generate", translate("en", "generate.next"), "trigger_value", True)
    _reran_its_part_alone(full, step, charts=7)  # three caches, three next-token bars and the newest query
    before = translate("en", "generate.status").split("{step}")[0]  # "Step "
    assert [s[len(before):len(before) + 2] for s in step.texts if s.startswith(before)] == ["1:"], "one step further"


def test_the_cross_attention_pages_h_reruns_only_its_part():
    full, moved, _ = _full_then_part("cross", translate("en", "cross.heads"), "string_value", "8")  # h = 4 -> 8
    _reran_its_part_alone(full, moved, charts=6)
    assert translate("en", "cross.grid_title", h=8) in moved.texts


def test_the_cost_labs_h_reruns_only_its_part():
    full, moved, _ = _full_then_part("cost", translate("en", "cost.h"), "string_array_value", ["1"])  # one head
    _reran_its_part_alone(full, moved, charts=4)
    assert any("h × d_head = 1 × " in s for s in moved.texts), "the shape line says h = 1"


def test_attends_mask_reruns_only_its_part_and_the_address_keeps_it():
    full, moved, query = _full_then_part("attend", translate("en", "attend.causal"), "bool_value", True)
    _reran_its_part_alone(full, moved, charts=5)  # the head grid, the token lines, two score maps, no scaling
    assert any(translate("en", "attend.mask_caption") in s for s in moved.texts), "the mask is on"
    assert parse_qs(query).get("causal") == ["1"], "a link made now carries the mask, as after a full run"


@pytest.mark.parametrize("presenting, role", [(True, None), (False, "student")])
def test_in_a_live_lesson_the_part_is_drawn_in_the_full_run(monkeypatch, presenting, role):
    drawn = []
    monkeypatch.setattr(parts.live, "presenting", lambda: presenting)
    monkeypatch.setattr(parts.live, "active_vote_role", lambda: role)
    monkeypatch.setattr(st, "fragment", lambda f: (_ for _ in ()).throw(AssertionError("no fragment while live")))
    parts.part(lambda: drawn.append(1))
    assert drawn == [1]
