"""Generation token by token with a KV cache: each step runs only the new token through the model, its query
attends over the keys cached so far, and its own K and V are appended to every layer's cache (one row per K/V head).

The cached computation is the full one, reorganised: a causal model's row t never reads rows after t, so keeping
K and V of rows 0..t-1 and computing row t alone gives the same logits as rerunning the whole prefix (tested to
1e-6). What the cache holds is counted by ``mha_core.counts.kv_cache_bytes``, for this model and for its MHA, GQA
and MQA variants of the same shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

from mha_core.counts import kv_cache_bytes
from mha_core.errors import LabError
from mha_core.toy.lab import parse_sequence
from mha_core.toy.model import ToyTransformer
from mha_core.toy.weights import ASSETS, DEFAULT_WEIGHTS
from mha_core.toy_config import DEFAULT_PROMPT

__all__ = ["BYTES_PER_VALUE", "DEFAULT_PROMPT", "VARIANTS", "Decoded", "Demo", "GenStep", "Generation", "KVCache",
           "cache_bytes", "cache_rows", "decode_step", "draw", "extend", "generate", "kv_group", "prompt_ids", "read",
           "step_seed", "variant_weights"]

BYTES_PER_VALUE = 4  # the toy model computes in float32
VARIANTS = (None, 2, 1)  # K/V heads of the three shipped models: MHA (one per query head), GQA, MQA


@dataclass(frozen=True)
class KVCache:
    """Per layer, the keys and values of every token so far: (g, t, d_head) each."""

    k: tuple[torch.Tensor, ...]
    v: tuple[torch.Tensor, ...]

    @property
    def length(self) -> int:
        """How many tokens the cache holds."""
        return int(self.k[0].shape[1]) if self.k else 0

    @property
    def nbytes(self) -> int:
        """What the cached tensors occupy (the count ``cache_bytes`` makes, measured)."""
        return sum(t.nbytes for t in self.k + self.v)


@dataclass(frozen=True)
class GenStep:
    """One step: the token read at ``position``, the attention of its query over the cache (layers, h, t+1), the
    next-token distribution, the token drawn from it, and the cache's size after the step."""

    position: int
    token: int
    attn: np.ndarray          # (layers, h, position+1): the new query's weights over keys 0..position
    probs: np.ndarray         # (vocab,) after temperature and top-k
    next_token: int
    cache_tokens: int
    cache_bytes: int


@dataclass(frozen=True)
class Generation:
    """A prompt and the tokens generated after it, step by step."""

    prompt: tuple[int, ...]
    steps: tuple[GenStep, ...]

    @property
    def tokens(self) -> tuple[int, ...]:
        """The prompt followed by every generated token."""
        return self.prompt + tuple(s.next_token for s in self.steps[len(self.prompt) - 1:])


def variant_weights(n_kv_heads: int | None) -> Path:
    """The shipped weights of the default recipe with ``n_kv_heads`` K/V heads (None: the shipped MHA model)."""
    return DEFAULT_WEIGHTS if n_kv_heads is None else ASSETS / f"kv{n_kv_heads}.pt"


def kv_group(head: int, n_heads: int, n_kv_heads: int) -> int:
    """The K/V head that query head ``head`` reads: consecutive groups of n_heads // n_kv_heads (repeat_kv)."""
    return head // (n_heads // n_kv_heads)


def cache_bytes(model: ToyTransformer, tokens: int, n_kv_heads: int | None = None) -> int:
    """Bytes of this model's KV cache holding ``tokens`` tokens (with ``n_kv_heads`` K/V heads: a variant's)."""
    cfg = model.config
    return kv_cache_bytes(n_layers=cfg.n_layers, n_kv_heads=cfg.kv_heads if n_kv_heads is None else n_kv_heads,
                          d_head=cfg.d_head, seq_len=tokens, bytes_per_value=BYTES_PER_VALUE)


@torch.no_grad()
def decode_step(model: ToyTransformer, token: int, cache: KVCache | None) -> tuple[torch.Tensor, KVCache, np.ndarray]:
    """Run one token at position ``cache.length``: (logits (vocab,), the grown cache, attention (layers, h, t+1))."""
    cfg = model.config
    pos = 0 if cache is None else cache.length
    if pos >= cfg.n_ctx:
        raise LabError("toy_context_full", n_ctx=cfg.n_ctx)
    if not 0 <= token < cfg.vocab_size:
        raise LabError("toy_vocab_range", top=cfg.vocab_size - 1, lo=token, hi=token)
    x = model.wte.weight[token] + model.wpe.weight[pos]                   # (d_model,) the new row of the stream
    ks, vs, attns = [], [], []
    for i, block in enumerate(model.blocks):
        attn = block.attn
        q, k, v = attn.c_attn(x).split(attn.split_sizes)
        q = q.view(attn.n_heads, 1, attn.d_head)                          # (h, 1, d)
        k, v = (t.view(attn.n_kv_heads, 1, attn.d_head) for t in (k, v))  # (g, 1, d): this token's K, V
        if cache is not None:
            k, v = torch.cat([cache.k[i], k], dim=1), torch.cat([cache.v[i], v], dim=1)  # (g, t+1, d)
        ks.append(k)
        vs.append(v)
        group = attn.n_heads // attn.n_kv_heads
        kk, vv = (t.repeat_interleave(group, dim=0) for t in (k, v))     # (h, t+1, d)
        weights = F.softmax((q @ kk.transpose(-1, -2)) / math.sqrt(attn.d_head), dim=-1)  # (h, 1, t+1)
        concat = (weights @ vv).reshape(-1)                               # merge heads: (h*d,)
        x = x + attn.c_proj(concat)
        if block.mlp is not None:
            x = x + block.mlp(x)
        attns.append(weights[:, 0].double().numpy())
    return model.lm_head(x), KVCache(tuple(ks), tuple(vs)), np.stack(attns)


def _sample(logits: torch.Tensor, temperature: float, top_k: int | None,
            gen: torch.Generator) -> tuple[np.ndarray, int]:
    """The distribution after temperature and top-k, and a token drawn from it (temperature 0, or one so small that
    the scaled logits overflow: the most likely)."""
    scaled = logits / temperature if temperature else logits
    if not bool(torch.isfinite(scaled).all()):  # so small a temperature (1e-320) that logits overflow: its limit,
        temperature = 0                            # greedy decoding, instead of a distribution of NaN
    if temperature == 0:
        probs = torch.zeros_like(logits)
        probs[int(torch.argmax(logits))] = 1.0
    else:
        if top_k is not None and top_k < scaled.numel():
            cut = torch.topk(scaled, top_k).values[-1]
            scaled = scaled.masked_fill(scaled < cut, float("-inf"))
        probs = torch.softmax(scaled, dim=-1)
    token = int(torch.multinomial(probs.float(), 1, generator=gen)) if temperature else int(torch.argmax(probs))
    return probs.double().numpy(), token


def generate(model: ToyTransformer, prompt: list[int] | tuple[int, ...], new_tokens: int, *,
             temperature: float = 1.0, top_k: int | None = None, seed: int = 0) -> Generation:
    """Read ``prompt`` token by token, then generate ``new_tokens`` more, drawing each with ``temperature`` (0:
    greedy) and ``top_k``; the same seed draws the same tokens."""
    cfg = model.config
    prompt = tuple(int(t) for t in prompt)
    if not prompt:
        raise LabError("toy_prompt_empty")
    if new_tokens < 1:
        raise LabError("count_positive", name="new_tokens", value=new_tokens)
    if len(prompt) + new_tokens > cfg.n_ctx:
        raise LabError("toy_context_full", n_ctx=cfg.n_ctx)
    if not (temperature >= 0 and math.isfinite(temperature)):
        raise LabError("toy_temperature", value=temperature)
    if top_k is not None and top_k < 1:
        raise LabError("count_positive", name="top_k", value=top_k)
    gen = torch.Generator().manual_seed(seed)
    steps: list[GenStep] = []
    cache, token = None, prompt[0]
    for i in range(len(prompt) + new_tokens - 1):  # the last token drawn is not read: nothing follows it
        logits, cache, attn = decode_step(model, token, cache)
        probs, drawn = _sample(logits, temperature, top_k, gen)
        steps.append(GenStep(position=i, token=token, attn=attn, probs=probs, next_token=drawn,
                             cache_tokens=cache.length, cache_bytes=cache_bytes(model, cache.length)))
        token = prompt[i + 1] if i + 1 < len(prompt) else drawn  # the prompt is read, then the model writes
    return Generation(prompt=prompt, steps=tuple(steps))


# --- stepping a demo: one token at a time, each model's cache kept between steps ---------------------

@dataclass(frozen=True)
class Decoded:
    """A model after reading ``tokens`` one by one: its cache, the newest query's attention over every cached key
    (the newest key included), and the logits of the token that would come next."""

    tokens: tuple[int, ...]
    cache: KVCache
    attn: np.ndarray       # (layers, h, len(tokens))
    logits: torch.Tensor   # (vocab,)


def extend(model: ToyTransformer, before: Decoded | None, token: int) -> Decoded:
    """Read one more token: only its row is computed; its K and V join the cache of ``before``."""
    logits, cache, attn = decode_step(model, int(token), None if before is None else before.cache)
    return Decoded(tokens=(() if before is None else before.tokens) + (int(token),), cache=cache, attn=attn,
                   logits=logits)


def read(model: ToyTransformer, tokens: tuple[int, ...] | list[int]) -> Decoded:
    """Read ``tokens`` one at a time from an empty cache (what a page does before its first step)."""
    if not tokens:
        raise LabError("toy_prompt_empty")
    state = None
    for token in tokens:
        state = extend(model, state, token)
    return state


def step_seed(seed: int, step: int) -> int:
    """The draw of step ``step`` depends on the seed and the step only: the same step draws the same token in
    every model given the same distribution, and redoing a step redraws what it drew."""
    return int(np.random.SeedSequence([seed, step]).generate_state(1)[0])


def draw(logits: torch.Tensor, temperature: float, top_k: int | None, seed: int) -> tuple[np.ndarray, int]:
    """The next-token distribution after temperature (0: greedy) and top-k, and one token drawn from it."""
    if not (temperature >= 0 and math.isfinite(temperature)):
        raise LabError("toy_temperature", value=temperature)
    if top_k is not None and top_k < 1:
        raise LabError("count_positive", name="top_k", value=top_k)
    return _sample(logits, temperature, top_k, torch.Generator().manual_seed(seed))


def prompt_ids(text: str, n_ctx: int) -> tuple[int, ...]:
    """A typed prompt as ids (``lab.parse_sequence``'s rules and messages), leaving room for one new token."""
    ids = tuple(int(i) for i in parse_sequence(text, max_len=n_ctx))
    if len(ids) >= n_ctx:
        raise LabError("toy_prompt_long", n=len(ids), max=n_ctx - 1, n_ctx=n_ctx)
    return ids


def cache_rows(cache: KVCache) -> np.ndarray:
    """(layers, g) how many positions each layer's each K/V head holds, read off the K and V tensors."""
    k = np.array([[t.shape[1]] * t.shape[0] for t in cache.k])
    v = np.array([[t.shape[1]] * t.shape[0] for t in cache.v])
    if k.shape != v.shape or (k != v).any():
        raise ValueError("K and V caches differ")  # cannot happen: decode_step appends both
    return k


@dataclass(frozen=True)
class Demo:
    """A page's generation demo: the prompt and, for each of VARIANTS, the tokens it has written so far (all
    variants step together, so their caches hold the same number of tokens)."""

    prompt: tuple[int, ...]
    written: tuple[tuple[int, ...], ...] = ((), (), ())

    @property
    def steps(self) -> int:
        """How many tokens each model has written."""
        return len(self.written[0])

    def tokens(self, variant: int) -> tuple[int, ...]:
        """Everything variant ``variant`` has read: the prompt, then what it wrote."""
        return self.prompt + self.written[variant]

    def then(self, drawn: tuple[int, ...]) -> Demo:
        """One step later: each variant's drawn token appended."""
        return Demo(self.prompt, tuple(w + (int(d),) for w, d in zip(self.written, drawn, strict=True)))
