"""The heads page's Streamlit layer: its session keys, cached results of the shipped model, a lock-guarded cache
of training runs, and the drawings the page repeats (attention grids, score tables, the live training view).

Everything the shipped model yields is cached once per server; a training run is cached by its settings,
with one lock per settings (the same settings never train twice at once: the second student waits and gets
the first one's run) and one training slot per server (a run never competes with another for the CPU).

Only the heads page imports it (its ``KEPT`` is registered there, state.keep), so loading torch here costs no
other page anything.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

from mha_core import toy
from mha_core.charts import toy as charts
from mha_core.settings import Setting
from mha_core.toy.tasks import DEFAULT_TASK
from mha_core.toy_config import DEFAULT_RECIPE
from mha_core.ui import numbers, render
from mha_core.ui.i18n import t
from mha_core.units import head_name

SCORE_FIELDS = ("previous_token", "induction", "first_token", "self_token", "entropy_norm")
TAB_KEY, SRC_KEY = "heads_tab", "heads_src"                # open tab; score table's source (sequence / held-out)
SEQ_KEY, GEN_KEY, TRAIN_KEY = "heads_seq", "heads_gen", "heads_train_requested"
DM_KEY, H_KEY, LAYERS_KEY, STEPS_KEY, SEED_KEY, TASK_KEY = (  # the "train it yourself" form
    "heads_t_dm", "heads_t_h", "heads_t_layers", "heads_t_steps", "heads_t_seed", "heads_t_task")
SEED = Setting(SEED_KEY, int, DEFAULT_RECIPE.seed, bounds=(0, 9999))  # the form's seed: a forged one is clamped
MAX_RUNS = 16  # finished training runs kept per server (each a few hundred kB)


def toggle_key(layer: int, head: int) -> str:
    """Session key of the ablation switch of one head of the shipped model."""
    return f"heads_on_{layer}_{head}"


_SHIPPED = DEFAULT_RECIPE.config  # the shape of the shipped weights (tests check load_default() has it)
KEPT: dict[str, object] = {  # widget values that survive a visit to another page (state.keep)
    TAB_KEY: None, SRC_KEY: None,
    SEQ_KEY: None,  # filled by ensure_sequence
    DM_KEY: _SHIPPED.d_model, H_KEY: _SHIPPED.n_heads, LAYERS_KEY: _SHIPPED.n_layers,
    STEPS_KEY: DEFAULT_RECIPE.steps, SEED_KEY: DEFAULT_RECIPE.seed, TASK_KEY: DEFAULT_TASK,
    **{toggle_key(la, h): True for la in range(_SHIPPED.n_layers) for h in range(_SHIPPED.n_heads)},
}


def ensure_sequence() -> None:
    """The sequence box opens on generated sequence 0 (the first visit only)."""
    if SEQ_KEY not in st.session_state:
        st.session_state[SEQ_KEY] = toy.format_sequence(toy.generate_sequence(0))


# --- the shipped model, cached once per server -------------------------------------------------------

@st.cache_resource(show_spinner=False)
def model() -> toy.ToyTransformer:
    """The shipped weights (LabError, uncached, if the file is missing or unreadable)."""
    return toy.load_default()


@st.cache_resource(show_spinner=False)
def batch() -> toy.RepeatBatch:
    """The 256 held-out sequences behind every figure of the shipped model."""
    return toy.held_out_batch(model().config)


@st.cache_data(show_spinner=False)
def held_out_scores() -> toy.ScoreTable:
    """Every head's scores and label on the held-out set."""
    return toy.score_model(model(), batch())


@st.cache_data(max_entries=256, show_spinner=False)
def report(ids: tuple[int, ...]) -> toy.SequenceReport:
    """One typed or generated sequence through the shipped model."""
    return toy.sequence_report(model(), np.asarray(ids, dtype=np.int64))


@st.cache_data(show_spinner=False)
def importance_table() -> toy.Importance:
    """Loss increase / accuracy drop when each head alone is switched off."""
    return toy.importance(model(), batch())


@st.cache_data(show_spinner=False)
def pruning() -> toy.PruningCurve:
    """Accuracy as heads are removed, least important first."""
    return toy.pruning_curve(model(), batch(), importance_table())


@st.cache_data(max_entries=512, show_spinner=False)
def ablated(off: tuple[tuple[int, int], ...]) -> toy.RepeatMetrics:
    """Repeated-part loss and accuracy with the heads ``off`` switched off."""
    return toy.repeat_metrics(model(), batch(), toy.mask_without(model(), off) if off else None)


@st.cache_data(show_spinner=False)
def heads_result() -> toy.HeadsResult:
    """The shipped heads-vs-accuracy sweep."""
    return toy.load_heads_result()


@st.cache_data(show_spinner=False)
def register_example() -> list[str]:
    """The example sequence of the "How many heads?" task, each asked ``?`` with its answer."""
    return toy.register_example(0)


def register_name(r: int) -> str:
    """Register ``r`` as the example writes it (a, b, c, ...)."""
    return toy.REGISTER_NAMES[r]


def register_weights(res: toy.HeadsResult, seed: int) -> dict[int, np.ndarray]:
    """h -> (h, registers) mean attention weight of each head on each register's latest assignment (one seed)."""
    return {r.n_heads: np.asarray(r.register_weight, dtype=float) for r in res.runs
            if r.seed == seed and r.register_weight is not None}


# --- training runs, cached by settings -------------------------------------------------------------

class RunCache:
    """Finished runs by settings (least recently used dropped first), a lock per settings, one training slot."""

    def __init__(self, size: int = MAX_RUNS) -> None:
        self._guard = threading.Lock()
        self._locks: dict[toy.TrainSettings, threading.Lock] = {}
        self._runs: OrderedDict[toy.TrainSettings, toy.TrainRun] = OrderedDict()
        self._slot = threading.Lock()
        self._size = size

    def get(self, settings: toy.TrainSettings) -> toy.TrainRun | None:
        """The finished run for these settings, if any."""
        with self._guard:
            run = self._runs.get(settings)
            if run is not None:
                self._runs.move_to_end(settings)
            return run

    def run(self, settings: toy.TrainSettings, on_point: Callable[[toy.ProgressPoint], None],
            on_wait: Callable[[], None]) -> toy.TrainRun:
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
                run = toy.train_run(settings, on_point)
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
    ss[SEQ_KEY] = toy.format_sequence(toy.generate_sequence(ss[GEN_KEY]))


def on_task_change() -> None:
    """A new task: the form takes that task's recipe (the shape and steps that reach its target in seconds)."""
    ss = st.session_state
    rec = toy.TrainSettings.for_task(ss[TASK_KEY], seed=int(numbers.value(SEED)))
    ss.update({DM_KEY: rec.d_model, H_KEY: rec.n_heads, LAYERS_KEY: rec.n_layers, STEPS_KEY: rec.steps})


def request_training() -> None:
    """The Train button: a flag the page consumes once (a callback, so it survives a rerun before the page)."""
    st.session_state[TRAIN_KEY] = True


def training_requested() -> bool:
    """Whether Train was pressed since the last run (the flag is consumed)."""
    return bool(st.session_state.pop(TRAIN_KEY, False))


def heads_off(n_layers: int, n_heads: int) -> tuple[tuple[int, int], ...]:
    """(layer, head) of every head whose ablation switch is off."""
    ss = st.session_state
    return tuple((la, h) for la in range(n_layers) for h in range(n_heads) if not ss.get(toggle_key(la, h), True))


def set_heads(off: tuple[tuple[int, int], ...]) -> None:
    """Preset buttons of the ablation: exactly the heads ``off`` switched off."""
    cfg = model().config
    for layer in range(cfg.n_layers):
        for head in range(cfg.n_heads):
            st.session_state[toggle_key(layer, head)] = (layer, head) not in off


# --- drawings ---------------------------------------------------------------------------------------

def score_frame(table: toy.ScoreTable) -> pd.DataFrame:
    """Every head's scores and label as a table with translated column names (NaN shown as empty)."""
    cols = [t(f"heads.score_{f}") for f in SCORE_FIELDS]
    return pd.DataFrame(
        [[head_name(s.layer, s.head), t(f"heads.label_{s.label}"), *(round(getattr(s, f), 3) for f in SCORE_FIELDS)]
         for s in table.heads],
        columns=[t("heads.col_head"), t("heads.col_label"), *cols],
    )


def attention_grid(attn: np.ndarray, ids: np.ndarray, titles: list[list[str]],
                   heads: list[tuple[int, int]] | None = None, size: int = 200,
                   targets: np.ndarray | None = None, mark_repeats: bool = True) -> None:
    """One heatmap per (layer, head) of ``attn`` on ``ids``, four to a row (a phone stacks them).

    Repeated tokens are marked in the labels (unless ``mark_repeats`` is off); outlined are the ``targets`` cells
    (n, n), by default those where an induction head should look.
    """
    labels = tuple(toy.position_labels(ids, mark_repeats))
    if targets is None:
        targets = toy.induction_keys(np.asarray(ids)[None])[0]
    heads = heads or [(la, h) for la in range(attn.shape[0]) for h in range(attn.shape[1])]
    per_row = min(4, len(heads))
    for start in range(0, len(heads), per_row):
        cols = st.columns(per_row)
        for col, (la, h) in zip(cols, heads[start:start + per_row], strict=False):
            with col:
                render.chart(charts.attention_map, attn[la, h], labels, targets, title=titles[la][h],
                             row_title=t("common.query"), col_title=t("common.key"), value_title=t("common.weight"),
                             size=size)


def _curves(run_task: toy.Task, points: list[toy.ProgressPoint], steps: list[int], loss: list[float],
            max_step: int) -> None:
    """Loss (left); held-out accuracy and the best score of each expected head so far (right)."""
    left, right = st.columns(2)
    with left:
        title = t("heads.loss_title" if run_task.key == DEFAULT_TASK else "heads.task_loss")
        render.chart(charts.loss_curve, tuple(steps), tuple(loss), max_step=max_step, title=title,
                     x_title=t("heads.step"), y_title=t("heads.loss_axis"))
    with right:
        names = (t("heads.curve_accuracy"), *(t("heads.curve_best", pattern=t(f"heads.expect_{e.key}"))
                                             for e in run_task.expected))
        values = (tuple(p.accuracy for p in points),
                  *(tuple(p.expected[i] for p in points) for i in range(len(run_task.expected))))
        render.chart(charts.expected_curves, tuple(p.step for p in points), values, max_step=max_step,
                     names=names, thresholds=(run_task.target, *(e.threshold for e in run_task.expected)),
                     title=t("heads.scores_title"), x_title=t("heads.step"), y_title=t("heads.score_axis"))


def train_live(settings: toy.TrainSettings) -> toy.TrainRun:
    """Train (or fetch) the run for ``settings`` with a progress bar and live curves every few steps."""
    bar = st.progress(0.0, text=t("heads.training", step=0, steps=settings.steps))
    live = st.empty()
    points: list[toy.ProgressPoint] = []
    task = toy.get_task(settings.task)

    def on_point(p: toy.ProgressPoint) -> None:
        points.append(p)
        bar.progress(p.step / settings.steps, text=t("heads.training", step=p.step, steps=settings.steps))
        with live.container():
            _curves(task, list(points), [q.step for q in points], [q.loss for q in points], settings.steps)

    run = runs().run(settings, on_point, lambda: bar.progress(0.0, text=t("heads.waiting")))
    bar.empty()
    live.empty()
    return run


def task_intro(key: str) -> None:
    """Before training: what the task asks, one example, and the heads it should grow."""
    task = toy.get_task(key)
    st.markdown(t(f"heads.task_{key}_desc", span=toy.tasks.SPAN, n=toy.tasks.PREVIOUS_LEN))
    ex = toy.task_example(key)
    st.code(example_lines(ex), language=None)
    st.caption(t("heads.example_caption"))
    lines = [t("heads.expect_line", pattern=t(f"heads.expect_{e.key}"), what=t(f"heads.expect_{e.key}_desc"),
               where=where(e.layer), threshold=e.threshold) for e in task.expected]
    st.markdown(t("heads.expect_title", target=task.target) + "\n" + "\n".join(f"- {line}" for line in lines))


def where(layer: int | None) -> str:
    """Where a head is expected, in words (``Expected.layer``: 0, -1 = the last, None = any)."""
    if layer is None:
        return t("heads.where_any")
    return t("heads.where_last") if layer < 0 else t("heads.where_in", layer=layer)


EXAMPLE_WIDTH = 12  # positions per pair of lines: 23 characters fit a phone's code block


def example_lines(ex: toy.TaskBatch, width: int = EXAMPLE_WIDTH) -> str:
    """Pairs of aligned lines: the sequence, and under each position what the model must predict there (· = not
    scored), ``width`` positions per pair."""
    top = [toy.symbol(int(i)) for i in ex.tokens[0]]
    bottom = [toy.symbol(int(y)) if m else "·" for y, m in zip(ex.targets[0], ex.mask[0], strict=True)]
    return "\n\n".join(f"{' '.join(top[i:i + width])}\n{' '.join(bottom[i:i + width])}"
                        for i in range(0, len(top), width))


def _heads_list(heads: list[tuple[int, int]], scores: np.ndarray) -> str:
    """"L0·H1 (0.93), ...", rounded as the score matrix rounds (3 places, then shown with 2)."""
    return t("heads.list_sep").join(t("heads.head_score", head=head_name(*lh), score=round(float(scores[lh]), 3))
                                    for lh in heads)


def emerged_sentence(e: toy.Emerged) -> str:
    """What the numbers say about one expected head (computed, never typed)."""
    pattern = t(f"heads.expect_{e.key}")
    if e.matches:
        text = t("heads.emerged_yes", pattern=pattern, n=len(e.matches), threshold=e.threshold,
                 heads=_heads_list(e.matches, e.scores), where=where_layers(e))
    else:
        text = t("heads.emerged_no", pattern=pattern, threshold=e.threshold, head=head_name(*e.best),
                 score=round(e.best_score, 3), where=where_layers(e))
    if e.elsewhere:
        text += " " + t("heads.emerged_elsewhere", heads=_heads_list(e.elsewhere, e.scores))
    return text


def where_layers(e: toy.Emerged) -> str:
    """The expected layers as text (all, or one named layer)."""
    if len(e.layers) == e.scores.shape[0]:
        return t("heads.where_any")
    return t("heads.where_in", layer=e.layers[0])


def show_emerged(run: toy.TrainRun) -> None:
    """After training: every head's score for each expected pattern, the sentence, and the best head's map."""
    st.subheader(t("heads.emerged_title"))
    cfg = run.model.config
    ex, view = run.example, toy.inspect_sequence(run.model, run.example.tokens[0])
    for spec, e in zip(run.task.expected, run.emerged, strict=True):
        st.markdown(t("heads.expect_head", pattern=t(f"heads.expect_{e.key}"), what=t(f"heads.expect_{e.key}_desc")))
        left, right = st.columns([3, 2])
        with left:
            render.chart(charts.importance_matrix, e.scores,
                         tuple(t("heads.layer", layer=la) for la in range(cfg.n_layers)),
                         tuple(f"H{h}" for h in range(cfg.n_heads)), value_title=t("heads.pattern_score"),
                         height=40 + 40 * cfg.n_layers, top=1.0)
            st.markdown(emerged_sentence(e))
        with right:
            keys = spec.keys(ex)[0][0]
            title = t("heads.best_title", head=head_name(*e.best), pattern=t(f"heads.expect_{e.key}"))
            attention_grid(view.attn, ex.tokens[0], [[title] * cfg.n_heads for _ in range(cfg.n_layers)],
                           heads=[e.best], size=220, targets=keys, mark_repeats=run.settings.task == DEFAULT_TASK)
    st.caption(t("heads.emerged_caption", n=len(toy.task_held_out(run.task).tokens)))


def show_run(run: toy.TrainRun) -> None:
    """A finished run: metrics, target reached, curves, what emerged, attention snapshots, (repeat) the labels."""
    s, h, task = run.settings, run.history, run.task
    repeat = s.task == DEFAULT_TASK
    c1, c2, c3 = st.columns(3)
    c1.metric(t("heads.final_loss" if repeat else "heads.task_loss"), f"{run.metrics.loss:.3f}")
    c2.metric(t("heads.accuracy" if repeat else "heads.task_accuracy"), f"{run.metrics.accuracy:.1%}")
    c3.metric(t("heads.seconds"), f"{h.seconds:.1f} s")
    hit = toy.reached(run.points, task.target)
    if hit is None:
        st.warning(t("heads.target_missed", target=task.target, acc=run.metrics.accuracy),
                   icon=":material/hourglass_empty:")
    else:
        st.success(t("heads.target_hit", target=task.target, step=hit.step, seconds=hit.seconds),
                   icon=":material/check_circle:")
    _curves(task, list(run.points), h.steps, h.loss, s.steps)
    show_emerged(run)
    st.markdown(f"**{t('heads.snapshots_title' if repeat else 'heads.task_snapshots_title')}**")
    specs = {}  # best head -> the first expected pattern it is best at (one row of snapshots per head)
    for spec, e in zip(task.expected, run.emerged, strict=True):
        specs.setdefault(e.best, spec)
    for best, spec in specs.items():
        snaps = np.stack([snap.attn[best] for snap in run.snapshots])[:, None]  # (snapshots, 1, n, n)
        titles = [[t("heads.snap_title", head=head_name(*best), step=snap.step)] for snap in run.snapshots]
        attention_grid(snaps, run.probe, titles, size=170, targets=spec.keys(run.example)[0][0], mark_repeats=repeat)
    st.caption(t("heads.snapshots_caption" if repeat else "heads.task_snapshots_caption"))
    if run.scores is not None:
        st.dataframe(score_frame(run.scores), hide_index=True, width="stretch")
