"""Start the app as a user would (`streamlit run app.py`) on a free port and wait until healthy; timing helpers.

The benchmarks' own copy: the tests keep theirs in tests/servers.py (tests never import the benchmarks package).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]
READY = '[data-testid="stApp"][data-test-script-state="notRunning"]'

# the page's text (main and sidebar) without the slider widgets, whose value labels change on the client at once
TEXT = """const text = () => ['stMain', 'stSidebar'].map(id => {
  const m = document.querySelector(`[data-testid="${id}"]`).cloneNode(true);
  m.querySelectorAll('[data-testid="stSlider"]').forEach(e => e.remove()); return m.innerText; }).join('\\n');"""
PAGE_TEXT = "() => { " + TEXT + " return text(); }"
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(timeout: float = 60.0, port: int | None = None) -> tuple[subprocess.Popen, str]:
    """(process, base URL) of a fresh server (on ``port``, else a free one); raises RuntimeError with its output
    if it never gets healthy."""
    port = port or free_port()
    with socket.socket() as s:  # a taken port (a server left by an interrupted run) would answer the probe below
        try:
            s.bind(("127.0.0.1", port))
        except OSError as err:
            raise RuntimeError(f"port {port} is taken by another process") from err
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless", "true",
         "--server.address", "127.0.0.1"],
        cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                if r.read().decode().strip() == "ok" and proc.poll() is None:
                    return proc, base
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the app did not become healthy:\n" + proc.stdout.read().decode(errors="replace"))


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def wait_ready(page, timeout_ms: int = 60_000, settle_ms: int = 250) -> None:
    """As Streamlit's own e2e suite: the app exists and its script has stopped running — and stays
    stopped for ``settle_ms`` (a rerun, e.g. a cold start's, can follow right after), with a title drawn."""
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=timeout_ms)
    while True:
        page.wait_for_selector(READY, timeout=timeout_ms)
        page.wait_for_timeout(settle_ms)
        if page.locator(READY).count() == 1:
            return


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
