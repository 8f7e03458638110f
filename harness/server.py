"""The app as a user starts it (`streamlit run app.py`) on a local port, for the tests and benchmarks that need a
real server (both import it from here: the tests never import the benchmarks package).

A server counts as started only when the process this module launched is alive and is the one listening on the
port: a server left by an interrupted run answers the health probe too, and the tests would then drive it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
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
# Resolves once the page's text (outside the sliders) differs from `before` and the script has stopped (true), or
# false after `timeout` ms. No time is measured: the tests only need to know that the figures changed.
CHANGED = ("async ([before, timeout]) => { " + TEXT + """
  const app = document.querySelector('[data-testid="stApp"]');
  const start = Date.now();
  while (Date.now() - start < timeout) {
    await new Promise(r => setTimeout(r, 50));
    if (app.getAttribute('data-test-script-state') === 'notRunning' && text() !== before) return true;
  }
  return false; }""")

LISTEN = "0A"  # the TCP state "listening" in /proc/net/tcp


class PortTaken(RuntimeError):
    """Another process listens on the port asked for (a server left by an interrupted run, another suite)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_free(port: int) -> bool:
    """True if nothing holds 127.0.0.1:``port`` (we can bind it ourselves, as the server is about to)."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def listening_inodes(port: int) -> set[str]:
    """The socket inodes listening on ``port`` (IPv4 and IPv6), from /proc/net/tcp{,6}."""
    inodes = set()
    for name in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) > 9 and f[3] == LISTEN and int(f[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f[9])
    return inodes


def listens_on(pid: int, port: int) -> bool:
    """True if process ``pid`` owns a socket listening on ``port`` (Linux /proc: its fds link to socket:[inode])."""
    wanted = {f"socket:[{i}]" for i in listening_inodes(port)}
    if not wanted:
        return False
    fds = Path(f"/proc/{pid}/fd")
    try:
        entries = list(fds.iterdir())
    except OSError:
        return False
    for fd in entries:
        try:
            if os.readlink(fd) in wanted:
                return True
        except OSError:
            continue
    return False


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
            return r.read().decode().strip() == "ok"
    except OSError:
        return False


def _environment(changes: Mapping[str, str | None] | None) -> dict[str, str]:
    """This process's environment with ``changes`` (None: removed) and unbuffered output."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for key, value in (changes or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def start_server(timeout: float = 90.0, port: int | None = None, script: Path | str = "app.py",
                 cwd: Path = ROOT, env: Mapping[str, str | None] | None = None) -> tuple[subprocess.Popen, str]:
    """(process, base URL) of a fresh server of ``script`` (run in ``cwd``; the app by default) on ``port`` (else a
    free one), with ``env`` over this process's environment (None removes a variable). Raises PortTaken if another
    process holds the port, RuntimeError with the server's output if it never gets healthy or is not the one
    answering."""
    port = port or free_port()
    if not port_is_free(port):
        raise PortTaken(f"port {port} is taken by another process (a server left by an earlier run?)")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port), "--server.headless", "true",
         "--server.address", "127.0.0.1"],
        cwd=cwd, env=_environment(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + timeout
    why, error = "the app did not become healthy", RuntimeError
    while time.time() < deadline and proc.poll() is None:
        if _healthy(base):
            # someone answered: it must be our process, still alive, holding the port
            if proc.poll() is None and listens_on(proc.pid, port):
                return proc, base
            why, error = f"another process answers on port {port} (a stale server?), not the one started", PortTaken
            break
        time.sleep(0.1)
    stop_server(proc)
    out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
    raise error(f"{why}:\n{out}")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def wait_ready(page, timeout_ms: int = 60_000, settle_ms: int = 250) -> None:  # noqa: ANN001 - a Playwright page
    """As Streamlit's own e2e suite: the app exists and its script has stopped running — and stays
    stopped for ``settle_ms`` (a rerun, e.g. a cold start's, can follow right after), with a title drawn."""
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=timeout_ms)
    while True:
        page.wait_for_selector(READY, timeout=timeout_ms)
        page.wait_for_timeout(settle_ms)
        if page.locator(READY).count() == 1:
            return


def wait_changed(page, before: str, timeout_ms: int = 60_000) -> None:  # noqa: ANN001 - a Playwright page
    """Wait until the page's figures (its text outside the sliders) differ from ``before``; AssertionError if not."""
    assert page.evaluate(CHANGED, [before, timeout_ms]), "the page did not change"
