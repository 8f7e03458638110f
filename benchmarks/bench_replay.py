"""The replay floor (issue 26): each page's own move, its messages sent again by a server that runs no app code.

    python -m benchmarks.bench_replay [--pages split attend ...] [--moves 10] [--throttle 1 6] [--json PATH]

For each case of ``benchmarks.bench_speed``: a headless Chromium records the messages of two moves of the case's
control on the app (the page's two states, each a whole run, or a part's fragment runs with the whole page they go
into, the server's message cache off so that every message is whole), then times the same control, moved the same
way, on three servers in the same run: the app, a bare Streamlit page (one slider, one line: bench_speed's floor)
and the replay server (``harness.replay``), which sends the recorded run of the state the move asks for and nothing
else. The browser draws exactly what it draws on the app; the server spends next to nothing. So a case's replay
ratio is the floor of that page inside Streamlit: over issue 26's target (2x the bare page at 1x, 3x at 6x), no
Streamlit page sending what this page sends can meet it; under it, the rest of the app's ratio is the server's run
and the order in which its messages come. For the pages whose control is in the sidebar (h), also the replay of the
frame alone (the navigation and the sidebar, no main area).

Prints one table (case, throttle, app / replay / bare p95, the ratios of the app, the replay and the frame, main-
thread ms); exits 1 if a case could not be measured. The real-model cases are left out (their targets are absolute
milliseconds, not ratios).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from benchmarks.bench_speed import (
    ARM,
    BARE,
    Case,
    Result,
    _do_move,
    _settle,
    case_args,
    cases,
    measure,
    open_case,
)
from harness.floor import BARE_APP
from harness.replay import (
    FRAME_QUERY,
    NO_CACHE,
    QUERY,
    REPLAY_ENV,
    Recording,
    fetch_media,
    fragment_of,
    last_run,
    replay_folder,
    replayed,
)
from harness.server import CHROMIUM, CHROMIUM_FLAGS, start_server, stop_server

SIDEBAR_CONTROL = "slider:h"  # the pipeline pages' h, in the sidebar: the frame's replay can move it too


def record(browser, base: str, case: Case, quiet: int = 300, timeout: int = 60_000) -> Recording:  # noqa: ANN001
    """The messages of the case's two states, as the app sent them to a browser moving the control there and back
    (the first state first), and the media files they name; for a part's move, also the page it goes into."""
    ctx, page, cdp = open_case(browser, base, case, 1)
    try:
        frames: list[bytes] = []
        cdp.send("Network.enable")
        cdp.on("Network.webSocketFrameReceived",
               lambda p: frames.append(base64.b64decode(p["response"]["payloadData"])))
        page.reload()  # the page's whole run, as a new session draws it
        _settle(page, 500, 120_000)
        whole = [raw for raw in last_run(frames) if replayed(raw)]
        runs = []
        for i in range(2):  # move 0 to the second state, move 1 back to the first
            act = _do_move(page, case, i)
            page.evaluate(ARM)
            frames.clear()
            act()
            _settle(page, quiet, timeout)
            runs.append([raw for raw in last_run(frames) if replayed(raw)])
    finally:
        ctx.close()
    runs.reverse()
    fragment = fragment_of(runs[0])
    return Recording(runs, fetch_media(base, [*runs, whole]), fragment, whole if fragment else [])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    case_args(ap, [c.name for c in cases() if not c.limit_ms])  # the ratio cases
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    chosen = [c for c in cases() if c.name in a.pages]
    t_start, load_before = time.perf_counter(), os.getloadavg()
    rows: list[tuple[Result, Result, Result | None]] = []
    bare: dict[float, Result] = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        folder = Path(tmp)
        (folder / "bare.py").write_text(BARE_APP, encoding="utf-8")
        script = replay_folder(folder)  # the app's theme and client settings too
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        procs = []
        try:
            proc, base = start_server(env=NO_CACHE)
            try:
                for case in chosen:
                    rec = record(browser, base, case, a.quiet)
                    rec.save(folder / f"{case.name}.json")
                    print(f"  recorded {case.name}: {[len(r) for r in rec.runs]} messages, "
                          f"{sum(len(m) for r in rec.runs for m in r) // 1024} KiB", file=sys.stderr, flush=True)
            finally:
                stop_server(proc)
            procs.append(app := start_server())
            procs.append(plain := start_server(script=folder / "bare.py", cwd=folder))
            procs.append(rep := start_server(script=script, cwd=folder, env={REPLAY_ENV: str(folder)}))
            for throttle in a.throttle:
                half = max(a.moves // 2, 5)
                first = measure(browser, plain[1], BARE, throttle, half, a.quiet)
                for case in chosen:
                    own = measure(browser, app[1], case, throttle, a.moves, a.quiet)
                    again = measure(browser, rep[1], Case(f"replay {case.name}", f"?{QUERY}={case.name}",
                                                          case.control, case.reset), throttle, a.moves, a.quiet)
                    frame = None
                    if case.control == SIDEBAR_CONTROL:  # the frame alone still has the control
                        frame = measure(browser, rep[1], Case(f"frame {case.name}", f"?{QUERY}={case.name}&"
                                                              f"{FRAME_QUERY}=1", case.control), throttle, a.moves,
                                        a.quiet)
                    rows.append((own, again, frame))
                    print(f"  {case.name} at {throttle:g}x: app p95 {own.p95:.0f} ms, replay {again.p95:.0f} ms "
                          f"{own.error} {again.error}", file=sys.stderr, flush=True)
                second = measure(browser, plain[1], BARE, throttle, half, a.quiet)
                bare[throttle] = Result("bare", throttle, first.ms + second.ms, first.busy + second.busy,
                                        first.error or second.error)
        finally:
            browser.close()
            for proc, _ in procs:
                stop_server(proc)
    load_after = os.getloadavg()
    target = {1.0: 2.0, 6.0: 3.0}
    lines = [f"{len(chosen)} cases x {a.moves} moves; {os.cpu_count()} cores; load average {load_before[0]:.2f} "
             f"before, {load_after[0]:.2f} after; {time.perf_counter() - t_start:.0f} s",
             f"{'case':<12} {'x':>3} {'app p95':>8} {'replay p95':>10} {'bare p95':>8} {'app':>6} {'replay':>7} "
             f"{'frame':>6} {'target':>6}  main-thread ms app / replay / frame / bare"]
    for own, again, frame in rows:
        b = bare[own.throttle]
        fr = f"{frame.p95 / b.p95:>5.1f}x" if frame else f"{'':>6}"
        fb = f"{frame.busy_p50:.0f}" if frame else "-"
        lines.append(f"{own.case:<12} {own.throttle:>2g}x {own.p95:>8.0f} {again.p95:>10.0f} {b.p95:>8.0f} "
                     f"{own.p95 / b.p95:>5.1f}x {again.p95 / b.p95:>6.1f}x {fr} {target.get(own.throttle, 0):>5g}x  "
                     f"{own.busy_p50:.0f} / {again.busy_p50:.0f} / {fb} / {b.busy_p50:.0f}")
    print("\n".join(lines))
    if a.json:
        Path(a.json).write_text(json.dumps({
            "load_average_before": load_before, "load_average_after": load_after,
            "bare": {str(k): {**asdict(v), "p95": v.p95} for k, v in bare.items()},
            "cases": [{"app": {**asdict(o), "p95": o.p95}, "replay": {**asdict(r), "p95": r.p95},
                       "frame": None if f is None else {**asdict(f), "p95": f.p95}} for o, r, f in rows],
        }, indent=1) + "\n", encoding="utf-8")
    failed = [r for row in rows for r in row if r is not None and (r.error or not r.ms)]
    failed += [b for b in bare.values() if b.error]
    for r in failed:
        print(f"could not measure {r.case} at {r.throttle:g}x: {r.error or 'no moves'}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
