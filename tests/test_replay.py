"""The replay floor (harness.replay, benchmarks.bench_replay): a server that runs none of the app's code sends a
page's recorded runs, one a run, exactly as the app sent them (its charts' module from its own media store), or
their frame alone; it refuses a recording with cached messages' references, which a fresh browser could not draw."""

from __future__ import annotations

import asyncio

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from harness.replay import (
    NO_CACHE,
    QUERY,
    REPLAY_ENV,
    Recording,
    fetch_media,
    fragment_of,
    in_frame,
    last_run,
    replay_folder,
    replayed,
    session_runs,
)
from harness.server import ROOT, start_server, stop_server


def _drawn(run: list[bytes]) -> list[tuple[list[int], bytes]]:
    """A run's deltas: where each goes and what it draws (the hash and the run's own metadata aside)."""
    out = []
    for raw in run:
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        if msg.WhichOneof("type") == "delta":
            out.append((list(msg.metadata.delta_path), msg.delta.SerializeToString(deterministic=True)))
    return out


def _types(run: list[bytes]) -> list[str]:
    msgs = [ForwardMsg.FromString(raw) for raw in run]
    return [m.WhichOneof("type") for m in msgs]


@pytest.fixture(scope="module")
def recording() -> Recording:
    """split at h = 4 and at h = 8, recorded from the app with its message cache off."""
    proc, base = start_server(env=NO_CACHE)
    try:
        # a session reads a link's settings once: a session each
        runs = [asyncio.run(session_runs(base, "split", [{"lang": "en", "h": h}]))[0] for h in ("4", "8")]
        runs = [[raw for raw in run if replayed(raw)] for run in runs]
        media = fetch_media(base, runs)
    finally:
        stop_server(proc)
    return Recording(runs, media)


def test_a_recording_keeps_what_the_page_draws_and_the_charts_module(recording, tmp_path):
    a, b = recording.runs
    assert {"delta", "navigation", "page_config_changed", "page_info_changed"} <= set(_types(a))
    assert not {"new_session", "script_finished", "session_status_changed"} & set(_types(a) + _types(b))
    assert _drawn(a) != _drawn(b), "h = 4 and h = 8 draw different pages"
    assert len(recording.media) == 1, "the charts' module, which every chart names"
    (mime, content), = recording.media.values()
    assert mime == "application/javascript" and b"export default" in content
    recording.save(tmp_path / "r.json")
    again = Recording.load(tmp_path / "r.json")
    assert again == recording


def test_a_message_sent_by_reference_is_refused():
    msg = ForwardMsg()
    msg.ref_hash = "abc"
    with pytest.raises(ValueError, match="reference"):
        replayed(msg.SerializeToString())


def test_the_replay_server_sends_the_recorded_runs_in_turn_and_their_frame_alone(recording, tmp_path):
    recording.save(tmp_path / "split.json")
    script = replay_folder(tmp_path)
    assert (tmp_path / ".streamlit" / "config.toml").read_bytes() == (ROOT / ".streamlit" / "config.toml").read_bytes()
    proc, base = start_server(script=script, cwd=tmp_path, env={REPLAY_ENV: str(tmp_path)})
    try:
        first, second, third = asyncio.run(session_runs(base, "", [{QUERY: "split"}] * 3))
        frame, = asyncio.run(session_runs(base, "", [{QUERY: "split", "frame": "1"}]))
        served = fetch_media(base, [first, second, third])
    finally:
        stop_server(proc)
    a, b = recording.runs
    assert _drawn(first) == _drawn(a) and _drawn(second) == _drawn(b) and _drawn(third) == _drawn(a)
    assert "exception" not in str(_drawn(first))
    assert list(served.values()) == list(recording.media.values()), "its own store serves the module"
    nav = next(ForwardMsg.FromString(raw).navigation for raw in first if _types([raw]) == ["navigation"])
    recorded = next(ForwardMsg.FromString(raw).navigation for raw in a if _types([raw]) == ["navigation"])
    assert nav.page_script_hash != recorded.page_script_hash, "the page is the replay's own (no 'page not found')"
    assert [p.page_script_hash == nav.page_script_hash for p in nav.app_pages] == [
        p.page_script_hash == recorded.page_script_hash for p in recorded.app_pages], "the app's pages, split its own"
    around = [d for d in _drawn(a) if d[0][:1] != [0]]
    assert any(d[0][:1] == [1] for d in around), "the sidebar is part of the frame"
    assert _drawn(frame) == around, "the frame: every delta but the main area's"
    assert all(in_frame(ForwardMsg.FromString(raw)) for raw in frame if _types([raw]) != ["delta"])


def test_in_frame_keeps_all_but_the_main_areas_deltas():
    main, side, nav = ForwardMsg(), ForwardMsg(), ForwardMsg()
    main.metadata.delta_path[:] = [0, 3]
    main.delta.new_element.markdown.body = "x"
    side.metadata.delta_path[:] = [1, 0]
    side.delta.new_element.markdown.body = "y"
    nav.navigation.expanded = True
    assert [in_frame(m) for m in (main, side, nav)] == [False, True, True]



def test_a_parts_run_is_told_from_a_whole_run_and_the_last_run_is_kept():
    def delta(fragment: str) -> bytes:
        msg = ForwardMsg()
        msg.delta.fragment_id = fragment
        msg.delta.new_element.markdown.body = "x"
        return msg.SerializeToString()

    start = ForwardMsg()
    start.new_session.page_script_hash = "p"
    assert fragment_of([delta("f1"), delta("f1")]) == "f1"
    assert fragment_of([delta(""), delta("f1")]) == "", "a whole run draws outside the part too"
    frames = [start.SerializeToString(), delta(""), start.SerializeToString(), delta("f1")]
    assert last_run(frames) == frames[2:]
    assert last_run(frames[1:2]) == frames[1:2], "a fragment's run sends no new session"
