"""What goes into the handout, as pure data from the core: settings, shapes, counts, questions, the glossary (if asked).

Nothing here typesets; ``mha_core.handout.pdf`` lays this out. Every number is computed here by ``mha_core``
(the walkthrough's trace for the shapes, ``counts.param_counts`` for the parameters, the quiz bank for the
questions and their answers), never typed.
"""

from __future__ import annotations

from dataclasses import dataclass

from mha_core.cost_model import ModelShape
from mha_core.errors import LabError
from mha_core.glossary import Term, load_glossary
from mha_core.handout.worked import Worked, worked_example
from mha_core.i18n import LANGS, translate
from mha_core.inputs import Tokens, tokenize
from mha_core.quiz import Question, load_questions, presented_order
from mha_core.settings import D_HEAD, D_MODEL, SENTENCE, H, Settings
from mha_core.walkthrough import build_walkthrough

# A spread over the knowledge point: the pipeline's order and shapes, why many heads, W^O, the budget, scaling.
QUESTION_IDS = ("pipeline-order", "d-head", "head-output-shape", "concat-shape", "why-many-heads", "self-test-2",
                "mha-params", "scale-why")
QUESTION_SEED = 16  # numeric questions are drawn for this seed (the same handout every time)
D_HEAD_MIN = 1      # the handout also prints the hand-sized d_head = 2, below the sidebar's slider
D_HEAD_MAX = max(D_MODEL.options)                # the widest head the app shows (fixed d_model, h = 1)
D_MODEL_MAX = H.bounds[1] * D_HEAD.bounds[1]     # the widest layer the app computes (free mode, both at maximum)


@dataclass(frozen=True)
class ShapeRow:
    """One tensor of the pipeline: its symbol (handout markup), its live shape, and the catalog key of its meaning."""

    symbol: str
    shape: tuple[int, ...]
    meaning: str


@dataclass(frozen=True)
class Handout:
    """Everything the PDF prints, in one language."""

    lang: str
    settings: Settings
    tokens: Tokens
    shapes: tuple[ShapeRow, ...]
    params: dict[str, int]
    full_width_params: int
    worked: Worked
    questions: tuple[Question, ...]
    orders: tuple[tuple[str, ...], ...]  # each question's option ids in printed order (A, B, C, …)
    glossary: tuple[Term, ...]   # empty unless asked for: the class handout stays within four pages


def check_args(lang: str, h: object, d_head: object, sentence: str | None) -> tuple[int, int, str]:
    """(h, d_head, sentence) checked, or LabError with the reason (the CLI passes text, the app numbers)."""
    if lang not in LANGS:
        raise LabError("handout_lang", code=lang, langs=", ".join(LANGS))
    h_int, d_int = _whole(h), _whole(d_head)
    lo, hi = H.bounds
    if h_int is None or not lo <= h_int <= hi:
        raise LabError("handout_h", value=h, lo=lo, hi=hi)
    if d_int is None or not D_HEAD_MIN <= d_int <= D_HEAD_MAX:
        raise LabError("handout_d_head", value=d_head, lo=D_HEAD_MIN, hi=D_HEAD_MAX)
    if h_int * d_int > D_MODEL_MAX:
        raise LabError("handout_d_model", d_model=h_int * d_int, max=D_MODEL_MAX)
    text = translate(lang, "common.default_sentence") if sentence is None else sentence
    if len(text) > SENTENCE.max_chars:
        raise LabError("handout_sentence_long", n=len(text), max=SENTENCE.max_chars)
    return h_int, d_int, text


def check_handout(lang: str, h: object, d_head: object, sentence: str | None) -> None:
    """Raise the LabError a handout for these arguments would raise, without building it (quick: the arguments
    and the tokenizer), so a page can show the message before it offers a download."""
    _, _, text = check_args(lang, h, d_head, sentence)
    tokenize(text)


def _whole(value: object) -> int | None:
    """An int from an int or its decimal text ("4", not "4.5", "x" or True); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value.strip())
    return None


def live_shapes(s: Settings) -> tuple[Tokens, tuple[ShapeRow, ...]]:
    """The tokens and every tensor's shape, read off the core's trace for these settings (LabError on bad input)."""
    wt = build_walkthrough(s)
    trace = wt.trace
    mats = ModelShape(s.d_model, s.n_heads, s.n_heads, s.d_head).matrix_shapes()
    rows = (
        ShapeRow("X", trace.x.shape, "x"),
        ShapeRow("W^{Q}, W^{K}, W^{V}", mats["q"], "w_qkv"),
        ShapeRow("Q, K, V", trace.q.shape, "qkv"),
        ShapeRow("Q_{i}, K_{i}, V_{i}", trace.q_heads.shape[1:], "qkv_i"),
        ShapeRow("Q_{i}K_{i}ᵀ / √d_head", trace.scores.shape[1:], "scores"),
        ShapeRow("head_{i}", trace.head_outputs.shape[1:], "head_i"),
        ShapeRow("Concat(head_{1}, …, head_{h})", trace.concat.shape, "concat"),
        ShapeRow("W^{O}", mats["o"], "w_o"),
        ShapeRow("MultiHead(X)", trace.output.shape, "output"),
    )
    return wt.tokens, rows


def build_handout(lang: str, h: object = 2, d_head: object = 2, sentence: str | None = None,
                  glossary: bool = False) -> Handout:
    """Check the arguments and gather the handout's content (LabError with the reason when they are bad); the
    glossary's pages only when ``glossary`` is true (three to four pages: too many for a 45-minute class)."""
    h_int, d_int, text = check_args(lang, h, d_head, sentence)
    s = Settings(sentence=text, d_model=h_int * d_int, n_heads=h_int, d_head=d_int, fixed_d_model=False, lang=lang)
    tokens, shapes = live_shapes(s)
    shape = ModelShape(s.d_model, s.n_heads, s.n_heads, s.d_head)
    full_width = ModelShape(s.d_model, 1, 1, s.d_model)
    bank = {q.id: q for q in load_questions(lang, QUESTION_SEED)}
    questions = tuple(bank[qid] for qid in QUESTION_IDS)
    return Handout(
        lang=lang, settings=s, tokens=tokens, shapes=shapes, params=shape.layer_params(),
        full_width_params=full_width.layer_params()["total"], worked=worked_example(), questions=questions,
        orders=tuple(presented_order(q, QUESTION_SEED) for q in questions),
        glossary=load_glossary() if glossary else (),
    )


__all__ = ["QUESTION_IDS", "Handout", "ShapeRow", "build_handout", "check_args", "check_handout", "live_shapes"]
