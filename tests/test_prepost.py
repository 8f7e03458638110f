"""The pre/post concept test in the class database (SQLite and PostgreSQL): forms, one answer per item, response
times from when the item opened, missing students reported, results and CSV."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import inspect, select

from mha_core.classroom import Storage
from mha_core.classroom.prepost import PrePostStore, class_results, quiz_report, results_csv
from mha_core.classroom.schema import SCHEMA_VERSION, migrate, schema_version, test_answers, test_windows
from mha_core.errors import LabError
from mha_core.quiz import analysis, concept

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
ITEMS = [i.id for i in concept.items()]


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)



def _class(store: Storage, n: int):
    info = store.create_class()
    return info, [store.join(info.code, f"{i:032x}", f"student {i}") for i in range(n)]


def test_response_time_runs_from_the_first_opening_and_a_reload_does_not_reset_it(store):
    clock = Clock()
    pp = PrePostStore(store, clock)
    _, (m,) = _class(store, 1)
    first = pp.open_item(m, "pre", ITEMS[0])
    clock.tick(30)
    assert pp.open_item(m, "pre", ITEMS[0]) == first == T0  # the reload keeps the first opening
    clock.tick(12.5)
    assert pp.answer(m, "pre", ITEMS[0], concept.item(ITEMS[0]).correct)
    (row,) = pp.rows(m.class_id)
    assert (row.response_s, row.score, row.form) == (42.5, 1.0, concept.form_for(m.code, m.key, "pre"))


def test_one_answer_per_item_and_test_the_first_stays(store):
    clock = Clock()
    pp = PrePostStore(store, clock)
    _, (m,) = _class(store, 1)
    item = concept.item(ITEMS[1])
    pp.open_item(m, "pre", item.id)
    assert pp.answer(m, "pre", item.id, item.options[1])
    assert not pp.answer(m, "pre", item.id, item.correct)    # a second try changes nothing
    pp.open_item(m, "post", item.id)
    assert pp.answer(m, "post", item.id, item.correct)       # the post-test is another test
    rows = {r.test: r for r in pp.rows(m.class_id)}
    assert (rows["pre"].choice, rows["pre"].score) == (item.options[1], 0.0)
    assert (rows["post"].choice, rows["post"].score) == (item.correct, 1.0)
    assert rows["pre"].form != rows["post"].form             # never the same form twice
    assert pp.rows(m.class_id, student_id=m.student_id + 1) == ()  # another student's rows only


def test_an_answer_never_seen_open_has_no_response_time(store):
    pp = PrePostStore(store, Clock())
    _, (m,) = _class(store, 1)
    assert pp.answer(m, "post", ITEMS[2], concept.item(ITEMS[2]).correct)
    (row,) = pp.rows(m.class_id)
    assert row.response_s is None and row.score == 1.0


def test_refusals_bad_choice_closed_class_removed_student(store):
    pp = PrePostStore(store, Clock())
    info, (m, other) = _class(store, 2)
    with pytest.raises(LabError) as err:
        pp.answer(m, "pre", ITEMS[0], "not-an-option")
    assert err.value.key == "prepost_choice_bad"
    with pytest.raises(KeyError):
        pp.open_item(m, "pre", "no-such-item")
    with pytest.raises(ValueError):
        pp.open_item(m, "mid", ITEMS[0])
    store.remove_student(info.id, other.student_id)
    with pytest.raises(LabError) as err:
        pp.answer(other, "pre", ITEMS[0], concept.item(ITEMS[0]).correct)
    assert err.value.key == "class_gone"
    store.set_closed(info.id, True)
    with pytest.raises(LabError) as err:
        pp.open_item(m, "pre", ITEMS[0])
    assert err.value.key == "class_closed"
    assert pp.rows(info.id) == ()


def test_the_open_test_is_stored_per_class(store):
    pp = PrePostStore(store, Clock())
    a, b = store.create_class(), store.create_class()
    assert pp.open_test(a.id) is None
    pp.set_open_test(a.id, "pre")
    pp.set_open_test(a.id, "post")
    pp.set_open_test(b.id, "pre")
    assert (pp.open_test(a.id), pp.open_test(b.id)) == ("post", "pre")
    pp.set_open_test(a.id, None)
    assert pp.open_test(a.id) is None
    with pytest.raises(ValueError):
        pp.set_open_test(a.id, "final")


def test_a_version_4_database_gains_the_test_tables(store):
    with store.engine.begin() as conn:
        test_answers.drop(conn)
        test_windows.drop(conn)
        conn.execute(schema_version.update().values(version=4))
    assert migrate(store.engine) == SCHEMA_VERSION >= 5
    have = set(inspect(store.engine).get_table_names())
    assert {"mha_test_answers", "mha_test_windows"} <= have
    with store.engine.connect() as conn:
        assert conn.execute(select(schema_version.c.version)).scalar_one() == SCHEMA_VERSION


def test_results_report_students_missing_a_test_and_csv_carries_the_gains(store):
    clock = Clock()
    pp = PrePostStore(store, clock)
    info, ms = _class(store, 4)
    ana, bo, cy, _dee = ms
    # Ana: pre 6/12, post 12/12; Bo: pre 3/12, post 6/12; Cy: pre only; Dee: neither
    plan = {(ana, "pre"): 6, (ana, "post"): 12, (bo, "pre"): 3, (bo, "post"): 6, (cy, "pre"): 9}
    for (m, test), right in plan.items():
        for k, item_id in enumerate(ITEMS):
            it = concept.item(item_id)
            pp.open_item(m, test, item_id)
            clock.tick(10 + k)
            pp.answer(m, test, item_id, it.correct if k < right else it.options[1 + k % 3])
    rows = pp.rows(info.id)
    res = class_results(rows, store.students(info.id))
    ids = [m.student_id for m in ms]
    assert res.pre_scores == {ids[0]: 0.5, ids[1]: 0.25, ids[2]: 0.75}
    assert res.post_scores == {ids[0]: 1.0, ids[1]: 0.5}
    assert res.matched.only_pre == (ids[2],) and res.took_neither == (ids[3],)
    assert res.matched.gains == {ids[0]: 1.0, ids[1]: pytest.approx(1 / 3)}
    assert res.matched.class_gain == pytest.approx(analysis.normalized_gain(0.375, 0.75))
    first = res.items[0]  # everyone matched got item 0 right both times: g undefined (pre = 1)
    assert (first.pre, first.post, first.gain) == (1.0, 1.0, None)
    assert res.pre.analysis.n_students == 3 and res.post.analysis.n_students == 2
    assert res.pre.timing[ITEMS[0]].n == 3
    text = results_csv(info.code, res, rows)
    assert text.startswith("\ufeffclass,kind,student")
    assert "student 2" in text and ",pre," in text and "class," in text
    assert "only_pre=1 only_post=0 neither=1" in text
    anonymous = results_csv(info.code, res, rows, anonymous=True)
    assert "student 0" not in anonymous and f",{ids[0]}," in anonymous


def test_quiz_item_analysis_over_the_class_answers(store):
    info, ms = _class(store, 3)
    for m, marks in zip(ms, [(1, 1), (1, 0), (0, 0)], strict=True):
        for q, right in zip(("q1", "q2"), marks, strict=True):
            store.record(m, q, "a" if right else "b", bool(right))
    report = quiz_report(store.answers(info.id), ["q1", "q2", "q3"])
    assert report.item_ids == ("q1", "q2")  # nobody answered q3
    assert report.analysis.facility == pytest.approx((2 / 3, 1 / 3))
    assert report.choices["q1"] == {"a": 2, "b": 1}
