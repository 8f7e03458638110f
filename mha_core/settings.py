"""The walkthrough's shared settings, each declared once; defaults, links, kept keys and widgets derive from it.

A ``Setting`` says everything the rest of the app needs about one control: its session key, type, range or
options, default, URL key and catalog label. ``SETTINGS`` lists them in URL order. Adding a shared control is
one entry here plus its use (its widget in ``mha_core.ui.sidebar`` or on a page). Pure: no Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from mha_core.i18n import DEFAULT_LANG, LANGS
from mha_core.inputs import WEIGHT_MODES
from mha_core.toy_config import DEFAULT_RECIPE


@dataclass(frozen=True)
class Setting:
    """One shared control."""

    key: str                              # session-state (and widget) key
    kind: type                            # bool, int, float or str
    default: object                       # None: filled at run time (the browser's language, its default sentence)
    query: str | None = None              # URL query key; None: links do not carry it
    label: str | None = None              # catalog key of the widget's label
    help: str | None = None               # catalog key of the widget's help text
    bounds: tuple[float, float] | None = None  # a number's inclusive range
    step: float = 1                       # a number's step within its range (a slider's grid)
    options: tuple = ()                   # the values allowed (an int not among them snaps to the nearest)
    max_chars: int | None = None          # a text's longest length


LANG = Setting("lang", str, None, "lang", "common.language", options=LANGS)
H = Setting("h", int, 4, "h", "controls.h", "controls.h_help", bounds=(1, 16))
D_HEAD = Setting("d_head", int, 16, "dh", "controls.d_head", "controls.d_head_help", bounds=(4, 64), step=4)
# "Keep d_model fixed" is on by default, so that moving h keeps the budget (the lesson); the free mode starts
# from the same shape (4 heads of 16 = 64), so switching the toggle off changes nothing on screen.
FIXED = Setting("fixed", bool, True, "fixed", "controls.fixed", "controls.fixed_help")
D_MODEL = Setting("d_model", int, 64, "dm", options=(64, 128, 256, 512))  # label: the symbol "d_model" itself
H_DIV = Setting("h_div", int, 4, "hd", "controls.h", "controls.h_help", bounds=H.bounds)
SENTENCE = Setting("sentence", str, None, "s", "controls.sentence", "controls.sentence_help", max_chars=400)
WEIGHT_MODE = Setting("weight_mode", str, "illustrative", "w", "controls.weights", "controls.weights_help",
                      options=WEIGHT_MODES)
SEED = Setting("seed", int, 0, "seed", "controls.seed", bounds=(0, 9999))
CAUSAL = Setting("causal", bool, False, "causal", "attend.causal", "attend.causal_help")
HEAD = Setting("head", int, 0, "head", "attend.pick_head", bounds=(0, H.bounds[1] - 1))
TABLES = Setting("tables", bool, False, None, "common.tables", "common.tables_help")

SETTINGS: tuple[Setting, ...] = (LANG, H, D_HEAD, FIXED, D_MODEL, H_DIV, SENTENCE, WEIGHT_MODE, SEED, CAUSAL, HEAD,
                                 TABLES)

# The generation page's controls (its own, not shared nor linked): declared here so that a forged value (a
# temperature of 1e-320, a top-k of -5, a seed of NaN) is clamped by the same rule as a link's (``clamp``).
GEN_TEMPERATURE = Setting("gen_temperature", float, 1.0, None, "generate.temperature", "generate.temp_help",
                          bounds=(0.0, 2.0), step=0.1)
GEN_TOP_K = Setting("gen_top_k", int, DEFAULT_RECIPE.config.vocab_size, None, "generate.top_k", "generate.top_k_help",
                    options=(1, 2, 3, 5, 10, DEFAULT_RECIPE.config.vocab_size))  # the last: no cut
GEN_SEED = Setting("gen_seed", int, 0, None, "generate.seed", "generate.seed_help", bounds=(0, 9999))
GENERATION: tuple[Setting, ...] = (GEN_TEMPERATURE, GEN_TOP_K, GEN_SEED)
LINKED: tuple[Setting, ...] = tuple(s for s in SETTINGS if s.query)  # the ones a shared link carries


@dataclass(frozen=True)
class Settings:
    """What every pipeline page computes from: consistent (d_model = n_heads × d_head) and hashable (a cache key)."""

    sentence: str
    d_model: int
    n_heads: int
    d_head: int
    weight_mode: str = "illustrative"
    seed: int = 0
    causal: bool = False
    fixed_d_model: bool = True
    lang: str = DEFAULT_LANG


def snap(value: object, options: Sequence, fallback: object = None) -> object:
    """``value`` if it is one of ``options``, else the option nearest to the number it holds (ties to the earlier
    option), also when it is an old label such as "8 · MHA …" (a select box whose options and labels both changed
    can hand one back); ``fallback`` (default: the first option) when it holds no number."""
    if value in options:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        number = None
    elif isinstance(value, str):
        head = value.strip().split(" ", 1)[0]
        number = int(head) if head.lstrip("-").isdigit() else None
    else:
        number = value
    numeric = [o for o in options if isinstance(o, int | float) and not isinstance(o, bool)]
    if number is None or not numeric:
        return options[0] if fallback is None else fallback
    return min(numeric, key=lambda o: abs(o - number))


def _number(value: object) -> float | None:
    """The finite number ``value`` holds (a number, or text that reads as one), else None (NaN, infinity, a bool,
    None, other text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        return None
    return number if math.isfinite(number) else None


def clamp(setting: Setting, value: object) -> tuple[object, bool]:
    """``value`` made valid for a numeric ``setting``, and whether it had to change: snapped to the nearest option,
    or rounded to the step and clamped to the range; the setting's default when it holds no finite number (NaN,
    infinity, text, None). The one rule for a link's values and for widget values a client may have forged."""
    number = _number(value)
    if number is None:
        return setting.default, True
    if setting.options:
        clean = snap(number, setting.options)
    elif setting.bounds is not None:
        lo, hi = setting.bounds
        clean = max(lo, min(hi, round(number / setting.step) * setting.step))
    else:
        clean = number
    clean = int(round(clean)) if setting.kind is int else round(float(clean), 9)  # 3 × 0.1 is 0.3, not 0.300…04
    return clean, clean != value


def head_divisors(d_model: int) -> list[int]:
    """Head counts that cut d_model into equal heads of at least the smallest d_head."""
    return [h for h in range(H.bounds[0], H.bounds[1] + 1) if d_model % h == 0 and d_model // h >= D_HEAD.bounds[0]]


def resolve(values: Mapping[str, object], lang: str = DEFAULT_LANG) -> Settings:
    """The settings as the controls left them, made consistent (d_model = h × d_head, or fixed and h a divisor)."""
    if values[FIXED.key]:
        d_model = int(values[D_MODEL.key])
        h = int(snap(int(values[H_DIV.key]), head_divisors(d_model)))
        d_head = d_model // h
    else:
        h, d_head = int(values[H.key]), int(values[D_HEAD.key])
        d_model = h * d_head
    return Settings(sentence=str(values[SENTENCE.key]), d_model=d_model, n_heads=h, d_head=d_head,
                    weight_mode=str(values[WEIGHT_MODE.key]), seed=int(values[SEED.key]),
                    causal=bool(values[CAUSAL.key]), fixed_d_model=bool(values[FIXED.key]), lang=lang)


@dataclass(frozen=True)
class ShapeControls:
    """The controls of one layer shape: a "keep d_model fixed" switch, then d_model and h among the head counts
    that divide it (``heads_of``), or else h and d_head free. The sidebar's and the cost lab's are two of these."""

    fixed: Setting
    d_model: Setting
    h_div: Setting
    h: Setting
    d_head: Setting
    heads_of: Callable[[int], Sequence[int]]  # the head counts the fixed mode offers for a d_model


def carried_shape(values: Mapping[str, object], shape: ShapeControls | None = None) -> dict[str, int]:
    """After "keep d_model fixed" flips: the new mode's controls set to the shape on screen, as near as their ranges
    allow (so switching modes does not jump to another model). ``shape``: the sidebar's controls by default; every
    value read is clamped first (a callback runs before the page can clean forged state)."""
    shape = shape or SIDEBAR_SHAPE

    def read(setting: Setting) -> int:
        return int(clamp(setting, values[setting.key] if setting.key in values else setting.default)[0])

    if values[shape.fixed.key]:  # just switched on: from h × d_head
        h = read(shape.h)
        d_model = int(clamp(shape.d_model, h * read(shape.d_head))[0])
        return {shape.d_model.key: d_model, shape.h_div.key: int(snap(h, shape.heads_of(d_model)))}
    d_model = read(shape.d_model)
    h = int(clamp(shape.h, snap(read(shape.h_div), shape.heads_of(d_model)))[0])
    return {shape.h.key: h, shape.d_head.key: int(clamp(shape.d_head, d_model / h)[0])}


SIDEBAR_SHAPE = ShapeControls(FIXED, D_MODEL, H_DIV, H, D_HEAD, head_divisors)
