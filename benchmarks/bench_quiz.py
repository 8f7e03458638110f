"""Median script time of the quiz page through AppTest (target: at most 150 ms), in the states a class
meets: a fresh quiz one question at a time, all at once, all at once fully graded (every card shows its
feedback, plus the summary), and one "Check" click (grading in the callback, then the rerun).
Usage: python -m benchmarks.bench_quiz [--repeats 15] [--lang en]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from benchmarks.timing import median_ms
from mha_core.quiz import Kind, SelfMark, grade, load_questions, student_seed
from mha_core.quiz.numbers import format_value
from mha_core.ui.nav import spec
from mha_core.ui.quiz import answer_key, button_key
from mha_core.ui.student import progress_store as store

ROOT = Path(__file__).resolve().parents[1]


def open_quiz(lang: str, student: str, mode: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["lang"] = lang
    at.query_params.update({"student": student, "mode": mode})
    at.run()
    at.switch_page(spec("quiz").script)
    at.run()
    assert not at.exception, at.exception
    return at


def grade_everything(lang: str, student: str) -> None:
    """Put a right answer to every question into the store, as a finished quiz has."""
    for q in load_questions(lang, student_seed(student)):
        answer = {Kind.SINGLE: lambda q: q.correct[0], Kind.MULTIPLE: lambda q: q.correct,
                  Kind.ORDERING: lambda q: list(q.correct), Kind.TEXT: lambda q: SelfMark("x", True),
                  Kind.NUMERIC: lambda q: format_value(q.value, q.unit), Kind.SHORT: lambda q: q.accepted[0]}[q.kind](q)
        g = grade(q, answer)
        store().update(student, lambda p, g=g: p.record(g))


def check_click(lang: str, repeats: int) -> float:
    """One "Check" on a single-choice question: fresh students so each click really grades."""
    times = []
    for i in range(repeats):
        student = f"bc{i:030x}"  # a valid 128-bit id (32 hex digits)
        at = open_quiz(lang, student, "all")
        q = next(q for q in load_questions(lang, student_seed(student)) if q.kind is Kind.SINGLE)
        at.radio(key=answer_key(q.id)).set_value(q.correct[0])
        t0 = time.perf_counter()
        at.button(key=button_key("check", q.id)).click().run()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--lang", default="en")
    a = ap.parse_args()
    rows = []
    for name, student, mode in (("one at a time", f"be{1:030x}", "one"), ("all at once", f"be{2:030x}", "all"),
                                ("all at once, graded", f"be{3:030x}", "all")):
        if name.endswith("graded"):
            grade_everything(a.lang, student)
        at = open_quiz(a.lang, student, mode)
        rows.append((name, median_ms(at.run, a.repeats)))
    rows.append(("check click (all at once)", check_click(a.lang, a.repeats)))
    print(f"{'quiz page, ' + a.lang:<28} {'median ms':>10}   (target <= 150)")
    for name, ms in rows:
        print(f"{name:<28} {ms:10.1f}")


if __name__ == "__main__":
    main()
