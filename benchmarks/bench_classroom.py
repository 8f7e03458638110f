"""Class mode under load: N students (threads) join one class and submit every quiz question against the real
storage layer; prints wall time, writes per second and the dashboard's read time, on SQLite (a temp file)
and on PostgreSQL when MHA_TEST_DATABASE_URL is set (its tables are dropped first and after).

    python -m benchmarks.bench_classroom [students=50]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.timing import run_threads
from mha_core.classroom import Storage, dashboard, sqlite_url
from mha_core.classroom.schema import metadata
from mha_core.quiz import load_questions

QUESTIONS = tuple(q.id for q in load_questions("en"))


def run(store: Storage, n: int) -> None:
    """One class, n students at once, every question each; then one dashboard read."""
    info = store.create_class()
    barrier = threading.Barrier(n)
    latencies: list[float] = []
    lock = threading.Lock()

    def student(i: int) -> None:
        barrier.wait()
        m = store.join(info.code, f"{i:08x}", f"student {i}")
        for j, qid in enumerate(QUESTIONS):
            t0 = time.perf_counter()
            store.record(m, qid, "x", (i + j) % 2 == 0)
            with lock:
                latencies.append(time.perf_counter() - t0)

    wall = run_threads(student, n)
    t0 = time.perf_counter()
    board = dashboard(store.students(info.id), store.answers(info.id), QUESTIONS)
    read = time.perf_counter() - t0
    latencies.sort()
    assert board.answers == n * len(QUESTIONS), board.answers
    print(f"{store.engine.dialect.name:10s} {n} students × {len(QUESTIONS)} questions: {wall:.2f} s, "
          f"{board.answers / wall:.0f} answers/s, p50 {latencies[len(latencies) // 2] * 1000:.1f} ms, "
          f"p99 {latencies[int(len(latencies) * 0.99)] * 1000:.1f} ms; dashboard read {read * 1000:.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("students", nargs="?", type=int, default=50, help="students answering at once (default 50)")
    n = ap.parse_args().students
    with tempfile.TemporaryDirectory() as d:
        store = Storage.open(sqlite_url(Path(d) / "bench.sqlite3"))
        run(store, n)
        store.dispose()
    url = os.environ.get("MHA_TEST_DATABASE_URL")
    if url:
        store = Storage.open(url)
        metadata.drop_all(store.engine)
        store.dispose()
        store = Storage.open(url)
        run(store, n)
        metadata.drop_all(store.engine)
        store.dispose()
    else:
        print("postgresql skipped: set MHA_TEST_DATABASE_URL (source tests/ci_postgres.sh)")


if __name__ == "__main__":
    main()
