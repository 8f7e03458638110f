"""Several app replicas behind Debian's nginx on loopback, and a student that speaks Streamlit's websocket protocol.

The balancer runs the shipped ``deploy/nginx/mha-lab.conf`` itself (only its ports rewritten), inside a main
config of our own: prefix, pid, logs and temp files in a temporary folder, so Debian's nginx service and port 80
are never touched. Shared by tests/e2e/test_deploy.py (kill a replica mid-class) and benchmarks/bench_balanced.py.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "deploy" / "nginx" / "mha-lab.conf"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
ROUTE_COOKIE = "mha_route"
LOG_FORMAT = "'$cookie_mha_route $upstream_addr $status \"$request\"'"  # the test's view of who served what
_SERVER_LINE = re.compile(r"^(\s*)server 127\.0\.0\.1:\d+( [^;]*)?;\n", re.M)


def free_port(low: int, high: int, taken: Sequence[int] = ()) -> int:
    """A free loopback port in [low, high] (the range a task was given), not in ``taken``."""
    for port in range(low, high + 1):
        if port in taken:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {low}-{high}")


def site_config(listen: int, replicas: Sequence[int], text: str | None = None) -> str:
    """The shipped site config with the balancer on 127.0.0.1:``listen`` and one upstream line per replica port."""
    text = SITE.read_text(encoding="utf-8") if text is None else text
    lines = list(_SERVER_LINE.finditer(text))
    if not lines or "listen 80;" not in text:
        raise ValueError(f"{SITE} no longer has 'listen 80;' and 'server 127.0.0.1:…' lines to rewrite")
    indent, params = lines[0].group(1), lines[0].group(2) or ""
    servers = "".join(f"{indent}server 127.0.0.1:{p}{params};\n" for p in replicas)
    text = text[:lines[0].start()] + servers + text[lines[-1].end():]
    text = text.replace("listen 80;", f"listen 127.0.0.1:{listen};").replace("listen [::]:80;\n", "")
    return text


def main_config(prefix: Path, site: Path) -> str:
    """An nginx main config that keeps everything under ``prefix`` and includes ``site`` inside ``http``."""
    temps = "\n".join(f"    {k}_temp_path {prefix / k};" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return f"""worker_processes 1;
pid {prefix / "nginx.pid"};
error_log {prefix / "error.log"} warn;
events {{ worker_connections 2048; }}
http {{
    log_format mha {LOG_FORMAT};
    access_log {prefix / "access.log"} mha;
{temps}
    include {site};
}}
"""


@dataclass
class Balancer:
    """A running nginx (its own process, foreground) in front of replica ports."""

    proc: subprocess.Popen
    prefix: Path
    port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> list[tuple[str, str, str, str]]:
        """(route cookie, upstream addresses, status, request line) per finished request, oldest first."""
        out = []
        path = self.prefix / "access.log"
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if path.exists() else ():
            m = re.match(r'(\S*) (.*) (\d{3}) "(.*)"$', line)
            if m:
                out.append(m.groups())
        return out


def start_balancer(prefix: Path, port: int, replicas: Sequence[int]) -> Balancer:
    """nginx with the shipped site config on 127.0.0.1:``port``; RuntimeError with nginx's words if it fails."""
    prefix.mkdir(parents=True, exist_ok=True)
    prefix.chmod(0o755)
    site = prefix / "mha-lab.conf"
    site.write_text(site_config(port, replicas), encoding="utf-8")
    conf = prefix / "nginx.conf"
    conf.write_text(main_config(prefix, site), encoding="utf-8")
    cmd = [NGINX, "-p", str(prefix), "-c", str(conf)]
    check = subprocess.run([*cmd, "-t", "-q"], capture_output=True, text=True)
    if check.returncode:
        raise RuntimeError(f"nginx -t failed:\n{check.stderr}")
    with (prefix / "stdout.log").open("wb") as out:
        proc = subprocess.Popen([*cmd, "-g", "daemon off;"], stdout=out, stderr=subprocess.STDOUT)
    deadline = time.time() + 10
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("nginx exited:\n" + (prefix / "stdout.log").read_text(errors="replace"))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return Balancer(proc, prefix, port)
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("nginx did not listen within 10 s")


def stop_balancer(b: Balancer) -> None:
    """Stop nginx (master and worker) by its own pid."""
    b.proc.terminate()
    try:
        b.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        b.proc.kill()
        b.proc.wait()


def replica_log(logdir: Path, port: int) -> Path:
    """Where the replica on ``port`` writes its output."""
    return logdir / f"replica-{port}.log"


def start_replicas(ports: Sequence[int], env: Mapping[str, str], logdir: Path,
                   timeout: float = 120.0) -> list[subprocess.Popen]:
    """``streamlit run app.py`` once per port, all started at once, each healthy before returning; each
    replica's output goes to a file in ``logdir`` (a pipe nobody reads would stall a chatty server)."""
    logdir.mkdir(parents=True, exist_ok=True)
    procs = []
    for p in ports:
        with replica_log(logdir, p).open("wb") as out:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(p),
                 "--server.headless", "true", "--server.address", "127.0.0.1"],
                cwd=ROOT, env={**os.environ, **env, "PYTHONUNBUFFERED": "1"}, stdout=out, stderr=subprocess.STDOUT,
            ))
    deadline = time.time() + timeout
    pending = dict(zip(ports, procs, strict=True))
    while pending and time.time() < deadline:
        for port, proc in list(pending.items()):
            if proc.poll() is not None:
                stop_replicas(procs)
                raise RuntimeError(f"replica {port} exited:\n" + replica_log(logdir, port).read_text(errors="replace"))
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        del pending[port]
            except OSError:
                pass
        time.sleep(0.2)
    if pending:
        stop_replicas(procs)
        raise RuntimeError(f"replicas {sorted(pending)} did not become healthy in {timeout:.0f} s")
    return procs


def stop_replicas(procs: Sequence[subprocess.Popen]) -> None:
    """Terminate each replica we started (by its pid), killing any that does not stop."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def route_of(balancer: Balancer, cookie: str) -> str:
    """Which replica (``127.0.0.1:port``) the balancer sends this route cookie to: one request, read from its log."""
    marker = f"/_stcore/health?probe={cookie}"
    req = urllib.request.Request(balancer.base + marker, headers={"Cookie": f"{ROUTE_COOKIE}={cookie}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        r.read()
    for _ in range(50):  # nginx writes the log line right after the response
        for route, upstream, _status, request in reversed(balancer.log()):
            if route == cookie and marker in request:
                return upstream.split(",")[-1].strip()  # "a, b" when a failed and b served
        time.sleep(0.02)
    raise RuntimeError("the balancer did not log the probe")


# --- a student over Streamlit's own websocket protocol (what the browser sends) ---

@dataclass
class Run:
    """What one script run sent back: widgets by key, texts of the page, and the exceptions."""

    widgets: dict[str, tuple[str, str, object]] = field(default_factory=dict)  # key -> (id, kind, proto)
    texts: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def widget_id(self, key: str) -> str:
        return self.widgets[key][0]


def _widget_key(widget_id: str) -> str:
    """The user key inside a Streamlit element id (``$$ID-<hash>-<key>``); the id itself when it has none."""
    parts = widget_id.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[0] == "$$ID" and parts[2] != "None" else widget_id


def _collect(el, run: Run) -> None:  # noqa: ANN001 - a streamlit Element proto
    kind = el.WhichOneof("type")
    if kind is None:
        return
    sub = getattr(el, kind)
    wid = getattr(sub, "id", "")
    if isinstance(wid, str) and wid.startswith("$$ID"):
        run.widgets[_widget_key(wid)] = (wid, kind, sub)
    if kind == "exception":
        run.exceptions.append(f"{sub.type}: {sub.message}")
    for attr in ("body", "text", "label"):
        value = getattr(sub, attr, None)
        if isinstance(value, str) and value:
            run.texts.append(value)


class Student:
    """One browser's worth of Streamlit session over a websocket, through the balancer with a route cookie."""

    def __init__(self, base: str, route: str, query: Mapping[str, str], locale: str = "en-US") -> None:
        self.url = base.replace("http", "ws", 1) + "/_stcore/stream"
        self.route = route
        self.query = dict(query)
        self.locale = locale
        self.ws = None

    async def connect(self) -> None:
        import websockets

        self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=None, open_timeout=30,
                                           additional_headers={"Cookie": f"{ROUTE_COOKIE}={self.route}"})

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    async def run(self, page: str, widgets: Mapping[str, tuple[str, object]] = (), timeout: float = 120) -> Run:
        """One script run of ``page`` with these widget values ({id: (proto field, value)}); waits for the end."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
        from streamlit.util import calc_hash

        msg = BackMsg()
        rs = msg.rerun_script
        rs.query_string = urlencode(self.query)
        rs.page_script_hash = "" if page == "overview" else calc_hash(page)
        rs.page_name = "" if page == "overview" else page
        rs.context_info.locale = self.locale
        for wid, (kind, value) in dict(widgets).items():
            w = rs.widget_states.widgets.add()
            w.id = wid
            if kind == "double_array_value":
                w.double_array_value.data.extend(value)
            else:
                setattr(w, kind, value)
        run = Run()
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        while True:
            fm = ForwardMsg()
            fm.ParseFromString(await asyncio.wait_for(self.ws.recv(), timeout=timeout))
            kind = fm.WhichOneof("type")
            if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                _collect(fm.delta.new_element, run)
            elif kind == "page_info_changed":
                self.query = dict(parse_qsl(fm.page_info_changed.query_string))
            elif kind == "script_finished" and fm.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                run.seconds = time.perf_counter() - t0
                return run
