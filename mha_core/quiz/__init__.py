"""The quiz: a bilingual question bank built from the knowledge point's self-test questions, numeric
questions drawn per student and answered by mha_core.counts, one grader, and progress.

``load_questions(lang, seed=0)`` and ``grade(question, answer)`` are the stable contracts. Nothing here
imports Streamlit; the page's widgets live in ``mha_core.ui.quiz``.
"""

from mha_core.quiz.bank import load_questions, sections
from mha_core.quiz.grading import describe, grade
from mha_core.quiz.model import Grade, Kind, Option, Question, SelfMark
from mha_core.quiz.numbers import canonical_number, format_value, parse_number
from mha_core.quiz.progress import Attempt, Progress, Score, Summary, presented_order
from mha_core.quiz.progress_store import ProgressStore, new_student_id, student_seed, valid_student_id

__all__ = [
    "Attempt",
    "Grade",
    "Kind",
    "Option",
    "Progress",
    "ProgressStore",
    "Question",
    "Score",
    "SelfMark",
    "Summary",
    "canonical_number",
    "describe",
    "format_value",
    "grade",
    "load_questions",
    "new_student_id",
    "parse_number",
    "presented_order",
    "sections",
    "student_seed",
    "valid_student_id",
]
