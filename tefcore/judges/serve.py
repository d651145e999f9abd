"""A vLLM OpenAI-compatible server as a child process: started, waited for, stopped by its PID.

``tef reproduce`` starts the server of a vLLM model for chapter 8's timings
(:func:`tefcore.judges.registry.serve_command`); the real-engine tests start one for the ``vllm-serve``
route. Both go through :class:`Server`, which turns the three ways a start goes wrong into one-line
errors (:class:`ServerError`) and leaves no server running behind it:

- the port is already taken (checked before anything starts: a second server would fail only after
  loading the model, and a request could reach the wrong one);
- the server exits before it answers (its exit code and the last lines of its log);
- it does not answer ``<url>/models`` within the time allowed (how long it waited, and the last lines
  of its log); it is then stopped. A server that asks for a key (vLLM takes ``VLLM_API_KEY`` from its
  environment) is asked with that key, and counts as up when it refuses one (401, 403).

The server runs in its own process group, so stopping it (SIGTERM, then SIGKILL after a grace period)
also ends the engine processes vLLM spawns; its output goes to a log file, never to the caller's
terminal.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from urllib.parse import urlparse

__all__ = ["Server", "ServerError", "port_in_use"]


class ServerError(RuntimeError):
    """The server could not be started (port taken, early exit, not ready in time)."""


def port_in_use(host: str, port: int) -> bool:
    """True when something already listens on ``host:port`` (a TCP connection succeeds).

    Examples
    --------
    >>> with socket.socket() as s:
    ...     s.bind(("127.0.0.1", 0)); s.listen()
    ...     port_in_use("127.0.0.1", s.getsockname()[1])
    True
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        return probe.connect_ex((host, port)) == 0


def _tail(path: Path, lines: int) -> str:
    """The last ``lines`` non-empty lines of a log file, joined by `` | `` (one line of text)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    return " | ".join(kept) if kept else "(empty log)"


class Server:
    """One server process (use as a context manager, or :meth:`start` and :meth:`stop`).

    Parameters
    ----------
    argv : sequence of str
        The command (``python`` and ``tef`` are run as given; the caller resolves them).
    url : str
        Its OpenAI-compatible base URL (``http://127.0.0.1:8000/v1``): the host and port are checked
        before the start, ``<url>/models`` must answer 200 for the server to be ready.
    env : mapping, optional
        Variables added to this process's environment for the server.
    timeout : float
        Seconds to wait for the server to answer.
    log : path-like, optional
        Where its output goes (default: a temporary file, kept, named in errors).
    cwd : path-like, optional
        Its working directory.
    tail : int
        Log lines shown in an error.
    """

    def __init__(self, argv: Sequence[str], url: str, *, env: Mapping[str, str] | None = None,
                 timeout: float = 600.0, log: str | os.PathLike[str] | None = None,
                 cwd: str | os.PathLike[str] | None = None, tail: int = 5) -> None:
        self.argv, self.url, self.timeout, self.tail = list(argv), url.rstrip("/"), float(timeout), tail
        self.env = {**os.environ, **dict(env or {})}
        self.cwd = cwd
        if log is None:
            handle, name = tempfile.mkstemp(prefix="vllm-server-", suffix=".log")
            os.close(handle)
            log = name
        self.log = Path(log)
        self.process: subprocess.Popen[bytes] | None = None
        self.waited = 0.0

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        return self.process.pid if self.process is not None else None

    def start(self) -> Server:
        """Start the server and wait until it answers.

        Raises
        ------
        ServerError
            When the port is taken, the server exits first, or it does not answer in time (it is
            stopped before the error is raised).
        """
        where = urlparse(self.url)
        host, port = where.hostname or "127.0.0.1", where.port or 80
        if port_in_use(host, port):
            raise ServerError(f"port {port} on {host} is already in use: stop what listens there or choose "
                              "another port (--port)")
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd, stdout=out,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self._wait()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait(self) -> None:
        assert self.process is not None
        begin = time.monotonic()
        while True:
            self.waited = time.monotonic() - begin
            if self.waited >= self.timeout:
                break
            if self.process.poll() is not None:
                raise ServerError(f"the server exited with code {self.process.returncode} after "
                                  f"{self.waited:.0f} s, before it answered at {self.url}; last lines of "
                                  f"{self.log}: {_tail(self.log, self.tail)}")
            try:
                with urllib.request.urlopen(self._ready_request(), timeout=5) as answer:
                    if answer.status == 200:
                        return
            except urllib.error.HTTPError as refused:
                if refused.code in (401, 403):
                    return  # up, and asking for a key (vLLM reads VLLM_API_KEY): the client sends its own
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(1.0)
        raise ServerError(f"the server did not answer at {self.url}/models within {self.timeout:.0f} s "
                          f"(waited {self.waited:.0f} s); it was stopped. Last lines of {self.log}: "
                          f"{_tail(self.log, self.tail)}")

    def _ready_request(self) -> urllib.request.Request:
        """``GET <url>/models``, with the key the server was given (``VLLM_API_KEY``) when there is one."""
        key = self.env.get("VLLM_API_KEY", "").strip()
        return urllib.request.Request(f"{self.url}/models", headers={"Authorization": f"Bearer {key}"} if key else {})

    def stop(self, grace: float = 30.0) -> int | None:
        """Stop the server and its children (its process group); return its exit code."""
        process, self.process = self.process, None
        if process is None:
            return None
        if process.poll() is None:
            self._signal(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self._signal(process.pid, signal.SIGKILL)
                process.wait()
        return process.returncode

    @staticmethod
    def _signal(pid: int, sig: signal.Signals) -> None:
        try:
            os.killpg(pid, sig)  # the server was started in its own session: pgid == pid
        except ProcessLookupError:
            pass

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
