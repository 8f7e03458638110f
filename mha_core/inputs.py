"""From a sentence to X, and the weight matrices the walkthrough uses.

A token is a word or a punctuation mark in both languages: English splits at spaces and punctuation, Chinese is
segmented into words by jieba (its own dictionary, built once per process on the first Chinese sentence other than
the app's own, whose cut ships in assets; nothing is fetched), so "the previous word" means the same thing in both.
X's rows are [content | position]: the first half is a token's meaning (a deterministic random vector per token),
the second half a sinusoidal position code. Real models add the two; the lab keeps them side by side so a student
can see which half a head reads.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from mha_core.errors import LabError

MAX_TOKENS = 24
WEIGHT_MODES = ("illustrative", "random")
# The question each illustrative head asks, cycled when h is larger than the list.
HEAD_KINDS = ("previous", "same_word", "next", "broad", "two_back", "local")
_SHARP = 16.0  # peak score of a hand-built head: large enough that softmax picks one key
_MIN_OMEGA = 0.15  # slower sin/cos pairs are nearly constant over a sentence and only blur a peak

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(
    rf"(?P<han>[{_HAN}]+)"                               # a run of Chinese characters: segmented by jieba
    r"|[\u3040-\u30ff]"                                  # one kana per token (no Japanese segmenter here)
    rf"|[^\W\d_{_HAN}\u3040-\u30ff]+(?:['’][^\W\d_{_HAN}\u3040-\u30ff]+)*"   # a word (other scripts), with apostrophes
    r"|\d+(?:[.,]\d+)*"                                  # a number
    r"|[^\w\s]"                                          # one punctuation mark or symbol
)


@dataclass(frozen=True)
class Tokens:
    """A tokenised sentence; ``dropped`` counts tokens cut off by the length cap."""

    tokens: tuple[str, ...]
    dropped: int = 0


_SEGMENTER_LOCK = threading.Lock()  # a class opening the page at once builds the dictionary once, not 20 times


def _segmenter() -> Any:
    """jieba's tokenizer, built on first use (one build per process, even with many sessions at once)."""
    with _SEGMENTER_LOCK:
        return _build_segmenter()


@cache
def _build_segmenter() -> Any:
    """jieba with its dictionary built once per process (building it is slow), silently, writing no cache file."""
    import jieba

    jieba.setLogLevel(logging.WARNING)   # its import sets DEBUG: it would print loading progress to stderr
    seg = jieba.Tokenizer()
    with seg.get_dict_file() as f:        # the dictionary shipped inside the package
        seg.FREQ, seg.total = seg.gen_pfdict(f)
    seg.initialized = True                # skip initialize(): it reads and writes a cache in the temp folder
    return seg


# jieba's words for the app's own Chinese sentence (each run of characters of the default sentence), written by
# ``known_segments(write=True)`` with the jieba named in the file; tests/test_inputs.py checks them against jieba.
SEGMENTS_FILE = Path(__file__).resolve().parents[1] / "assets" / "segments.zh.json"


@cache
def _known() -> Mapping[str, tuple[str, ...]]:
    """The shipped segmentations, or none when another jieba is installed (it may cut a sentence otherwise): a
    Chinese visitor's first page then needs no dictionary, whose build took 0.75 s of a fresh server's first page
    (issue 26)."""
    import jieba  # lazy: its module is light (20 ms), but only a Chinese sentence needs it

    data = json.loads(SEGMENTS_FILE.read_text(encoding="utf-8"))
    same = data["jieba"] == jieba.__version__
    return MappingProxyType({run: tuple(words) for run, words in data["runs"].items()} if same else {})


def known_segments(sentences: tuple[str, ...], write: bool = False) -> dict[str, object]:
    """What SEGMENTS_FILE holds for ``sentences``: jieba's words for each of their runs of Chinese characters, and
    jieba's version; ``write`` also writes it there."""
    import jieba  # lazy: only this maintenance step and a Chinese sentence need it

    runs = sorted({m.group() for s in sentences for m in _TOKEN_RE.finditer(s) if m.group("han")})
    data = {"jieba": jieba.__version__, "runs": {run: _segmenter().lcut(run, HMM=True) for run in runs}}
    if write:
        SEGMENTS_FILE.write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
    return data


def segment_chinese(text: str) -> list[str]:
    """Words of a run of Chinese characters (jieba, with its HMM for words not in the dictionary; the app's own
    sentence from the shipped table)."""
    known = _known().get(text)
    return list(known) if known is not None else _segmenter().lcut(text, HMM=True)


def tokenize(sentence: str, max_tokens: int = MAX_TOKENS) -> Tokens:
    """Split into words and punctuation marks (Chinese words by jieba); cap the length."""
    found: list[str] = []
    for m in _TOKEN_RE.finditer(sentence or ""):
        found.extend(segment_chinese(m.group()) if m.group("han") else [m.group()])
    if not found:
        raise LabError("empty_sentence")
    return Tokens(tuple(found[:max_tokens]), max(0, len(found) - max_tokens))


def _token_seed(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.lower().encode("utf-8"), digest_size=8).digest(), "little")


def split_dims(d_model: int) -> tuple[int, int]:
    """(content dims, position dims) of a row of X; position dims are even (sin/cos pairs)."""
    d_pos = 2 * max(1, d_model // 4)
    return d_model - d_pos, d_pos


def frequencies(d_pos: int) -> np.ndarray:
    """Angular frequency of each sin/cos pair, as in Vaswani et al. 2017 (base 10000)."""
    return 1.0 / 10000 ** (np.arange(0, d_pos, 2) / d_pos)


def positional_encoding(n: int, d_pos: int) -> np.ndarray:
    """(n, d_pos) sinusoidal code, pairs (sin ωt, cos ωt), highest frequency first."""
    angles = np.arange(n)[:, None] * frequencies(d_pos)[None, :]
    pe = np.empty((n, d_pos))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


def content_embedding(tokens: tuple[str, ...], d_content: int) -> np.ndarray:
    """(n, d_content) unit vectors; the same token (case-insensitive) always gets the same one."""
    rows = []
    for tok in tokens:
        v = np.random.default_rng(_token_seed(tok)).standard_normal(d_content)
        rows.append(v / np.linalg.norm(v))
    return np.array(rows).reshape(len(tokens), d_content)


def embed(tokens: tuple[str, ...], d_model: int) -> np.ndarray:
    """X = [content | position], shape (n, d_model)."""
    d_c, d_p = split_dims(d_model)
    return np.hstack([content_embedding(tokens, d_c), positional_encoding(len(tokens), d_p)])


@dataclass(frozen=True)
class Weights:
    """The four projection matrices, and what each head was built to do (None when random)."""

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    mode: str
    head_kinds: tuple[str, ...] | None = None


def _orthonormal(rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """A (rows, cols) matrix with orthonormal columns (or rows, when cols > rows).

    A random signed permutation mixed by one Householder reflection: dense and exactly
    orthogonal, in O(rows·cols) — a QR, O(n³), would make a slider release on a wide model wait.
    """
    size, keep = max(rows, cols), min(rows, cols)
    pick = rng.permutation(size)[:keep]
    basis = np.zeros((size, keep))
    basis[pick, np.arange(keep)] = rng.choice((-1.0, 1.0), size=keep)
    v = rng.standard_normal(size)
    basis -= np.outer(v, 2.0 * (v @ basis) / (v @ v))   # (I − 2vvᵀ/vᵀv) · basis
    return basis if rows >= cols else basis.T


def _rotation_block(omega: float, shift: int) -> np.ndarray:
    """Row-vector map (sin ωt, cos ωt) -> (sin ω(t+shift), cos ω(t+shift))."""
    c, s = np.cos(omega * shift), np.sin(omega * shift)
    return np.array([[c, -s], [s, c]])


def _position_head(d_model: int, d_head: int, shift: int, pairs: np.ndarray, peak: float):
    """W_Q, W_K for a head whose query at t looks for the key at t+shift (via PE rotation)."""
    d_c, d_p = split_dims(d_model)
    omegas = frequencies(d_p)
    w_q, w_k = np.zeros((d_model, d_head)), np.zeros((d_model, d_head))
    pairs = pairs[: d_head // 2]
    for slot, m in enumerate(pairs):
        rows, cols = slice(d_c + 2 * m, d_c + 2 * m + 2), slice(2 * slot, 2 * slot + 2)
        w_q[rows, cols] = _rotation_block(omegas[m], shift)
        w_k[rows, cols] = np.eye(2)
    # q·k at the target = len(pairs); scale so the scaled score (÷√d_head) peaks at `peak`.
    return w_q * peak * np.sqrt(d_head) / max(1, len(pairs)), w_k


def lookup_head(d_model: int, d_head: int, query: str, target: str, peak: float = _SHARP):
    """W_Q, W_K of a hand-built head in which the token ``query`` looks for the token ``target`` by meaning.

    Rank one: q = (x·e_query)·u and k = (x·e_target)·u, so the scaled score is ``peak`` where the query
    meets the target and near 0 elsewhere (other tokens' content vectors are nearly orthogonal to both).
    """
    d_c, _ = split_dims(d_model)
    e_q, e_t = (np.pad(content_embedding((tok,), d_c)[0], (0, d_model - d_c)) for tok in (query, target))
    u = np.zeros(d_head)
    u[0] = np.sqrt(peak * np.sqrt(d_head))
    return np.outer(e_q, u), np.outer(e_t, u)


def content_values(d_model: int, d_head: int, seed: int = 0) -> np.ndarray:
    """(d_model, d_head) W_V that reads a token's content half, so a head's output says *what* it found."""
    d_c, _ = split_dims(d_model)
    return _padded(_orthonormal(d_c, min(d_head, d_c), np.random.default_rng(seed)), d_model, d_head)


def _content_head(d_model: int, d_head: int, rng: np.random.Generator, peak: float):
    """W_Q = W_K reading the content half: a token scores highest against the same token."""
    d_c, _ = split_dims(d_model)
    k = min(d_head, d_c)
    proj = np.zeros((d_model, d_head))
    proj[:d_c, :k] = _orthonormal(d_c, k, rng)
    scale = np.sqrt(peak * np.sqrt(d_head) * d_c / k)  # E|proj^T e|^2 = k/d_c for a unit e
    return proj * scale, proj * scale


def illustrative_weights(d_model: int, n_heads: int, d_head: int, seed: int = 0) -> Weights:
    """Hand-built W_Q/W_K so heads visibly ask different questions (constructed, not trained)."""
    rng = np.random.default_rng(seed)
    _, d_p = split_dims(d_model)
    omegas = frequencies(d_p)
    sharp = np.flatnonzero(omegas >= _MIN_OMEGA)                 # fast pairs: a sharp peak
    smooth = np.flatnonzero(omegas <= 0.5) if np.any(omegas <= 0.5) else sharp
    kinds = tuple(HEAD_KINDS[i % len(HEAD_KINDS)] for i in range(n_heads))
    qs, ks = [], []
    for kind in kinds:
        if kind == "same_word":
            wq, wk = _content_head(d_model, d_head, rng, _SHARP)
        elif kind == "broad":
            wq, wk = np.zeros((d_model, d_head)), rng.standard_normal((d_model, d_head)) / np.sqrt(d_model)
        elif kind == "local":
            wq, wk = _position_head(d_model, d_head, 0, smooth, _SHARP / 2)
        else:
            shift = {"previous": -1, "next": 1, "two_back": -2}[kind]
            wq, wk = _position_head(d_model, d_head, shift, sharp, _SHARP)
        qs.append(wq)
        ks.append(wk)
    d_c, _ = split_dims(d_model)
    # W_V reads a token's content, so a head's output says *what* it found.
    w_v = np.hstack([_padded(_orthonormal(d_c, min(d_head, d_c), rng), d_model, d_head) for _ in kinds])
    w_o = _orthonormal(n_heads * d_head, d_model, rng)
    return Weights(np.hstack(qs), np.hstack(ks), w_v, w_o, "illustrative", kinds)


def _padded(block: np.ndarray, d_model: int, d_head: int) -> np.ndarray:
    out = np.zeros((d_model, d_head))
    out[: block.shape[0], : block.shape[1]] = block
    return out


def random_weights(d_model: int, n_heads: int, d_head: int, seed: int = 0, n_kv_heads: int | None = None) -> Weights:
    """Seeded Gaussian initialisation with variance 1/fan_in, as at the start of training."""
    rng = np.random.default_rng(seed)
    g = n_heads if n_kv_heads is None else n_kv_heads
    inner = n_heads * d_head
    return Weights(
        rng.standard_normal((d_model, inner)) / np.sqrt(d_model),
        rng.standard_normal((d_model, g * d_head)) / np.sqrt(d_model),
        rng.standard_normal((d_model, g * d_head)) / np.sqrt(d_model),
        rng.standard_normal((inner, d_model)) / np.sqrt(inner),
        "random",
    )


def make_weights(mode: str, d_model: int, n_heads: int, d_head: int, seed: int = 0) -> Weights:
    """The weights for a weight mode (``WEIGHT_MODES``); later modes (trained) plug in here."""
    if mode == "illustrative":
        return illustrative_weights(d_model, n_heads, d_head, seed)
    if mode == "random":
        return random_weights(d_model, n_heads, d_head, seed)
    raise LabError("weight_mode", mode=mode)
