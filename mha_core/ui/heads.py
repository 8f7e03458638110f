"""The heads page's Streamlit layer: cached results of the shipped model, a lock-guarded cache of training
runs, and the drawings the page repeats (attention grids, score tables, the live training view).

Everything the shipped model yields is cached once per server; a training run is cached by its settings,
with one lock per settings (the same settings never train twice at once: the second student waits and gets
the first one's run) and one training slot per server (a run never competes with another for the CPU).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

from mha_core import toy_charts
from mha_core.toy import (
    Importance,
    PruningCurve,
    RepeatBatch,
    RepeatMetrics,
    ScoreTable,
    ToyTransformer,
    held_out_batch,
    importance,
    lab,
    load_default,
    mask_without,
    pruning_curve,
    repeat_metrics,
    score_model,
)
from mha_core.toy.experiment import HeadsResult
from mha_core.toy.registers import REGISTER_NAMES
from mha_core.toy.scores import INDUCTION_MIN, PREVIOUS_TOKEN_MIN, induction_keys
from mha_core.ui import render
from mha_core.ui.i18n import lang, t

SCORE_FIELDS = ("previous_token", "induction", "first_token", "self_token", "entropy_norm")
SEQ_KEY, GEN_KEY, TRAIN_KEY = "heads_seq", "heads_gen", "heads_train_requested"
MAX_RUNS = 16  # finished training runs kept per server (each a few hundred kB)


# --- the shipped model, cached once per server -------------------------------------------------------

@st.cache_resource(show_spinner=False)
def model() -> ToyTransformer:
    """The shipped weights (LabError, uncached, if the file is missing or unreadable)."""
    return load_default()


@st.cache_resource(show_spinner=False)
def batch() -> RepeatBatch:
    """The 256 held-out sequences behind every figure of the shipped model."""
    return held_out_batch(model().config)


@st.cache_data(show_spinner=False)
def held_out_scores() -> ScoreTable:
    """Every head's scores and label on the held-out set."""
    return score_model(model(), batch())


@st.cache_data(max_entries=256, show_spinner=False)
def report(ids: tuple[int, ...]) -> lab.SequenceReport:
    """One typed or generated sequence through the shipped model."""
    return lab.sequence_report(model(), np.asarray(ids, dtype=np.int64))


@st.cache_data(show_spinner=False)
def importance_table() -> Importance:
    """Loss increase / accuracy drop when each head alone is switched off."""
    return importance(model(), batch())


@st.cache_data(show_spinner=False)
def pruning() -> PruningCurve:
    """Accuracy as heads are removed, least important first."""
    return pruning_curve(model(), batch(), importance_table())


@st.cache_data(max_entries=512, show_spinner=False)
def ablated(off: tuple[tuple[int, int], ...]) -> RepeatMetrics:
    """Repeated-part loss and accuracy with the heads ``off`` switched off."""
    return repeat_metrics(model(), batch(), mask_without(model(), off) if off else None)


@st.cache_data(show_spinner=False)
def heads_result() -> HeadsResult:
    """The shipped heads-vs-accuracy sweep."""
    return lab.load_heads_result()


@st.cache_data(show_spinner=False)
def register_example() -> list[str]:
    """The example sequence of the "How many heads?" task, each asked ``?`` with its answer."""
    return lab.register_example(0)


def register_name(r: int) -> str:
    """Register ``r`` as the example writes it (a, b, c, ...)."""
    return REGISTER_NAMES[r]


def register_weights(res: HeadsResult, seed: int) -> dict[int, np.ndarray]:
    """h -> (h, registers) mean attention weight of each head on each register's latest assignment (one seed)."""
    return {r.n_heads: np.asarray(r.register_weight, dtype=float) for r in res.runs
            if r.seed == seed and r.register_weight is not None}


# --- training runs, cached by settings -------------------------------------------------------------

class RunCache:
    """Finished runs by settings (least recently used dropped first), a lock per settings, one training slot."""

    def __init__(self, size: int = MAX_RUNS) -> None:
        self._guard = threading.Lock()
        self._locks: dict[lab.TrainSettings, threading.Lock] = {}
        self._runs: OrderedDict[lab.TrainSettings, lab.TrainRun] = OrderedDict()
        self._slot = threading.Lock()
        self._size = size

    def get(self, settings: lab.TrainSettings) -> lab.TrainRun | None:
        """The finished run for these settings, if any."""
        with self._guard:
            run = self._runs.get(settings)
            if run is not None:
                self._runs.move_to_end(settings)
            return run

    def run(self, settings: lab.TrainSettings, on_point: Callable[[lab.ProgressPoint], None],
            on_wait: Callable[[], None]) -> lab.TrainRun:
        """The run for these settings: cached, or trained now (waiting for the same settings / the slot first)."""
        with self._guard:
            lock = self._locks.setdefault(settings, threading.Lock())
        with lock:
            done = self.get(settings)
            if done is not None:
                return done
            if not self._slot.acquire(blocking=False):
                on_wait()
                self._slot.acquire()
            try:
                run = lab.train_run(settings, on_point)
            finally:
                self._slot.release()
            with self._guard:
                self._runs[settings] = run
                while len(self._runs) > self._size:
                    old, _ = self._runs.popitem(last=False)
                    self._locks.pop(old, None)
        return run


@st.cache_resource(show_spinner=False)
def runs() -> RunCache:
    """The server's training cache (shared by every session)."""
    return RunCache()


# --- callbacks --------------------------------------------------------------------------------------

def on_generate() -> None:
    """The Generate button: the next seeded sequence with a repeat goes into the text box."""
    ss = st.session_state
    ss[GEN_KEY] = int(ss.get(GEN_KEY, 0)) + 1
    ss[SEQ_KEY] = lab.format_sequence(lab.generate_sequence(ss[GEN_KEY]))


def request_training() -> None:
    """The Train button: a flag the page consumes once (a callback, so it survives a rerun before the page)."""
    st.session_state[TRAIN_KEY] = True


def toggle_key(layer: int, head: int) -> str:
    return f"heads_on_{layer}_{head}"


def set_heads(off: tuple[tuple[int, int], ...]) -> None:
    """Preset buttons of the ablation: exactly the heads ``off`` switched off."""
    cfg = model().config
    for layer in range(cfg.n_layers):
        for head in range(cfg.n_heads):
            st.session_state[toggle_key(layer, head)] = (layer, head) not in off


# --- drawings ---------------------------------------------------------------------------------------

def head_name(layer: int, head: int) -> str:
    return t("heads.head_name", layer=layer, head=head)


def score_frame(table: ScoreTable) -> pd.DataFrame:
    """Every head's scores and label as a table with translated column names (NaN shown as empty)."""
    cols = [t(f"heads.score_{f}") for f in SCORE_FIELDS]
    return pd.DataFrame(
        [[head_name(s.layer, s.head), t(f"heads.label_{s.label}"), *(round(getattr(s, f), 3) for f in SCORE_FIELDS)]
         for s in table.heads],
        columns=[t("heads.col_head"), t("heads.col_label"), *cols],
    )


def attention_grid(attn: np.ndarray, ids: np.ndarray, titles: list[list[str]], key: tuple,
                   heads: list[tuple[int, int]] | None = None, size: int = 200) -> None:
    """One heatmap per (layer, head) of ``attn`` on ``ids``, four to a row (a phone stacks them).

    Repeated tokens are marked in the labels and the cells where an induction head should look are outlined;
    ``key`` must name ``attn``.
    """
    labels = lab.position_labels(ids)
    targets = induction_keys(np.asarray(ids)[None])[0]
    heads = heads or [(la, h) for la in range(attn.shape[0]) for h in range(attn.shape[1])]
    per_row = min(4, len(heads))
    for start in range(0, len(heads), per_row):
        cols = st.columns(per_row)
        for col, (la, h) in zip(cols, heads[start:start + per_row], strict=False):
            with col:
                render.chart(lambda la=la, h=h: toy_charts.attention_map(
                    attn[la, h], labels, targets, title=titles[la][h], row_title=t("common.query"),
                    col_title=t("common.key"), value_title=t("common.weight"), size=size,
                ), *key, la, h, lang())


def _curves(points: list[lab.ProgressPoint], steps: list[int], loss: list[float], max_step: int, key: tuple) -> None:
    """Loss (left) and best head scores (right) so far."""
    left, right = st.columns(2)
    with left:
        render.chart(lambda: toy_charts.loss_curve(
            steps, loss, max_step=max_step, title=t("heads.loss_title"), x_title=t("heads.step"),
            y_title=t("heads.loss_axis")), *key, "loss", lang())
    with right:
        render.chart(lambda: toy_charts.score_curves(
            [p.step for p in points], [p.previous_token for p in points], [p.induction for p in points],
            max_step=max_step, names=(t("heads.best_prev"), t("heads.best_ind")),
            thresholds=(PREVIOUS_TOKEN_MIN, INDUCTION_MIN), title=t("heads.scores_title"), x_title=t("heads.step"),
            y_title=t("heads.score_axis")), *key, "scores", lang())


def train_live(settings: lab.TrainSettings) -> lab.TrainRun:
    """Train (or fetch) the run for ``settings`` with a progress bar and live curves every few steps."""
    bar = st.progress(0.0, text=t("heads.training", step=0, steps=settings.steps))
    live = st.empty()
    points: list[lab.ProgressPoint] = []

    def on_point(p: lab.ProgressPoint) -> None:
        points.append(p)
        bar.progress(p.step / settings.steps, text=t("heads.training", step=p.step, steps=settings.steps))
        with live.container():
            _curves(list(points), [q.step for q in points], [q.loss for q in points], settings.steps,
                    ("heads.live", settings, p.step))

    run = runs().run(settings, on_point, lambda: bar.progress(0.0, text=t("heads.waiting")))
    bar.empty()
    live.empty()
    return run


def show_run(run: lab.TrainRun) -> None:
    """A finished run: metrics, loss and score curves, attention snapshots, the final score table."""
    s, h = run.settings, run.history
    reached = next((p.step for p in run.points if p.induction >= INDUCTION_MIN), None)
    c1, c2, c3 = st.columns(3)
    c1.metric(t("heads.final_loss"), f"{run.metrics.loss:.3f}")
    c2.metric(t("heads.accuracy"), f"{run.metrics.accuracy:.1%}")
    c3.metric(t("heads.seconds"), f"{h.seconds:.1f} s")
    if reached is None:
        st.warning(t("heads.no_induction", threshold=INDUCTION_MIN), icon=":material/hourglass_empty:")
    else:
        st.success(t("heads.induction_at", step=reached, threshold=INDUCTION_MIN), icon=":material/check_circle:")
    _curves(list(run.points), h.steps, h.loss, s.steps, ("heads.run", s))
    st.markdown(f"**{t('heads.snapshots_title')}**")
    prev = run.scores.best("previous_token", layer=0)
    ind = run.scores.best("induction", layer=s.n_layers - 1)
    for best in dict.fromkeys([(prev.layer, prev.head), (ind.layer, ind.head)]):
        snaps = np.stack([snap.attn[best] for snap in run.snapshots])[:, None]  # (snapshots, 1, n, n)
        titles = [[t("heads.snap_title", head=head_name(*best), step=snap.step)] for snap in run.snapshots]
        attention_grid(snaps, run.probe, titles, ("heads.snap", s, best), size=170)
    st.caption(t("heads.snapshots_caption"))
    st.dataframe(score_frame(run.scores), hide_index=True, width="stretch")
