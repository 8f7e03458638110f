"""The Moodle XML export: every question, answer and tolerance checked against the bank (both languages), the rules
Moodle's importer applies (question/format/xml/format.php, lib/questionlib.php), and the command line."""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
import xml.etree.ElementTree as ET
from dataclasses import replace
from fractions import Fraction

import pytest
from markdown_it import MarkdownIt

from mha_core.errors import LabError
from mha_core.i18n import DEFAULT_LANG, LANGS, translate
from mha_core.quiz import Kind, Question, canonical_number, grade, load_questions
from mha_core.quiz.__main__ import main
from mha_core.quiz.bank import structure
from mha_core.quiz.draws import draw
from mha_core.quiz.media import Medium, prompt_for
from mha_core.quiz.moodle import (
    DEFAULT_VARIANTS,
    MAX_VARIANTS,
    category_path,
    grade_text,
    moodle_xml,
    question_count,
    shortanswer_forms,
    variant_seeds,
)
from mha_core.quiz.moodle import MOODLE_GRADES as GRADES
from quizhelpers import NEAR_MISS, STATED, torch_expected

KIND_TYPE = {Kind.SINGLE: "multichoice", Kind.MULTIPLE: "multichoice", Kind.NUMERIC: "numerical",
             Kind.ORDERING: "matching", Kind.TEXT: "essay", Kind.SHORT: "shortanswer"}
# Moodle's grade list, as written in lib/questionlib.php (question_bank::ensure_fraction_options_initialised), ±.
MOODLE_GRADES = (1.0, 0.9, 0.8333333, 0.8, 0.75, 0.7, 0.6666667, 0.6, 0.5, 0.4, 0.3333333, 0.3, 0.25, 0.2,
                 0.1666667, 0.1428571, 0.125, 0.1111111, 0.1, 0.05, 0.0)
TEXT_FORMATS = {"html", "moodle_auto_format", "plain_text", "markdown"}  # qformat_xml::trans_format
ESSAY_FORMATS = {"editor", "editorfilepicker", "plain", "monospaced", "noinline"}
_MD = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
ENTRIES = {e.id: e for e in structure()[1]}


def _bank_id(idnumber: str) -> str:
    m = re.fullmatch(r"mha-(.+?)(-seed\d+)?", idnumber)
    assert m, idnumber
    return m.group(1)


def _split_category(path: str) -> list[str]:
    """Moodle's qformat_default::split_category_path: '/' separates, '//' is a literal slash."""
    return [name.replace("//", "/").strip() for name in re.split(r"(?<!/)/(?!/)", path)]


def _parse(data: bytes) -> list[tuple[list[str], ET.Element]]:
    """(category names, question element) for every real question, in file order."""
    root = ET.fromstring(data)
    assert root.tag == "quiz"
    out, category = [], None
    for el in root.findall("question"):
        if el.get("type") == "category":
            category = _split_category(el.findtext("category/text"))
            continue
        assert category is not None, "a question before any category"
        out.append((category, el))
    return out


def _exported(lang: str, seed: int = 0) -> dict[str, tuple[list[str], ET.Element]]:
    """One question per bank id: the file with one variant, the numbers of ``seed``."""
    parsed = _parse(moodle_xml(lang, seed, variants=1))
    by_id = {_bank_id(el.findtext("idnumber")): (cat, el) for cat, el in parsed}
    assert len(by_id) == len(parsed), "two questions share an idnumber"
    return by_id


def _grade_ok(percent: str) -> bool:
    share = float(percent) / 100
    return any(abs(share - g) < 1e-7 or abs(share + g) < 1e-7 for g in MOODLE_GRADES)


def _html(markdown: str) -> str:
    return _MD.render(markdown).strip()


def _answer_value(el: ET.Element) -> tuple[Fraction, Fraction]:
    (answer,) = el.findall("answer")
    assert answer.get("fraction") == "100"
    return Fraction(answer.findtext("text")), Fraction(answer.findtext("tolerance"))


@pytest.fixture(scope="module", params=LANGS)
def export(request) -> tuple[str, tuple[Question, ...], dict[str, tuple[list[str], ET.Element]]]:
    lang = request.param
    return lang, load_questions(lang, 0), _exported(lang, 0)


def test_every_question_of_the_bank_once_with_its_type_name_and_texts(export):
    lang, questions, by_id = export
    assert set(by_id) == {q.id for q in questions} and len(by_id) == len(questions) == len(structure()[1])
    for q in questions:
        category, el = by_id[q.id]
        assert el.get("type") == KIND_TYPE[q.kind], q.id
        assert el.findtext("name/text") == q.title
        assert el.find("questiontext").get("format") == "html"
        assert el.findtext("questiontext/text") == _html(prompt_for(q, Medium.MOODLE)), q.id
        assert el.findtext("generalfeedback/text").startswith(_html(q.explanation)), q.id
        assert category == ["$course$", "top", "MHA Lab", translate(lang, f"quiz.sections.{q.section}")]


def test_every_element_moodle_reads_is_there(export):
    """The importer's own reads (format.php): name, question text, and each type's required parts."""
    _, _, by_id = export
    for _, el in by_id.values():
        assert el.findtext("name/text").strip() and el.findtext("questiontext/text").strip()
        for text_field in el.iter():
            if text_field.get("format") is not None:
                assert text_field.get("format") in TEXT_FORMATS
        qtype = el.get("type")
        if qtype == "multichoice":
            assert el.findtext("single") in {"true", "false"} and len(el.findall("answer")) >= 2
        elif qtype == "numerical":
            for answer in el.findall("answer"):
                float(answer.findtext("text")), float(answer.findtext("tolerance"))
            units = el.findall("units/unit")
            assert el.findtext("showunits") == ("0" if units else "3")
            if units:
                assert units[0].findtext("multiplier") == "1"  # Moodle's first unit is the base unit
        elif qtype == "matching":  # qtype_match's form: at least 2 questions and 3 answers
            subs = el.findall("subquestion")
            assert len(subs) >= 2 and len({s.findtext("answer/text") for s in subs}) >= 3
            assert all(s.findtext("answer/text").strip() for s in subs)
        elif qtype == "essay":
            assert el.findtext("responseformat") in ESSAY_FORMATS and el.findtext("graderinfo/text").strip()
        elif qtype == "shortanswer":  # qtype_shortanswer's form: at least one answer, and one of them 100 %
            assert el.findtext("usecase") in {"0", "1"} and el.findall("answer")
            assert any(a.get("fraction") == "100" and a.findtext("text").strip() for a in el.findall("answer"))


def test_choices_mark_exactly_the_banks_right_answers_with_grades_moodle_accepts(export):
    _, questions, by_id = export
    for q in (q for q in questions if q.kind in (Kind.SINGLE, Kind.MULTIPLE)):
        _, el = by_id[q.id]
        answers = [(a.findtext("text"), a.get("fraction")) for a in el.findall("answer")]
        assert [text for text, _ in answers] == [_MD.renderInline(o.text) for o in q.options]
        right = {text for text, percent in answers if float(percent) > 0}
        assert right == {_MD.renderInline(q.option(i).text) for i in q.correct}, q.id
        assert all(_grade_ok(percent) for _, percent in answers), (q.id, answers)
        assert el.findtext("single") == ("true" if q.kind is Kind.SINGLE else "false")
        assert el.findtext("shuffleanswers") == "true"
        positive = sum(float(p) for _, p in answers if float(p) > 0)
        negative = sum(float(p) for _, p in answers if float(p) < 0)
        assert round(positive, 2) == 100  # multichoice's save check rounds the total to 2 places
        if q.kind is Kind.SINGLE:
            assert negative == 0 and max(float(p) for _, p in answers) == 100
        else:
            assert round(negative, 2) == -100, f"{q.id}: ticking every box must score 0"


def test_numeric_answers_are_the_cores_and_torchs_with_the_banks_tolerance(export):
    _, questions, by_id = export
    numeric = [q for q in questions if q.kind is Kind.NUMERIC]
    assert len(numeric) >= 8
    for q in numeric:
        _, el = by_id[q.id]
        value, tolerance = _answer_value(el)
        entry = ENTRIES[q.id]
        _, core = draw(entry.recipe, 0, q.id, entry.fixed)
        assert value * STATED[q.unit] == core == q.value == torch_expected(q), q.id
        assert grade(q, el.findtext("answer/text")).correct
        assert tolerance == 0 == q.tolerance  # every answer of the bank is whole in its unit: exact (item 1)
        assert _html(q.stem) in el.findtext("questiontext/text")  # the text with this draw's numbers


def test_every_moodle_unit_means_what_the_app_reads(export):
    """The answer written in each unit, with Moodle's multiplier, is right for the app's own grader."""
    _, questions, by_id = export
    seen = set()
    for q in (q for q in questions if q.kind is Kind.NUMERIC):
        _, el = by_id[q.id]
        value, _ = _answer_value(el)
        for unit in el.findall("units/unit"):
            name, multiplier = unit.findtext("unit_name"), Fraction(unit.findtext("multiplier"))
            assert grade(q, f"{canonical_number(value * multiplier)} {name}").correct, (q.id, name)
            seen.add(name)
    assert {"MiB", "GiB", "KiB", "×"} <= seen


def test_another_seed_draws_other_numbers_exactly_where_the_core_does():
    for lang in LANGS:
        a, b = _exported(lang, 0), _exported(lang, 1)
        qa = {q.id: q for q in load_questions(lang, 0)}
        qb = {q.id: q for q in load_questions(lang, 1)}
        numeric = [i for i, q in qa.items() if q.kind is Kind.NUMERIC]
        moved = {i for i in numeric if _answer_value(a[i][1])[0] != _answer_value(b[i][1])[0]}
        assert moved == {i for i in numeric if qa[i].value != qb[i].value}
        assert len(moved) >= 5 and not {i for i in moved if ENTRIES[i].fixed}
        for i in numeric:
            assert _answer_value(b[i][1])[0] * STATED[qb[i].unit] == qb[i].value
            drawn = ENTRIES[i].fixed is None
            assert (a[i][1].findtext("idnumber") != b[i][1].findtext("idnumber")) == drawn
            assert (a[i][1].findtext("questiontext/text") != b[i][1].findtext("questiontext/text")) == (
                qa[i].params != qb[i].params)
        same = [i for i in qa if i not in numeric]
        assert all(a[i][1].findtext("idnumber") == b[i][1].findtext("idnumber") for i in same)


def test_orderings_are_matchings_from_position_to_item(export):
    lang, questions, by_id = export
    orderings = [q for q in questions if q.kind is Kind.ORDERING]
    assert orderings
    for q in orderings:
        _, el = by_id[q.id]
        subs = el.findall("subquestion")
        assert [s.findtext("answer/text") for s in subs] == [q.option(i).text for i in q.correct]
        assert [s.findtext("text") for s in subs] == [
            _html(translate(lang, "moodle.position", n=n)) for n in range(1, len(q.correct) + 1)]
        assert _html(translate(lang, "moodle.order_instruction")) in el.findtext("questiontext/text")


def test_free_text_is_an_essay_with_the_model_answer(export):
    """Free text asks for a sentence, which string matching cannot mark: the teacher marks it."""
    _, questions, by_id = export
    texts = [q for q in questions if q.kind is Kind.TEXT]
    assert texts and all(by_id[q.id][1].get("type") == "essay" for q in texts)
    for q in texts:
        _, el = by_id[q.id]
        assert el.findtext("graderinfo/text") == _html(q.model_answer)
        assert _html(q.model_answer).removeprefix("<p>").removesuffix("</p>") in el.findtext("generalfeedback/text")


def moodle_matches(typed: str, pattern: str, usecase: bool) -> bool:
    """qtype_shortanswer_question::compare_string_with_wildcard: NFC, unescaped runs of * are wildcards, the rest
    literal, the typed text trimmed, case ignored unless usecase."""
    nfc = unicodedata.normalize("NFC", pattern)
    bits = [re.escape(bit.replace("\\*", "*")) for bit in re.split(r"(?<!\\)\*+", nfc)]
    flags = 0 if usecase else re.IGNORECASE
    return re.fullmatch(".*".join(bits), unicodedata.normalize("NFC", typed).strip(), flags) is not None


def test_short_answers_are_shortanswers_with_exactly_the_banks_accepted_forms(export):
    lang, questions, by_id = export
    shorts = [q for q in questions if q.kind is Kind.SHORT]
    assert len(shorts) >= 3
    for q in shorts:
        _, el = by_id[q.id]
        assert el.findtext("usecase") == "0"  # case-insensitive, like the app
        answers = el.findall("answer")
        assert all(a.get("fraction") == "100" and a.get("format") == "moodle_auto_format" for a in answers)
        texts = [a.findtext("text") for a in answers]
        by_case = {f.casefold(): f for f in reversed(q.accepted)}  # the bank's forms, one per spelling
        assert sorted(t.casefold() for t in texts) == sorted(by_case) and len(texts) == len(set(texts)), q.id
        assert texts[0] == q.accepted[0]  # the form the app shows as the answer is Moodle's first too
        assert all(grade(q, t.replace("\\*", "*")).correct for t in texts), q.id
        for form in q.accepted:  # every form the app accepts as written is right in Moodle too
            assert any(moodle_matches(form, t, usecase=False) for t in texts), (q.id, form)
            assert any(moodle_matches(f"  {form.upper()} ", t, usecase=False) for t in texts), (q.id, form)
        near = NEAR_MISS[q.correct[0]]
        assert not grade(q, near) and not any(moodle_matches(near, t, usecase=False) for t in texts), q.id
        assert el.findtext("questiontext/text") == _html(q.prompt) and lang == q.lang


def test_moodles_wildcard_is_escaped_in_a_short_answer():
    q = replace(next(q for q in load_questions("en") if q.kind is Kind.SHORT), accepted=("a*b", "A*B", "c"))
    assert shortanswer_forms(q) == ("a\\*b", "c")
    assert moodle_matches("a*b", "a\\*b", usecase=False) and not moodle_matches("axxb", "a\\*b", usecase=False)
    assert moodle_matches("axxb", "a*b", usecase=False)  # what an unescaped form would have let through


def test_html_in_the_text_is_escaped_xml():
    """kv-why's model answer says "g < h": HTML-escaped in the text, and that escaped again in the XML."""
    for lang in LANGS:
        data = moodle_xml(lang)
        assert b"g &amp;lt; h" in data and b"g < h" not in data
        _, el = _exported(lang)["kv-why"]
        assert "g &lt; h" in el.findtext("graderinfo/text")


def test_the_file_is_deterministic_utf8_with_the_declaration_first():
    data = moodle_xml("en", 3, 2)
    assert data == moodle_xml("en", 3, 2) != moodle_xml("en", 4, 2)
    assert data.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<quiz>')
    assert "多头" in moodle_xml("zh").decode("utf-8")


def test_sections_are_categories_once_each_and_slashes_survive():
    for lang in LANGS:
        root = ET.fromstring(moodle_xml(lang, variants=1))
        paths = [el.findtext("category/text") for el in root.findall("question") if el.get("type") == "category"]
        assert len(paths) == len(set(paths)) == len({q.section for q in load_questions(lang)})
        root = ET.fromstring(moodle_xml(lang, variants=2))
        paths = [el.findtext("category/text") for el in root.findall("question") if el.get("type") == "category"]
        drawn = [e for e in ENTRIES.values() if e.kind is Kind.NUMERIC and e.fixed is None]
        assert len(paths) == len(set(paths)) == len({q.section for q in load_questions(lang)}) + len(drawn)
    names = ["$course$", "top", "MHA Lab", "MQA/GQA and the KV cache", "/lead", "trail/", "1/√d_head"]
    assert _split_category(category_path(names)) == [n.strip() for n in names]
    assert category_path(["a/b", "c"]) == "a//b/c"


@pytest.mark.parametrize("share,text", [(Fraction(1), "100"), (Fraction(1, 3), "33.33333"), (Fraction(-1, 2), "-50"),
                                        (Fraction(0), "0"), (Fraction(1, 8), "12.5"), (Fraction(-1, 7), "-14.28571")])
def test_grades_are_written_as_moodle_writes_them(share, text):
    assert grade_text(share) == text and _grade_ok(text)


def test_the_grade_rule_is_moodles_list():
    assert sorted(round(float(g), 7) for g in GRADES) == sorted({s * g for g in MOODLE_GRADES for s in (1, -1)})


@pytest.mark.parametrize("share", [Fraction(2, 7), Fraction(1, 11), Fraction(3, 20)])
def test_a_grade_moodle_lacks_is_refused_not_rounded(share):
    with pytest.raises(ValueError):
        grade_text(share)


def test_an_unknown_language_is_a_translated_error():
    with pytest.raises(LabError) as err:
        moodle_xml("fr")
    assert err.value.key == "export_lang"


# --- the command line ---

def test_the_command_writes_the_same_bytes_as_the_function(tmp_path):
    out = tmp_path / "quiz.xml"
    run = subprocess.run([sys.executable, "-m", "mha_core.quiz", "export", "--format", "moodle", "-o", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert out.read_bytes() == moodle_xml(DEFAULT_LANG, 0)
    assert str(out) in run.stdout


def test_a_bad_format_is_one_translated_line_and_exit_2(tmp_path):
    out = tmp_path / "quiz.xml"
    run = subprocess.run([sys.executable, "-m", "mha_core.quiz", "export", "--format", "gift", "-o", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert run.stderr == translate(DEFAULT_LANG, "errors.export_format", got="gift", formats="moodle") + "\n"
    assert "Traceback" not in run.stderr and not out.exists()


def test_lang_and_seed_reach_the_file(tmp_path, capsys):
    out = tmp_path / "en.xml"
    assert main(["export", "--format", "moodle", "-o", str(out), "--lang", "en", "--seed", "5"]) == 0
    assert out.read_bytes() == moodle_xml("en", 5)
    assert capsys.readouterr().out.startswith(f"Wrote {question_count('en', 5)} questions ")
    assert main(["export", "--format", "moodle", "-o", str(out), "--lang", "en", "--seed", "5", "--variants", "3"]) == 0
    assert out.read_bytes() == moodle_xml("en", 5, 3) != moodle_xml("en", 5)
    assert "3 variants" in capsys.readouterr().out


@pytest.mark.parametrize("args,key", [
    (["export", "--format", "moodle", "-o", "{out}", "--seed", "x"], "export_seed"),
    (["export", "--format", "moodle", "-o", "{out}", "--seed", "-1"], "export_seed"),
    (["export", "--format", "moodle", "-o", "{out}", "--lang", "fr"], "export_lang"),
    (["export", "--format", "moodle", "-o", "{out}", "--variants", "0"], "export_variants"),
    (["export", "--format", "moodle", "-o", "{out}", "--variants", "2.5"], "export_variants"),
    (["export", "--format", "moodle", "-o", "{out}", "--variants", str(MAX_VARIANTS + 1)], "export_variants"),
    (["export", "--format", "moodle"], "export_usage"),
    (["export", "--format", "moodle", "-o", "{out}", "--colour"], "export_usage"),
    (["import", "--format", "moodle", "-o", "{out}"], "export_usage"),
    ([], "export_usage"),
])
def test_bad_arguments_exit_2_with_one_translated_line(tmp_path, capsys, args, key):
    out = tmp_path / "x.xml"
    assert main([a.format(out=out) for a in args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    expected = translate(DEFAULT_LANG, f"errors.{key}", got="\x00", langs="", usage="", max=MAX_VARIANTS)
    assert err.startswith(expected.split("\x00")[0])
    assert not out.exists()


def test_messages_follow_lang_and_an_unwritable_file_exits_1(tmp_path, capsys):
    assert main(["export", "--format", "moodle", "-o", str(tmp_path / "x.xml"), "--lang", "en", "--seed", "x"]) == 2
    assert capsys.readouterr().err == translate("en", "errors.export_seed", got="x") + "\n"
    assert main(["export", "--format", "moodle", "-o", str(tmp_path / "no" / "x.xml"), "--lang", "en"]) == 1
    assert capsys.readouterr().err.startswith("Could not write ")


# --- per-student variants (issue 24) ---

def test_each_drawn_question_comes_in_variants_in_its_own_category():
    """A class gets per-student numbers: every drawn question as DEFAULT_VARIANTS distinct draws in a category of
    its own under its section (for a quiz's "random question"), each variant the bank's question for its seed,
    with the right answer, exact; every other question once, in its section, as with one variant."""
    for lang in LANGS:
        parsed = _parse(moodle_xml(lang))
        single = _exported(lang, 0)
        by_bank: dict[str, list[tuple[list[str], ET.Element]]] = {}
        for cat, el in parsed:
            by_bank.setdefault(_bank_id(el.findtext("idnumber")), []).append((cat, el))
        assert len({el.findtext("idnumber") for _, el in parsed}) == len(parsed)
        for qid, entry in ENTRIES.items():
            items = by_bank[qid]
            section = translate(lang, f"quiz.sections.{entry.section}")
            if entry.kind is not Kind.NUMERIC or entry.fixed is not None:
                assert len(items) == 1 and ET.tostring(items[0][1]) == ET.tostring(single[qid][1]), qid
                continue
            seeds = variant_seeds(qid, 0, DEFAULT_VARIANTS)
            assert len(items) == len(seeds) == DEFAULT_VARIANTS, qid
            folders = {tuple(cat) for cat, _ in items}
            assert len(folders) == 1 and list(folders.pop())[:4] == ["$course$", "top", "MHA Lab", section]
            drawn = set()
            for (_, el), seed in zip(items, seeds, strict=True):
                q = next(x for x in load_questions(lang, seed) if x.id == qid)
                assert el.findtext("idnumber") == f"mha-{qid}-seed{seed}"
                value, tolerance = _answer_value(el)
                assert value * STATED[q.unit] == q.value == torch_expected(q) and tolerance == 0
                assert el.findtext("questiontext/text") == _html(prompt_for(q, Medium.MOODLE))
                drawn.add(tuple(sorted(q.params.items())))
            assert len(drawn) == len(items), f"{qid}: two variants with the same numbers"


def test_a_variant_category_tells_the_teacher_how_to_use_it():
    root = ET.fromstring(moodle_xml("en", variants=3))
    infos = [el.findtext("info/text") for el in root.findall("question") if el.get("type") == "category"]
    assert [i for i in infos if i] and all("random question" in i for i in infos if i)


def test_variants_are_checked():
    for bad in (0, -1, MAX_VARIANTS + 1, "x", True):
        with pytest.raises(LabError) as err:
            moodle_xml("en", variants=bad)
        assert err.value.key == "export_variants"
    assert question_count("en", 0, 1) == len(structure()[1])


# --- the text per medium (issue 24, items 10, 11, 26) ---

def test_moodle_texts_carry_moodles_instructions_once_and_no_app_label():
    for lang in LANGS:
        app_ordering = translate(lang, "quiz.order_label")
        for q in load_questions(lang, 0):
            text = prompt_for(q, Medium.MOODLE)
            assert q.label not in text if q.label else True
            assert ("Self-test" not in text) and ("自测题" not in text), q.id
            assert "select them in order" not in text.lower() and "按顺序依次选择" not in text, q.id
            assert app_ordering not in text
            for key in ("moodle.order_instruction", "moodle.text_instruction", "moodle.count_instruction",
                        "quiz.instruction_text"):
                assert text.count(translate(lang, key)) <= 1, (q.id, key)
            wants = {Kind.ORDERING: "moodle.order_instruction", Kind.TEXT: "moodle.text_instruction"}.get(q.kind)
            if q.kind is Kind.NUMERIC and q.unit == "count":
                wants = "moodle.count_instruction"
            if wants:
                assert text.endswith(translate(lang, wants)), (q.id, text)
    assert "K" in translate("en", "moodle.count_instruction") and "M" in translate("zh", "moodle.count_instruction")
