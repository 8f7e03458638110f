"""A page's part as a fragment (mha_core.ui.parts): a generation step reruns only its part, with the charts the full
run drew under the same keys; in a live lesson every run stays full."""

from __future__ import annotations

import asyncio

import streamlit as st
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from mha_core.i18n import translate
from mha_core.ui import parts


async def _run(c, msg) -> tuple[set[str], dict[str, str], list[str], int]:  # noqa: ANN001 - a Connection, a BackMsg
    """One run to its end: its deltas' fragment ids, the ids of its widgets and charts by label or key, its texts,
    and how many deltas it sent."""
    fragments, ids, texts, n = set(), {}, [], 0
    await c.send(msg)
    while True:
        fm = await c.receive(60)
        kind = fm.WhichOneof("type")
        if kind == "delta":
            n += 1
            fragments.add(fm.delta.fragment_id)
            if fm.delta.WhichOneof("type") == "new_element":
                el = fm.delta.new_element
                sub = getattr(el, el.WhichOneof("type"))
                if el.WhichOneof("type") == "exception":
                    raise AssertionError(f"{sub.type}: {sub.message}")
                wid = str(getattr(sub, "id", ""))
                if wid.startswith("$$ID"):
                    ids[getattr(sub, "label", "") or wid] = wid
                for attr in ("body", "text"):
                    if isinstance(getattr(sub, attr, None), str):
                        texts.append(getattr(sub, attr))
        elif kind == "script_finished" and fm.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            return fragments, ids, texts, n


def _full_then_part(page: str, control: str, kind: str, value: object) -> tuple[tuple, tuple]:
    """A fresh server's full run of ``page``, then the run a browser asks for when the widget labelled ``control``
    inside the page's part takes ``value``."""
    from harness.server import start_server, stop_server
    from harness.websocket_client import Connection, page_hash, rerun_request, widget_state

    async def scenario(base: str) -> tuple[tuple, tuple]:
        c = Connection(base, "test")
        await c.connect()
        try:
            full = await _run(c, rerun_request("lang=en", page_hash(page), page_name=page))
            moved = widget_state(full[1][control], kind, value)
            fragment = next(iter(full[0] - {""}), "")
            return full, await _run(c, rerun_request("lang=en", page_hash(page), [moved], page_name=page,
                                                     fragment_id=fragment, auto=False))
        finally:
            await c.close()

    proc, base = start_server()
    try:
        return asyncio.run(scenario(base))
    finally:
        stop_server(proc)


def _charts(ids: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in ids.items() if v.endswith("_canvas")}


def _reran_its_part_alone(full: tuple, moved: tuple, charts: int) -> None:
    part = full[0] - {""}
    assert len(part) == 1, "the page has one part, and the full run drew the rest of the page outside it"
    assert moved[0] == part, "the control's run drew its part alone: no navigation, sidebar or rest of the page"
    assert moved[3] < full[3]
    assert len(_charts(full[1])) == charts
    assert _charts(moved[1]) == _charts(full[1]), "the same charts under the same keys: repainted, not rebuilt"


def test_a_generation_step_reruns_only_its_part_and_repaints_the_same_charts():
    full, step = _full_then_part("generate", translate("en", "generate.next"), "trigger_value", True)
    _reran_its_part_alone(full, step, charts=7)  # three caches, three next-token bars and the newest query
    before = translate("en", "generate.status").split("{step}")[0]  # "Step "
    assert [s[len(before):len(before) + 2] for s in step[2] if s.startswith(before)] == ["1:"], "one step further"


def test_the_cross_attention_pages_h_reruns_only_its_part():
    full, moved = _full_then_part("cross", translate("en", "cross.heads"), "string_value", "8")  # h = 4 -> 8
    _reran_its_part_alone(full, moved, charts=6)
    assert translate("en", "cross.grid_title", h=8) in moved[2]


def test_in_a_live_lesson_the_part_is_drawn_in_the_full_run(monkeypatch):
    drawn = []
    monkeypatch.setattr(parts.live, "active_vote_role", lambda: "student")
    monkeypatch.setattr(st, "fragment", lambda f: (_ for _ in ()).throw(AssertionError("no fragment while live")))
    parts.part(lambda: drawn.append(1))
    assert drawn == [1]


def test_the_cost_labs_h_reruns_only_its_part():
    full, moved = _full_then_part("cost", translate("en", "cost.h"), "string_array_value", ["1"])  # one head
    _reran_its_part_alone(full, moved, charts=4)
    assert any("h × d_head = 1 × " in s for s in moved[2]), "the shape line says h = 1"
