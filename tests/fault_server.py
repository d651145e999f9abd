"""A small fault-injecting OpenAI-compatible chat-completions server for the tests.

Standard library only: :class:`http.server.ThreadingHTTPServer` in a daemon thread on ``127.0.0.1``,
port 0 (the system picks a free one). Every ``POST .../chat/completions`` is answered by one *action*:

===================  =================================================================================
action               answer
===================  =================================================================================
``ok``               200, a well-formed completion whose log-probabilities are a pure function of the
                     prompt (:func:`expected_p`), with C and S each split over two token variants
``429``              429 without ``Retry-After``; ``429:S`` adds ``Retry-After: S``
``500``, ``503``     server errors
``reset``            the socket is closed abruptly (TCP RST) after the request was read
``timeout``          the server waits :attr:`FaultServer.hang` seconds before answering
``malformed``        200 with a body that is not JSON
``truncated``        200 with a JSON body cut in half (``Content-Length`` matches the cut body, as a
                     flaky proxy would send it)
``short-body``       200 announcing more bytes than it sends, then closing the connection
``no-logprobs``      200, the letter ``C`` as text, ``logprobs: null``
``empty-content``    200, empty text, ``logprobs.content == []``
``neither``          200, top log-probabilities that hold neither C nor S
``400``, ``401``     client errors (not retryable); the 401 quotes the ``Authorization`` header
                     it received, as some proxies do, so that redaction is tested
===================  =================================================================================

Which action answers a request is scripted: ``plan`` maps a marker (a substring of the prompt) to the
actions of that prompt's successive attempts (deterministic under concurrency); prompts without a
marker take the next action of the global ``sequence`` (arrival order), then ``default``.
The server records every request (prompt, action, ``Authorization`` header) for the tests to count.
"""

from __future__ import annotations

import hashlib
import os
import json
import math
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FAULTS: tuple[str, ...] = (
    "429",
    "500",
    "503",
    "reset",
    "timeout",
    "malformed",
    "truncated",
    "short-body",
    "no-logprobs",
    "empty-content",
    "neither",
    "400",
    "401",
)
"""Every fault kind the server can inject (``429:S`` is a 429 with ``Retry-After: S``)."""

MASS: float = 0.9
"""P(C) + P(S) of every ``ok`` answer."""


def expected_p(prompt: str) -> float:
    """P(change) that an ``ok`` answer to ``prompt`` encodes.

    Parameters
    ----------
    prompt : str
        The user message.

    Returns
    -------
    float
        A number in [0.05, 0.95], a deterministic function of the prompt's sha256.
    """
    digest = hashlib.sha256(prompt.encode("utf-8")).digest()
    u = int.from_bytes(digest[:8], "big") / 2.0**64
    return 0.05 + 0.9 * u


def _entry(token: str, prob: float) -> dict[str, Any]:
    return {"token": token, "logprob": math.log(prob), "bytes": list(token.encode("utf-8"))}


def ok_top_logprobs(prompt: str, k: int = 5) -> list[dict[str, Any]]:
    """The top-k log-probabilities of an ``ok`` answer, most probable first.

    C and S are each split 70/30 over the variants ``"C"``/``" C"`` and ``"S"``/``" S"``; the rest of the
    mass goes to ``"The"``. Summing the variants gives back :func:`expected_p` and a mass of :data:`MASS`.
    """
    p = expected_p(prompt)
    entries = [
        _entry("C", 0.7 * MASS * p),
        _entry(" C", 0.3 * MASS * p),
        _entry("S", 0.7 * MASS * (1 - p)),
        _entry(" S", 0.3 * MASS * (1 - p)),
        _entry("The", 1 - MASS),
    ]
    entries.sort(key=lambda e: -e["logprob"])
    return entries[: max(k, 0)]


def _completion(content: str | None, logprobs: dict[str, Any] | None, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": logprobs,
                "finish_reason": "length",
            }
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8},
    }


@dataclass
class RequestRecord:
    """One request the server received."""

    prompt: str
    action: str
    authorization: str | None
    body: dict[str, Any]
    time: float


@dataclass
class FaultServer:
    """The scripted server. Use as a context manager; :attr:`base_url` is the client's base URL.

    Attributes
    ----------
    sequence : list of str
        Actions for prompts without a plan, consumed in arrival order.
    plan : dict
        Marker substring -> actions of that prompt's successive attempts.
    default : str
        Action once the script is used up.
    hang : float
        Seconds a ``timeout`` action waits before answering (longer than the client's timeout).
    """

    sequence: Sequence[str] = ()
    plan: Mapping[str, Sequence[str]] = field(default_factory=dict)
    default: str = "ok"
    hang: float = 2.0
    model: str = "fault-model"
    first_chunk_delay: float = 0.0
    records: list[RequestRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._seq = list(self.sequence)
        self._attempts: Counter[str] = Counter()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        for action in [*self._seq, *(a for acts in self.plan.values() for a in acts), self.default]:
            if action != "ok" and action.split(":")[0] not in FAULTS:
                raise ValueError(f"unknown fault action {action!r}; known: ok, {', '.join(FAULTS)}")

    # -- scripting -------------------------------------------------------------------------------
    def script(self, sequence: Sequence[str] = (), plan: Mapping[str, Sequence[str]] | None = None,
               default: str = "ok") -> None:
        """Replace the script (keeps the records)."""
        with self._lock:
            self._seq = list(sequence)
            self.plan = dict(plan or {})
            self._attempts = Counter()
            self.default = default

    def _choose(self, prompt: str) -> str:
        with self._lock:
            for marker, actions in self.plan.items():
                if marker in prompt:
                    n = self._attempts[marker]
                    self._attempts[marker] += 1
                    return actions[n] if n < len(actions) else self.default
            if self._seq:
                return self._seq.pop(0)
            return self.default

    # -- counts ----------------------------------------------------------------------------------
    @property
    def n_requests(self) -> int:
        """Requests received so far."""
        return len(self.records)

    def faults(self) -> Counter[str]:
        """Faults injected so far, by kind (``ok`` answers not counted)."""
        return Counter(r.action.split(":")[0] for r in self.records if r.action != "ok")

    def attempts_of(self, marker: str) -> int:
        """How many requests carried ``marker`` in their prompt."""
        return sum(marker in r.prompt for r in self.records)

    # -- life cycle ------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        if self._httpd is None:
            raise RuntimeError("the fault server is not running")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FaultServer:
        """Bind to a free port on 127.0.0.1 and serve in a daemon thread."""
        server = self

        class Handler(_Handler):
            fault_server = server

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (hanging handlers are woken up)."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    fault_server: FaultServer
    protocol_version = "HTTP/1.0"  # one request per connection: every fault hits exactly one request

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
        return

    # -- helpers ---------------------------------------------------------------------------------
    def _send(self, status: int, body: bytes, headers: Mapping[str, str] | None = None,
              content_length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) if content_length is None else content_length))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode("utf-8"), headers)

    def _error(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        self._send_json(status, {"error": {"message": message, "type": "fault", "code": str(status)}},
                        headers)

    def _reset(self) -> None:
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.wfile = _Sink()  # type: ignore[assignment]  # finish() must not write to the closed socket

    # -- the endpoint ----------------------------------------------------------------------------
    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        fs = self.fault_server
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._error(400, "request body is not JSON")
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._error(404, f"no route {self.path}")
            return
        messages = body.get("messages") or [{}]
        prompt = str(messages[-1].get("content", ""))
        action = fs._choose(prompt)
        with fs._lock:
            fs.records.append(RequestRecord(prompt, action, self.headers.get("Authorization"), body,
                                            time.monotonic()))
        try:
            self._answer(action, prompt, body)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the client gave up (timeout): nothing to do

    def _answer(self, action: str, prompt: str, body: dict[str, Any]) -> None:
        fs = self.fault_server
        kind, _, arg = action.partition(":")
        k = int(body.get("top_logprobs") or 0)
        if kind == "429":
            self._error(429, "rate limited", {"Retry-After": arg} if arg else None)
        elif kind == "401":
            # like some proxies, quote the credentials received: the client must redact them
            self._error(401, f"invalid credentials: {self.headers.get('Authorization')}")
        elif kind in ("500", "503", "400"):
            self._error(int(kind), f"injected {kind}")
        elif kind == "reset":
            self._reset()
        elif kind == "timeout":
            fs._stop.wait(fs.hang)
            self._send_json(200, _completion("C", {"content": []}, fs.model))
        elif kind == "malformed":
            self._send(200, b'{"id": "chatcmpl-fault", "choices": [ <html>bad gateway</html>')
        elif kind in ("truncated", "short-body"):
            full = json.dumps(self._ok(prompt, k)).encode("utf-8")
            cut = full[: len(full) // 2]
            if kind == "truncated":
                self._send(200, cut)
            else:
                self._send(200, cut, content_length=len(full))
                self.wfile.flush()
                self._reset()
        elif kind == "no-logprobs":
            self._send_json(200, _completion("C", None, fs.model))
        elif kind == "empty-content":
            self._send_json(200, _completion("", {"content": []}, fs.model))
        elif kind == "neither":
            top = [_entry(t, p) for t, p in (("The", 0.4), ("I", 0.2), ("A", 0.1), ("Yes", 0.05),
                                             ("No", 0.05))][:k or 1]
            self._send_json(200, _completion("The", {"content": [{**top[0], "top_logprobs": top}]},
                                             fs.model))
        elif body.get("stream"):
            self._stream(prompt, k, bool((body.get("stream_options") or {}).get("include_usage")))
        else:
            self._send_json(200, self._ok(prompt, k))

    def _ok(self, prompt: str, k: int) -> dict[str, Any]:
        top = ok_top_logprobs(prompt, k)
        first = top[0] if top else _entry("C", 0.5)
        return _completion(first["token"], {"content": [{**first, "top_logprobs": top}]},
                           self.fault_server.model)

    def _stream(self, prompt: str, k: int, include_usage: bool) -> None:
        fs = self.fault_server
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

        def event(obj: Any) -> None:
            self.wfile.write(b"data: " + json.dumps(obj).encode("utf-8") + b"\n\n")
            self.wfile.flush()

        base = {"id": "chatcmpl-fault", "object": "chat.completion.chunk", "created": 0, "model": fs.model}
        event({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                    "finish_reason": None}]})
        if fs.first_chunk_delay:
            fs._stop.wait(fs.first_chunk_delay)
        ok = self._ok(prompt, k)["choices"][0]
        event({**base, "choices": [{"index": 0, "delta": {"content": ok["message"]["content"]},
                                    "logprobs": ok["logprobs"], "finish_reason": None}]})
        event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
        if include_usage:
            event({**base, "choices": [],
                   "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8}})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


class _Sink:
    """A write-only file that drops everything (stands in for a socket closed on purpose)."""

    closed = False

    def write(self, data: bytes) -> int:
        return len(data)

    def flush(self) -> None:
        return

    def close(self) -> None:
        return


def make_requests(n: int, tag: str = "q", kind: str = "sentence") -> list[Any]:
    """``n`` score requests whose prompts carry the markers ``[[tag-0]]`` ... ``[[tag-{n-1}]]``.

    The marker is what :attr:`FaultServer.plan` keys on; no marker is a substring of another.
    """
    from tefcore.judges.base import ScoreRequest
    from tefcore.mind.prompts import choices

    return [
        ScoreRequest(
            prompt=f"[[{tag}-{i}]] Does the text argue for change (C) or stability (S)? Text: post {i}. Answer:",
            text=f"post {i}", lang="en", dimension="Economy", post_id=f"{tag}-{i}", kind=kind,
            choices=choices("Economy", "en"))
        for i in range(n)
    ]


def marker(tag: str, i: int) -> str:
    """The marker of request ``i`` made by :func:`make_requests`."""
    return f"[[{tag}-{i}]]"


# -- helpers for tests that run an extraction through the server ----------------------------------------

_SYNTHETIC_SENTENCES = (
    "The council debated the new budget for most of the evening.",
    "Some residents want the old market square kept exactly as it is.",
    "Others argue that the square should become a park with bike lanes.",
    "Nobody expects a decision before the summer holidays begin.",
)


def synthetic_mind(folder: os.PathLike[str] | str, n_posts: int = 6, lang: str = "en") -> Path:
    """Write a small, schema-valid ``mind_<lang>.jsonl`` (our own texts) and return its folder.

    Post ``i`` has one label on dimension ``i mod 6`` (schema order), its first subcategory, on the
    change side for even ``i`` and the stability side for odd ``i``; every post has four sentences.
    """
    from tefcore.mind.schema import DIMENSIONS

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n_posts):
        dim = DIMENSIONS[i % len(DIMENSIONS)]
        sub = dim.subcategories[0]
        side = "change" if i % 2 == 0 else "stability"
        position = sub.change if side == "change" else sub.stability
        text = f"Post number {i} is about {dim.name.lower()}. " + " ".join(_SYNTHETIC_SENTENCES)
        lines.append(json.dumps({"id": f"{lang}-single-syn{i}", "lang": lang, "event": "SYN", "text": text,
                                 "labels": [{"dimension": dim.name, "subcategory": sub.name,
                                             "orientation": position.name, "side": side}]}))
    (out / f"mind_{lang}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def run_openai_extraction(backend: Any, data_dir: os.PathLike[str] | str, out: os.PathLike[str] | str,
                          *, batch_size: int = 5) -> Any:
    """Run :func:`tefcore.extraction.run.run_extraction` on the English posts of ``data_dir`` into ``out``.

    ``batch_size`` is small so that a run stopped midway has already written whole records.
    """
    from tefcore.mind.load import evaluation_pairs, load_posts
    from tefcore.extraction.cache import cache_path
    from tefcore.extraction.run import run_extraction

    pairs = evaluation_pairs(load_posts("en", data_dir))
    path = cache_path(out, "fault-model", "original", "en")
    return run_extraction(backend, pairs, path, variant="original", batch_size=batch_size, progress=False)


def cache_pairs(out: os.PathLike[str] | str) -> list[tuple[str, str]]:
    """``(post_id, dimension)`` of every pair record in every ``*.jsonl`` under ``out``, duplicates kept.

    Read line by line (not through :func:`tefcore.extraction.cache.read_cache`, which refuses duplicates) so that
    a duplicate shows up as such; each file is also read with ``read_cache`` to prove it is valid.
    """
    from tefcore.extraction.cache import read_cache

    pairs: list[tuple[str, str]] = []
    for path in sorted(Path(out).rglob("*.jsonl")):
        read_cache(path)
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if rec.get("type") == "pair":
                pairs.append((rec["post_id"], rec["dimension"]))
    return pairs


CLI_MODEL = "vllm-serve"
"""The registry entry the CLI tests point at the fault server (any OpenAI-compatible endpoint)."""

CLI_KEY_ENV = "VLLM_API_KEY"
"""The variable that entry reads its key from."""


def cli_openai_args(base_url: str, data_dir: os.PathLike[str] | str,
                    out: os.PathLike[str] | str) -> tuple[list[str], dict[str, str]] | None:
    """The ``tef extract`` command and environment that score ``data_dir`` through ``base_url``.

    Returns None when the registry has no :data:`CLI_MODEL` entry. The key is not part of the
    environment returned: the caller sets :data:`CLI_KEY_ENV` itself.
    """
    import shutil
    import sys

    from tefcore.judges.registry import load_registry

    if CLI_MODEL not in load_registry():
        return None
    tef = shutil.which("tef", path=str(Path(sys.executable).parent))
    prefix = [tef] if tef else [sys.executable, "-m", "tefcore.cli"]
    cmd = [*prefix, "extract", "--model", CLI_MODEL, "--lang", "en", "--prompt", "original",
           "--data-dir", str(data_dir), "--out", str(out), "--batch-size", "5", "--no-progress"]
    env = {"VLLM_BASE_URL": base_url, "VLLM_SERVED_MODEL": "fault-model", "MIND_DATA_DIR": str(data_dir)}
    return cmd, env
