"""Numeric questions: draw a layer shape from a seed, and compute the answer with mha_core.counts.

Answers are never stored: each recipe's ``value`` calls the same counting functions the other pages
use, and its ``wrong`` the documented wrong answers a student is likely to give (bias vs no bias, h vs g, with or
without W^O, …), computed the same way, so that no answer band may ever cover one of them. Draws are chosen so
that answers in the stated unit are whole numbers (tests check many seeds), and a question that says GQA draws
1 < g < h (g = 1 would be MQA, g = h MHA).

``text_fields`` gives the figures some texts quote from published models (mha_core.presets): computed, never typed.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from fractions import Fraction
from types import MappingProxyType

from mha_core.cost_model import kv_crossover_tokens
from mha_core.counts import divisors, kv_cache_bytes, param_counts
from mha_core.presets import head_spread, preset
from mha_core.units import format_bytes

Params = Mapping[str, int]


@dataclass(frozen=True)
class Recipe:
    """How to draw a question's numbers (``draw``), compute its answer from them (``value``) and the documented
    wrong answers (``wrong``: misconception → value, in base units)."""

    draw: Callable[[random.Random], dict[str, int]]
    value: Callable[[Params], Fraction]
    wrong: Callable[[Params], dict[str, Fraction]]


def _shape(rng: random.Random) -> dict[str, int]:
    h = rng.choice((2, 4, 6, 8, 12, 16, 32))
    return {"d_model": h * rng.choice((32, 48, 64, 80, 96, 128)), "h": h}


def _gqa_kv_heads(rng: random.Random, h: int) -> int:
    """A K/V head count that makes GQA: a divisor of h strictly between 1 (MQA) and h (MHA)."""
    return rng.choice([g for g in divisors(h) if 1 < g < h])


def _grouped(rng: random.Random) -> dict[str, int]:
    h = rng.choice((8, 12, 16, 24, 32, 48, 64))
    d_head = rng.choice((64, 128))
    g = _gqa_kv_heads(rng, h)
    return {"d_model": h * d_head, "h": h, "g": g, "d_head": d_head}


def _cache_mha(rng: random.Random) -> dict[str, int]:
    return {"layers": rng.choice((12, 16, 24, 32, 48)), "h": rng.choice((8, 12, 16, 32)),
            "d_head": rng.choice((64, 128)), "seq_len": rng.choice((1024, 2048, 4096, 8192)),
            "batch": rng.choice((1, 2, 4, 8))}


def _cache_gqa(rng: random.Random) -> dict[str, int]:
    h = rng.choice((16, 32, 64))
    return {"layers": rng.choice((16, 24, 32, 40, 48, 64, 80)), "h": h, "g": rng.choice((2, 4, 8)),
            "d_head": 128, "seq_len": rng.choice((2048, 4096, 8192)), "batch": rng.choice((1, 2, 4))}


def _cache_long(rng: random.Random) -> dict[str, int]:
    g = rng.choice((2, 4, 8))
    return {"layers": rng.choice((32, 64)), "h": g * rng.choice((4, 8)), "g": g, "d_head": 128,
            "seq_len": rng.choice((32768, 65536, 131072)), "batch": 1}


def _ratio(rng: random.Random) -> dict[str, int]:
    h = rng.choice((16, 32, 64))
    return {"layers": rng.choice((24, 32, 48)), "h": h, "g": _gqa_kv_heads(rng, h),
            "d_head": 128, "seq_len": 4096}


def _d_head(p: Params) -> Fraction:
    """param_counts' W_Q is d_model × h·d_head: dividing back out keeps one validation for every page."""
    return Fraction(param_counts(p["d_model"], p["h"])["q"], p["d_model"] * p["h"])


def _cache(p: Params, kv_heads: int) -> int:
    return kv_cache_bytes(n_layers=p["layers"], n_kv_heads=kv_heads, d_head=p["d_head"],
                          seq_len=p["seq_len"], batch=p.get("batch", 1))


def _params(p: Params, *, g: str = "h", bias: bool = False) -> Fraction:
    """W_Q, W_K, W_V, W_O together, with ``g`` K/V heads (a key of p), as mha_core.counts counts them."""
    return Fraction(param_counts(p["d_model"], p["h"], n_kv_heads=p[g], bias=bias)["total"])


def _no_wo(p: Params, *, g: str = "h", bias: bool = False) -> Fraction:
    """The same count without W^O (a student who stops at the concatenation)."""
    counts = param_counts(p["d_model"], p["h"], n_kv_heads=p[g], bias=bias)
    return Fraction(counts["total"] - counts["o"])


def _wrong_d_head(p: Params) -> dict[str, Fraction]:
    return {"not_split": Fraction(p["d_model"]), "times_h": Fraction(p["d_model"] * p["h"]),
            "h_itself": Fraction(p["h"])}


def _wrong_mha(p: Params) -> dict[str, Fraction]:
    per_head = param_counts(p["d_model"], 1, d_head=p["d_model"])["total"]  # "every head has full matrices"
    return {"with_bias": _params(p, bias=True), "without_wo": _no_wo(p), "full_per_head": Fraction(p["h"] * per_head)}


def _wrong_mha_bias(p: Params) -> dict[str, Fraction]:
    return {"without_bias": _params(p), "without_wo": _no_wo(p, bias=True),
            "weights_bias_only_qkv": _params(p, bias=True) - p["d_model"]}


def _wrong_wo(p: Params) -> dict[str, Fraction]:
    counts = param_counts(p["d_model"], p["h"])
    return {"one_head_slice": Fraction(counts["o"] // p["h"]), "all_four": Fraction(counts["total"]),
            "with_bias": Fraction(param_counts(p["d_model"], p["h"], bias=True)["o"])}


def _wrong_gqa(p: Params) -> dict[str, Fraction]:
    mqa = {**p, "one": 1}
    return {"mha_g_is_h": _params(p), "mqa_g_is_1": _params(mqa, g="one"), "with_bias": _params(p, g="g", bias=True),
            "without_wo": _no_wo(p, g="g")}


def _wrong_cache(p: Params, kv: str, other: str | None) -> dict[str, Fraction]:
    """K only, fp32 instead of fp16 or without the batch; the other head count (h instead of g) where there is one."""
    right = _cache(p, p[kv])
    out = {"k_only": Fraction(right, 2), "fp32": Fraction(2 * right),
           "no_batch": Fraction(_cache({**p, "batch": 1}, p[kv]))}
    if other:
        out[f"{other}_heads"] = Fraction(_cache(p, p[other]))
    return {k: v for k, v in out.items() if v != right}


def _wrong_ratio(p: Params) -> dict[str, Fraction]:
    return {"inverted": Fraction(p["g"], p["h"]), "mqa_h": Fraction(p["h"]), "g_itself": Fraction(p["g"])}


RECIPES: Mapping[str, Recipe] = MappingProxyType({
    "d_head": Recipe(_shape, _d_head, _wrong_d_head),
    "mha_params": Recipe(_shape, lambda p: _params(p), _wrong_mha),
    "mha_params_bias": Recipe(_shape, lambda p: _params(p, bias=True), _wrong_mha_bias),
    "wo_params": Recipe(_shape, lambda p: Fraction(param_counts(p["d_model"], p["h"])["o"]), _wrong_wo),
    "gqa_params": Recipe(_grouped, lambda p: _params(p, g="g"), _wrong_gqa),
    "kv_mha": Recipe(_cache_mha, lambda p: Fraction(_cache(p, p["h"])), lambda p: _wrong_cache(p, "h", None)),
    "kv_gqa": Recipe(_cache_gqa, lambda p: Fraction(_cache(p, p["g"])), lambda p: _wrong_cache(p, "g", "h")),
    "kv_long": Recipe(_cache_long, lambda p: Fraction(_cache(p, p["g"])), lambda p: _wrong_cache(p, "g", "h")),
    "kv_ratio": Recipe(_ratio, lambda p: Fraction(_cache(p, p["h"]), _cache(p, p["g"])), _wrong_ratio),
})


def wrong_answers(recipe: str, params: Params) -> Mapping[str, Fraction]:
    """The documented wrong answers for these numbers (misconception → value in base units), never the right one."""
    r = RECIPES[recipe]
    right = r.value(params)
    return MappingProxyType({k: v for k, v in r.wrong(params).items() if v != right})


def draw(recipe: str, seed: int, question_id: str, fixed: Params | None = None) -> tuple[Params, Fraction]:
    """(the numbers shown, the right answer) for one question and one student seed.

    The draw depends on (seed, question id) only, so adding a question never changes another's numbers.
    """
    r = RECIPES[recipe]
    params = dict(fixed) if fixed else r.draw(random.Random(f"{seed}/{question_id}"))
    return MappingProxyType(params), r.value(params)


# ---------------------------------------------------------------------------------------------
# Figures quoted from published models (never typed into a text).

CACHE_MODELS = ("llama2_70b", "llama2_7b")  # a GQA model and an MHA model of the same family


@functools.cache
def _cache_fields() -> Mapping[str, str]:
    """Cache against weights for a GQA and an MHA model: weights and cache in fp16, and the crossover tokens."""
    big, small = (preset(k) for k in CACHE_MODELS)
    return MappingProxyType({
        "big_model": big.name, "big_weights": format_bytes(2 * big.params), "big_ctx": f"{big.context_len:,}",
        "big_cache": format_bytes(big.shape.kv_bytes(seq_len=big.context_len)),
        "big_cross": f"{kv_crossover_tokens(big.shape, big.params):,}",
        "small_model": small.name, "small_cross": f"{kv_crossover_tokens(small.shape, small.params):,}",
    })


@functools.cache
def _head_fields() -> Mapping[str, object]:
    """The range of h and d_head across the published presets."""
    return MappingProxyType(asdict(head_spread()))


TEXT_FIELDS: Mapping[str, Callable[[], Mapping[str, object]]] = MappingProxyType({
    "myth-typical-h": _head_fields, "kv-long": _cache_fields, "kv-why": _cache_fields,
})


def text_fields(question_id: str) -> Mapping[str, object]:
    """The published-model figures a question's texts quote ({big_cross}, {h_max}, ...); empty for most."""
    make = TEXT_FIELDS.get(question_id)
    return make() if make else MappingProxyType({})
