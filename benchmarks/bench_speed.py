"""Speed of thought: every page's control, move → page settled, against a bare Streamlit page in the same run.

    python -m benchmarks.bench_speed [--pages overview split ...] [--moves 10] [--throttle 1 6] [--json]

Starts two servers with the installed Streamlit: the app (``streamlit run app.py``) and a bare page (one
``st.slider`` and one ``st.write``: the floor no Streamlit page can beat). A headless Chromium opens each case in a
fresh session (CPU slowed by Chrome DevTools' ``Emulation.setCPUThrottlingRate`` at 6x: a slow phone), moves its
control ``--moves`` times (after 2 untimed moves: both values computed once, as when a student goes back and forth)
and times each move, from its one input event (a key press, or a click whose target was found, waited for and
measured before the clock started), until the page is *settled*, by the same definition for both apps:

- the server answered the move (a websocket message, or a change of ``stApp``'s ``data-test-script-state``, the
  attribute Streamlit's own e2e suite waits on) and that attribute says ``notRunning``, and
- nothing happened for ``--quiet`` ms: no DOM mutation anywhere in the document, no long task (> 50 ms of the
  page's main thread: a canvas chart draws without touching the DOM), no websocket message — the time is that of
  the last activity.

With ``--floor``, also the bare page with one chart, with 60 paragraphs, with the least frame (``frame_case``), and
each case's census floor (``floor_case``: the bare page drawing as many elements, charts and navigation links as the
case's page) and its kinds floor (``kinds_case``: the same, but each widget, metric and page link drawn as one of
its kind).

Prints one table (case, app p50/p95, bare p95 of the same throttle, ratio of p95s) per throttle, and the cold start
(server spawned → healthy → first page settled in a fresh browser, app and bare page). The ratio is what compares
across machines and loads: both pages are measured in the same run on the same box. Exits 1 if any case could not
be measured (a move never settled, an exception on the page), never skipping one silently.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from benchmarks.timing import p50, p95
from harness.floor import BARE_APP, floor_query, frame_query
from harness.moves import prepare
from harness.sentences import fresh_sentence
from harness.server import CHROMIUM, CHROMIUM_FLAGS, start_server, stop_server
from mha_core.i18n import translate

# Installed in every page as it loads: the time (epoch ms) of the page's last activity — a DOM mutation, a long task
# (> 50 ms of main thread: a canvas chart draws without touching the DOM) or a websocket message from the server —
# and counts of script-state changes and of messages since the last ARM. The messages prove that the server answered
# the move: when the browser is slow, React can apply "running" and "notRunning" in one render, and the attribute
# never changes.
INIT = """(() => {
  const now = () => performance.timeOrigin + performance.now();
  const s = window.__speed = {last: now(), runs: 0, msgs: 0};
  const Ws = window.WebSocket;
  window.WebSocket = function (...args) {
    const ws = new Ws(...args);
    ws.addEventListener('message', () => { s.msgs += 1; s.last = now(); });
    return ws;
  };
  window.WebSocket.prototype = Ws.prototype;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) window.WebSocket[k] = Ws[k];
  new MutationObserver(ms => {
    s.last = now();
    for (const m of ms) if (m.attributeName === 'data-test-script-state') s.runs += 1;
  }).observe(document, {childList: true, subtree: true, attributes: true, characterData: true});
  new PerformanceObserver(list => {
    for (const e of list.getEntries()) s.last = Math.max(s.last, performance.timeOrigin + e.startTime + e.duration);
  }).observe({type: 'longtask'});
})()"""
NOW = "() => performance.timeOrigin + performance.now()"  # the page's clock, epoch ms
# Before a move: count afresh; returns the page's clock (epoch ms), which a move is timed from. The page's clock, not
# this process's: both ends of a move on one clock (this box's wall clock and the page's once drifted 2-4 s apart
# during a run, and every move of a case came out negative).
ARM = """() => { const s = window.__speed;
  s.last = performance.timeOrigin + performance.now(); s.runs = 0; s.msgs = 0; return s.last; }"""
# Resolves with the epoch ms of the last activity once settled (see the module's docstring), -1 after `timeout`.
SETTLED = """async ([quiet, timeout]) => {
  const s = window.__speed, now = () => performance.timeOrigin + performance.now(), start = now();
  while (now() - start < timeout) {
    await new Promise(r => setTimeout(r, 20));
    const app = document.querySelector('[data-testid="stApp"]');
    if ((s.runs > 0 || s.msgs > 0) && app && app.getAttribute('data-test-script-state') === 'notRunning'
        && now() - s.last >= quiet) return s.last;
  }
  return -1;
}"""


@dataclass(frozen=True)
class Case:
    """One control on one page: how to open it and how to move it (``move(page, i)`` does the i-th move)."""

    name: str
    path: str                 # URL path and query after the base
    control: str              # "slider:<key>", "click:<text>", "toggle:<key>", "select:<key>", "radio:<key>",
    reset: str | None = None  # "text:<key>", "fresh:<key>"; a button to press (untimed) when the control is disabled
    words: int = 0            # first (untimed) type a fresh sentence of this many one-piece words in real_sentence
    limit_ms: float = 0.0     # issue 26's absolute target at 1x (the real-model page), instead of the ratio


def cases() -> list[Case]:
    """Every page's main control, the attend page's mask and head, the sentence, a generation step, and the real-model
    page: a new 32-piece sentence, and another head at 512 pieces."""
    pipeline = [Case(p, f"{'' if p == 'overview' else p}?fixed=0", "slider:h")
                for p in ("overview", "prereq", "split", "attend", "concat", "why", "myths")]
    return [
        *pipeline,
        Case("cost", "cost", "slider:cost_h_div"),
        Case("cross", "cross", "radio:cross_h"),
        Case("generate", "generate", f"click:{translate('en', 'generate.next')}",
             reset=translate("en", "generate.reset")),
        Case("sentence", "attend?fixed=0", "text:sentence"),
        Case("mask", "attend?fixed=0", "toggle:causal"),
        Case("head", "attend?fixed=0", "select:head"),
        Case("real", "real", "fresh:real_sentence", limit_ms=500),  # 32 word pieces the server has never seen
        # the model's own limit, 512 pieces: another head (the head view as pixels and the token lines redrawn)
        Case("real-512", "real", "select:real_head", words=LONG_WORDS, limit_ms=1000),
    ]


BARE = Case("bare", "", "slider:h")
CHART = Case("bare+chart", "?chart=1", "slider:h")  # the same bare page with one small chart: the floor of a chart
TEXTS = Case("bare+60md", "?elements=60", "slider:h")  # ... with 60 unchanged paragraphs: the floor of a page's size


def frame_case() -> Case:
    """The bare page drawing the least frame the design card asks of a lesson page (``frame_query``: the app's
    navigation, the h and d_head sliders, a language widget, a live count, one chart). Over 2x at 1x, no page of this
    app could meet target 1 inside Streamlit; under it, the frame alone does not rule it out."""
    from mha_core.ui.nav import PAGES  # here, not at the top: importing the UI package patches Streamlit
    query = frame_query(len(PAGES))
    return Case("bare+frame", f"?{urlencode(query)}", "slider:h")


@dataclass
class Result:
    """The timed moves of one case at one throttle (ms), and why it failed if it did."""

    case: str
    throttle: float
    ms: list[float] = field(default_factory=list)
    busy: list[float] = field(default_factory=list)  # the page's main-thread ms per move (incl. the quiet window's)
    error: str = ""
    census: tuple[int, int, int] = (0, 0, 0)  # the page after the untimed moves: element containers (sidebar's
    #                                           too), charts, and the links of the navigation
    kinds: tuple[str, ...] = ()  # ... and each element container's kind, in order (Streamlit's element types)

    @property
    def p50(self) -> float:
        return p50(self.ms)

    @property
    def p95(self) -> float:
        return p95(self.ms)

    @property
    def busy_p50(self) -> float:
        return statistics.median(self.busy) if self.busy else float("nan")


LONG_WORDS = 510  # one-piece words: with [CLS] and [SEP], 512 pieces (MiniLM's position limit)


def _do_move(page, case: Case, i: int) -> Callable[[], None]:  # noqa: ANN001 - a Playwright page
    """Prepare the i-th move (open a menu, fill a text) and return the one input event the timing starts at
    (``harness.moves``); a disabled button to click starts over first, with the case's reset button (untimed)."""
    def reset() -> None:  # the context is full: start over
        page.evaluate(ARM)
        page.get_by_role("button", name=case.reset).click()
        _settle(page, 300, 60_000)

    return prepare(page, case.control, i, reset if case.reset else None)


# What a page draws, as Streamlit's frontend counts it: every element container (the sidebar's too), its charts, and
# the links of its navigation.
CENSUS = """() => [document.querySelectorAll('[data-testid="stElementContainer"]').length,
                   document.querySelectorAll('[data-testid="stVegaLiteChart"]').length,
                   document.querySelectorAll('[data-testid="stSidebarNavLink"]').length]"""


# Each element container's kind, as the test id of its first element inside the full-screen frame that wraps charts
# and images (a chart's as CENSUS counts it); KIND_OF_TESTID names it as the server does (harness.websocket_client
# sees the same types in the messages: benchmarks.bench_fanout's kinds floor).
CENSUS_KINDS = """() => [...document.querySelectorAll('[data-testid="stElementContainer"]')].map(c => {
                   if (c.querySelector('[data-testid="stVegaLiteChart"]')) return 'stVegaLiteChart';
                   const e = c.querySelector('[data-testid]:not([data-testid="stFullScreenFrame"])');
                   return e ? e.getAttribute('data-testid') : ''; })"""
KIND_OF_TESTID = {"stSlider": "slider", "stRadio": "radio", "stCheckbox": "checkbox", "stSelectbox": "selectbox",
                  "stTextArea": "text_area", "stButton": "button", "stButtonGroup": "button_group",
                  "stMetric": "metric", "stPageLink": "page_link", "stVegaLiteChart": "vega_lite_chart",
                  "stMarkdown": "markdown"}


def kinds_case(case: str, census: tuple[int, int, int], kinds: Sequence[str]) -> Case:
    """The bare page drawing what ``case``'s page draws, each widget, metric and page link as one of its kind."""
    return Case(f"kinds {case}", f"?{urlencode(floor_query(census, kinds))}", "slider:h")


def floor_case(census: tuple[int, int, int]) -> Case:
    """The bare page drawing as much as a page of this census: its navigation's links, its charts (as small heatmaps
    whose data follows the slider) and, for its other elements, unchanged paragraphs — a lower bound of what
    Streamlit needs to redraw such a page, since the app's elements (widgets, metrics, larger charts) are no cheaper
    than these."""
    return Case(f"floor {'/'.join(map(str, census))}", f"?{urlencode(floor_query(census))}", "slider:h")


def _settle(page, quiet: int, timeout: int) -> float:  # noqa: ANN001 - a Playwright page
    last = page.evaluate(SETTLED, [quiet, timeout])
    if last < 0:
        raise TimeoutError(f"the page did not settle within {timeout} ms")
    return last


def open_case(browser, base: str, case: Case, throttle: float):  # noqa: ANN001, ANN201 - Playwright objects
    """A fresh session (context) on the case's page, CPU throttled, loaded and settled."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    ctx.add_init_script(INIT)
    page = ctx.new_page()
    cdp = ctx.new_cdp_session(page)
    cdp.send("Performance.enable")
    if throttle > 1:
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": throttle})
    page.goto(f"{base}/{case.path}", timeout=120_000)
    _settle(page, 500, 120_000)
    if case.words:  # the case's sentence, untimed (computing 512 pieces takes seconds on a throttled phone)
        page.locator(".st-key-real_sentence input").first.fill(fresh_sentence(f"{time.time_ns()}", case.words))
        page.evaluate(ARM)
        page.keyboard.press("Enter")
        _settle(page, 500, 180_000)
    return ctx, page, cdp


def main_thread_ms(cdp) -> float:  # noqa: ANN001 - a CDP session
    """The page's main-thread busy time so far (Chrome's TaskDuration, ms): CPU work, not waiting."""
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return 1000 * next(m["value"] for m in metrics if m["name"] == "TaskDuration")


def measure(browser, base: str, case: Case, throttle: float, moves: int, quiet: int,  # noqa: ANN001
            timeout: int = 60_000) -> Result:
    """Time ``moves`` moves of one case after 2 untimed ones; a failure is recorded, never skipped."""
    res = Result(case.name, throttle)
    try:
        ctx, page, cdp = open_case(browser, base, case, throttle)
    except Exception as err:  # noqa: BLE001 - reported as the case's failure
        res.error = f"could not open: {type(err).__name__}: {err}"[:300]
        return res
    try:
        for i in range(moves + 2):
            if i == 2:  # after the untimed moves: every chart's script loaded and drawn (not yet on a first load)
                res.census, res.kinds = tuple(page.evaluate(CENSUS)), _kinds(page)
            act = _do_move(page, case, i)
            busy = main_thread_ms(cdp)
            t0 = page.evaluate(ARM)
            act()
            last = _settle(page, quiet, timeout)
            if last < t0:
                raise RuntimeError(f"move {i} settled {t0 - last:.0f} ms before it began: the page's clock moved back")
            if i >= 2:
                res.ms.append(last - t0)
                res.busy.append(main_thread_ms(cdp) - busy)
        # and after the last: the larger (a throttled page once counted mid-redraw: 16 elements of attend's 49)
        if (now := tuple(page.evaluate(CENSUS))) > res.census:
            res.census, res.kinds = now, _kinds(page)
        if page.locator('[data-testid="stException"]').count():
            res.error = "the page shows an exception"
    except Exception as err:  # noqa: BLE001 - reported as the case's failure
        res.error = f"{type(err).__name__}: {err}"[:300]
    finally:
        ctx.close()
    return res


def _kinds(page) -> tuple[str, ...]:  # noqa: ANN001 - a Playwright page
    return tuple(KIND_OF_TESTID.get(k, k) for k in page.evaluate(CENSUS_KINDS))


def cold_start(pw, quiet: int, script: Path | None = None, cwd: Path | None = None,  # noqa: ANN001
               locale: str = "en-US") -> dict[str, float]:
    """Seconds from spawning a server to healthy, and from healthy to its first page settled in a fresh browser
    (launched before the server, never used before) whose language is ``locale`` (the app's first page follows
    it: a Chinese one cuts its sentence into words)."""
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
    try:
        page = browser.new_page(locale=locale, viewport={"width": 1280, "height": 900})
        page.add_init_script(INIT)
        t0 = time.perf_counter()
        proc, base = start_server(script=script, cwd=cwd) if script else start_server()
        healthy = time.perf_counter()
        healthy_ms = page.evaluate(NOW)  # on the browser's clock, as the page's last activity is
        try:
            page.goto(base + "/", timeout=120_000)
            loaded = (_settle(page, quiet, 120_000) - healthy_ms) / 1000
            if loaded <= 0:
                raise RuntimeError(f"the first page settled {-loaded:.2f} s before the server was healthy: the "
                                   "browser's clock moved back")
        finally:
            stop_server(proc)
    finally:
        browser.close()
    return {"healthy_s": healthy - t0, "first_page_s": loaded}


def table(results: list[Result], bare: dict[float, Result],
          floors: dict[tuple[float, tuple[int, int, int]], Result] | None = None,
          kind_floors: dict[tuple[float, str], Result] | None = None) -> str:
    """The printed table: one block per throttle. The target is a ratio (2x at 1x, 3x throttled), or for the
    real-model page an absolute p95 at 1x ("<=500 ms"; none throttled). With ``floors`` (--floor), each case's
    census (element containers / charts / links) and the ratio of the bare page drawing as much: when that floor is
    over the target, no Streamlit page drawing this much can meet it; with ``kind_floors``, the ratio of the bare page
    drawing the same but each widget, metric and page link as one of its kind (``kinds``)."""
    limits = {c.name: c.limit_ms for c in cases() if c.limit_ms}
    floors = floors or {}
    kind_floors = kind_floors or {}
    out = []
    for throttle in sorted(bare):
        b = bare[throttle]
        out.append(f"\nCPU throttle {throttle:g}x — bare page p50 {b.p50:.0f} ms, p95 {b.p95:.0f} ms "
                   f"({len(b.ms)} moves)")
        out.append(f"{'case':<10} {'app p50':>8} {'app p95':>8} {'bare p95':>9} {'ratio':>6}  {'target':>6}  "
                   f"{'main-thread ms':>14}" + (f"  {'census':>9} {'floor p95':>9} {'floor':>6}" if floors else "")
                   + (f" {'kinds':>6}" if kind_floors else ""))
        target = 2.0 if throttle <= 1 else 3.0
        for r in results:
            if r.throttle != throttle:
                continue
            if r.error:
                out.append(f"{r.case:<10} FAILED: {r.error}")
                continue
            ratio = r.p95 / b.p95
            limit = limits.get(r.case)
            verdict = ("ok" if ratio <= target else "OVER") if not limit else (
                "-" if throttle > 1 else f"{'ok' if r.p95 <= limit else 'OVER'} <={limit:.0f} ms")
            line = (f"{r.case:<10} {r.p50:8.0f} {r.p95:8.0f} {b.p95:9.0f} {ratio:5.1f}x  "
                    f"{verdict:>6}  {r.busy_p50:8.0f} ({b.busy_p50:.0f})")
            f = floors.get((throttle, r.census))
            if f is not None and f.ms and not limit:
                line += f"  {'/'.join(map(str, r.census)):>9} {f.p95:9.0f} {f.p95 / b.p95:5.1f}x"
                k = kind_floors.get((throttle, r.case))
                if k is not None and k.ms:
                    line += f" {k.p95 / b.p95:5.1f}x"
            out.append(line)
    return "\n".join(out)


def case_args(ap: argparse.ArgumentParser, names: list[str]) -> None:
    """The options a benchmark timing these cases takes (bench_speed's and bench_replay's, kept the same): which
    cases, how many moves, which CPU slowdowns, when a page is settled."""
    ap.add_argument("--pages", nargs="*", default=names, choices=names, metavar="CASE",
                    help=f"cases to time (default: all of {' '.join(names)})")
    ap.add_argument("--moves", type=int, default=10, help="timed moves per case (p95 over them; default 10)")
    ap.add_argument("--throttle", nargs="*", type=float, default=[1.0, 6.0], help="CPU slowdowns (default 1 6)")
    ap.add_argument("--quiet", type=int, default=300, help="ms without DOM change or long task = settled")


def main() -> int:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    case_args(ap, [c.name for c in cases()])
    ap.add_argument("--no-cold", action="store_true", help="skip the cold start")
    ap.add_argument("--floor", action="store_true",
                    help="also time the bare page with one chart, with 60 unchanged paragraphs, with the least frame "
                         "the design card asks for (navigation, sliders, a language widget, a count, one chart), "
                         "drawing as much as each page (its census: as many elements, charts and navigation "
                         "links), and drawing the same with each widget, metric and page link as one of its kind "
                         "(kinds)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH (- for stdout, no table)")
    a = ap.parse_args()
    chosen = [c for c in cases() if c.name in a.pages]
    t_start = time.perf_counter()
    load_before = os.getloadavg()
    results: list[Result] = []
    bare: dict[float, Result] = {}
    cold: dict[str, dict[str, float]] = {}
    floors: dict[tuple[float, tuple[int, int, int]], Result] = {}  # (throttle, census) -> the bare page drawing as much
    kind_floors: dict[tuple[float, str], Result] = {}  # (throttle, case) -> the bare page drawing its kinds
    floored = {c.name for c in chosen if not c.limit_ms}  # the ratio cases (the real page's targets are absolute)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        folder = Path(tmp)
        (folder / "bare.py").write_text(BARE_APP, encoding="utf-8")
        if not a.no_cold:
            cold["app"] = cold_start(pw, a.quiet)
            cold["app, zh-CN"] = cold_start(pw, a.quiet, locale="zh-CN")
            cold["bare"] = cold_start(pw, a.quiet, folder / "bare.py", folder)
        app_proc, app_base = start_server()
        bare_proc, bare_base = start_server(script=folder / "bare.py", cwd=folder)
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            for throttle in a.throttle:
                # the floor in halves, before and after the app's cases, so a change of load during the run
                # weighs on both
                half = max(a.moves // 2, 5)
                first = measure(browser, bare_base, BARE, throttle, half, a.quiet)
                for case in chosen:
                    results.append(measure(browser, app_base, case, throttle, a.moves, a.quiet))
                    print(f"  {case.name} at {throttle:g}x: p95 {results[-1].p95:.0f} ms {results[-1].error}",
                          file=sys.stderr, flush=True)
                second = measure(browser, bare_base, BARE, throttle, half, a.quiet)
                if a.floor:
                    results += [measure(browser, bare_base, c, throttle, a.moves, a.quiet)
                                for c in (CHART, TEXTS, frame_case())]
                    def floor(case: Case, census: tuple[int, int, int], throttle: float = throttle) -> Result:
                        """The bare page as ``case``, which must draw ``census`` (what the floor stands for)."""
                        f = measure(browser, bare_base, case, throttle, a.moves, a.quiet)
                        if f.census != census and not f.error:
                            f.error = f"the floor page drew {f.census}, not {census}"
                        return f

                    cased = [r for r in results if r.throttle == throttle and r.case in floored]
                    for census in sorted({r.census for r in cased}):
                        floors[throttle, census] = floor(floor_case(census), census)
                    for r in [r for r in cased if r.kinds]:
                        kind_floors[throttle, r.case] = floor(kinds_case(r.case, r.census, r.kinds), r.census)
                bare[throttle] = Result("bare", throttle, first.ms + second.ms, first.busy + second.busy,
                                        first.error or second.error)
        finally:
            browser.close()
            stop_server(app_proc)
            stop_server(bare_proc)
    load_after = os.getloadavg()
    failed = [r for r in [*results, *bare.values(), *floors.values(), *kind_floors.values()] if r.error or not r.ms]
    if a.json:
        text = json.dumps({
            "moves": a.moves, "quiet_ms": a.quiet, "load_average_before": load_before, "load_average_after": load_after,
            "cores": os.cpu_count(), "cold_start": cold, "seconds": round(time.perf_counter() - t_start, 1),
            "bare": {str(k): {**asdict(v), "p50": v.p50, "p95": v.p95} for k, v in bare.items()},
            "cases": [{**asdict(r), "p50": r.p50, "p95": r.p95,
                       "ratio": r.p95 / bare[r.throttle].p95 if r.ms and bare[r.throttle].ms else None}
                      for r in results],
            "floors": [{**asdict(f), "throttle": t, "p50": f.p50, "p95": f.p95,
                        "ratio": f.p95 / bare[t].p95 if f.ms and bare[t].ms else None}
                       for (t, _), f in floors.items()],
            "kind_floors": [{**asdict(f), "p50": f.p50, "p95": f.p95,
                             "ratio": f.p95 / bare[t].p95 if f.ms and bare[t].ms else None}
                            for (t, _), f in kind_floors.items()],
        }, indent=1)
        if a.json == "-":
            print(text)
        else:
            Path(a.json).write_text(text + "\n", encoding="utf-8")
    if a.json != "-":
        print(f"{len(chosen)} cases x {a.moves} moves; quiet window {a.quiet} ms; {os.cpu_count()} cores; "
              f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
              f"{time.perf_counter() - t_start:.0f} s")
        for who, c in cold.items():
            print(f"cold start ({who}): spawn -> healthy {c['healthy_s']:.2f} s, healthy -> first page settled "
                  f"{c['first_page_s']:.2f} s")
        print(table(results, bare, floors, kind_floors))
    for r in failed:
        print(f"could not measure {r.case} at {r.throttle:g}x: {r.error or 'no moves'}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
