"""The pre/post concept test in a class: which test is open, each item as it was shown to and answered by each
student (form, choice, score, response time), and the class's results as pure functions over those rows.

The store grades (a choice is scored against mha_core.quiz.concept, never taken from the caller) and times:
``opened_at`` is written the first time an item is shown to a student and never moved by a reload, and the
response time is the answer's time minus that, measured by the server. One answer per (student, test, item): a
second one is refused and the first stays. Results (``class_results``) keep students who took only one test in the
report instead of dropping them, and ``item_report`` runs Moodle's item analysis over any quiz or test of the class.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
from sqlalchemy import Engine, exc, select
from sqlalchemy.dialects import postgresql, sqlite

from mha_core.classroom.names import shown_name
from mha_core.classroom.schema import classes, students, test_answers, test_windows
from mha_core.classroom.storage import AnswerRow, Member, Storage, StudentRow
from mha_core.errors import LabError
from mha_core.quiz import analysis, concept

Clock = Callable[[], datetime]


def _utc(t: datetime) -> datetime:
    """SQLite returns naive datetimes for what was written as UTC."""
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def _insert(engine: Engine, table):  # noqa: ANN001, ANN202 - a dialect's Insert construct (ON CONFLICT)
    return (postgresql if engine.dialect.name == "postgresql" else sqlite).insert(table)


@dataclass(frozen=True)
class ConceptRow:
    """One item of one test as one student met it: ``choice`` / ``score`` / ``response_s`` are None until answered
    (``response_s`` also when the store never saw it open)."""

    student_id: int
    name: str
    test: str
    form: str
    item_id: str
    choice: str | None
    score: float | None
    opened_at: datetime
    answered_at: datetime | None
    response_s: float | None


class PrePostStore:
    """The concept test's rows in the class database (the Storage's engine and transactions; thread-safe like it).
    ``clock`` is injectable so a simulated class can state its students' response times."""

    def __init__(self, storage: Storage, clock: Clock = lambda: datetime.now(UTC)) -> None:
        self.storage = storage
        self.clock = clock

    # --- which test is open ---

    def set_open_test(self, class_id: int, test: str | None) -> None:
        """Open the pre- or post-test for the class (None: neither)."""
        if test is not None and test not in concept.TESTS:
            raise ValueError(f"test must be one of {concept.TESTS} or None")
        ins = _insert(self.storage.engine, test_windows)
        stmt = ins.values(class_id=class_id, test=test, updated_at=self.clock()).on_conflict_do_update(
            index_elements=["class_id"], set_={"test": ins.excluded.test, "updated_at": ins.excluded.updated_at})
        with self.storage.writing() as conn:
            conn.execute(stmt)

    def open_test(self, class_id: int) -> str | None:
        """The test the class takes now, or None."""
        with self.storage.reading() as conn:
            return conn.execute(select(test_windows.c.test).where(test_windows.c.class_id == class_id)).scalar()

    # --- items shown and answered ---

    def _check(self, member: Member, test: str, item_id: str) -> str:
        """The form this student takes for ``test`` (ValueError for an unknown test or item: a caller's mistake)."""
        concept.item(item_id)  # KeyError → the caller passed an id that is not in the test
        return concept.form_for(member.code, member.key, test)

    @contextlib.contextmanager
    def _class_write(self, member: Member) -> Iterator:
        """A write transaction for an open class and a student still in it (LabError class_closed / class_gone)."""
        try:
            with self.storage.writing() as conn:
                row = conn.execute(select(classes.c.closed).where(classes.c.id == member.class_id,
                                                                  classes.c.code == member.code)).first()
                if row is None or conn.execute(select(students.c.id).where(
                        students.c.id == member.student_id)).first() is None:
                    raise LabError("class_gone", code=member.code)
                if row.closed:
                    raise LabError("class_closed", code=member.code)
                yield conn
        except exc.IntegrityError:  # the student's row went away between the check and the write
            raise LabError("class_gone", code=member.code) from None

    def open_item(self, member: Member, test: str, item_id: str) -> datetime:
        """Note that the item is shown to the student now, unless it was before (a reload keeps the first time);
        the stored opening time."""
        form = self._check(member, test, item_id)
        ins = _insert(self.storage.engine, test_answers)
        stmt = ins.values(class_id=member.class_id, student_id=member.student_id, test=test, form=form,
                          item_id=item_id, opened_at=self.clock()).on_conflict_do_nothing(
            index_elements=["class_id", "student_id", "test", "item_id"])
        with self._class_write(member) as conn:
            conn.execute(stmt)
            opened = conn.execute(select(test_answers.c.opened_at).where(
                test_answers.c.class_id == member.class_id, test_answers.c.student_id == member.student_id,
                test_answers.c.test == test, test_answers.c.item_id == item_id)).scalar_one()
        return _utc(opened)

    def answer(self, member: Member, test: str, item_id: str, choice: str) -> bool:
        """Store the student's choice, graded here, with its response time; False (nothing changed) when this
        item of this test was answered before. LabError ``prepost_choice_bad`` for a choice the item does not
        offer, class_closed / class_gone as for any answer."""
        form = self._check(member, test, item_id)
        item = concept.item(item_id)
        if choice not in item.options:
            raise LabError("prepost_choice_bad")
        score = 1.0 if choice == item.correct else 0.0
        now = self.clock()
        where = (test_answers.c.class_id == member.class_id, test_answers.c.student_id == member.student_id,
                 test_answers.c.test == test, test_answers.c.item_id == item_id)
        with self._class_write(member) as conn:
            row = conn.execute(select(test_answers.c.opened_at, test_answers.c.choice).where(*where)).first()
            if row is not None and row.choice is not None:
                return False
            if row is None:  # never seen open (e.g. the database was replaced): no response time, never invented
                ins = _insert(self.storage.engine, test_answers)
                stored = conn.execute(ins.values(
                    class_id=member.class_id, student_id=member.student_id, test=test, form=form, item_id=item_id,
                    opened_at=now, choice=choice, score=score, answered_at=now, response_ms=None,
                ).on_conflict_do_nothing(index_elements=["class_id", "student_id", "test", "item_id"])
                    .returning(test_answers.c.id)).first()
                return stored is not None
            ms = max(0, round((now - _utc(row.opened_at)).total_seconds() * 1000))
            done = conn.execute(test_answers.update().where(*where, test_answers.c.choice.is_(None)).values(
                choice=choice, score=score, answered_at=now, response_ms=ms))
            return done.rowcount == 1

    def rows(self, class_id: int, student_id: int | None = None) -> tuple[ConceptRow, ...]:
        """Every item shown in the class (to one student only, when given), both tests, oldest first, with the
        student's name."""
        query = (select(test_answers, students.c.name).join(students, students.c.id == test_answers.c.student_id)
                 .where(test_answers.c.class_id == class_id).order_by(test_answers.c.id))
        if student_id is not None:
            query = query.where(test_answers.c.student_id == student_id)
        with self.storage.reading() as conn:
            found = conn.execute(query).all()
        return tuple(ConceptRow(r.student_id, r.name, r.test, r.form, r.item_id, r.choice, r.score, _utc(r.opened_at),
                             _utc(r.answered_at) if r.answered_at else None,
                             None if r.response_ms is None else r.response_ms / 1000) for r in found)


# --- results: pure functions over rows ---

@dataclass(frozen=True)
class ItemReport:
    """One quiz's or test's item analysis with the columns' ids, distractor counts and response times."""

    item_ids: tuple[str, ...]
    student_ids: tuple[int, ...]
    analysis: analysis.ItemAnalysis
    choices: Mapping[str, Mapping[str | None, int]] = field(default_factory=dict)
    timing: Mapping[str, analysis.Timing] = field(default_factory=dict)


def score_matrix(per_student: Mapping[int, Mapping[str, float]], item_ids: Sequence[str]) -> np.ndarray:
    """Students (in mapping order) × items; an item a student did not answer scores 0."""
    return np.array([[row.get(i, 0.0) for i in item_ids] for row in per_student.values()], dtype=float).reshape(
        len(per_student), len(item_ids))


def report_of(rows: Sequence[ConceptRow], test: str) -> ItemReport:
    """Item analysis of one test: every student who answered at least one of its items is a row (an item they
    left unanswered scores 0); choices per option and response times per item."""
    item_ids = tuple(i.id for i in concept.items())
    answered = [r for r in rows if r.test == test and r.choice is not None]
    per: dict[int, dict[str, float]] = defaultdict(dict)
    for r in answered:
        per[r.student_id][r.item_id] = float(r.score)
    choices = {i.id: analysis.distractor_counts([r.choice for r in answered if r.item_id == i.id], i.options)
               for i in concept.items()}
    timing = {i: analysis.response_times([r.response_s for r in answered if r.item_id == i and
                                          r.response_s is not None]) for i in item_ids}
    return ItemReport(item_ids, tuple(per), analysis.item_analysis(score_matrix(per, item_ids)), choices, timing)


def quiz_report(rows: Sequence[AnswerRow], question_ids: Sequence[str]) -> ItemReport:
    """Item analysis of the class's quiz answers (right = 1, wrong = 0; latest answer per question): every
    student who answered anything is a row, a question they did not answer scores 0 (Moodle scores an unanswered
    question of a submitted attempt 0). Questions nobody answered are left out."""
    per: dict[int, dict[str, float]] = defaultdict(dict)
    for r in rows:
        per[r.student_id][r.question_id] = 1.0 if r.correct else 0.0
    asked = {r.question_id for r in rows}
    ids = tuple(q for q in dict.fromkeys([*question_ids, *(r.question_id for r in rows)]) if q in asked)
    choices = {q: dict(sorted(_count(r.canonical for r in rows if r.question_id == q).items())) for q in ids}
    return ItemReport(ids, tuple(per), analysis.item_analysis(score_matrix(per, ids)), choices)


def _count(values: Iterator[str] | Sequence[str]) -> dict[str | None, int]:
    out: dict[str | None, int] = defaultdict(int)
    for v in values:
        out[v] += 1
    return out


@dataclass(frozen=True)
class ItemGain:
    """One item over the matched students: facility before and after, and its ⟨g⟩ (None at a perfect pre)."""

    item_id: str
    pre: float
    post: float
    gain: float | None


@dataclass(frozen=True)
class ClassResults:
    """What the dashboard and the CSV report about a class's pre/post test."""

    n_items: int
    pre_scores: Mapping[int, float]      # student → score fraction of the pre-test (students who took it)
    post_scores: Mapping[int, float]
    matched: analysis.MatchedGains       # students who took both; only_pre / only_post listed
    items: tuple[ItemGain, ...]
    pre: ItemReport
    post: ItemReport
    names: Mapping[int, str]
    took_neither: tuple[int, ...]        # joined the class, answered no item of either test


def _scores(rows: Sequence[ConceptRow], test: str, n_items: int) -> dict[int, float]:
    """Score fraction per student who answered any item of the test (unanswered items score 0)."""
    total: dict[int, float] = defaultdict(float)
    for r in rows:
        if r.test == test and r.choice is not None:
            total[r.student_id] += float(r.score)
    return {s: v / n_items for s, v in total.items()}


def class_results(rows: Sequence[ConceptRow], members: Sequence[StudentRow]) -> ClassResults:
    """The class's gains: per student, matched (⟨g⟩ of the matched students' means, Hake 1998), per item over
    the matched students, item reports of both tests, and who missed a test."""
    n = len(concept.items())
    pre, post = _scores(rows, "pre", n), _scores(rows, "post", n)
    matched = analysis.matched_gains(pre, post)
    both = set(matched.gains)
    gains = []
    for i in concept.items():
        def facility(test: str, item_id: str = i.id) -> float:
            got = {r.student_id: float(r.score) for r in rows
                   if r.test == test and r.item_id == item_id and r.choice is not None and r.student_id in both}
            return sum(got.values()) / len(both) if both else math.nan
        a, b = facility("pre"), facility("post")
        gains.append(ItemGain(i.id, a, b, None if not both else analysis.normalized_gain(a, b)))
    names = {s.id: shown_name(s.name) for s in members} | {r.student_id: shown_name(r.name) for r in rows}
    neither = tuple(s.id for s in members if s.id not in pre and s.id not in post)
    return ClassResults(n, pre, post, matched, tuple(gains), report_of(rows, "pre"), report_of(rows, "post"),
                        names, neither)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> object:
    """Spreadsheet-safe: formula-like text gets a leading apostrophe; NaN and None are empty cells."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    return f"'{value}" if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def results_csv(code: str, results: ClassResults, rows: Sequence[ConceptRow], anonymous: bool = False,
                ids: Mapping[int, str] | None = None) -> str:
    """The pre/post test as CSV (UTF-8 with BOM): one line per answer, then per student (scores, own gain, which
    test is missing), per item (facility, discrimination, flags, gain, choices, times) and the class (⟨g⟩, α).
    ``anonymous`` writes student ids instead of names; ``ids`` (an anonymous class: row id -> opaque id) writes
    those opaque ids."""
    out = io.StringIO()
    w = csv.writer(out)

    def who(sid: int) -> object:
        if ids is not None:
            return ids.get(sid, "")
        return sid if anonymous else results.names.get(sid, "")

    w.writerow(["class", "kind", "student", "test", "form", "item", "choice", "score", "response_s", "pre", "post",
                "gain", "missing", "facility", "discrimination", "flags", "choices", "median_s", "p90_s", "alpha"])
    blank = [""] * 20

    def line(**cells: object) -> None:
        keys = ["class", "kind", "student", "test", "form", "item", "choice", "score", "response_s", "pre", "post",
                "gain", "missing", "facility", "discrimination", "flags", "choices", "median_s", "p90_s", "alpha"]
        row = list(blank)
        for k, v in {"class": code, **cells}.items():
            row[keys.index(k)] = _cell(v)
        w.writerow(row)

    for r in rows:
        if r.choice is not None:
            line(kind="answer", student=who(r.student_id), test=r.test, form=r.form, item=r.item_id, choice=r.choice,
                 score=r.score, response_s=r.response_s)
    m = results.matched
    for sid in sorted(set(results.pre_scores) | set(results.post_scores) | set(results.took_neither)):
        missing = "/".join(t for t, s in (("pre", results.pre_scores), ("post", results.post_scores)) if sid not in s)
        line(kind="student", student=who(sid), pre=results.pre_scores.get(sid), post=results.post_scores.get(sid),
             gain=m.gains.get(sid), missing=missing)
    for test, report in (("pre", results.pre), ("post", results.post)):
        for j, item_id in enumerate(report.item_ids):
            a = report.analysis
            t = report.timing.get(item_id)
            choices = " ".join(f"{k}={v}" for k, v in report.choices.get(item_id, {}).items())
            line(kind="item", test=test, item=item_id, facility=a.facility[j], discrimination=a.discrimination[j],
                 flags=" ".join(sorted(a.flags[j])), choices=choices, median_s=t.median if t else None,
                 p90_s=t.p90 if t else None)
        line(kind="test", test=test, alpha=report.analysis.alpha, student=len(report.student_ids))
    for g in results.items:
        line(kind="item_gain", item=g.item_id, pre=g.pre, post=g.post, gain=g.gain)
    line(kind="class", pre=m.pre_mean, post=m.post_mean, gain=m.class_gain,
         missing=f"only_pre={len(m.only_pre)} only_post={len(m.only_post)} neither={len(results.took_neither)}")
    return "\ufeff" + out.getvalue()
