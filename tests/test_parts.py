"""A page's part as a fragment (mha_core.ui.parts): a control inside it reruns only the part, whose charts keep the
keys the full run drew them under, and the address follows a linked setting; in a live lesson every run stays full."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import pytest
import streamlit as st
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from mha_core.i18n import translate
from mha_core.ui import parts


@dataclass
class Drawn:
    """What one run sent: its deltas' fragment ids, its widgets' and charts' ids (by label, else by id), its texts,
    how many deltas, and the address's query it last set."""

    fragments: set[str] = field(default_factory=set)
    ids: dict[str, str] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)
    deltas: int = 0
    query: str | None = None

    @property
    def charts(self) -> dict[str, str]:
        return {k: v for k, v in self.ids.items() if v.endswith("_canvas")}


async def _run(c, msg) -> Drawn:  # noqa: ANN001 - a Connection, a BackMsg
    """Send one run's request and read the run to its end (an exception on the page fails the test)."""
    run = Drawn()
    await c.send(msg)
    while True:
        fm = await c.receive(60)
        kind = fm.WhichOneof("type")
        if kind == "delta":
            run.deltas += 1
            run.fragments.add(fm.delta.fragment_id)
            if fm.delta.WhichOneof("type") == "new_element":
                el = fm.delta.new_element
                sub = getattr(el, el.WhichOneof("type"))
                if el.WhichOneof("type") == "exception":
                    raise AssertionError(f"{sub.type}: {sub.message}")
                wid = str(getattr(sub, "id", ""))
                if wid.startswith("$$ID"):
                    run.ids[getattr(sub, "label", "") or wid] = wid
                run.texts += [getattr(sub, a) for a in ("body", "text") if isinstance(getattr(sub, a, None), str)]
        elif kind == "page_info_changed":
            run.query = fm.page_info_changed.query_string
        elif kind == "script_finished" and fm.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            return run


def _full_then_part(page: str, control: str, kind: str, value: object) -> tuple[Drawn, Drawn]:
    """A fresh server's full run of ``page``, then the run a browser asks for when the widget labelled ``control``
    inside the page's part takes ``value``."""
    from harness.server import start_server, stop_server
    from harness.websocket_client import Connection, page_hash, rerun_request, widget_state

    async def scenario(base: str) -> tuple[Drawn, Drawn]:
        c = Connection(base, "test")
        await c.connect()
        try:
            full = await _run(c, rerun_request("lang=en", page_hash(page), page_name=page))
            moved = widget_state(full.ids[control], kind, value)
            fragment = next(iter(full.fragments - {""}), "")
            return full, await _run(c, rerun_request("lang=en", page_hash(page), [moved], page_name=page,
                                                     fragment_id=fragment, auto=False))
        finally:
            await c.close()

    proc, base = start_server()
    try:
        return asyncio.run(scenario(base))
    finally:
        stop_server(proc)


def _reran_its_part_alone(full: Drawn, moved: Drawn, charts: int) -> None:
    part = full.fragments - {""}
    assert len(part) == 1, "the page has one part, and the full run drew the rest of the page outside it"
    assert moved.fragments == part, "the control's run drew its part alone: no navigation, sidebar or rest of the page"
    assert moved.deltas < full.deltas
    assert len(full.charts) == charts
    assert moved.charts == full.charts, "the same charts under the same keys: repainted, not rebuilt"


def test_a_generation_step_reruns_only_its_part_and_repaints_the_same_charts():
    full, step = _full_then_part("generate", translate("en", "generate.next"), "trigger_value", True)
    _reran_its_part_alone(full, step, charts=7)  # three caches, three next-token bars and the newest query
    before = translate("en", "generate.status").split("{step}")[0]  # "Step "
    assert [s[len(before):len(before) + 2] for s in step.texts if s.startswith(before)] == ["1:"], "one step further"


def test_the_cross_attention_pages_h_reruns_only_its_part():
    full, moved = _full_then_part("cross", translate("en", "cross.heads"), "string_value", "8")  # h = 4 -> 8
    _reran_its_part_alone(full, moved, charts=6)
    assert translate("en", "cross.grid_title", h=8) in moved.texts


def test_the_cost_labs_h_reruns_only_its_part():
    full, moved = _full_then_part("cost", translate("en", "cost.h"), "string_array_value", ["1"])  # one head
    _reran_its_part_alone(full, moved, charts=4)
    assert any("h × d_head = 1 × " in s for s in moved.texts), "the shape line says h = 1"


def test_attends_mask_reruns_only_its_part_and_the_address_keeps_it():
    full, moved = _full_then_part("attend", translate("en", "attend.causal"), "bool_value", True)
    _reran_its_part_alone(full, moved, charts=5)  # the head grid, the token lines, two score maps, no scaling
    assert any(translate("en", "attend.mask_caption") in s for s in moved.texts), "the mask is on"
    assert parse_qs(moved.query or "").get("causal") == ["1"], "a link made now carries the mask, as after a full run"


@pytest.mark.parametrize("presenting, role", [(True, None), (False, "student")])
def test_in_a_live_lesson_the_part_is_drawn_in_the_full_run(monkeypatch, presenting, role):
    drawn = []
    monkeypatch.setattr(parts.live, "presenting", lambda: presenting)
    monkeypatch.setattr(parts.live, "active_vote_role", lambda: role)
    monkeypatch.setattr(st, "fragment", lambda f: (_ for _ in ()).throw(AssertionError("no fragment while live")))
    parts.part(lambda: drawn.append(1))
    assert drawn == [1]
