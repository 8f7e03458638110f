"""Streamlit bridges for the real-model page: its session keys, the loaded model (cached per process), cached
runs and tables, and the callbacks that move the head selectors."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import pandas as pd
import streamlit as st

from mha_core import head_similarity, head_types, layer_check, minimal_pair, pretrained, threads
from mha_core.errors import LabError
from mha_core.lru import MIB, ByteLRU
from mha_core.markdown import escape
from mha_core.turns import Turns
from mha_core.ui import render
from mha_core.ui.class_services import streamlit_secrets
from mha_core.ui.i18n import t
from mha_core.units import head_name

T = TypeVar("T")
EXAMPLES = (*pretrained.EXAMPLES, *pretrained.ZH_EXAMPLES)  # the example sentences the page offers, English first
MODEL_KEY, SENTENCE_KEY, EXAMPLE_KEY = "real_model", "real_sentence", "real_example"
KIND_KEY = "real_kind"                                                     # head type shown in the top table
PICK_FROM_KEY, PICK_TO_KEY = "real_pick_from", "real_pick_to"              # "attends to this word": from -> to
PICK_FOR_KEY = "real_pick_for"   # (model, sentence) the pick selectors were last set for
LAYER_KEY, HEAD_KEY = "real_layer", "real_head"                            # the head view
PAIR_KEY, PAIR_LAYER_KEY, PAIR_HEAD_KEY = "real_pair", "real_pair_layer", "real_pair_head"
PAIR_FOR_KEY = "real_pair_for"   # (model, pair) the pair's head selectors were last set for
CHECK_LAYER_KEY, OFF_KEY = "real_check_layer", "real_off"                  # the core check; heads switched off
TOP_KEY = "real_top"  # prefix of the top-heads tables' selection, one per head type
GROUP_KEY = "real_group"  # the head-similarity map's grouping threshold
# Two analyses run only when asked (a switch that stays on for the student's next sentences): each head's importance
# (73 runs of the model) and every pair of heads compared (its map is 72 × 72 cells, its cost grows as n²). Always
# computed, they were half of a new 32-piece sentence's time (bench_speed "real": p50 ~950 → ~500 ms without them).
IMPORTANCE_KEY = "real_importance"
SIMILARITY_KEY = "real_similarity"
GROUP_STEPS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6)  # thresholds offered (Jensen–Shannon distance)
GROUP_DEFAULT = 0.3  # on the first example: 23 groups, the largest of 14 heads
SIMILARITY_DTYPE = np.float32  # js_distances in single precision: faster, within 1e-4 (benchmarks/bench_real.py)

KEPT: dict[str, object] = {  # widget values that survive a visit to another page (state.init_state)
    MODEL_KEY: pretrained.PACKAGED, SENTENCE_KEY: EXAMPLES[0].sentence,
    # None: the widget's own first option, or set by the callbacks below from the model and sentence
    KIND_KEY: None, PICK_FROM_KEY: None, PICK_TO_KEY: None, LAYER_KEY: None, HEAD_KEY: None,
    PAIR_KEY: None, PAIR_LAYER_KEY: None, PAIR_HEAD_KEY: None, CHECK_LAYER_KEY: None, OFF_KEY: None,
    GROUP_KEY: GROUP_DEFAULT, IMPORTANCE_KEY: False, SIMILARITY_KEY: False,
}


def top_key(kind: str) -> str:
    """Session key of the top-heads table of one head type (its selected row)."""
    return f"{TOP_KEY}_{kind}"


def cache_name(loaded: pretrained.Loaded) -> str:
    """What every cached result is keyed on besides its input: the model and pretrained.RESULTS_VERSION (results
    computed
    by an older version, e.g. while sessions shared hooks on the model, never match a new key)."""
    return f"{loaded.name}#v{pretrained.RESULTS_VERSION}"


def offered_models() -> dict[str, pretrained.ModelChoice]:
    """The models this server offers by name, the packaged one first: from its configuration (MHA_REAL_MODELS or
    the secrets' ``real_models`` table), never from the browser."""
    return {m.name: m for m in pretrained.installed_models(os.environ, streamlit_secrets())}


@st.cache_resource(max_entries=3, show_spinner=False)
def _load(name: str, where: str) -> pretrained.Loaded:
    loaded = pretrained.load(pretrained.ModelChoice(name, where))
    threads.one_thread_each()  # the class computes side by side (TURNS): one core each, no oversubscribed pools
    threads.bounded_heap()     # and what a class computed is given back when it leaves
    return loaded


def load(choice: pretrained.ModelChoice) -> pretrained.Loaded | None:
    """An offered model (cached; spinner on first load), or None after one message that names it."""
    try:
        with st.spinner(t("real.loading", name=escape(choice.name)), show_time=True):
            return _load(choice.name, choice.where)
    except LabError as err:
        render.show_error(err)
        return None


# Every result is kept once per process in a cache bounded by bytes (mha_core.lru), keyed on cache_name(loaded)
# and the input; values are shared, read-only, never copied per session (st.cache_data would unpickle a copy
# for each rerun of each student). Sizes at 128 pieces: a Run ~7 MiB (float32), the rest a few KiB each.
RUNS = ByteLRU(96 * MIB)            # about 13 runs of 128 pieces, many more short ones
RESULTS = ByteLRU(16 * MIB)         # stats, layer-check differences, similarity, importance, ablations, pairs
TURNS = Turns(2)                    # at most two sentences computed at once on this 2-core machine; others queue
TRIM_AFTER = 10.0                   # freed memory is given back this often …
TRIM_FOR = 180.0                    # … until this long after the last computation (past the disconnected TTL)
_TRIM_LOCK = threading.Lock()       # guards the two below: the process's one give-back thread and its clock
_TRIM_THREAD: threading.Thread | None = None
_LAST_WORK = 0.0


def _run_key(loaded: pretrained.Loaded, sentence: str) -> tuple:
    return ("run", cache_name(loaded), sentence)


def run(loaded: pretrained.Loaded, sentence: str) -> pretrained.Run:
    """The sentence through the model (cached per model and sentence)."""
    return RUNS.get(_run_key(loaded, sentence), lambda: pretrained.run(loaded, sentence))


def prepare(loaded: pretrained.Loaded, sentence: str) -> None:
    """A new sentence's heavy results (forward, stats, layer check)
    computed in turn with the other students' (at most TURNS.slots at once); while waiting, the page says how many
    are ahead of this one. Nothing to do when they are cached. LabError (bad sentence) surfaces from ``run``."""
    if _run_key(loaded, sentence) in RUNS and ("checks" if loaded.bert_like else "stats", cache_name(loaded),
                                                sentence) in RESULTS:
        return

    def compute() -> None:
        try:
            r = run(loaded, sentence)
            stats(loaded, r, sentence)
            if loaded.bert_like:
                checks(loaded, r, sentence)
        except LabError:
            pass  # the page shows it when it asks for the run

    in_turn(compute)


def in_turn(compute: Callable[[], T]) -> T:
    """``compute()`` in turn with the class's other computations (TURNS); meanwhile the page says how many are
    ahead, then that it is computing, and clears that note when done."""
    note = st.empty()

    def waiting(ahead: int) -> None:
        note.info(t("real.queue", n=ahead), icon=":material/hourglass_top:")

    try:
        with TURNS.turn(waiting):
            note.info(t("real.computing"), icon=":material/hourglass_top:")
            return compute()
    finally:
        note.empty()
        _later_give_back()


def _give_back() -> None:
    """Return freed heap pages to the OS (glibc's malloc_trim; elsewhere a no-op) once the model is idle: a class's
    temporaries are freed in many threads' malloc arenas, which glibc otherwise keeps, so the server's RSS would
    stay at the class's peak after everyone left."""
    if TURNS.busy():
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _later_give_back() -> None:
    """_give_back now, then every TRIM_AFTER seconds until TRIM_FOR seconds after the last computation: sessions
    free their pages as they leave, and Streamlit drops a disconnected session only after its TTL (120 s).
    One such thread at most per process."""
    global _TRIM_THREAD, _LAST_WORK  # noqa: PLW0603 - the process's one give-back thread (documented above)
    _give_back()
    with _TRIM_LOCK:
        _LAST_WORK = time.monotonic()
        if _TRIM_THREAD is None or not _TRIM_THREAD.is_alive():
            _TRIM_THREAD = threading.Thread(target=_give_back_while_recent, name="real-give-back", daemon=True)
            _TRIM_THREAD.start()


def _give_back_while_recent() -> None:
    while True:
        time.sleep(TRIM_AFTER)
        _give_back()
        with _TRIM_LOCK:
            if time.monotonic() - _LAST_WORK > TRIM_FOR:
                return


def stats(loaded: pretrained.Loaded, r: pretrained.Run, sentence: str) -> head_types.HeadStats:
    """Every head's type scores for this sentence (cached)."""
    return RESULTS.get(("stats", cache_name(loaded), sentence),
                       lambda: head_types.head_stats(r.attentions, r.special, r.punct))


def similarity(loaded: pretrained.Loaded, r: pretrained.Run, sentence: str) -> tuple[np.ndarray, np.ndarray]:
    """(L·H, L·H) Jensen–Shannon distances between every two heads and (L·H,) each head's entropy, heads in
    order L0·H0, L0·H1, … (cached per model and sentence: a threshold or head change costs nothing)."""
    def compute() -> tuple[np.ndarray, np.ndarray]:
        flat = r.attentions.reshape(-1, r.n, r.n)  # (L·H, n, n)
        return head_similarity.js_distances(flat, SIMILARITY_DTYPE), head_similarity.head_entropy(flat)

    return RESULTS.get(("sim", cache_name(loaded), sentence), compute)


def similarity_asked(loaded: pretrained.Loaded, r: pretrained.Run, sentence: str) -> tuple[np.ndarray, np.ndarray]:
    """``similarity`` for the page: a long sentence's (not computed by ``prepare``) in turn with the class."""
    if ("sim", cache_name(loaded), sentence) in RESULTS:
        return similarity(loaded, r, sentence)
    return in_turn(lambda: similarity(loaded, r, sentence))


def similarity_table(names: list[str], order: tuple[int, ...], group_of: dict[int, int], kinds: list[str],
                     entropy: np.ndarray) -> None:
    """Each head in the map's order: its group, what it measurably does, its entropy."""
    df = pd.DataFrame({t("real.col_head"): [names[i] for i in order],
                       t("real.col_group"): [group_of[i] + 1 for i in order],
                       t("real.col_type"): [t(f"real.kind_{kinds[i]}") for i in order],
                       t("real.col_entropy"): [round(float(entropy[i]), 3) for i in order]})
    st.dataframe(df, hide_index=True, width="stretch", height=360,  # every entropy to 3 decimals, also 2.300
                 column_config={t("real.col_entropy"): st.column_config.NumberColumn(format="%.3f")})


def checks(loaded: pretrained.Loaded, r: pretrained.Run, sentence: str) -> list[layer_check.LayerDiff]:
    """The core against every layer of the model: each layer's two differences (cached; the traces are not)."""
    return RESULTS.get(("checks", cache_name(loaded), sentence), lambda: layer_check.check_diffs(loaded, r))


def importance(loaded: pretrained.Loaded, base: pretrained.Run, sentence: str) -> np.ndarray:
    """Per-head importance (1 − cosine) from the sentence's run the page already has, cached."""
    return RESULTS.get(("importance", cache_name(loaded), sentence),
                       lambda: in_turn(lambda: pretrained.importance(loaded, sentence, base)))


def ablate(loaded: pretrained.Loaded, base: pretrained.Run, sentence: str, off: list[tuple[int, int]]) -> float:
    """Cosine similarity with these heads off (cached)."""
    key = tuple(sorted(off))
    if not key:
        return 1.0  # every head on: the sentence itself (pretrained.ablate would spend a forward to say so)
    return RESULTS.get(("ablate", cache_name(loaded), sentence, key),
                       lambda: in_turn(lambda: pretrained.ablate(loaded, sentence, list(key), base)))


def pair_sides(loaded: pretrained.Loaded, index: int) -> tuple[minimal_pair.PairSide, minimal_pair.PairSide]:
    """Both sentences of minimal pair ``index`` through the model (cached); LabError if its words are missing."""
    def compute() -> tuple[minimal_pair.PairSide, minimal_pair.PairSide]:
        pair = minimal_pair.PAIRS[index]
        runs = [run(loaded, s) for s in pair.sentences]
        return tuple(minimal_pair.side(r.attentions, r.tokens, pair, i) for i, r in enumerate(runs))  # type: ignore[return-value]

    return RESULTS.get(("pair", cache_name(loaded), index), compute)


def pair_census(loaded: pretrained.Loaded, index: int,
                sides: tuple[minimal_pair.PairSide, minimal_pair.PairSide]) -> minimal_pair.PairCensus:
    """Every head's verdict on the pair, counted (cached)."""
    return RESULTS.get(("census", cache_name(loaded), index), lambda: minimal_pair.census(sides))


@st.cache_data(max_entries=16, show_spinner=False)
def _unknown_tokens(_loaded: pretrained.Loaded, name: str, sentence: str) -> tuple[int, int]:
    return pretrained.unknown_tokens(_loaded, sentence)


def unknown_tokens(loaded: pretrained.Loaded, sentence: str) -> tuple[int, int]:
    """(unknown pieces, pieces) of a sentence for this model's vocabulary (cached)."""
    return _unknown_tokens(loaded, cache_name(loaded), sentence)


def default_pair_head(loaded: pretrained.Loaded, index: int,
                      sides: tuple[minimal_pair.PairSide, minimal_pair.PairSide]) -> None:
    """On a new model or pair, open the head that looks most like a coreference head on the first sentence."""
    ss = st.session_state
    if ss.get(PAIR_FOR_KEY) != (loaded.name, index):
        ss[PAIR_LAYER_KEY], ss[PAIR_HEAD_KEY] = minimal_pair.most_referent_like(sides)
        ss[PAIR_FOR_KEY] = (loaded.name, index)


def code_span(text: str) -> str:
    """``text`` as inline code even when it holds backticks (CommonMark: a longer fence, padded with spaces)."""
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in re.findall("`+", text)) + 1)
    return f"{fence} {text} {fence}"


def open_head(layer: int, head: int) -> None:
    """Show this head in the head view."""
    st.session_state[LAYER_KEY] = layer
    st.session_state[HEAD_KEY] = head


def _open_picked(key: str, ranked: list[head_types.RankedHead]) -> None:
    """on_change of the top heads: open the one picked in the head view, then clear the pick (the head view's own
    selectors may move on, and an option still chosen would name a head no longer shown)."""
    picked = st.session_state.get(key)
    if picked is not None:
        open_head(ranked[picked].layer, ranked[picked].head)
    st.session_state[key] = None


def ranked_heads(ranked: list[head_types.RankedHead], key: str) -> None:
    """The top heads with their scores, best first, one option each; picking one opens it in the head view. Options,
    not a selectable table: a table's grid rewrites its hidden accessible text ~0.2 s after new data, so a new
    sentence took that much longer to settle (benchmarks/bench_speed "real": p50 467 → 344–380 ms). A list, not pills:
    pills stay on one line and hid all but the first three in a narrow column or on a phone."""
    st.radio(t("real.top_caption"), range(len(ranked)), index=None, key=key,
             format_func=lambda i: f"{head_name(ranked[i].layer, ranked[i].head)} · {ranked[i].score:.3f}",
             on_change=_open_picked, args=(key, ranked))


# --- session state the page's widgets read ---------------------------------------------------------------

def use_example() -> None:
    """on_change of the example picker: its sentence goes into the sentence box."""
    ss = st.session_state
    if ss.get(EXAMPLE_KEY) is not None:
        ss[SENTENCE_KEY] = EXAMPLES[ss[EXAMPLE_KEY]].sentence


def default_pick(loaded: pretrained.Loaded, r: pretrained.Run, sentence: str) -> None:
    """On a new model or sentence, open "attends to this word" on an example's pronoun → referent (else 1 → 2)."""
    ss = st.session_state
    if ss.get(PICK_FOR_KEY) != (loaded.name, sentence):
        ex = next((e for e in EXAMPLES if e.sentence == sentence), None)
        pro = head_types.word_pieces(r.tokens, ex.pronoun) if ex else []
        ant = head_types.word_pieces(r.tokens, ex.antecedent) if ex else []
        ss[PICK_FROM_KEY], ss[PICK_TO_KEY] = (pro or [1])[0], (ant or [min(2, r.n - 1)])[0]
        ss[PICK_FOR_KEY] = (loaded.name, sentence)


def fit_head_view(loaded: pretrained.Loaded, first: head_types.RankedHead) -> None:
    """The head view's layer and head: ``first`` on the first visit, then kept, within this model's size."""
    ss = st.session_state
    ss[LAYER_KEY] = min(int(first.layer if ss.get(LAYER_KEY) is None else ss[LAYER_KEY]), loaded.n_layers - 1)
    ss[HEAD_KEY] = min(int(first.head if ss.get(HEAD_KEY) is None else ss[HEAD_KEY]), loaded.n_heads - 1)


def fit_off(n_heads_total: int) -> None:
    """Heads switched off that this model has (a smaller model drops the rest)."""
    ss = st.session_state
    ss[OFF_KEY] = [i for i in (ss.get(OFF_KEY) or []) if i < n_heads_total]
