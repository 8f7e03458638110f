"""Several app replicas behind Debian's nginx on loopback (their students: harness/websocket_client.py).

The balancer runs the shipped ``deploy/nginx/mha-lab.conf`` itself (only its ports rewritten), inside a main
config of our own: prefix, pid, logs and temp files in a temporary folder, so Debian's nginx service and port 80
are never touched. Shared by tests/e2e/test_deploy.py (kill a replica mid-class), benchmarks/bench_balanced.py and
benchmarks/bench_live.py.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

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

