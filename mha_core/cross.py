"""Cross-attention on a Chinese → English sentence pair: the target's words ask, the source's words answer.

The encoder's output is stood in for by the source sentence's rows X_src and the decoder's rows by the target's X_tgt
(both X = [content | position], mha_core.inputs), so every row is still one readable word. The illustrative heads are
built, not trained: the alignment head's W^Q and W^K hold a small bilingual dictionary (a target word's query points
the same way as the keys of its translations), so its weights follow the dictionary; a pair with no dictionary word
falls back to random weights. Everything goes through ``multi_head_attention(x_tgt, ..., x_kv=x_src)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

import numpy as np

from mha_core.attention import Trace, merge_heads, multi_head_attention, scaled_dot_product_attention
from mha_core.errors import LabError
from mha_core.inputs import (
    Tokens,
    Weights,
    content_embedding,
    content_values,
    embed,
    frequencies,
    random_weights,
    split_dims,
    tokenize,
)

D_MODEL = 64
HEAD_CHOICES = (1, 2, 4, 8)        # h on the page; d_head = D_MODEL // h
CROSS_KINDS = ("align", "position", "broad", "end")  # what each illustrative head is built to do, cycled
_PEAK = 16.0                       # scaled score where a head finds what it looks for (softmax then picks it)
_MIN_OMEGA = 0.15                  # position pairs fast enough for a sharp peak (as in mha_core.inputs)
END_MARKS = frozenset("。.！!？?")


@dataclass(frozen=True)
class Pair:
    """A Chinese source sentence and its English translation."""

    source: str
    target: str


PAIRS = (  # the page's examples; the first is the default
    Pair("猫坐在垫子上。", "The cat sat on the mat."),
    Pair("他明天要去北京。", "He will go to Beijing tomorrow."),
    Pair("我把书放在桌子上。", "I put the book on the table."),
)
COMPANIONS = (  # the other sentence of the padding batch: one shorter, one longer (on both sides)
    Pair("猫睡了。", "The cat slept."),
    Pair("我们明天要和朋友一起去北京。", "Tomorrow we will go to Beijing with our friends."),
)

# English word (lower case) -> the Chinese words it is aligned to. Articles and dummy subjects ("the", "it") have no
# counterpart in Chinese; "on" draws on both 坐在 / 放在 (holding 在) and 上; 把 has no English counterpart.
LEXICON = MappingProxyType({
    "cat": ("猫", "小猫"), "cats": ("猫",), "kitten": ("小猫",), "dog": ("狗",), "sat": ("坐在",), "sits": ("坐在",),
    "on": ("坐在", "放在", "上"), "put": ("放在",), "table": ("桌子",), "mat": ("垫子",), "chair": ("椅子",),
    "slept": ("睡", "了"), "he": ("他",), "she": ("她",), "i": ("我",), "we": ("我们",), "you": ("你",),
    "will": ("要",), "go": ("去",), "to": ("去",), "beijing": ("北京",), "shanghai": ("上海",),
    "tomorrow": ("明天",), "today": ("今天",), "yesterday": ("昨天",), "rained": ("下雨", "了"),
    "with": ("和", "一起"), "our": ("我们",), "friends": ("朋友",), "friend": ("朋友",), "like": ("喜欢",),
    "eat": ("吃",), "apples": ("苹果",), "apple": ("苹果",), "book": ("书",), "read": ("看",),
    ".": ("。",), ",": ("，",), "?": ("？",), "!": ("！",),
})


@dataclass(frozen=True)
class CrossLesson:
    """One pair through cross-attention: the rows that ask and answer, the weights built, and the full trace."""

    source: Tokens
    target: Tokens
    x_src: np.ndarray                   # (m, d_model)  stand-in for the encoder's output: keys and values
    x_tgt: np.ndarray                   # (n, d_model)  stand-in for the decoder's rows: queries
    weights: Weights
    links: tuple[tuple[int, ...], ...]  # per target token, the source positions the dictionary aligns it to
    trace: Trace                        # weights (h, n, m): rows = target tokens, columns = source tokens

    @property
    def n_tgt(self) -> int:
        return len(self.target.tokens)

    @property
    def n_src(self) -> int:
        return len(self.source.tokens)

    @property
    def found(self) -> int:
        """How many target tokens the dictionary aligns to some source token."""
        return sum(1 for row in self.links if row)


def read_pair(source: str, target: str) -> tuple[Tokens, Tokens]:
    """Both sentences as tokens (the app's tokenizer: English at spaces, Chinese by jieba); LabError if one is empty."""
    try:
        src = tokenize(source)
    except LabError:
        raise LabError("cross_source_empty") from None
    try:
        tgt = tokenize(target)
    except LabError:
        raise LabError("cross_target_empty") from None
    return src, tgt


def align(source: Sequence[str], target: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """For each target token, the positions of the source tokens the dictionary (LEXICON) translates it by."""
    return tuple(tuple(j for j, s in enumerate(source) if s in LEXICON.get(t.lower(), ())) for t in target)


def _duals(words: Sequence[str], d_model: int) -> dict[str, np.ndarray]:
    """(d_model,) vectors d_w with x_v · d_w = [v == w] for the content half of every word v of ``words``.

    The dual basis of the words' content vectors (pseudo-inverse): a head that reads x · d_w fires on word w only,
    not a little on every other word as x · x_w would.
    """
    d_c, _ = split_dims(d_model)
    types = list(dict.fromkeys(w.lower() for w in words))   # content vectors ignore case (mha_core.inputs)
    dual = np.linalg.pinv(content_embedding(tuple(types), d_c)).T   # (types, d_c): content @ dual.T = I
    return {w: np.pad(dual[i], (0, d_model - d_c)) for i, w in enumerate(types)}


def _directions(count: int, d_head: int, seed: int) -> np.ndarray:
    """(count, d_head) unit rows: orthonormal when count <= d_head, else random (nearly orthogonal only)."""
    rng = np.random.default_rng(seed)
    if count <= d_head:
        return np.linalg.qr(rng.standard_normal((d_head, max(count, 1))))[0].T[:count]
    rows = rng.standard_normal((count, d_head))
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def align_head(source: Sequence[str], target: Sequence[str], d_model: int, d_head: int,
               peak: float = _PEAK) -> tuple[np.ndarray, np.ndarray]:
    """W^Q, W^K (d_model, d_head) of a head whose target word's query meets the keys of its dictionary translations.

    Each aligned source word w gets a direction u_w: k = u_w for w, and q = Σ u_w over the translations of the
    target word, so the scaled score is ``peak`` on every aligned source word and 0 elsewhere.
    """
    links = align(source, target)
    used = list(dict.fromkeys(source[j].lower() for row in links for j in row))
    w_q, w_k = np.zeros((d_model, d_head)), np.zeros((d_model, d_head))
    if not used:
        return w_q, w_k
    u = dict(zip(used, _directions(len(used), d_head, seed=len(used)), strict=True))
    dq, dk = _duals(target, d_model), _duals(source, d_model)
    asks = {target[i].lower(): {source[j].lower() for j in row} for i, row in enumerate(links)}  # one per word
    for word, answers in asks.items():
        for w in answers:
            w_q += np.outer(dq[word], u[w])
    for w in used:
        w_k += np.outer(dk[w], u[w])
    scale = np.sqrt(peak * np.sqrt(d_head))
    return w_q * scale, w_k * scale


def position_head(d_model: int, d_head: int, peak: float = _PEAK) -> tuple[np.ndarray, np.ndarray]:
    """W^Q = W^K reading the fast sin/cos pairs: target position t meets source position t (the same place)."""
    d_c, d_p = split_dims(d_model)
    pairs = np.flatnonzero(frequencies(d_p) >= _MIN_OMEGA)[: d_head // 2]
    w = np.zeros((d_model, d_head))
    for slot, p in enumerate(pairs):
        w[d_c + 2 * p, 2 * slot] = w[d_c + 2 * p + 1, 2 * slot + 1] = 1.0
    scale = np.sqrt(peak * np.sqrt(d_head) / max(1, len(pairs)))   # Σ cos(ω(t−s)) = len(pairs) at s = t
    return w * scale, w * scale


def end_head(source: Sequence[str], d_model: int, d_head: int, peak: float = _PEAK) -> tuple[np.ndarray, np.ndarray]:
    """Every query meets the source's end mark (。.!?): W^Q reads the slowest cos, ≈ 1 at every position of a
    sentence."""
    d_c, d_p = split_dims(d_model)
    w_q, w_k = np.zeros((d_model, d_head)), np.zeros((d_model, d_head))
    marks = [s for s in dict.fromkeys(source) if s in END_MARKS]
    if not marks:
        return w_q, w_k
    scale = np.sqrt(peak * np.sqrt(d_head))
    w_q[d_c + d_p - 1, 0] = scale
    duals = _duals(source, d_model)
    for s in marks:
        w_k[:, 0] += duals[s.lower()] * scale
    return w_q, w_k


def lesson_weights(source: Sequence[str], target: Sequence[str], n_heads: int, d_model: int = D_MODEL,
                   seed: int = 0) -> Weights:
    """Illustrative heads (CROSS_KINDS, cycled) for this pair; random weights when no word is in the dictionary."""
    if d_model % n_heads:
        raise LabError("h_divides", d_model=d_model, h=n_heads)
    d_head = d_model // n_heads
    if not any(align(source, target)):
        return random_weights(d_model, n_heads, d_head, seed)
    kinds = tuple(CROSS_KINDS[i % len(CROSS_KINDS)] for i in range(n_heads))
    qs, ks = [], []
    for kind in kinds:
        if kind == "align":
            wq, wk = align_head(source, target, d_model, d_head)
        elif kind == "position":
            wq, wk = position_head(d_model, d_head)
        elif kind == "end":
            wq, wk = end_head(source, d_model, d_head)
        else:  # broad: no query, so every score is 0 and the weights are uniform
            wq, wk = np.zeros((d_model, d_head)), np.zeros((d_model, d_head))
        qs.append(wq)
        ks.append(wk)
    w_v = np.hstack([content_values(d_model, d_head, seed + i) for i in range(n_heads)])  # what each source word *is*
    w_o = random_weights(d_model, n_heads, d_head, seed).w_o
    return Weights(np.hstack(qs), np.hstack(ks), w_v, w_o, "illustrative", kinds)


def build_lesson(source: str, target: str, n_heads: int, d_model: int = D_MODEL) -> CrossLesson:
    """Tokenise both sentences, build the heads, run cross-attention: queries from the target, K, V from the source."""
    src, tgt = read_pair(source, target)
    weights = lesson_weights(src.tokens, tgt.tokens, n_heads, d_model)
    x_src, x_tgt = embed(src.tokens, d_model), embed(tgt.tokens, d_model)
    trace = multi_head_attention(x_tgt, weights.w_q, weights.w_k, weights.w_v, weights.w_o, n_heads, x_kv=x_src)
    return CrossLesson(src, tgt, x_src, x_tgt, weights, align(src.tokens, tgt.tokens), trace)


# --- the three attentions of an encoder–decoder model, and padding -------------------------------------------------

# Which attentions a family of models has: (family, encoder self-attention, causal decoder self-attention, cross).
MODEL_FAMILIES = (("encdec", True, True, True), ("dec", False, True, False), ("enc", True, False, False))

@dataclass(frozen=True)
class MaskViews:
    """One pair through the three attentions of an encoder–decoder model (the same random weights, demo_weights)."""

    decoder_self: Trace   # weights (h, n, n): causal, zero above the diagonal
    cross: Trace          # weights (h, n, m): no mask, every source token visible
    encoder_self: Trace   # weights (h, m, m): no mask


def demo_weights(d_model: int, n_heads: int, seed: int = 1, sharpen: float = 3.0) -> Weights:
    """Random weights with W^Q scaled up, so the weights vary visibly from cell to cell (the masks show either way)."""
    w = random_weights(d_model, n_heads, d_model // n_heads, seed)
    return Weights(w.w_q * sharpen, w.w_k, w.w_v, w.w_o, w.mode)


def mask_views(lesson: CrossLesson, seed: int = 1) -> MaskViews:
    """Decoder self-attention (causal), cross-attention and encoder self-attention of the lesson's pair."""
    h = lesson.trace.n_heads
    w = demo_weights(lesson.trace.d_model, h, seed)
    proj = (w.w_q, w.w_k, w.w_v, w.w_o, h)
    return MaskViews(
        decoder_self=multi_head_attention(lesson.x_tgt, *proj, causal=True),
        cross=multi_head_attention(lesson.x_tgt, *proj, x_kv=lesson.x_src),
        encoder_self=multi_head_attention(lesson.x_src, *proj),
    )


def causal_cross_refusal(lesson: CrossLesson) -> LabError:
    """The error the core raises when asked for a causal mask on cross-attention (the page shows its text)."""
    w = lesson.weights
    try:
        multi_head_attention(lesson.x_tgt, w.w_q, w.w_k, w.w_v, w.w_o, lesson.trace.n_heads, causal=True,
                             x_kv=lesson.x_src)
    except LabError as err:
        return err
    raise AssertionError("the core accepted a causal mask on cross-attention")  # its contract says it refuses


def padding_mask(lengths: Sequence[int], width: int) -> np.ndarray:
    """(B, width) bool: True at the real tokens of each sentence, False at the padding after them."""
    return np.arange(width)[None, :] < np.asarray(lengths)[:, None]


def pad_rows(rows: Sequence[np.ndarray], width: int) -> np.ndarray:
    """(B, width, d): each sentence's rows, then zero rows up to ``width`` (what a batch of unequal sentences holds)."""
    out = np.zeros((len(rows), width, rows[0].shape[1]))
    for b, r in enumerate(rows):
        out[b, : len(r)] = r
    return out


def padded_attention(x: np.ndarray, w: Weights, n_heads: int, key_valid: np.ndarray, *,
                     x_kv: np.ndarray | None = None, masked: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Attention over a padded batch, pad keys masked out: (weights (B, h, n, m), output (B, n, d_model)).

    Q, K, V come from the core (``multi_head_attention`` per sentence); the key mask then sets the pad keys' scores to
    −∞, so their weight is exactly 0. Pad queries are computed like any row and ignored afterwards (their output is
    thrown away). ``masked=False``: what the pads would take without the mask.
    """
    weights, outputs = [], []
    for b in range(x.shape[0]):
        trace = multi_head_attention(x[b], w.w_q, w.w_k, w.w_v, w.w_o, n_heads,
                                     x_kv=None if x_kv is None else x_kv[b])
        mask = key_valid[b][None, None, :] if masked else None      # (1, 1, m): the same for every head and query
        _, _, wts, heads = scaled_dot_product_attention(trace.q_heads, trace.k_heads, trace.v_heads, mask)
        weights.append(wts)
        outputs.append(merge_heads(heads) @ w.w_o)
    return np.stack(weights), np.stack(outputs)


@dataclass(frozen=True)
class PaddingDemo:
    """A batch of two pairs of unequal lengths, padded: where the masks put zeros."""

    texts: tuple[str, str]    # the two source sentences as typed
    sources: tuple[Tokens, Tokens]
    targets: tuple[Tokens, Tokens]
    key_valid: np.ndarray     # (2, m) True at real source tokens
    query_valid: np.ndarray   # (2, n) True at real target tokens
    encoder_self: np.ndarray  # (2, h, m, m) pad keys (columns) weight 0
    cross: np.ndarray         # (2, h, n, m) pad keys (columns) weight 0; pad queries (rows) ignored
    unmasked_pad_share: float  # mean weight the pad keys would take in cross-attention without the mask

    @property
    def padded(self) -> int:
        """The batch row that holds padding (the shorter source)."""
        return int(np.argmin(self.key_valid.sum(axis=1)))


def companion(lesson: CrossLesson) -> Pair:
    """The batch's other pair: shorter (or longer) than the lesson's on both sides, so both sides need padding."""
    n, m = lesson.n_tgt, lesson.n_src
    for pair in COMPANIONS:
        src, tgt = _tokens(pair)
        if (len(src) - m) * (len(tgt) - n) > 0:
            return pair
    return next(p for p in COMPANIONS if len(_tokens(p)[0]) != m)


@cache
def _tokens(pair: Pair) -> tuple[tuple[str, ...], tuple[str, ...]]:
    src, tgt = read_pair(pair.source, pair.target)
    return src.tokens, tgt.tokens


def padding_demo(lesson: CrossLesson, source: str, seed: int = 1) -> PaddingDemo:
    """The lesson's pair (``source``: its sentence as typed) and its companion as one padded batch through encoder
    self- and cross-attention."""
    other = companion(lesson)
    srcs = (lesson.source, read_pair(other.source, other.target)[0])
    tgts = (lesson.target, read_pair(other.source, other.target)[1])
    d, h = lesson.trace.d_model, lesson.trace.n_heads
    w = demo_weights(d, h, seed)
    src_len, tgt_len = [len(s.tokens) for s in srcs], [len(t.tokens) for t in tgts]
    m, n = max(src_len), max(tgt_len)
    x_src = pad_rows([embed(s.tokens, d) for s in srcs], m)
    x_tgt = pad_rows([embed(t.tokens, d) for t in tgts], n)
    keys = padding_mask(src_len, m)
    enc, _ = padded_attention(x_src, w, h, keys)
    cross, _ = padded_attention(x_tgt, w, h, keys, x_kv=x_src)
    loose, _ = padded_attention(x_tgt, w, h, keys, x_kv=x_src, masked=False)
    b = int(np.argmin(src_len))
    share = float(loose[b][..., ~keys[b]].sum(axis=-1)[:, : tgt_len[b]].mean())
    return PaddingDemo((source, other.source), srcs, tgts, keys, padding_mask(tgt_len, n), enc, cross, share)
