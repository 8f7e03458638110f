"""The quiz core: bank loading in both languages, numeric answers against torch, the grader, number
parsing, progress, option order and the progress store."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections import Counter
from fractions import Fraction

import pytest

from mha_core.classroom import Storage, sqlite_url
from mha_core.errors import LabError
from mha_core.i18n import LANGS, catalog, translate
from mha_core.quiz import (
    Grade,
    Kind,
    Progress,
    ProgressStore,
    Question,
    SelfMark,
    canonical_number,
    describe,
    grade,
    load_questions,
    new_student_id,
    parse_number,
    presented_order,
    sections,
    student_seed,
    valid_student_id,
)
from mha_core.quiz.bank import TEACHING_PAGES, BankError, _check_accepted, _entry
from mha_core.quiz.numbers import answer_tolerance
from mha_core.quiz.short import MAX_SHORT, clean, match, normalise
from mha_core.ui.nav import PAGES
from quizhelpers import GIB, MIB, NEAR_MISS, STATED, short_text, torch_expected, typed

SEEDS = range(60)
FULL_WIDTH = str.maketrans("0123456789,.", "０１２３４５６７８９，．")


def numeric(lang: str = "en", seed: int = 0) -> list[Question]:
    return [q for q in load_questions(lang, seed) if q.kind is Kind.NUMERIC]


# --- the bank ---

def test_both_languages_load_the_same_questions():
    for seed in (0, 1, 12345):
        zh, en = load_questions("zh", seed), load_questions("en", seed)
        assert [q.id for q in zh] == [q.id for q in en]
        for a, b in zip(zh, en, strict=True):
            assert (a.kind, a.section, a.teaches, a.correct, a.option_ids, a.unit, a.value, dict(a.params)) == \
                   (b.kind, b.section, b.teaches, b.correct, b.option_ids, b.unit, b.value, dict(b.params))
            assert a.prompt != b.prompt and a.lang == "zh" and b.lang == "en"


def test_bank_covers_the_knowledge_point():
    qs = load_questions("en")
    ids = [q.id for q in qs]
    assert len(ids) == len(set(ids)) >= 20
    assert {"self-test-1a", "self-test-1b", "self-test-2", "self-test-3"} <= set(ids)
    assert set(Counter(q.kind for q in qs)) == set(Kind)
    assert set(Counter(q.section for q in qs)) == set(sections())  # every section has a question
    assert {q.teaches for q in qs} <= set(TEACHING_PAGES) <= {p.key for p in PAGES}


@pytest.mark.parametrize("lang", LANGS)
def test_texts_are_complete_and_filled(lang):
    for q in load_questions(lang, 7):
        assert q.title and q.prompt and q.explanation
        for text in (q.title, q.prompt, q.explanation, *(o.text for o in q.options)):
            assert "{" not in text and "⟦" not in text, (q.id, text)
        assert bool(q.model_answer) == (q.kind is Kind.TEXT)
        assert bool(q.accepted) == (q.kind is Kind.SHORT)
        assert translate(lang, f"quiz.sections.{q.section}") != f"⟦quiz.sections.{q.section}⟧"


def test_quiz_catalogs_have_the_same_keys():
    quiz_keys = {lang: {k for k in catalog(lang) if k.startswith("quiz.") or k.startswith("errors.quiz_")}
                 for lang in LANGS}
    assert quiz_keys["zh"] == quiz_keys["en"] and len(quiz_keys["en"]) > 40


def test_unknown_language_is_refused():
    with pytest.raises(ValueError):
        load_questions("fr")


@pytest.mark.parametrize("raw, problem", [
    ({"id": "x", "kind": "single", "section": "wo", "teaches": "concat", "options": ["a", "b"], "correct": ["c"]},
     "answer key"),
    ({"id": "x", "kind": "single", "section": "wo", "teaches": "quiz", "options": ["a", "b"], "correct": ["a"]},
     "teaching page"),
    ({"id": "x", "kind": "ordering", "section": "wo", "teaches": "concat", "options": ["a", "b"], "correct": ["a"]},
     "answer key"),
    ({"id": "x", "kind": "numeric", "section": "wo", "teaches": "cost", "recipe": "nope", "unit": "count"},
     "recipe"),
    ({"id": "x", "kind": "essay", "section": "wo", "teaches": "cost"}, "essay"),
    ({"id": "x", "kind": "text", "section": "nowhere", "teaches": "cost"}, "section"),
    ({"id": "x", "kind": "short", "section": "wo", "teaches": "concat"}, "one answer id"),
    ({"id": "x", "kind": "short", "section": "wo", "teaches": "concat", "correct": ["W^O", "WO"]}, "one answer id"),
    ({"id": "x", "kind": "short", "section": "wo", "teaches": "concat", "correct": ["_^"]}, "one answer id"),
    ({"id": "x", "kind": "short", "section": "wo", "teaches": "concat", "options": ["a", "b"], "correct": ["a"]},
     "no options"),
])
def test_broken_bank_records_are_refused(raw, problem):
    with pytest.raises(BankError, match=problem):
        _entry(raw, sections())


# --- numeric questions: drawn per seed, answered by mha_core.counts, checked against torch ---

@pytest.mark.parametrize("seed", SEEDS)
def test_numeric_answers_match_torch(seed):
    for q in numeric("en", seed):
        expected = torch_expected(q)
        assert q.value == expected, (q.id, dict(q.params))
        right = typed(q, expected)
        assert grade(q, right), (q.id, right)
        assert grade(q, right).canonical == canonical_number(expected)
        assert not grade(q, str(int(right) + 1)), q.id
        assert not grade(q, str(int(right) * 2)), q.id


def test_numbers_differ_between_students_but_not_between_runs():
    for qid in ("d-head", "mha-params", "kv-mha", "kv-gqa", "kv-long", "kv-ratio", "gqa-params"):
        values = {next(q for q in numeric("en", s) if q.id == qid).value for s in range(40)}
        assert len(values) > 2, qid
    assert numeric("zh", 99) == numeric("zh", 99)
    assert next(q for q in numeric("en", 99) if q.id == "self-test-1a").params == {"d_model": 512, "h": 8}


@pytest.mark.parametrize("lang", LANGS)
def test_prompt_shows_every_drawn_number(lang):
    for seed in range(5):
        for q in numeric(lang, seed):
            shown = set(re.findall(r"\d+", q.prompt.replace(",", "")))
            assert {str(v) for v in q.params.values()} <= shown, (q.id, dict(q.params))


@pytest.mark.parametrize("seed", range(0, 60, 6))
def test_equivalent_forms_of_a_count_are_accepted(seed):
    for q in numeric("en", seed):
        if q.unit != "count":
            continue
        n = int(typed(q, q.value))
        digits = str(n)
        exponent = f"{digits[0]}.{digits[1:] or '0'}e{len(digits) - 1}"
        forms = [f"{n:,}", f"{n:,}".replace(",", " "), f"{n}.0", f" {n} ", exponent,
                 f"{n:,}".translate(FULL_WIDTH), f"{n}。", f"+{n}"]
        for form in forms:
            g = grade(q, form)
            assert g and g.canonical == digits, (q.id, form)


@pytest.mark.parametrize("seed", range(0, 60, 6))
def test_byte_answers_accept_other_units(seed):
    for q in numeric("en", seed):
        if q.unit not in ("MiB", "GiB"):
            continue
        b = int(q.value)
        forms = [f"{b} B", f"{b:,} b", f"{Fraction(b, 2**10)} KiB", f"{Fraction(b, MIB)} MiB",
                 canonical_number(Fraction(b, GIB)) + " GiB", canonical_number(Fraction(b, GIB)) + "gib"]
        for form in forms:
            assert grade(q, form), (q.id, form)
        assert not grade(q, f"{b + 1} B")


def test_rounded_answers_only_with_a_coarser_scale():
    """A non-whole answer (none in the bank today) may be typed rounded, with a coarser scale only."""
    q = next(q for q in numeric("en") if q.id == "wo-params")
    value = Fraction(2097153, 2)  # 1,048,576.5
    q = Question(**{**q.__dict__, "value": value, "tolerance": answer_tolerance(value, 1)})
    assert grade(q, "1.05M") and grade(q, "1.049 M") and grade(q, "1048.6K") and grade(q, "104.86万")
    assert not grade(q, "1M") and not grade(q, "1.1M") and not grade(q, "1048575") and not grade(q, "1048580")
    assert grade(q, "1.05M").canonical == "1050000"
    ratio = next(q for q in numeric("en") if q.unit == "ratio")
    n = typed(ratio, ratio.value)
    assert grade(ratio, f"{n}x") and grade(ratio, f"{n}×") and grade(ratio, f"{n}倍")


@pytest.mark.parametrize("text, key", [
    ("", "quiz_empty"), ("   ", "quiz_empty"), ("abc", "quiz_not_number"), ("1,5", "quiz_not_number"),
    ("12 apples", "quiz_not_number"), ("1e999", "quiz_not_number"), ("nan", "quiz_not_number"),
    ("inf", "quiz_not_number"), ("1..2", "quiz_not_number"), ("__import__('os')", "quiz_not_number"),
    ("1" * 100, "quiz_not_number"), ("2**20", "quiz_not_number"), ("3 MiB", "quiz_bad_unit"),
])
def test_garbage_numbers_get_a_translated_message(text, key):
    q = next(q for q in numeric("en") if q.unit == "count")
    with pytest.raises(LabError) as err:
        grade(q, text)
    assert err.value.key == key
    for lang in LANGS:
        assert "⟦" not in translate(lang, f"errors.{key}", **err.value.params)


def test_parse_number_scales():
    assert parse_number("6.4×10^1").value == 64
    assert parse_number("6.4 x 10^-1").value == Fraction(64, 100)
    assert parse_number("1_048_576").value == 1048576
    assert parse_number("1'048'576").value == 1048576
    assert parse_number("2 G").value == 2 * 10**9 and parse_number("2 G").rounded
    assert parse_number("6.74B").value == parse_number("6.74 g").value == 6_740_000_000
    assert parse_number("3", "MiB").value == 3 * MIB and not parse_number("3", "MiB").rounded
    assert parse_number("3 MB", "MiB").value == 3 * 10**6
    with pytest.raises(LabError, match="KiB"):
        parse_number("3 K", "MiB")  # K alone is ambiguous for bytes: the question states which


# --- the grader on every question ---

def _wrong_orders(q: Question) -> list[list[str]]:
    c = list(q.correct)
    swaps = [c[:i] + [c[i + 1], c[i]] + c[i + 2:] for i in range(len(c) - 1)]
    return [list(reversed(c)), *swaps]


@pytest.mark.parametrize("lang", LANGS)
def test_every_question_grades_right_and_wrong(lang):
    for q in load_questions(lang, 5):
        if q.kind is Kind.SINGLE:
            assert grade(q, q.correct[0])
            assert all(not grade(q, o) for o in q.option_ids if o != q.correct[0])
        elif q.kind is Kind.MULTIPLE:
            assert grade(q, list(reversed(q.correct)))
            assert not grade(q, q.option_ids)
            assert all(not grade(q, set(q.correct) - {c}) for c in q.correct if len(q.correct) > 1)
            assert all(not grade(q, {*q.correct, o}) for o in q.option_ids if o not in q.correct)
        elif q.kind is Kind.ORDERING:
            assert grade(q, list(q.correct))
            assert all(not grade(q, order) for order in _wrong_orders(q))
        elif q.kind is Kind.TEXT:
            assert grade(q, SelfMark("my answer", True))
            assert not grade(q, SelfMark("my answer", False))
        elif q.kind is Kind.SHORT:
            assert all(grade(q, form) for form in q.accepted), q.id
            assert grade(q, short_text(q, True)) and not grade(q, short_text(q, False)), q.id
        else:
            assert grade(q, typed(q, torch_expected(q)))
            assert not grade(q, typed(q, torch_expected(q) + STATED[q.unit]))


def test_grade_is_a_truthy_record_with_canonical_forms():
    qs = {q.id: q for q in load_questions("en")}
    g = grade(qs["wo-can"], ["mix", "weigh", "dominate"])
    assert isinstance(g, Grade) and bool(g) is True and g.question_id == "wo-can"
    assert g.canonical == g.expected == "dominate,mix,weigh"
    assert grade(qs["wo-can"], {"weigh"}).canonical == "weigh"
    assert grade(qs["pipeline-order"], ["wo", "split", "attend", "concat"]).canonical == "wo>split>attend>concat"
    assert grade(qs["self-test-2"], SelfMark("fusion", False)).canonical == "self:wrong"
    zh = {q.id: q for q in load_questions("zh")}
    assert grade(zh["self-test-1b"], "h_times") == grade(qs["self-test-1b"], "h_times")  # language-free


def test_describe_turns_canonical_answers_back_into_text():
    qs = {q.id: q for q in load_questions("en")}
    assert describe(qs["self-test-1b"], "same") == qs["self-test-1b"].option("same").text
    assert " → " in describe(qs["pipeline-order"], "split>attend>concat>wo")
    assert describe(qs["self-test-1a"], "64") == "64"
    kv = qs["kv-mha"]
    assert describe(kv, canonical_number(kv.value)).endswith(" MiB")


@pytest.mark.parametrize("qid, answer, key", [
    ("self-test-1b", None, "quiz_empty"), ("self-test-1b", "", "quiz_empty"),
    ("self-test-1b", "nope", "quiz_unknown_option"), ("wo-can", [], "quiz_empty"),
    ("wo-can", ["weigh", "nope"], "quiz_unknown_option"), ("pipeline-order", [], "quiz_empty"),
    ("pipeline-order", ["split", "attend"], "quiz_order_incomplete"),
    ("pipeline-order", ["split", "split", "concat", "wo"], "quiz_order_incomplete"),
    ("self-test-2", SelfMark("  ", True), "quiz_empty"), ("self-test-1a", None, "quiz_empty"),
])
def test_bad_answers_raise_translated_errors(qid, answer, key):
    q = next(q for q in load_questions("zh") if q.id == qid)
    with pytest.raises(LabError) as err:
        grade(q, answer)
    assert err.value.key == key
    assert "⟦" not in translate("zh", f"errors.{key}", **err.value.params)


def test_wrong_python_types_are_programming_errors():
    qs = {q.id: q for q in load_questions("en")}
    for qid, answer in (("wo-can", "weigh"), ("pipeline-order", "split"), ("self-test-2", "text"),
                        ("self-test-1a", 64), ("self-test-1b", 1)):
        with pytest.raises(TypeError):
            grade(qs[qid], answer)


# --- short answers: one normaliser, the bank's accepted forms, near misses ---

@pytest.mark.parametrize("a, b", [
    ("W^O", "W_O"), ("W^O", "WO"), ("W^O", "Wᴼ"), ("W^O", "Wₒ"), ("W^O", "w o"), ("W^O", "Ｗ＾Ｏ"), ("W^O", "Ｗ＿ｏ"),
    ("W^O", "W^{O}"), ("W^O", "$W_{O}$"), ("W^O", "  W  ^  O  "), ("softmax", "SoftMax"), ("softmax", "soft-max"),
    ("softmax", "the softmax"), ("softmax", "ｓｏｆｔｍａｘ"), ("softmax", "softmax."), ("softmax", "softmax。"),
    ("multi-query attention", "Multi Query Attention"), ("multi-query attention", "multiquery-attention"),
    ("多查询注意力（MQA）", "多查询注意力 (MQA)"), ("多查询注意力", " 多查询注意力。"),
])
def test_the_normaliser_ignores_case_width_blanks_and_symbol_marks(a, b):
    assert normalise(a) == normalise(b) != ""


@pytest.mark.parametrize("a, b", [
    ("W^O", "W^Q"), ("W^O", "W_0"), ("W^O", "W"), ("W^O", "W^O^T"), ("softmax", "sigmoid"), ("softmax", "max"),
    ("MQA", "GQA"), ("MQA", "MHA"), ("multi-query attention", "multi-head attention"), ("多查询注意力", "多头注意力"),
    ("the", "a"), ("theta", "eta"),  # only a leading article followed by a blank is dropped
])
def test_the_normaliser_keeps_what_changes_the_answer(a, b):
    assert normalise(a) != normalise(b)


def test_clean_keeps_the_typed_text_tidy_and_short():
    assert clean("  Ｗ＾Ｑ \n\t matrix\x00 ") == "W^Q matrix"
    assert clean("x" * 500) == "x" * MAX_SHORT
    assert not match("", ("",)) and not match("_", ("_",))  # blanks and marks match nothing


def shorts(lang: str) -> dict[str, Question]:
    return {q.correct[0]: q for q in load_questions(lang) if q.kind is Kind.SHORT}


# Spellings a student would type, written here (not read from the bank): each must grade right.
OBVIOUS = {
    "softmax": {"en": ["softmax", "Softmax", "SOFTMAX", "soft max", "the softmax function", "softmax()"],
                "zh": ["softmax", "Softmax 函数", "softmax函数", "归一化指数函数", "ｓｏｆｔｍａｘ"]},
    "W^O": {"en": ["W^O", "W_O", "WO", "wo", "Wᴼ", "W^{O}", "$W^O$", "Ｗ＿Ｏ", "output projection",
                   "the output projection matrix", "Output Matrix"],
            "zh": ["W^O", "W_O", "WO", "Wᴼ", "Ｗ＾Ｏ", "输出投影", "输出投影矩阵", "输出矩阵"]},
    "MQA": {"en": ["MQA", "mqa", "multi-query attention", "Multi Query Attention", "multiquery attention",
                   "multi-query attention (MQA)", "ＭＱＡ"],
            "zh": ["MQA", "多查询注意力", "多查询注意力（MQA）", "多查询注意力机制", "multi-query attention"]},
}
NEAR_MISSES = {
    "softmax": ["sigmoid", "max", "argmax", "tanh", "ReLU", "normalisation", "W^O"],
    "W^O": ["W^Q", "W^K", "W^V", "W_Q", "W", "W_0", "W^O^T", "Concat", "softmax", "输入投影"],
    "MQA": ["GQA", "MHA", "multi-head attention", "grouped-query attention", "分组查询注意力", "多头注意力", "MLA"],
}


@pytest.mark.parametrize("lang", LANGS)
def test_short_answers_accept_every_obvious_spelling_and_store_one_canonical(lang):
    by_id = shorts(lang)
    assert set(by_id) == set(OBVIOUS) == set(NEAR_MISS) and len(by_id) >= 3
    for answer_id, q in by_id.items():
        for typed_form in (*OBVIOUS[answer_id][lang], *q.accepted):
            g = grade(q, typed_form)
            assert g, (q.id, typed_form)
            assert g.canonical == g.expected == answer_id, (q.id, typed_form)  # the same string in any language
        assert describe(q, answer_id) == q.accepted[0]


@pytest.mark.parametrize("lang", LANGS)
def test_short_answers_refuse_near_misses_and_store_them_as_typed(lang):
    for answer_id, q in shorts(lang).items():
        for typed_form in NEAR_MISSES[answer_id]:
            g = grade(q, f"  {typed_form} ")
            assert not g, (q.id, typed_form)
            assert g.canonical == clean(typed_form) == describe(q, g.canonical) and g.expected == answer_id
    q = shorts(lang)["W^O"]
    long = grade(q, "W^Q " * 100)
    assert not long and len(long.canonical) <= MAX_SHORT


@pytest.mark.parametrize("answer", [None, "", "   ", "_^", "。", "\x00"])
def test_an_empty_short_answer_costs_nothing(answer):
    q = shorts("zh")["softmax"]
    with pytest.raises(LabError) as err:
        grade(q, answer)
    assert err.value.key == "quiz_empty"
    with pytest.raises(TypeError):
        grade(q, ["softmax"])


def test_the_bank_refuses_accepted_forms_that_miss_the_answer_id_or_repeat():
    e = _entry({"id": "x", "kind": "short", "section": "wo", "teaches": "concat", "correct": ["W^O"]}, sections())
    _check_accepted(e, "en", ["W_O", "output projection"])  # W_O is the id's form: fine
    for forms, problem in ((["output projection"], "answer id"), (["W^O", "W^O"], "twice"), ([], "list"),
                           (["W^O", " _ "], "list"), ("W^O", "list")):
        with pytest.raises(BankError, match=problem):
            _check_accepted(e, "en", forms)


# --- progress, summary, retry ---

def _graded(qs: tuple[Question, ...], right: set[str]) -> Progress:
    p = Progress()
    for q in qs:
        p = p.record(Grade(q.id, q.id in right, "x", "y"))
    return p


def test_progress_scores_summarises_and_retries():
    qs = load_questions("en")
    right = {q.id for q in qs[::3]}
    p = _graded(qs, right)
    s = p.score(qs)
    assert (s.right, s.answered, s.total, s.complete) == (len(right), len(qs), len(qs), True)
    sm = p.summary(qs)
    assert {q.id for q in sm.right} == right and {q.id for q in sm.wrong} == {q.id for q in qs} - right
    assert [page for page, _ in sm.revisit] == list(dict.fromkeys(q.teaches for q in sm.wrong))
    assert sorted(q.id for _, group in sm.revisit for q in group) == sorted(q.id for q in sm.wrong)
    again = p.retry_wrong(qs)
    assert again.round == 2 and again.score(qs).answered == len(right) == again.score(qs).right
    assert again.position == next(i for i, q in enumerate(qs) if q.id not in right)
    assert len(again.history) == len(qs)  # every attempt is kept for a class record
    assert {a.round for a in again.record(Grade(sm.wrong[0].id, True, "x", "y")).history} == {1, 2}


def test_a_question_cannot_be_graded_twice():
    q = load_questions("en")[0]
    p = Progress().record(grade(q, "64"))
    with pytest.raises(LabError) as err:
        p.record(grade(q, "65"))
    assert err.value.key == "quiz_already_graded"
    assert p.grade_of(q.id).correct and len(p.history) == 1


def test_position_is_clamped():
    assert Progress().moved(-3, 10).position == 0
    assert Progress().moved(99, 10).position == 9
    assert Progress().moved(4, 10).position == 4


def test_options_are_shuffled_per_student_and_stable():
    qs = load_questions("en")
    for q in qs:
        if not q.options:
            continue
        order = presented_order(q, 1)
        assert sorted(order) == sorted(q.option_ids) and order == presented_order(q, 1)
        zh = next(z for z in load_questions("zh") if z.id == q.id)
        assert presented_order(zh, 1) == order  # same order whatever the language
        assert len({presented_order(q, s) for s in range(30)}) > 1
        if q.kind is Kind.ORDERING:
            assert all(presented_order(q, s) != q.correct for s in range(200))


# --- the store and student ids ---

@pytest.fixture
def progress_store(tmp_path) -> ProgressStore:
    """The progress store over a fresh SQLite class database."""
    storage = Storage.open(sqlite_url(tmp_path / "data" / "quiz.sqlite3"))
    yield ProgressStore(storage)
    storage.dispose()


A, B = "a" * 32, "b" * 32


def test_store_keeps_progress_per_student(progress_store):
    store = progress_store
    q = load_questions("en")[0]
    assert store.get(A) == Progress()
    store.update(A, lambda p: p.record(grade(q, "64")))
    assert store.get(A).score([q]).right == 1 and store.get(B) == Progress()
    with pytest.raises(LabError):
        store.update(A, lambda p: p.record(grade(q, "1")))
    assert store.get(A).score([q]).right == 1  # a refused change stores nothing
    store.reset(A)
    assert store.get(A) == Progress()


def test_progress_round_trips_through_the_database(progress_store):
    """Every field of a Progress (grades, history over two rounds, round, position) comes back equal."""
    qs = [q for q in load_questions("en") if q.kind is Kind.SINGLE][:3]
    p = Progress()
    for q in qs:
        p = p.record(grade(q, next(o for o in q.option_ids if o != q.correct[0])))
    p = p.retry_wrong(qs).record(grade(qs[0], qs[0].correct[0])).moved(2, len(qs))
    progress_store.update(A, lambda _: p)
    assert progress_store.get(A) == p and p.round == 2 and len(p.history) == 4


def test_store_never_loses_an_update_between_threads(progress_store):
    """Two tabs (or two replicas) answering at once: compare-and-set keeps every answer."""
    store, qs = progress_store, load_questions("en")
    choices = [q for q in qs if q.kind is Kind.SINGLE]

    def answer(q: Question) -> None:
        store.update("c" * 32, lambda p: p.record(grade(q, q.correct[0])))

    threads = [threading.Thread(target=answer, args=(q,)) for q in choices]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert store.get("c" * 32).score(qs).right == len(choices)


def test_student_ids():
    sid = new_student_id()
    assert valid_student_id(sid) and sid != new_student_id()
    assert len(sid) == 32 and int(sid, 16).bit_length() > 64  # 128 random bits (this fails once in 2**64)
    assert student_seed("0" * 30 + "ff") == 255
    for bad in (None, "", "xyz", "0000abcd", "0" * 31 + "G", "0" * 33, "ABCDEF12" * 4, "../etc/x", 12345678):
        assert not valid_student_id(bad)


def test_core_does_not_import_streamlit():
    code = "import sys, mha_core.quiz as q; q.load_questions('en'); print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
