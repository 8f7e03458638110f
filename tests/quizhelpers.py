"""Quiz helpers shared by the quiz, quiz-page, class-page and browser tests: the numeric answers worked out without
mha_core (torch modules' sizes, K/V tensors' bytes), and a student answering one question on the page."""

from __future__ import annotations

from fractions import Fraction

import torch
from streamlit.testing.v1 import AppTest
from torch import nn

from mha_core.quiz import Kind, Question, presented_order
from mha_core.ui.quiz import answer_key, button_key

MIB, GIB = 2**20, 2**30
STATED = {"count": 1, "ratio": 1, "MiB": MIB, "GiB": GIB}  # base units per stated unit of a numeric question
# A plausible wrong answer per short answer id: the near miss a student would type (the neighbouring concept).
NEAR_MISS = {"softmax": "sigmoid", "W^O": "W^Q", "MQA": "GQA"}


# --- answers from first principles: torch modules' sizes and K/V tensors' bytes ---

def _mha_params(d_model: int, h: int, bias: bool) -> int:
    return sum(p.numel() for p in nn.MultiheadAttention(d_model, h, bias=bias, device="meta").parameters())


def _gqa_params(d_model: int, h: int, g: int, d_head: int) -> int:
    layers = [nn.Linear(d_model, h * d_head, bias=False, device="meta"),
              nn.Linear(d_model, g * d_head, bias=False, device="meta"),
              nn.Linear(d_model, g * d_head, bias=False, device="meta"),
              nn.Linear(h * d_head, d_model, bias=False, device="meta")]
    return sum(p.numel() for layer in layers for p in layer.parameters())


def _kv_bytes(layers: int, kv_heads: int, d_head: int, seq_len: int, batch: int = 1) -> int:
    """What caching K and V in fp16 takes: one (K, V) pair of (batch, kv_heads, seq_len, d_head) per layer."""
    t = torch.empty((layers, 2, batch, kv_heads, seq_len, d_head), dtype=torch.float16, device="meta")
    return t.numel() * t.element_size()


def torch_expected(q: Question) -> Fraction:
    """A numeric question's answer, in base units, computed without mha_core."""
    p = q.params
    by_id = {
        "self-test-1a": lambda: nn.MultiheadAttention(p["d_model"], p["h"], device="meta").head_dim,
        "d-head": lambda: nn.MultiheadAttention(p["d_model"], p["h"], device="meta").head_dim,
        "wo-params": lambda: nn.MultiheadAttention(p["d_model"], p["h"], bias=False,
                                                   device="meta").out_proj.weight.numel(),
        "mha-params": lambda: _mha_params(p["d_model"], p["h"], bias=False),
        "mha-params-bias": lambda: _mha_params(p["d_model"], p["h"], bias=True),
        "gqa-params": lambda: _gqa_params(p["d_model"], p["h"], p["g"], p["d_head"]),
        "kv-mha": lambda: _kv_bytes(p["layers"], p["h"], p["d_head"], p["seq_len"], p["batch"]),
        "kv-gqa": lambda: _kv_bytes(p["layers"], p["g"], p["d_head"], p["seq_len"], p["batch"]),
        "kv-long": lambda: _kv_bytes(p["layers"], p["g"], p["d_head"], p["seq_len"], p["batch"]),
        "kv-ratio": lambda: Fraction(_kv_bytes(p["layers"], p["h"], p["d_head"], p["seq_len"]),
                                     _kv_bytes(p["layers"], p["g"], p["d_head"], p["seq_len"])),
    }
    return Fraction(by_id[q.id]())


def typed(q: Question, value: Fraction) -> str:
    """How a student would type ``value`` (base units) in the question's stated unit."""
    shown = value / STATED[q.unit]
    assert shown.denominator == 1, f"{q.id}: {shown} is not whole in {q.unit}"
    return str(shown.numerator)


def numeric_text(q: Question, right: bool) -> str:
    """The number typed, worked out independently (torch), in the question's unit, with separators."""
    value = torch_expected(q) / STATED[q.unit]
    assert value.denominator == 1
    return f"{value.numerator + (0 if right else 1):,}"


def short_text(q: Question, right: bool) -> str:
    """A short answer as a student would type it: an accepted spelling (not the one shown), else the near miss."""
    return q.accepted[-1] if right else NEAR_MISS[q.correct[0]]


def answer(at: AppTest, q: Question, seed: int, right: bool) -> None:
    """Fill in one question the way a student would, then submit it."""
    key = answer_key(q.id)
    if q.kind is Kind.TEXT:
        at.text_area(key=key).input("Concatenation only places the heads side by side; W^O fuses them.")
        at.button(key=button_key("reveal", q.id)).click().run()
        at.button(key=button_key("self_right" if right else "self_wrong", q.id)).click().run()
        return
    if q.kind is Kind.SINGLE:
        wrong = next(o for o in presented_order(q, seed) if o != q.correct[0])
        at.radio(key=key).set_value(q.correct[0] if right else wrong)
    elif q.kind is Kind.MULTIPLE:
        for o in q.correct if right else q.option_ids:
            at.checkbox(key=answer_key(q.id, o)).check()
    elif q.kind is Kind.ORDERING:
        at.multiselect(key=key).set_value(list(q.correct) if right else list(reversed(q.correct)))
    elif q.kind is Kind.SHORT:
        at.text_input(key=key).input(short_text(q, right))
    else:
        at.text_input(key=key).input(numeric_text(q, right))
    at.button(key=button_key("check", q.id)).click().run()
