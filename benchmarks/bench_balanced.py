"""The replicated deployment under a class: how many students 1 and 2 replicas behind nginx serve at p95 <= 1 s.

Runs the shipped deploy/nginx/mha-lab.conf (ports rewritten, loopback 18000-18099) in front of N `streamlit run`
replicas sharing one database (MHA_TEST_DATABASE_URL if set, else a temporary SQLite file). Each student is a
Streamlit session over the websocket protocol (as in bench_class.py) with its own route cookie: it opens a pipeline
page and moves the h slider, reading for ~``--think`` s between moves. For each replica count the class grows
(``--start``, doubling up to ``--max``) until p95 of slider -> all page data exceeds the target; a bisection step
then narrows the largest class served. Reports, per size: p50/p95 overall and per replica, how many students each
replica held, and errors. On a 2-core machine two replicas share the same two cores: what one more replica adds is
the second process (one Streamlit process runs one script at a time per session, and the GIL limits it to
about one core), not more hardware.
Usage: python -m benchmarks.bench_balanced [--replicas 1,2] [--think 2] [--moves 4] [--start 4] [--max 80]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.timing import pause, percentile
from harness.cluster import (
    free_port,
    route_of,
    start_balancer,
    start_replicas,
    stop_balancer,
    stop_replicas,
)
from harness.websocket_client import Student

PAGES = ("overview", "split", "attend", "concat", "why", "myths")
PORTS = (18050, 18099)
TARGET_MS = 1000.0
MAX_SECONDS = 600  # the whole benchmark stops growing classes after this long


@dataclass
class Result:
    """One class of ``students`` through the balancer: move times per replica address, and errors."""

    students: int
    times: dict[str, list[float]] = field(default_factory=dict)
    held: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    wall: float = 0.0

    @property
    def all_times(self) -> list[float]:
        return [t for ts in self.times.values() for t in ts]

    @property
    def p95(self) -> float:
        ts = self.all_times
        return percentile(ts, 0.95) if ts else float("inf")

    def ok(self) -> bool:
        return not self.errors and self.p95 <= TARGET_MS


def _move_h(first, i: int, m: int) -> dict[str, tuple[str, list[float]]]:  # noqa: ANN001 - websocket_client.Run
    """The widget state that moves the h slider (the link's fixed=0 shows h rather than d_model's divisors)."""
    return {first.widget_id("h"): ("double_array_value", [float(4 + (i + m) % 12)])}


async def _student(base: str, route: str, addr: str, i: int, moves: int, think: float, out: Result) -> None:
    page = PAGES[i % len(PAGES)]
    s = Student(base, route, {"lang": "en", "fixed": "0"})
    try:
        await s.connect()
        first = await s.run(page)
        await asyncio.sleep(pause(think, i, 0) * (i % 7) / 7)  # students arrive spread over a few seconds
        for m in range(moves):
            await asyncio.sleep(pause(think, i, m))
            run = await s.run(page, _move_h(first, i, m))
            if run.exceptions:
                out.errors.append(f"student {i}: exception on {page}: {run.exceptions[0][:80]}")
            out.times.setdefault(addr, []).append(run.seconds * 1000)
    except Exception as err:  # noqa: BLE001 - every failure counts as an error of the run
        out.errors.append(f"student {i}: {type(err).__name__}: {err}"[:160])
    finally:
        await s.close()


def a_class(bal, students: int, moves: int, think: float) -> Result:  # noqa: ANN001 - cluster.Balancer
    """One class through the balancer, each student with a fresh route cookie (as a fresh browser gets)."""
    routes = [secrets.token_hex(16) for _ in range(students)]
    addrs = [route_of(bal, r) for r in routes]
    out = Result(students)
    for a in addrs:
        out.held[a] = out.held.get(a, 0) + 1

    async def run() -> None:
        await asyncio.gather(*(_student(bal.base, r, a, i, moves, think, out)
                               for i, (r, a) in enumerate(zip(routes, addrs, strict=True))))

    t0 = time.perf_counter()
    asyncio.run(run())
    out.wall = time.perf_counter() - t0
    return out


def report(n_replicas: int, r: Result) -> None:
    ts = r.all_times
    total = (f"p50 {statistics.median(ts):.0f} ms, p95 {percentile(ts, 0.95):.0f} ms" if ts else "no moves")
    per = "; ".join(f"{a.rsplit(':', 1)[1]}: {r.held.get(a, 0)} students, "
                    f"p95 {percentile(r.times[a], 0.95):.0f} ms" for a in sorted(r.times))
    verdict = "ok" if r.ok() else "over target" if not r.errors else f"{len(r.errors)} errors"
    print(f"  {n_replicas} replica(s), {r.students:3d} students: {total} [{per}] {r.wall:.0f} s — {verdict}",
          flush=True)
    for e in r.errors[:3]:
        print("     ", e)


def capacity(bal, n_replicas: int, a) -> Result | None:  # noqa: ANN001 - cluster.Balancer, argparse.Namespace
    """The largest class (``--start`` doubling to ``--max``, then one bisection step) served at p95 <= 1 s."""
    best: Result | None = None
    size, worst = a.start, None
    warm = a_class(bal, 2 * n_replicas, 2, 0.2)  # every replica imports and caches its pages once, not counted
    print(f"  {n_replicas} replica(s): warm-up of {warm.students} students, {len(warm.errors)} errors", flush=True)
    t0 = time.time()
    while size <= a.max and time.time() - t0 < MAX_SECONDS:
        r = a_class(bal, size, a.moves, a.think)
        report(n_replicas, r)
        if not r.ok():
            worst = size
            break
        best, size = r, size * 2
    if best is not None and worst is not None and worst - best.students > 2 and time.time() - t0 < MAX_SECONDS:
        mid = (best.students + worst) // 2
        r = a_class(bal, mid, a.moves, a.think)
        report(n_replicas, r)
        if r.ok():
            best = r
    return best


def _show_tracebacks(logdir: Path) -> None:
    """The replicas' first traceback, if any (what the students' "exception" errors were)."""
    for log in sorted(logdir.glob("*.log")):
        text = log.read_text(errors="replace")
        if "Traceback" in text:
            print(f"  {log.name}:\n" + "\n".join(text[text.index("Traceback"):].splitlines()[:25]))
            return


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicas", default="1,2", help="replica counts to compare, e.g. 1,2")
    ap.add_argument("--think", type=float, default=2.0, help="mean seconds a student reads between moves")
    ap.add_argument("--moves", type=int, default=4)
    ap.add_argument("--start", type=int, default=4)
    ap.add_argument("--max", type=int, default=80)
    a = ap.parse_args()
    url = os.environ.get("MHA_TEST_DATABASE_URL")
    print(f"{os.cpu_count()} CPUs; database: {'PostgreSQL' if url else 'SQLite'}; think ~{a.think:g} s, "
          f"{a.moves} moves per student; target p95 <= {TARGET_MS:.0f} ms (slider -> all page data)")
    summary: list[tuple[int, list[int], Result | None]] = []
    with tempfile.TemporaryDirectory(prefix="mha-bench-") as tmp:
        url = url or f"sqlite:///{tmp}/class.sqlite3"
        for n in (int(x) for x in a.replicas.split(",")):
            lb = free_port(*PORTS)
            ports: list[int] = []
            for _ in range(n):
                ports.append(free_port(*PORTS, taken=(lb, *ports)))
            procs = start_replicas(ports, {"MHA_DATABASE_URL": url}, Path(tmp) / f"logs-{n}")
            bal = None
            try:
                bal = start_balancer(Path(tmp) / f"nginx-{n}", lb, ports)
                best = capacity(bal, n, a)
                _show_tracebacks(Path(tmp) / f"logs-{n}")
            finally:
                if bal is not None:
                    stop_balancer(bal)
                stop_replicas(procs)
            summary.append((n, ports, best))
    print("students served at p95 <= 1 s:")
    for n, ports, best in summary:
        if best is None:
            print(f"  {n} replica(s): fewer than {a.start}")
            continue
        per = ", ".join(str(best.held.get(f"127.0.0.1:{p}", 0)) for p in ports)
        print(f"  {n} replica(s): {best.students} students (per replica {per}), p95 {best.p95:.0f} ms")


if __name__ == "__main__":
    main()
