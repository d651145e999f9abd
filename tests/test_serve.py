"""The server process helper (tefbook.serve): ready, port taken, early exit, not ready in time.

A stand-in server here is Python's own ``http.server`` serving a folder with ``v1/models`` in it; the
real vLLM server is started by the real-engine tier (tests/vllm_engine).
"""

from __future__ import annotations

import os
import socket
import sys
import urllib.request
from pathlib import Path

import pytest

from tefbook.serve import Server, ServerError, port_in_use


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ready_then_stopped(tmp_path: Path) -> None:
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "models").write_text('{"data": []}')
    port = free_port()
    server = Server([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                    f"http://127.0.0.1:{port}/v1", cwd=tmp_path, timeout=30, log=tmp_path / "server.log")
    with server:
        pid = server.pid
        assert pid is not None and port_in_use("127.0.0.1", port)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models") as answer:
            assert answer.read() == b'{"data": []}'
    assert not port_in_use("127.0.0.1", port)
    assert not alive(pid)  # reaped by stop()


def test_port_in_use_starts_nothing(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        marker = tmp_path / "started"
        server = Server([sys.executable, "-c", f"open({str(marker)!r}, 'w')"], f"http://127.0.0.1:{port}/v1")
        with pytest.raises(ServerError, match=f"port {port} on 127.0.0.1 is already in use"):
            server.start()
    assert server.pid is None and not marker.exists()


def test_early_exit_shows_the_log(tmp_path: Path) -> None:
    code = "import sys; print('loading'); print('ValueError: no such model', file=sys.stderr); sys.exit(3)"
    server = Server([sys.executable, "-c", code], f"http://127.0.0.1:{free_port()}/v1", log=tmp_path / "s.log")
    with pytest.raises(ServerError, match=r"exited with code 3 .*loading \| ValueError: no such model$"):
        server.start()
    assert server.pid is None


def test_not_ready_in_time_is_stopped(tmp_path: Path) -> None:
    code = "import time; print('still loading', flush=True); time.sleep(120)"
    server = Server([sys.executable, "-c", code], f"http://127.0.0.1:{free_port()}/v1", timeout=2,
                    log=tmp_path / "s.log")
    with pytest.raises(ServerError) as caught:
        server.start()
    message = str(caught.value)
    assert "did not answer" in message and "within 2 s (waited 2 s)" in message
    assert message.endswith("still loading") and "\n" not in message
    assert server.pid is None  # stopped, and nothing is left running


def test_a_server_asking_for_a_key_is_up(tmp_path: Path) -> None:
    """vLLM takes VLLM_API_KEY from its environment and answers 401 without it: the readiness check sends
    that key, and a 401 still means the server is up (an endless wait before)."""
    code = ("import http.server, os, sys\n"
            "class H(http.server.BaseHTTPRequestHandler):\n"
            "    def do_GET(self):\n"
            "        ok = self.headers.get('Authorization') == 'Bearer ' + os.environ['VLLM_API_KEY']\n"
            "        self.send_response(200 if ok else 401); self.end_headers()\n"
            "    def log_message(self, *a): pass\n"
            "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()\n")
    port = free_port()
    argv = [sys.executable, "-c", code, str(port)]
    with Server(argv, f"http://127.0.0.1:{port}/v1", env={"VLLM_API_KEY": "k1"}, timeout=20) as server:
        request = server._ready_request()
        assert request.get_header("Authorization") == "Bearer k1"
        with urllib.request.urlopen(request) as answer:
            assert answer.status == 200
    other = free_port()
    with Server([*argv[:-1], str(other)], f"http://127.0.0.1:{other}/v1", env={"VLLM_API_KEY": ""}, timeout=20):
        assert port_in_use("127.0.0.1", other)  # no key here: the server answers 401, which counts as up
