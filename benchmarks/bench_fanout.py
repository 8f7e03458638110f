"""The live lesson's floor: N sessions of one Streamlit server redrawing at the same moment, as a class does when
the teacher moves — a bare page, the bare page with a lesson page's worth of paragraphs, and the app's own pages.

    python -m benchmarks.bench_fanout [--sessions 60] [--rounds 5] [--pages attend concat] [--replay] [--json PATH]

Every session is a websocket client (harness/websocket_client.py) that ran its page once (untimed); then all N ask
for a full run at the same instant, and the time from that instant to each session's run finishing is recorded
(``--rounds`` times). A following student's redraw is such a full run (mha_core.ui.live.wake asks each session for
one on the server's event loop), so the last of N sessions sees a move after about N × (one run's CPU) on one
process: its p95 is what ``benchmarks.bench_live`` measures with the class's database, polls and votes on top. The
bare page (one slider, one line: ``harness.floor.BARE_APP``) is the floor no Streamlit page can beat; the
60 paragraphs are a page of the lesson's size with nothing to compute. Prints, per page: p50 / p95 / last of the
N sessions' times and the server's CPU ms per run (``/proc``: script, protobuf and websocket together), then each
app page's floors: the bare page drawing as many elements, charts and links (every other element a paragraph), and
drawing each of the page's widgets, metrics and page links as one of its kind. With ``--replay``, also each app
page's run recorded once and sent again to every session by a server that runs no app code (``harness.replay``):
what a class's redraw would cost if the server ran the teacher's page once and sent it to every follower. Exit 1 if
a page could not be measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks.timing import cpu_ms, p50, p95
from harness.floor import BARE_APP, floor_query
from harness.replay import NO_CACHE, QUERY, REPLAY_ENV, Recording, replay_folder, replayed, session_runs
from harness.server import ROOT, start_server, stop_server
from harness.websocket_client import DEFAULT_PAGE, Student
from mha_core.ui.nav import PAGES

APP_PAGES = ("overview", "split", "attend", "concat", "why")  # the pages a live lesson opens on and votes on


@dataclass
class Result:
    """One page's rounds: every session's ms from the common start to its run's end, and CPU ms per run."""

    page: str
    sessions: int
    ms: list[float] = field(default_factory=list)
    last: list[float] = field(default_factory=list)  # per round: the last session's ms
    cpu_per_run: float = float("nan")
    census: tuple[int, int, int] = (0, 0, 0)  # elements, charts, navigation links of the page's run
    kinds: list[str] = field(default_factory=list)  # its elements' kinds, in order (for its kinds floor)
    error: str = ""

    @property
    def p50(self) -> float:
        return p50(self.ms)

    @property
    def p95(self) -> float:
        return p95(self.ms)


async def fan_out(pid: int, base: str, page: str, query: dict[str, str], n: int, rounds: int, label: str,
                  links: int = 0) -> Result:
    """N sessions of ``page`` at ``base`` all rerun at once, ``rounds`` times (reported as ``label``; the page's
    navigation has ``links`` links)."""
    res = Result(label, n)
    students = [Student(base, f"s{i}", query=query) for i in range(n)]
    students[0].observe = lambda el: el.WhichOneof("type")  # the page's census, from its first run
    try:
        await asyncio.gather(*(s.connect() for s in students))
        for s in students:  # one at a time: a page's first run computes what the timed runs find cached
            run = await s.run(page)
            if run.exceptions:
                raise RuntimeError(f"the page shows an exception: {run.exceptions[0]}")
            if s is students[0]:
                res.census = (len(run.observed), run.observed.count("vega_lite_chart"), links)
                res.kinds = [str(k) for k in run.observed]
                s.observe = None
        cpu0, runs = cpu_ms(pid), 0
        for _ in range(rounds):
            t0 = time.perf_counter()

            async def timed(s: Student, t0: float = t0) -> float:
                await s.run(page)
                return (time.perf_counter() - t0) * 1000

            times = await asyncio.gather(*(timed(s) for s in students))
            res.ms += times
            res.last.append(max(times))
            runs += n
            await asyncio.sleep(0.5)  # the server quiet again (the sleeps' CPU is the idle server's, ~0)
        res.cpu_per_run = (cpu_ms(pid) - cpu0) / runs
    except Exception as err:  # noqa: BLE001 - reported as the page's failure, never skipped
        res.error = f"{type(err).__name__}: {err}"[:300]
    finally:
        await asyncio.gather(*(s.close() for s in students), return_exceptions=True)
    return res


def table(results: list[Result]) -> str:
    rows = ["page                     sessions   p50 ms   p95 ms  last ms (median of rounds)  CPU ms per run    census"]
    for r in results:
        last = statistics.median(r.last) if r.last else float("nan")
        rows.append(f"{r.page:<24} {r.sessions:>8} {r.p50:>8.0f} {r.p95:>8.0f} {last:>9.0f}"
                    f"{'':>20}{r.cpu_per_run:>14.1f}  {'/'.join(map(str, r.census)):>8}  {r.error}")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=60, help="sessions redrawing at once (default 60)")
    ap.add_argument("--rounds", type=int, default=5, help="times they all redraw (default 5)")
    ap.add_argument("--pages", nargs="*", default=list(APP_PAGES), help="the app's pages to time (besides the bare)")
    ap.add_argument("--replay", action="store_true",
                    help="also each app page's run recorded once and replayed to every session (harness.replay)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    a = ap.parse_args()
    t_start = time.perf_counter()
    results: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "bare.py").write_text(BARE_APP, encoding="utf-8")
        (folder / ".streamlit").mkdir()  # the app's own server settings (no gc after each run, no file watcher)
        (folder / ".streamlit" / "config.toml").write_text((ROOT / ".streamlit" / "config.toml").read_text("utf-8"),
                                                           encoding="utf-8")
        bare_proc, bare_base = start_server(script=folder / "bare.py", cwd=folder)
        # with --replay, the message cache off for the recordings (a websocket student never has a message cached)
        app_proc, app_base = start_server(env={"MHA_DATABASE_URL": f"sqlite:///{folder / 'fanout.db'}",
                                               **(NO_CACHE if a.replay else {})})
        replay_proc = None
        try:
            for query, label in (({}, "bare page"), ({"elements": "60"}, "bare + 60 paragraphs")):
                results.append(asyncio.run(fan_out(bare_proc.pid, bare_base, DEFAULT_PAGE, query, a.sessions,
                                                   a.rounds, label)))
                print(f"  {label}: p95 {results[-1].p95:.0f} ms {results[-1].error}", file=sys.stderr)
            for page in a.pages:
                results.append(asyncio.run(fan_out(app_proc.pid, app_base, page, {"fixed": "0"}, a.sessions,
                                                   a.rounds, f"app: {page}", links=len(PAGES))))
                print(f"  {page}: p95 {results[-1].p95:.0f} ms {results[-1].error}", file=sys.stderr)
            def floor(query: dict[str, str], label: str, census: tuple[int, int, int]) -> None:
                """The bare page drawn by ``query``, which must draw ``census`` (what the floor stands for)."""
                res = asyncio.run(fan_out(bare_proc.pid, bare_base, DEFAULT_PAGE, query, a.sessions, a.rounds, label,
                                          links=int(query["pages"])))
                if res.census != census and not res.error:
                    res.error = f"the floor page drew {res.census}, not {census}"
                results.append(res)
                print(f"  {res.page}: p95 {res.p95:.0f} ms {res.error}", file=sys.stderr)

            if a.replay:
                script = replay_folder(folder)
                for page in a.pages:
                    run, = asyncio.run(session_runs(app_base, page, [{"fixed": "0"}]))
                    Recording([[raw for raw in run if replayed(raw)]]).save(folder / f"{page}.json")
                replay_proc, replay_base = start_server(script=script, cwd=folder,
                                                        env={REPLAY_ENV: str(folder)})
                for page in a.pages:
                    results.append(asyncio.run(fan_out(replay_proc.pid, replay_base, DEFAULT_PAGE, {QUERY: page},
                                                       a.sessions, a.rounds, f"replay: {page}", links=len(PAGES))))
                    print(f"  replay {page}: p95 {results[-1].p95:.0f} ms {results[-1].error}", file=sys.stderr)
            pages = [r for r in results if r.page.startswith("app:") and not r.error]
            # the bare page drawing as much as each app page (harness.floor.floor_query): the floor of that page ...
            for census in sorted({r.census for r in pages}):
                floor(floor_query(census), f"bare as {'/'.join(map(str, census))}", census)
            # ... and drawing each of its widgets, metrics and page links as one of the same kind (not a paragraph)
            for page in pages:
                floor(floor_query(page.census, page.kinds), f"bare as {page.page[5:]}, kinds", page.census)
        finally:
            stop_server(bare_proc)
            stop_server(app_proc)
            if replay_proc is not None:
                stop_server(replay_proc)
    print(f"{a.sessions} sessions x {a.rounds} rounds on one server; {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.2f}; {time.perf_counter() - t_start:.0f} s")
    print(table(results))
    if a.json:
        Path(a.json).write_text(json.dumps([{**asdict(r), "p50": r.p50, "p95": r.p95} for r in results], indent=1)
                                + "\n", encoding="utf-8")
    failed = [r for r in results if r.error or not r.ms]
    for r in failed:
        print(f"could not measure {r.page}: {r.error or 'no runs'}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
