"""The walkthrough's shared settings: defaults, persistence across pages, and a typed view."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from mha_core.i18n import LANGS, translate
from mha_core.limits import D_HEAD_RANGE, D_HEAD_STEP, D_MODEL_CHOICES, H_RANGE
from mha_core.ui.i18n import lang

# Widget keys whose values must survive switching pages (Streamlit drops the state of
# widgets that a run does not draw; re-assigning them at the top of each run keeps them).
PERSISTENT_KEYS = (
    "lang", "h", "d_head", "fixed", "d_model", "h_div", "sentence", "weight_mode", "seed", "causal",
    "head", "tables",
)

# "Keep d_model fixed" is on by default, so that moving h keeps the budget (the lesson); the free mode starts
# from the same shape (4 heads of 16 = 64), so switching the toggle off changes nothing on screen.
DEFAULTS: dict[str, object] = {
    "h": 4, "d_head": 16, "fixed": True, "d_model": 64, "h_div": 4,
    "weight_mode": "illustrative", "seed": 0, "causal": False, "head": 0, "tables": False,
}


@dataclass(frozen=True)
class Settings:
    """What every pipeline page computes from."""

    lang: str
    n_heads: int
    d_head: int
    d_model: int
    fixed_d_model: bool
    sentence: str
    weight_mode: str
    seed: int
    causal: bool


def head_divisors(d_model: int) -> list[int]:
    """Head counts that cut d_model into equal heads of at least D_HEAD_RANGE[0] dims."""
    return [h for h in range(H_RANGE[0], H_RANGE[1] + 1)
            if d_model % h == 0 and d_model // h >= D_HEAD_RANGE[0]]


_MEMORY = "_remembered"


def remember(*keys: str) -> None:
    """Keep a page's own widget values for its next visit (call after drawing the widgets).

    Streamlit forgets a widget's value on any run that does not draw it; ``init_state`` puts
    remembered values back before the page draws its widgets again.
    """
    ss = st.session_state
    ss.setdefault(_MEMORY, {}).update({k: ss[k] for k in keys if k in ss})


def init_state() -> None:
    """Fill defaults once and keep widget values alive across pages."""
    ss = st.session_state
    for key in PERSISTENT_KEYS:
        if key in ss:
            ss[key] = ss[key]
    for key, value in ss.get(_MEMORY, {}).items():
        ss.setdefault(key, value)
    for key, value in DEFAULTS.items():
        ss.setdefault(key, value)
    ss.setdefault("sentence", translate(lang(), "common.default_sentence"))


def on_language_change() -> None:
    """Swap the default sentence too, unless the student typed their own."""
    ss = st.session_state
    for other in LANGS:
        if other != ss["lang"] and ss.get("sentence") == translate(other, "common.default_sentence"):
            ss["sentence"] = translate(ss["lang"], "common.default_sentence")


def carry_shape() -> None:
    """on_change of "Keep d_model fixed": the other mode's controls start from the shape on screen (as near as
    their ranges allow), so switching modes does not jump to another model."""
    ss = st.session_state
    if ss["fixed"]:
        d_model = min(D_MODEL_CHOICES, key=lambda c: (abs(c - int(ss["h"]) * int(ss["d_head"])), c))
        ss["d_model"] = d_model
        ss["h_div"] = min(head_divisors(d_model), key=lambda h: (abs(h - int(ss["h"])), h))
    else:
        d_model = int(ss["d_model"])
        divisors = head_divisors(d_model)
        h = int(ss["h_div"]) if int(ss["h_div"]) in divisors else divisors[-1]
        d_head = round(d_model / h / D_HEAD_STEP) * D_HEAD_STEP
        ss["h"], ss["d_head"] = h, max(D_HEAD_RANGE[0], min(D_HEAD_RANGE[1], d_head))


def current() -> Settings:
    """The settings as the sidebar left them, made consistent (d_model = h × d_head or fixed)."""
    ss = st.session_state
    if ss["fixed"]:
        d_model = int(ss["d_model"])
        divisors = head_divisors(d_model)
        h = int(ss["h_div"]) if int(ss["h_div"]) in divisors else divisors[-1]
        d_head = d_model // h
    else:
        h, d_head = int(ss["h"]), int(ss["d_head"])
        d_model = h * d_head
    return Settings(
        lang=lang(), n_heads=h, d_head=d_head, d_model=d_model, fixed_d_model=bool(ss["fixed"]),
        sentence=str(ss["sentence"]), weight_mode=str(ss["weight_mode"]), seed=int(ss["seed"]),
        causal=bool(ss["causal"]),
    )


def valid_choice(key: str, options: list | tuple | range, default: object) -> None:
    """Before drawing a select box whose option labels change with other settings: make its stored value
    one of ``options`` (ints) again: the nearest one to the stored number. (When both its options and their
    labels change, Streamlit can hand back the old *label*, e.g. "8 · MHA …", instead of the value 8; a
    leading number in it is read back.)"""
    ss = st.session_state
    if key not in ss:             # first draw: the widget would otherwise open on its first option
        ss[key] = default
        return
    value = ss[key]
    if value in options:
        return
    head = str(value).strip().split(" ", 1)[0]
    if not head.lstrip("-").isdigit():
        ss[key] = default
        return
    number = int(head)  # an int no longer offered (or read from a label): the nearest one that is
    ss[key] = min(options, key=lambda o: abs(o - number))
