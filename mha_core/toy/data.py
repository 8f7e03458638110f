"""Training and held-out data: random tokens in which one random segment appears twice.

The segment length, where its first copy starts and the gap before the second copy are all
random per sequence, so the copy distance varies and position embeddings cannot solve it;
only "find the earlier occurrence of this token and copy what came next" (induction) can.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from mha_core.errors import LabError

__all__ = ["RepeatBatch", "make_batch", "data_rng", "TRAIN_STREAM", "HELD_OUT_STREAM"]

TRAIN_STREAM = 0     # data_rng(seed, TRAIN_STREAM) feeds training
HELD_OUT_STREAM = 1  # data_rng(seed, HELD_OUT_STREAM) feeds scores and ablations: never seen in training


@dataclass(frozen=True)
class RepeatBatch:
    """Token ids with one repeated segment per row, and where the copy is predictable."""

    tokens: np.ndarray       # (B, n) int64
    repeat_mask: np.ndarray  # (B, n) bool: True at position i when token i+1 can be copied from the first copy
    first: np.ndarray        # (B,) start of the first copy
    second: np.ndarray       # (B,) start of the second copy
    length: np.ndarray       # (B,) segment length

    @property
    def offset(self) -> np.ndarray:
        """(B,) distance between the two copies (second - first)."""
        return self.second - self.first

    def torch_tokens(self) -> torch.Tensor:
        return torch.from_numpy(self.tokens)

    def torch_mask(self) -> torch.Tensor:
        return torch.from_numpy(self.repeat_mask)


def data_rng(seed: int, stream: int) -> np.random.Generator:
    """An independent numpy Generator per (seed, stream): training and held-out data never overlap."""
    return np.random.default_rng([seed, stream])


def make_batch(
    rng: np.random.Generator, batch: int, n_ctx: int, vocab_size: int, min_len: int, max_len: int,
    distinct: bool = True,
) -> RepeatBatch:
    """``batch`` sequences of ``n_ctx`` random tokens; a segment of min_len..max_len tokens repeats.

    The second copy starts at ``second = first + length + gap`` (gap >= 0: no overlap). ``repeat_mask``
    marks positions second .. second+length-2, whose *next* token lies in the second copy and equals
    the token after the matching position of the first copy. ``distinct`` draws tokens without
    replacement, so the copy is the only repetition and each of those queries has exactly one earlier
    occurrence of its token; otherwise tokens are uniform with replacement (chance repeats make it ambiguous).
    """
    too_small = vocab_size < (n_ctx if distinct else 2)
    if not 2 <= min_len <= max_len or 2 * max_len > n_ctx or batch < 1 or too_small:
        raise LabError("toy_data", lo=min_len, hi=max_len, n=n_ctx, b=batch, v=vocab_size)
    if distinct:
        tokens = rng.permuted(np.tile(np.arange(vocab_size, dtype=np.int64), (batch, 1)), axis=1)[:, :n_ctx]
    else:
        tokens = rng.integers(0, vocab_size, size=(batch, n_ctx), dtype=np.int64)
    length = rng.integers(min_len, max_len + 1, size=batch)
    free = n_ctx - 2 * length                        # positions not covered by the two copies
    gap = np.floor(rng.random(batch) * (free + 1)).astype(np.int64)
    first = np.floor(rng.random(batch) * (free - gap + 1)).astype(np.int64)
    second = first + length + gap

    pos = np.arange(n_ctx)[None, :]
    in_second = (pos >= second[:, None]) & (pos < (second + length)[:, None])
    src = np.where(in_second, pos - (second - first)[:, None], pos)
    tokens = np.take_along_axis(tokens, src, axis=1)
    repeat_mask = (pos >= second[:, None]) & (pos < (second + length - 1)[:, None])
    return RepeatBatch(tokens=tokens, repeat_mask=repeat_mask, first=first, second=second, length=length)
