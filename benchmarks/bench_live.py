"""A live lesson against one server: one teacher, N students following, the teacher's moves and class votes.

The students joined the class (``Storage.join``) and open ``/overview?class=CODE&student=KEY``, which restores
their membership (``student.member``); most speak the app's own websocket protocol (as bench_class.py), with the
browser's part a follower needs: the follow fragment's auto-reruns (``st.fragment(run_every=...)`` is a timer in
the browser that asks the server for a fragment run), the page and address the server switches them to, and the
widgets they use. ``--browsers`` of them are real Chromium pages (a phone every other one).

The teacher: this script publishes with ``Storage.publish_live`` exactly the ``LiveState`` the presenter's session
writes (mha_core.ui.live: ``_step_state`` for a step, ``_sync`` for a setting, ``_on_vote`` for a vote's phase:
the followed settings are ``lesson.snapshot`` of the presenter's session values; the vote key is the one the page's
``render.predict`` builds, read from a student's ballot). Timing it here makes the commit time exact.

Follow latency: publish committed -> the student's session finished a full run showing the teacher's page and h
(protocol: the run's page and the address it wrote; Chromium: the page's location, its script stopped).
Each vote: the teacher opens it, every student picks an option and presses "send" (two runs, as in a browser),
the teacher closes it; votes expected vs stored per vote (and each stored choice the one sent).
Usage: python -m benchmarks.bench_live [--students 60] [--moves 10] [--votes 3] [--browsers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import parse_qs

import websockets
from playwright.async_api import async_playwright
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.util import calc_hash

from benchmarks.harness import (
    CHROMIUM,
    CHROMIUM_FLAGS,
    READY,
    free_port_in,
    percentile,
    rss_mib,
    start_server,
    stop_server,
)
from mha_core.classroom.storage import Storage
from mha_core.i18n import translate
from mha_core.lesson import LiveState, VoteState, default_plan, snapshot, vote_key
from mha_core.quiz.store import new_student_id
from mha_core.settings import DEFAULTS, H_DIV, SENTENCE

PORTS = (8660, 8699)        # this benchmark's servers
FOLLOW_TIMEOUT_S = 60.0     # a student that has not followed a move by then counts as an error
VOTE_TIMEOUT_S = 60.0
WIDGETS = ("button", "radio", "slider", "checkbox", "selectbox", "text_input", "number_input", "text_area")
SEND_KEY = "live_vote_send"   # mha_core.ui.live.SEND_KEY (the module imports streamlit: not imported here)


def choice_key(key: str, round_: int) -> str:
    """mha_core.ui.live.choice_key: the student's ballot of a vote's round."""
    return f"live_choice_{key}_{round_}"


# The lesson: (kind, value) moves over the default plan's first pages; a vote follows the moves named in VOTES.
MOVES: tuple[tuple[str, int], ...] = (("h", 8), ("step", 1), ("step", 2), ("h", 2), ("step", 3), ("h", 16),
                                      ("step", 4), ("h", 4), ("step", 5), ("h", 8))
# after move i: (the page's render.predict key prefix, its right option). The answers, as the pages compute them:
# overview: with d_model fixed the layer has as many parameters as one full-width head ("the same", option 1);
# split: Q's heads have shape h x n x d_head (option 1 of split.py's list); why: two targets need two heads (1).
VOTES: dict[int, tuple[str, int]] = {0: ("overview-", 1), 3: ("split-", 1), 8: ("why-two-targets", 1)}


@dataclass
class Teacher:
    """The presenter's published state, as its session would write it."""

    store: Storage
    class_id: int
    values: dict[str, object]
    state: LiveState | None = None

    def publish(self, state: LiveState) -> float:
        """Publish; the epoch seconds at which the write was committed."""
        self.store.publish_live(self.class_id, state)
        self.state = state
        return time.time()

    def start(self) -> float:
        now = time.time()
        return self.publish(LiveState(step=0, page=default_plan().steps[0].page, settings=snapshot(self.values),
                                      step_started_at=now, lesson_started_at=now))

    def move(self, kind: str, value: int) -> float:
        """A step (live._step_state: its page, no vote, the clock restarts) or a followed setting (live._sync)."""
        if kind == "step":
            s = default_plan().steps[value]
            return self.publish(replace(self.state, step=value, page=s.page, vote=None, questions=s.questions,
                                        step_started_at=time.time()))
        self.values[H_DIV.key] = value
        return self.publish(replace(self.state, settings=snapshot(self.values)))

    def vote(self, vote: VoteState | None) -> float:
        return self.publish(replace(self.state, vote=vote))

    def expected(self) -> tuple[str, str]:
        """(page, h) a follower must show."""
        return self.state.page, str(self.values[H_DIV.key])


@dataclass
class Run:
    """A finished full run of a protocol student's session."""

    at: float
    page: str
    query: dict[str, str]
    widgets: dict[str, tuple[str, object]]   # user key -> (widget id, its element proto)


@dataclass
class Student:
    """A follower: its latencies, its votes, its errors."""

    i: int
    key: str
    name: str
    browser: bool = False
    follow_ms: list[float] = field(default_factory=list)
    sent: dict[str, int] = field(default_factory=dict)     # vote key -> choice sent


PAGE_OF = {calc_hash(p): p for p in ("overview", "prereq", "split", "attend", "concat", "why", "myths", "real",
                                     "quiz", "classroom")}


class Proto:
    """One student's session over the websocket protocol, with the browser's follow timer."""

    def __init__(self, ws, query: str) -> None:  # noqa: ANN001 - a websockets connection
        self.ws, self.page_hash, self.query = ws, "", query
        self.fragments: dict[str, float] = {}
        self.widgets: dict[str, tuple[str, object]] = {}
        self.runs: list[Run] = []
        self.exceptions = 0
        self.last_exception = ""
        self.lock = asyncio.Lock()
        self.finished = asyncio.Event()
        self.changed = asyncio.Event()

    def page(self) -> str:
        return PAGE_OF.get(self.page_hash, "overview")

    async def read(self) -> None:
        while True:
            fm = ForwardMsg()
            fm.ParseFromString(await self.ws.recv())
            kind = fm.WhichOneof("type")
            if kind == "new_session" and not fm.metadata.run.fragment_ids:   # a full run starts
                self.page_hash = fm.new_session.page_script_hash
                self.fragments.clear()
                self.widgets = {}
            elif kind == "page_info_changed":
                self.query = fm.page_info_changed.query_string
            elif kind == "auto_rerun":
                self.fragments[fm.auto_rerun.fragment_id] = fm.auto_rerun.interval
            elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                el = fm.delta.new_element
                what = el.WhichOneof("type")
                if what == "exception":
                    self.exceptions += 1
                    self.last_exception = f"{el.exception.type}: {el.exception.message}"[:300]
                elif what in WIDGETS:
                    wid = getattr(el, what).id
                    if wid.count("-") >= 2:
                        self.widgets[wid.split("-", 2)[2]] = (wid, getattr(el, what))
            elif kind == "script_finished":
                status = fm.script_finished
                if status == ForwardMsg.FINISHED_SUCCESSFULLY:
                    q = {k: v[-1] for k, v in parse_qs(self.query).items()}
                    self.runs.append(Run(time.time(), self.page(), q, dict(self.widgets)))
                    self.changed.set()
                if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    self.finished.set()

    async def send(self, states: WidgetStates | None = None, fragment: str = "") -> None:
        """One rerun request (a fragment's, or the page's with these widget states); waits until it finished."""
        msg = BackMsg()
        msg.rerun_script.page_script_hash = self.page_hash
        msg.rerun_script.query_string = self.query
        if fragment:
            msg.rerun_script.fragment_id = fragment
            msg.rerun_script.is_auto_rerun = True
        if states is not None:
            msg.rerun_script.widget_states.CopyFrom(states)
        async with self.lock:
            self.finished.clear()
            await self.ws.send(msg.SerializeToString())
            await asyncio.wait_for(self.finished.wait(), timeout=120)

    async def tick(self) -> None:
        """The browser's fragment timers: every fragment asks for its run each interval."""
        while True:
            await asyncio.sleep(min(self.fragments.values(), default=1.0))
            for fid in list(self.fragments):
                await self.send(fragment=fid)

    async def wait_run(self, match, since: float, timeout: float) -> Run | None:  # noqa: ANN001 - a predicate
        """The first full run finished after ``since`` that satisfies ``match``; None on timeout."""
        deadline = time.time() + timeout
        while True:
            for r in self.runs:
                if r.at >= since and match(r):
                    return r
            left = deadline - time.time()
            if left <= 0:
                return None
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), timeout=left)
            except TimeoutError:
                return None


def _shows(page: str, h: str):  # noqa: ANN202 - a predicate on a Run
    return lambda r: r.page == page and r.query.get(H_DIV.query) == h


# For Chromium: epoch ms at which the page first shows (path, h) with its script stopped; -1 on timeout.
SHOWS_JS = """async ([page, h, timeout]) => {
  const start = Date.now();
  while (Date.now() - start < timeout) {
    const path = location.pathname.replace(/\\/+$/, '').split('/').pop() || 'overview';
    const q = new URLSearchParams(location.search);
    const app = document.querySelector('[data-testid="stApp"]');
    if (path === page && q.get('hd') === h && app && app.getAttribute('data-test-script-state') === 'notRunning')
      return Date.now();
    await new Promise(r => setTimeout(r, 20));
  }
  return -1; }"""
VOTE_BOX = '[class*="st-key-live_vote_"]'


@dataclass
class Lesson:
    """What every student task reads: the moves as published, and the errors."""

    students: list[Student]
    moves: list[tuple[float, str, str]] = field(default_factory=list)      # (commit epoch, page, h)
    votes: list[tuple[str, int]] = field(default_factory=list)             # (vote key, round) opened
    errors: list[str] = field(default_factory=list)
    move_seen: list[asyncio.Event] = field(default_factory=list)
    vote_open: list[asyncio.Event] = field(default_factory=list)
    voted: dict[str, set[int]] = field(default_factory=dict)
    key_found: asyncio.Future | None = None    # (vote key, number of options) of a student's ballot
    started: int = 0                             # students on the lesson's first page (or given up)


async def proto_student(base: str, st_: Student, lesson: Lesson, code: str, n_moves: int, n_votes: int) -> None:
    url = base.replace("http", "ws") + "/_stcore/stream"
    try:
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=None) as ws:
            s = Proto(ws, f"class={code}&student={st_.key}")
            reader = asyncio.create_task(s.read())
            await s.send()
            ticker = asyncio.create_task(s.tick())
            try:
                if await s.wait_run(_shows("overview", "4"), 0, FOLLOW_TIMEOUT_S) is None:
                    lesson.errors.append(f"student {st_.i}: never followed the lesson's start")
                lesson.started += 1
                await _student_lesson(s, st_, lesson, n_moves, n_votes)
            finally:
                ticker.cancel()
                reader.cancel()
            if s.exceptions:
                lesson.errors.append(f"student {st_.i}: {s.exceptions} exception(s) on the page, the last: "
                                     f"{s.last_exception}")
    except Exception as err:  # noqa: BLE001 - every failure counts as an error of the run
        lesson.errors.append(f"student {st_.i}: {type(err).__name__}: {err}"[:200])


async def _student_lesson(s: Proto, st_: Student, lesson: Lesson, n_moves: int, n_votes: int) -> None:
    vote_i = 0
    for m in range(n_moves):
        await lesson.move_seen[m].wait()
        at, page, h = lesson.moves[m]
        run = await s.wait_run(_shows(page, h), at, FOLLOW_TIMEOUT_S)
        if run is None:
            lesson.errors.append(f"student {st_.i}: did not follow move {m + 1} ({page}, h {h})")
        else:
            st_.follow_ms.append((run.at - at) * 1000)
            if lesson.key_found is not None and not lesson.key_found.done():
                ballot = next((k for k in run.widgets if k.startswith("live_choice_") and k.endswith("_0")), None)
                if ballot is not None and run.page == page:
                    lesson.key_found.set_result((ballot[len("live_choice_"):-2], len(run.widgets[ballot][1].options)))
        if m in VOTES and vote_i < n_votes:
            await lesson.vote_open[vote_i].wait()
            await _proto_vote(s, st_, lesson, *lesson.votes[vote_i])
            vote_i += 1


async def _proto_vote(s: Proto, st_: Student, lesson: Lesson, key: str, round_: int) -> None:
    """Pick an option in the open ballot (a run, as the radio's change), then press send (a run)."""
    ck = choice_key(key, round_)
    run = await s.wait_run(lambda r: ck in r.widgets and not r.widgets[ck][1].disabled, 0, VOTE_TIMEOUT_S)
    if run is None:
        lesson.errors.append(f"student {st_.i}: no open ballot for {key}")
        return
    radio_id, radio = run.widgets[ck]
    choice = st_.i % len(radio.options)
    states = WidgetStates()
    w = states.widgets.add()
    w.id, w.int_value = radio_id, choice
    await s.send(states)
    send = s.runs[-1].widgets.get(SEND_KEY)
    if send is None or send[1].disabled:
        last = s.runs[-1]
        lesson.errors.append(f"student {st_.i}: no send button after choosing ({last.page}, {sorted(last.widgets)})")
        return
    b = states.widgets.add()
    b.id, b.trigger_value = send[0], True
    await s.send(states)
    st_.sent[key] = choice
    lesson.voted.setdefault(key, set()).add(st_.i)


async def browser_student(browser, base: str, st_: Student, lesson: Lesson, code: str, n_moves: int,  # noqa: ANN001
                          n_votes: int) -> None:
    try:
        ctx = await browser.new_context(viewport={"width": 390 if st_.i % 2 else 1280, "height": 900})
        page = await ctx.new_page()
        await page.goto(f"{base}/?class={code}&student={st_.key}", timeout=120_000)
        if await page.evaluate(SHOWS_JS, ["overview", "4", FOLLOW_TIMEOUT_S * 1000]) < 0:
            lesson.errors.append(f"browser student {st_.i}: never followed the lesson's start")
        lesson.started += 1
        vote_i = 0
        for m in range(n_moves):
            await lesson.move_seen[m].wait()
            at, key, h = lesson.moves[m]
            seen = await page.evaluate(SHOWS_JS, [key, h, FOLLOW_TIMEOUT_S * 1000])
            if seen < 0:
                lesson.errors.append(f"browser student {st_.i}: did not follow move {m + 1} ({key}, h {h})")
            else:
                st_.follow_ms.append(seen - at * 1000)
            if m in VOTES and vote_i < n_votes:
                await lesson.vote_open[vote_i].wait()
                await _browser_vote(page, st_, lesson, lesson.votes[vote_i][0])
                vote_i += 1
        if await page.locator('[data-testid="stException"]').count():
            lesson.errors.append(f"browser student {st_.i}: exception on the page")
        await ctx.close()
    except Exception as err:  # noqa: BLE001 - every failure counts as an error of the run
        lesson.errors.append(f"browser student {st_.i}: {type(err).__name__}: {err}"[:200])


async def _browser_vote(page, st_: Student, lesson: Lesson, key: str) -> None:  # noqa: ANN001
    labels = page.locator(f'{VOTE_BOX} [data-testid="stRadio"] [role="radiogroup"] label')
    await page.wait_for_function(
        f"""() => {{ const r = document.querySelectorAll('{VOTE_BOX} [data-testid="stRadio"] input[type="radio"]');
                    return r.length > 0 && !r[0].disabled; }}""", timeout=VOTE_TIMEOUT_S * 1000)
    choice = st_.i % await labels.count()
    await labels.nth(choice).click()
    await page.wait_for_selector(READY, timeout=VOTE_TIMEOUT_S * 1000)
    send = page.locator(".st-key-live_vote_send button")
    await page.wait_for_function("() => { const b = document.querySelector('.st-key-live_vote_send button');"
                                 " return b && !b.disabled; }", timeout=VOTE_TIMEOUT_S * 1000)
    await send.click()
    await page.locator(f'{VOTE_BOX} [data-testid="stAlertContentSuccess"]').first.wait_for(
        timeout=VOTE_TIMEOUT_S * 1000)
    st_.sent[key] = choice
    lesson.voted.setdefault(key, set()).add(st_.i)


async def teacher_lesson(teacher: Teacher, lesson: Lesson, n_moves: int, n_votes: int) -> list[tuple[str, int]]:
    """The teacher's moves and votes; (vote key, votes stored) per vote."""
    stored: list[tuple[str, int]] = []
    n = len(lesson.students)
    for m in range(n_moves):
        kind, value = MOVES[m]
        if m in VOTES and len(lesson.vote_open) > len(stored) and len(stored) < n_votes:
            loop = asyncio.get_running_loop()
            lesson.key_found = loop.create_future()
        at = teacher.move(kind, value)
        lesson.moves.append((at, *teacher.expected()))
        lesson.move_seen[m].set()
        await _all_followed(lesson, m)
        if m in VOTES and len(stored) < n_votes:
            prefix, answer = VOTES[m]
            try:
                found, n_options = await asyncio.wait_for(lesson.key_found, timeout=FOLLOW_TIMEOUT_S)
            except TimeoutError:
                lesson.errors.append(f"no student showed a ballot after move {m + 1}")
                return stored
            page = teacher.state.page
            key = vote_key(page, found.split(".", 2)[1]) if found.count(".") == 2 else found
            print(f"  (move {m + 1}: ballot {found} on {page}, h {teacher.values[H_DIV.key]})")
            if key != found or not found.startswith(f"{page}.{prefix}"):
                lesson.errors.append(f"vote key {found!r} is not render.predict's ({key!r})")
            teacher.vote(VoteState(key, 1, "open", answer, n_options))
            lesson.votes.append((key, 1))
            lesson.vote_open[len(stored)].set()
            deadline = time.time() + VOTE_TIMEOUT_S
            while len(lesson.voted.get(key, ())) < n - _failed(lesson) and time.time() < deadline:
                await asyncio.sleep(0.2)
            teacher.vote(replace(teacher.state.vote, phase="histogram"))   # close & show the histogram
            rows = [r for r in teacher.store.votes(teacher.class_id, key) if r.round == 1]
            stored.append((key, len(rows)))
            by_student = {r.name: r.choice for r in rows}
            wrong = [s.i for s in lesson.students if key in s.sent and by_student.get(s.name) != s.sent[key]]
            if wrong:
                lesson.errors.append(f"vote {key}: stored choice differs from the one sent for students {wrong[:5]}")
    return stored


def _failed(lesson: Lesson) -> int:
    return len({e.split(":")[0] for e in lesson.errors})


async def _all_followed(lesson: Lesson, m: int) -> None:
    """Until every student has followed move m (or given up): the next move waits, as a teacher talks."""
    at = lesson.moves[m][0]
    while time.time() - at < FOLLOW_TIMEOUT_S + 5:
        done = sum(1 for s in lesson.students if len(s.follow_ms) > m)
        if done + _failed(lesson) >= len(lesson.students):
            return
        await asyncio.sleep(0.1)


def summary(ms: list[float]) -> str:
    if not ms:
        return "none"
    return f"p50 {statistics.median(ms):.0f} ms, p95 {percentile(ms, 0.95):.0f} ms, max {max(ms):.0f} ms (n={len(ms)})"


async def a_lesson(base: str, pid: int, store: Storage, n: int, n_moves: int, n_votes: int, browsers: int) -> None:
    info = store.create_class()
    store.save_plan(info.id, default_plan())
    values = {k: v for k, v in DEFAULTS.items() if v is not None}
    values[SENTENCE.key] = translate("en", "common.default_sentence")   # the teacher's session: English defaults
    teacher = Teacher(store, info.id, values)
    students = [Student(i, new_student_id(), f"Student {i:03d}", browser=i < browsers) for i in range(n)]
    for s in students:
        store.join(info.code, s.key, s.name)
    n_votes = min(n_votes, sum(1 for m in VOTES if m < n_moves))
    lesson = Lesson(students, move_seen=[asyncio.Event() for _ in range(n_moves)],
                    vote_open=[asyncio.Event() for _ in range(n_votes)])
    teacher.start()
    peak = [rss_mib(pid)]

    async def watch() -> None:
        while True:
            peak[0] = max(peak[0], rss_mib(pid))
            await asyncio.sleep(0.2)

    watcher = asyncio.create_task(watch())
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS) if browsers else None
        t0 = time.perf_counter()
        tasks = [asyncio.create_task(browser_student(browser, base, s, lesson, info.code, n_moves, n_votes)
                                     if s.browser else proto_student(base, s, lesson, info.code, n_moves, n_votes))
                 for s in students]
        deadline = time.time() + FOLLOW_TIMEOUT_S + 60   # every student on the lesson's first page
        while lesson.started < n and time.time() < deadline:
            await asyncio.sleep(0.2)
        stored = await teacher_lesson(teacher, lesson, n_moves, n_votes)
        _, pending = await asyncio.wait(tasks, timeout=FOLLOW_TIMEOUT_S + VOTE_TIMEOUT_S)
        for task in pending:   # a student still waiting for a move or vote that never came
            task.cancel()
        if pending:
            lesson.errors.append(f"{len(pending)} student(s) still waiting at the end (cancelled)")
        wall = time.perf_counter() - t0
        if browser:
            await browser.close()
    watcher.cancel()
    store.end_live(info.id)
    proto_ms = [x for s in students if not s.browser for x in s.follow_ms]
    browser_ms = [x for s in students if s.browser for x in s.follow_ms]
    expected = [(key, len(students)) for key, _ in stored]
    print(f"live lesson: 1 teacher + {n} students ({browsers} in Chromium), {n_moves} moves, {len(stored)} votes, "
          f"{wall:.1f} s; errors {len(lesson.errors)}; server memory peak {peak[0]:.0f} MiB")
    print(f"  follow latency, publish committed -> protocol session re-ran with it: {summary(proto_ms)}")
    if browsers:
        print(f"  follow latency, publish committed -> Chromium page shows it: {summary(browser_ms)}")
    for (key, want), (_, got) in zip(expected, stored, strict=True):
        print(f"  vote {key}: expected {want}, stored {got}")
    print(f"  votes expected {sum(w for _, w in expected)}, stored {sum(g for _, g in stored)}")
    for e in lesson.errors[:8]:
        print("  ", e)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=60)
    ap.add_argument("--moves", type=int, default=10)
    ap.add_argument("--votes", type=int, default=3)
    ap.add_argument("--browsers", type=int, default=2, help="how many of the students are real Chromium pages")
    ap.add_argument("--database-url", default=None, help="default: a fresh SQLite file")
    a = ap.parse_args()
    n_moves = max(1, min(a.moves, len(MOVES)))
    with tempfile.TemporaryDirectory() as tmp:
        db_url = a.database_url or f"sqlite:///{Path(tmp) / 'live.sqlite3'}"
        saved = os.environ.get("MHA_DATABASE_URL")
        os.environ["MHA_DATABASE_URL"] = db_url
        try:
            proc, base = start_server(port=free_port_in(*PORTS))
        finally:
            if saved is None:
                os.environ.pop("MHA_DATABASE_URL", None)
            else:
                os.environ["MHA_DATABASE_URL"] = saved
        store = Storage.open(db_url)
        try:
            asyncio.run(a_lesson(base, proc.pid, store, a.students, n_moves, max(0, a.votes),
                                 min(a.browsers, a.students)))
        finally:
            store.dispose()
            stop_server(proc)


if __name__ == "__main__":
    main()
