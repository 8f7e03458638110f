"""A class against one server, without browsers: N concurrent Streamlit sessions over the app's own
websocket protocol (what each student's browser sends), each opening pages and moving the h slider.

In a real class every student's browser renders on its own device; 20 Chromium renderers on this
server's 2 cores would measure the renderers, not the server (bench_browser.py's class mode does that).
Reports p50/p95 of slider -> script finished (all page data received), errors and server memory.
Usage: python benchmarks/bench_class.py [--sessions 20] [--moves 6] [--think 0]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import websockets  # noqa: E402
from harness import percentile, rss_mib, start_server, stop_server  # noqa: E402
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetStates  # noqa: E402
from streamlit.util import calc_hash  # noqa: E402

PAGES = ("overview", "split", "attend", "concat", "why", "myths", "prereq")


async def rerun(ws, page: str, states: WidgetStates | None = None) -> tuple[float, dict[str, str], int]:
    """Ask for one script run of ``page``; (seconds until script_finished, slider ids by key, exceptions)."""
    msg = BackMsg()
    msg.rerun_script.page_script_hash = "" if page == "overview" else calc_hash(page)
    if states is not None:
        msg.rerun_script.widget_states.CopyFrom(states)
    t0 = time.perf_counter()
    await ws.send(msg.SerializeToString())
    sliders: dict[str, str] = {}
    exceptions = 0
    while True:
        fm = ForwardMsg()
        fm.ParseFromString(await asyncio.wait_for(ws.recv(), timeout=120))
        kind = fm.WhichOneof("type")
        if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
            el = fm.delta.new_element
            if el.WhichOneof("type") == "slider":
                sliders[el.slider.id.rsplit("-", 1)[-1]] = el.slider.id
            elif el.WhichOneof("type") == "exception":
                exceptions += 1
        if kind == "script_finished" and fm.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            return time.perf_counter() - t0, sliders, exceptions


async def student(base: str, i: int, moves: int, think: float, times: list[float], errors: list[str]) -> None:
    url = base.replace("http", "ws") + "/_stcore/stream"
    try:
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=None) as ws:
            for j in range(2):
                page = PAGES[(i + j) % len(PAGES)]
                _, sliders, exc = await rerun(ws, page)
                h_id = sliders["h"]
                for m in range(moves):
                    states = WidgetStates()
                    w = states.widgets.add()
                    w.id = h_id
                    w.double_array_value.data.append(float(4 + (i + m) % 12))  # h from 4 to 15
                    await asyncio.sleep(think * (0.5 + ((i * 7 + m * 3) % 10) / 10))  # a student reads
                    dt, _, exc = await rerun(ws, page, states)
                    times.append(dt * 1000)
                    if exc:
                        errors.append(f"student {i}: exception on {page}")
    except Exception as err:  # noqa: BLE001 - every failure counts as an error of the run
        errors.append(f"student {i}: {type(err).__name__}: {err}"[:200])


async def a_class(base: str, pid: int, sessions: int, moves: int, think: float) -> None:
    times: list[float] = []
    errors: list[str] = []
    peak = [rss_mib(pid)]

    async def watch() -> None:
        while True:
            peak[0] = max(peak[0], rss_mib(pid))
            await asyncio.sleep(0.2)

    watcher = asyncio.create_task(watch())
    t0 = time.perf_counter()
    await asyncio.gather(*(student(base, i, moves, think, times, errors) for i in range(sessions)))
    wall = time.perf_counter() - t0
    watcher.cancel()
    print(f"class of {sessions} sessions, think time ~{think:g} s: {len(times)} slider moves in {wall:.1f} s; "
          "slider -> page data "
          f"p50 {statistics.median(times):.0f} ms, p95 {percentile(times, 0.95):.0f} ms, max {max(times):.0f} ms; "
          f"errors {len(errors)}; server memory peak {peak[0]:.0f} MiB")
    for e in errors[:5]:
        print("  ", e)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--moves", type=int, default=6)
    ap.add_argument("--think", type=float, default=0.0, help="mean seconds between a student's moves")
    a = ap.parse_args()
    proc, base = start_server()
    try:
        asyncio.run(a_class(base, proc.pid, a.sessions, a.moves, a.think))
    finally:
        stop_server(proc)


if __name__ == "__main__":
    main()
