"""Classical test statistics, as Moodle's quiz statistics report them, and Hake's normalized gain: pure numbers over
score arrays, so the teacher's dashboard, the CSV and the tests all compute them in one place.

- facility: an item's mean score fraction (Moodle "facility index");
- discrimination: Pearson's r between the item's score and the sum of the *other* items' scores (Moodle
  "discrimination index", which leaves the item out of the total so that it does not correlate with itself);
- Cronbach's α of the set (Moodle "coefficient of internal consistency");
- ⟨g⟩ = (post − pre) / (1 − pre) on class mean fractions (Hake 1998), and the matched students' own gains.

Undefined statistics are ``math.nan`` inside arrays and tuples of floats (discrimination with a constant item or a
constant rest, α with fewer than two items or students or a constant total, the facility of an item nobody took)
and ``None`` for a single gain (``normalized_gain`` at pre = 1: there is nothing left to gain). Flags follow
concept-inventory practice: facility outside 0.30–0.70, discrimination below 0.30 or undefined.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

FACILITY_LOW = 0.30
FACILITY_HIGH = 0.70
DISCRIMINATION_MIN = 0.30


class Flag(StrEnum):
    """Why an item deserves a second look; the value is the catalog key suffix and the CSV's word."""

    HARD = "hard"                      # facility < 0.30
    EASY = "easy"                      # facility > 0.70
    WEAK = "weak"                      # discrimination < 0.30
    UNDEFINED = "undefined"            # discrimination undefined (everyone scored the same, or the rest did)


@dataclass(frozen=True)
class ItemAnalysis:
    """Per item statistics (tuples in the columns' order) and the set's α; NaN where undefined (module doc)."""

    n_students: int
    facility: tuple[float, ...]
    discrimination: tuple[float, ...]
    alpha: float
    flags: tuple[frozenset[Flag], ...]


def _scores(scores: object) -> np.ndarray:
    """A students × items float array of fractions in [0, 1] (ValueError otherwise: a caller's mistake)."""
    a = np.asarray(scores, dtype=float)
    if a.ndim == 1 and a.size == 0:
        a = a.reshape(0, 0)
    if a.ndim != 2:
        raise ValueError(f"scores must be students × items, got shape {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < 0) or np.any(a > 1):
        raise ValueError("scores must be fractions in [0, 1] (an unanswered item of a taken test scores 0)")
    return a


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r; NaN when either side has no variance or there are fewer than two pairs."""
    if x.size < 2:
        return math.nan
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy = float(dx @ dx), float(dy @ dy)
    if sxx <= 1e-15 or syy <= 1e-15:
        return math.nan
    return float(dx @ dy) / math.sqrt(sxx * syy)


def cronbach_alpha(scores: object) -> float:
    """α = k/(k−1) · (1 − Σ var(item) / var(total)); NaN with < 2 items, < 2 students or a constant total."""
    a = _scores(scores)
    n, k = a.shape
    if k < 2 or n < 2:
        return math.nan
    total_var = float(a.sum(axis=1).var())
    if total_var <= 1e-15:
        return math.nan
    return k / (k - 1) * (1 - float(a.var(axis=0).sum()) / total_var)


def flags_for(facility: float, discrimination: float) -> frozenset[Flag]:
    """The flags one item earns (none for an item nobody took: its facility is NaN)."""
    out: set[Flag] = set()
    if facility < FACILITY_LOW:
        out.add(Flag.HARD)
    elif facility > FACILITY_HIGH:
        out.add(Flag.EASY)
    if math.isnan(discrimination):
        if not math.isnan(facility):
            out.add(Flag.UNDEFINED)
    elif discrimination < DISCRIMINATION_MIN:
        out.add(Flag.WEAK)
    return frozenset(out)


def item_analysis(scores: object) -> ItemAnalysis:
    """Facility, discrimination (item against the sum of the other items), α and flags of a students × items
    array of score fractions; an unanswered item of a taken test is 0, a student who did not take it is no row."""
    a = _scores(scores)
    n, k = a.shape
    facility = tuple(float(a[:, j].mean()) if n else math.nan for j in range(k))
    total = a.sum(axis=1)
    discrimination = tuple(_pearson(a[:, j], total - a[:, j]) for j in range(k))
    return ItemAnalysis(n_students=n, facility=facility, discrimination=discrimination, alpha=cronbach_alpha(a),
                        flags=tuple(flags_for(f, d) for f, d in zip(facility, discrimination, strict=True)))


def distractor_counts(choices: Iterable[Hashable | None], options: Sequence[Hashable]) -> dict[Hashable, int]:
    """How many students chose each option (every option listed, 0 when nobody did; ``None`` = no answer, counted
    under None only when someone left it blank). An unknown choice is a caller's mistake (ValueError)."""
    seen = Counter(choices)
    unknown = set(seen) - set(options) - {None}
    if unknown:
        raise ValueError(f"choices not among the options: {sorted(map(str, unknown))}")
    out: dict[Hashable, int] = {o: seen.get(o, 0) for o in options}
    if seen.get(None):
        out[None] = seen[None]
    return out


def normalized_gain(pre: float, post: float) -> float | None:
    """Hake's ⟨g⟩ = (post − pre) / (1 − pre) on class mean fractions; None at pre = 1 (nothing left to gain).
    Negative when the class did worse; ValueError for a fraction outside [0, 1]."""
    for v in (pre, post):
        if not 0 <= v <= 1 or math.isnan(v):
            raise ValueError(f"gain takes fractions in [0, 1], got {v!r}")
    if pre >= 1:
        return None
    return (post - pre) / (1 - pre)


@dataclass(frozen=True)
class MatchedGains:
    """Students who took both tests: their own gains (None at a perfect pre-test), and the class figures over them.
    ``class_gain`` is ⟨g⟩ of the matched students' mean fractions (Hake's class figure); ``mean_of_gains`` the
    mean of the defined individual gains, which differs in general (Hake 1998 compares the two)."""

    gains: Mapping[Hashable, float | None]
    pre_mean: float
    post_mean: float
    class_gain: float | None
    mean_of_gains: float
    median_of_gains: float
    only_pre: tuple[Hashable, ...]
    only_post: tuple[Hashable, ...]


def matched_gains(pre: Mapping[Hashable, float], post: Mapping[Hashable, float]) -> MatchedGains:
    """Gains of the students in both mappings (student → score fraction); those in only one are listed, not
    dropped silently. Means are NaN when no student took both."""
    both = [s for s in pre if s in post]
    gains = {s: normalized_gain(pre[s], post[s]) for s in both}
    defined = [g for g in gains.values() if g is not None]
    pre_mean = float(np.mean([pre[s] for s in both])) if both else math.nan
    post_mean = float(np.mean([post[s] for s in both])) if both else math.nan
    return MatchedGains(
        gains=gains, pre_mean=pre_mean, post_mean=post_mean,
        class_gain=normalized_gain(pre_mean, post_mean) if both else None,
        mean_of_gains=float(np.mean(defined)) if defined else math.nan,
        median_of_gains=float(np.median(defined)) if defined else math.nan,
        only_pre=tuple(s for s in pre if s not in post), only_post=tuple(s for s in post if s not in pre))


class Band(StrEnum):
    """Hake's (1998) bands of g, plus a loss and the undefined gain of a perfect pre-test."""

    LOSS = "loss"            # g < 0
    LOW = "low"              # 0 ≤ g < 0.3
    MEDIUM = "medium"        # 0.3 ≤ g < 0.7
    HIGH = "high"            # g ≥ 0.7
    UNDEFINED = "undefined"  # pre = 1


def band(g: float | None) -> Band:
    """The band one gain falls in (Hake's low / medium / high: below 0.3, 0.3 to 0.7, 0.7 and above)."""
    if g is None:
        return Band.UNDEFINED
    if g < 0:
        return Band.LOSS
    return Band.LOW if g < 0.3 else Band.MEDIUM if g < 0.7 else Band.HIGH


def gain_bands(gains: Iterable[float | None]) -> dict[Band, int]:
    """How many matched students' own gains fall in each band (every band listed, in order)."""
    counts = Counter(band(g) for g in gains)
    return {b: counts.get(b, 0) for b in Band}


@dataclass(frozen=True)
class Timing:
    """An item's response times in seconds: how many, the median and the 90th percentile (NaN when none)."""

    n: int
    median: float
    p90: float


def response_times(seconds: Iterable[float]) -> Timing:
    """Median and p90 (linear interpolation between order statistics, numpy's default) of one item's times;
    never used for points."""
    a = np.asarray([float(s) for s in seconds], dtype=float)
    if a.size == 0:
        return Timing(0, math.nan, math.nan)
    if np.any(a < 0) or not np.all(np.isfinite(a)):
        raise ValueError("response times are finite and not negative")
    return Timing(int(a.size), float(np.median(a)), float(np.percentile(a, 90)))
