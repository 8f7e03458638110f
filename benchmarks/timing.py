"""The benchmarks' timing helpers (settled pages, percentiles, memory); starting the app and waiting for a page
come from harness/server.py, which the tests use too (the tests never import the benchmarks package)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from harness.server import PAGE_TEXT, READY, TEXT

# For timing: the epoch ms of the page's *last* change once the script has stopped and the page has been quiet
# for `quiet` ms (-1 on timeout). Under load the browser renders a run's elements well after the script-state
# attribute says "notRunning", so "first change" can be a late element of the previous run, not this move's.
# The text is read only after DOM mutations outside the sliders, so the wait itself costs little.
SETTLED = ("async ([before, quiet, timeout]) => { " + TEXT + """
  const app = document.querySelector('[data-testid="stApp"]');
  let dirty = true, last = null, seen = before;  // dirty: compare once, in case it changed already
  const obs = new MutationObserver(ms => { if (ms.some(m => !(m.target.closest && m.target.closest(
    '[data-testid="stSlider"]')))) dirty = true; });
  obs.observe(app, {childList: true, subtree: true, characterData: true});
  const start = Date.now();
  try {
    while (Date.now() - start < timeout) {
      await new Promise(r => setTimeout(r, 25));
      if (dirty) { dirty = false; const now = text(); if (now !== seen) { seen = now; last = Date.now(); } }
      if (last !== null && app.getAttribute('data-test-script-state') === 'notRunning'
          && Date.now() - last >= quiet) return last;
    }
    return -1;
  } finally { obs.disconnect(); } }""")


def settled_ms(page, before: str, pressed_epoch_s: float, quiet_ms: int = 400, timeout_ms: int = 60_000) -> float:
    """Ms from a key press (``time.time()`` just before it) to the page's last change after it (sync API);
    raises TimeoutError if the page never changed."""
    last = page.evaluate(SETTLED, [before, quiet_ms, timeout_ms])
    if last < 0:
        raise TimeoutError("the page did not change")
    return last - pressed_epoch_s * 1000


def pause(think: float, i: int, m: int) -> float:
    """Seconds student ``i`` reads before move ``m``: 0.5-1.4 x ``think``, spread so students don't move in step."""
    return think * (0.5 + ((i * 7 + m * 3) % 10) / 10)


async def open_student_page(browser, base: str, key: str, width: int, slider_key: str):
    """(context, page, slider) for one student in Chromium (async API): the page loaded and its slider drawn."""
    ctx = await browser.new_context(viewport={"width": width, "height": 900})
    page = await ctx.new_page()
    await page.goto(f"{base}/{'' if key == 'overview' else key}?fixed=0", timeout=120_000)  # the h slider
    await page.wait_for_selector(READY, timeout=120_000)
    slider = page.locator(f".st-key-{slider_key} input[type=range]").first
    await slider.wait_for(state="attached", timeout=120_000)
    return ctx, page, slider


async def timed_move(page, slider, m: int, timeout_ms: int) -> float:
    """Press an arrow on the slider (right on even moves, left on odd); ms until the page settled, -1 if it
    never changed (async API)."""
    before = await page.evaluate(PAGE_TEXT)
    await slider.focus()
    t0 = time.time()
    await page.keyboard.press("ArrowRight" if m % 2 == 0 else "ArrowLeft")
    last = await page.evaluate(SETTLED, [before, 400, timeout_ms])
    return -1.0 if last < 0 else last - t0 * 1000


def rss_mib(pid: int) -> float:
    """Resident memory of a process and its children, in MiB (Linux /proc)."""
    total = 0
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def cpu_ms(pid: int) -> float:
    """CPU time (user + system) a process has used so far, in ms (Linux /proc): a server's work, not its waiting."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)


def box_cpu_ms() -> tuple[float, float]:
    """(busy, total) CPU time of the whole machine so far, in ms over all its cores (Linux /proc/stat): how much of
    the box a benchmark's window used — the servers, the database, nginx and the load generator together."""
    try:
        first = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return 0.0, 0.0
    ticks = [int(x) for x in first[:8]]  # user nice system idle iowait irq softirq steal
    scale = 1000 / os.sysconf("SC_CLK_TCK")
    return (sum(ticks) - ticks[3] - ticks[4]) * scale, sum(ticks) * scale


def median_ms(action, repeats: int, warmup: bool = True) -> float:
    """Median wall time of ``action()`` in ms over ``repeats`` calls (after one warm-up call)."""
    import statistics

    if warmup:
        action()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        action()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def p50(values) -> float:
    """The median of ``values`` (ms), NaN when there are none (a case that could not be measured)."""
    import statistics

    return statistics.median(values) if values else float("nan")


def p95(values) -> float:
    """The 0.95 quantile of ``values`` (nearest rank), NaN when there are none."""
    return percentile(values, 0.95) if values else float("nan")


def percentile(values, q: float) -> float:
    """The q-quantile (0..1) of ``values``, nearest rank."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def run_threads(target, n: int) -> float:
    """Start ``target(i)`` for i in 0..n-1 on n threads at once; seconds until all have finished."""
    import threading

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return time.perf_counter() - t0
