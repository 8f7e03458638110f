"""The test server helper never reports a server it did not start: a taken port is refused, and a process that
answers the health probe without being ours (a server left by an interrupted run) is not taken for ours."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from harness import server as servers


class _Healthy(http.server.BaseHTTPRequestHandler):
    """A stale server: answers Streamlit's health probe with "ok"."""

    def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args) -> None:  # noqa: ANN002 - quiet
        pass


@pytest.fixture
def stale() -> Iterator[int]:
    """The port of a listener in this process that answers the health probe like a server left running."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Healthy)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def test_a_taken_port_is_refused_before_anything_starts(stale, monkeypatch):
    started = []
    monkeypatch.setattr(servers.subprocess, "Popen", lambda *a, **k: started.append(a))
    with pytest.raises(servers.PortTaken, match=f"port {stale} is taken"):
        servers.start_server(port=stale)
    assert not started


def test_a_healthy_answer_from_another_process_is_not_taken_for_the_new_server(stale, monkeypatch):
    """The race the check above cannot close (the port is taken just after it looked free): the health probe
    answers "ok", but the listener is not the started process, so the helper stops it and refuses."""
    monkeypatch.setattr(servers, "port_is_free", lambda port: True)
    with pytest.raises(servers.PortTaken, match="another process answers"):
        servers.start_server(port=stale, timeout=60)


def test_the_listener_of_a_port_is_found_by_its_process():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert servers.listens_on(os.getpid(), port)
        assert not servers.port_is_free(port)
        other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            assert not servers.listens_on(other.pid, port)
        finally:
            other.kill()
            other.wait()
    assert not servers.listens_on(os.getpid(), port) and servers.port_is_free(port)
