"""The judge behind any OpenAI-compatible chat-completions endpoint (OpenAI, DeepSeek, ``vllm serve``,
``llama_cpp.server``), through the official :mod:`openai` client.

Each request is one user message (the prompt of protocol §4) answered greedily with a single token
(``max_tokens=1``, ``temperature=0``, ``logprobs=True``, ``top_logprobs=k``), whose top-k log-probabilities
go to :func:`tefcore.judges.labels.score_token_logprobs`.

Reliability is :mod:`tefcore.retry`'s (the client's own retries are switched off): each request
runs under a :class:`~tefcore.retry.RetryPolicy`, a batch under
:func:`~tefcore.retry.map_batch`. A well-formed answer without log-probabilities or without either
letter goes to :func:`score_token_logprobs` as it is (``invalid``, or ``generated_text`` under the
reference reading), never 0.5.

Every score carries the ``model`` and ``system_fingerprint`` of the response that produced it
(:class:`ServedScore`: an alias such as ``deepseek-chat`` is re-pointed at each release), and the cache
stores them per pair record. ``chat_template_kwargs`` (Qwen3's ``{"enable_thinking": false}`` behind
``vllm serve``) are sent in the request body, so that the server renders as the offline vLLM judge does.

The API key is read from the environment variable named by ``api_key_env``; it is never a parameter,
never stored in provenance and never printed (every message passes through :func:`~tefcore.redact.redact`).
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from tefcore.judges.base import INVALID, Score, ScoreRequest
from tefcore.judges.labels import LogprobJudge, check_reading, score_token_logprobs
from tefcore.redact import clean_url, redact
from tefcore.retry import BackendError, RetryPolicy, map_batch, retry_after

__all__ = ["BackendError", "InvalidAPIKey", "MissingAPIKey", "OpenAIBackend", "ServedScore", "read_first_position"]

T = TypeVar("T")

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SHOWABLE_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


class MissingAPIKey(BackendError):
    """The environment variable that should hold the API key is unset or empty."""


class InvalidAPIKey(MissingAPIKey):
    """The API key holds a character an HTTP header cannot carry (a line break, a space, a non-ASCII letter)."""


def _check_key(key: str, variable: str) -> None:
    """Refuse a key an ``Authorization`` header cannot carry, naming the variable, never the key.

    A key copied with its line break would otherwise be retried as a connection error, and a non-ASCII
    one fail inside the HTTP library without naming where it came from.

    Parameters
    ----------
    key : str
        The key (never printed).
    variable : str
        The environment variable's name as it may be shown.

    Raises
    ------
    InvalidAPIKey
        One line naming the variable and what is wrong.

    Examples
    --------
    >>> _check_key("sk-abc123", "OPENAI_API_KEY")
    >>> _check_key("sk-abc123\\n", "OPENAI_API_KEY")
    Traceback (most recent call last):
    ...
    tefcore.judges.openai.InvalidAPIKey: the API key in OPENAI_API_KEY ends with a line break or space ...
    """
    if key != key.strip():
        why = "ends with a line break or space" if key[-1:].isspace() else "starts with a space or line break"
        raise InvalidAPIKey(f"the API key in {variable} {why} (copied with it?): set it again without it")
    if not (key.isascii() and key.isprintable()) or any(c.isspace() for c in key):
        raise InvalidAPIKey(f"the API key in {variable} holds a space, a control character or a non-ASCII "
                            "character, which an HTTP header cannot carry: set it again as the provider gives it")


@dataclass(frozen=True)
class ServedScore(Score):
    """A :class:`~tefcore.judges.base.Score` with what the API said about the answer.

    Attributes
    ----------
    served_model : str or None
        The ``model`` field of the response (the model behind an alias).
    system_fingerprint : str or None
        The response's ``system_fingerprint`` (the backend build), when the API sends one.
    """

    served_model: str | None = None
    system_fingerprint: str | None = None


def _served(score: Score, response: Any) -> Score:
    """``score`` with the response's ``model`` and ``system_fingerprint`` attached (when it has any)."""
    model, fingerprint = (value if isinstance(value := _get(response, name), str) and value else None
                          for name in ("model", "system_fingerprint"))
    if model is None and fingerprint is None:
        return score
    return ServedScore(**vars(score), served_model=model, system_fingerprint=fingerprint)


def _import_openai() -> Any:
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise BackendError("the openai backend needs the `openai` package: pip install 'tefcore[api]'") from exc
    return openai


def _get(obj: Any, name: str) -> Any:
    """Attribute or key ``name`` of a pydantic model or a dict (servers differ), else None."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _entry(token: Any, logprob: Any) -> tuple[str, float] | None:
    """``(token text, log-probability)`` when both are usable, else None."""
    if not isinstance(token, str) or isinstance(logprob, bool) or not isinstance(logprob, (int, float)):
        return None
    return token, float(logprob)


def read_first_position(choice: Any) -> tuple[list[tuple[str, float]], str | None]:
    """The top-k entries and the generated text of one chat-completion choice.

    Parameters
    ----------
    choice : object
        ``response.choices[0]`` (a pydantic model or a dict), or a streamed chunk's choice.

    Returns
    -------
    entries : list of (str, float)
        ``(decoded token text, log-probability)`` at the first answer position, most probable first:
        ``logprobs.content[0].top_logprobs`` plus the sampled token when the list left it out (or the
        legacy ``logprobs.top_logprobs[0]``); empty without log-probabilities. Texts shared by several
        ids are merged by :func:`tefcore.judges.labels.score_token_logprobs`.
    generated : str or None
        The answer text (``message.content``, ``delta.content``, else the first content token).
    """
    entries: list[tuple[str, float]] = []
    generated = _get(_get(choice, "message") or _get(choice, "delta"), "content")
    logprobs = _get(choice, "logprobs")
    content = _get(logprobs, "content")
    if isinstance(content, Sequence) and content:
        first = content[0]
        entries = [e for item in _get(first, "top_logprobs") or ()
                   if (e := _entry(_get(item, "token"), _get(item, "logprob"))) is not None]
        sampled = _entry(_get(first, "token"), _get(first, "logprob"))
        if sampled is not None and all(text != sampled[0] for text, _ in entries):
            entries.append(sampled)
            entries.sort(key=lambda e: math.inf if math.isnan(e[1]) else -e[1])
        token = _get(first, "token")
        if not generated and isinstance(token, str):
            generated = token
    else:
        legacy = _get(logprobs, "top_logprobs")
        if isinstance(legacy, Sequence) and legacy and isinstance(legacy[0], Mapping):
            entries = [e for token, lp in legacy[0].items() if (e := _entry(token, lp)) is not None]
    return entries, generated if isinstance(generated, str) else None


class OpenAIBackend(LogprobJudge):
    """Read P(change) from an OpenAI-compatible chat-completions endpoint.

    Parameters
    ----------
    model : str
        The model name the endpoint expects (``gpt-4o-mini``, ``deepseek-chat``, the served name).
    base_url : str
        The endpoint's base URL, e.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8000/v1``.
    api_key_env : str
        The NAME of the environment variable holding the key (read once, here; any non-empty value for a
        server without authentication).
    top_logprobs : int, default 5
        k of the top-k log-probabilities requested (protocol §5: 5 for the APIs, 20 for vLLM).
    max_concurrency : int, default 8
        Requests in flight at once.
    timeout : float, default 60.0
        Seconds per HTTP request.
    max_retries, base_delay, max_delay, max_total_wait, retry_after_cap, malformed_retries, rng, sleep
        The retry policy (:class:`~tefcore.retry.RetryPolicy`; defaults 6, 0.5, 30.0, 300.0, 60.0,
        2, a fresh ``random.Random()``, a wait that wakes up when the batch is aborted).
    top_logprobs_cap : int, default 20
        The endpoint's cap on ``top_logprobs`` (OpenAI: 20; many APIs: 5), checked here.
    seed : int, optional
        Sent as ``seed`` when given.
    reading : {"summed", "reference"}, default "summed"
        How letters are read from the top-k (see :mod:`tefcore.judges.labels`).
    extra_body, chat_template_kwargs : mapping, optional
        Vendor-specific request fields, and the template variables the server applies when it renders
        the prompt (sent as ``extra_body["chat_template_kwargs"]``); both recorded in provenance.
    server, hardware : str, optional
        What serves the model (``"vllm serve"``) and its hardware class (``"CPU"``, ``"GPU"``), when
        known; recorded in provenance (the hardware outside the provenance id).
    name : str, optional
        The judge's name (the registry passes its entry's name); default ``"openai"``.

    Raises
    ------
    MissingAPIKey
        The variable ``api_key_env`` is unset or empty, or (:class:`InvalidAPIKey`) its value holds a line
        break, a space or a non-ASCII character.
    ValueError
        A parameter is out of range.
    """

    name: str = "openai"

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key_env: str,
        top_logprobs: int = 5,
        max_concurrency: int = 8,
        timeout: float = 60.0,
        max_retries: int = 6,
        *,
        top_logprobs_cap: int = 20,
        seed: int | None = None,
        reading: str = "summed",
        base_delay: float = 0.5,
        max_delay: float = 30.0,
        max_total_wait: float = 300.0,
        retry_after_cap: float = 60.0,
        malformed_retries: int = 2,
        rng: random.Random | None = None,
        sleep: Callable[[float], None] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        chat_template_kwargs: Mapping[str, Any] | None = None,
        server: str | None = None,
        hardware: str | None = None,
        name: str | None = None,
    ) -> None:
        if not model:
            raise ValueError("model must be a non-empty model name")
        if not base_url or not re.match(r"^https?://", base_url):
            raise ValueError(f"base_url must start with http:// or https://, got {clean_url(base_url)!r}")
        if not (0 <= top_logprobs <= top_logprobs_cap):
            raise ValueError(f"top_logprobs must lie in [0, {top_logprobs_cap}] (the endpoint's cap, "
                             f"top_logprobs_cap), got {top_logprobs}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        self.reading = check_reading(reading)
        self.name = name or type(self).name
        self.model = model
        self.base_url = base_url
        self.top_logprobs = int(top_logprobs)
        self.max_concurrency = int(max_concurrency)
        self.timeout = float(timeout)
        self.seed = seed
        self.policy = RetryPolicy(int(max_retries), float(base_delay), float(max_delay), float(max_total_wait),
                                  float(retry_after_cap), int(malformed_retries), rng or random.Random(), sleep)
        self.extra_body = dict(extra_body or {})
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        if self.chat_template_kwargs:
            self.extra_body["chat_template_kwargs"] = {**self.extra_body.get("chat_template_kwargs", {}),
                                                       **self.chat_template_kwargs}
        self.server, self.hardware = server, hardware
        self.stats = self.policy.stats
        key = self._read_key(api_key_env)
        self._openai = _import_openai()
        self._client = self._openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=self.timeout)
        self._secrets = (key,)

    # -- construction helpers --------------------------------------------------------------------
    @staticmethod
    def _read_key(api_key_env: str) -> str:
        if not isinstance(api_key_env, str) or not _ENV_NAME.match(api_key_env):
            # never echo it: a caller may have passed the key itself instead of a variable's name
            raise ValueError("api_key_env must be the NAME of an environment variable (letters, digits, "
                             "underscores), not a key; the value given is not shown")
        shown = api_key_env if _SHOWABLE_ENV_NAME.match(api_key_env) else "named by api_key_env"
        key = os.environ.get(api_key_env, "")
        if not key.strip():
            raise MissingAPIKey(
                f"the API key environment variable {shown} is not set or empty: export {shown}=... "
                "(for a local server without authentication any non-empty value works)"
            )
        _check_key(key, shown)
        return key

    def __repr__(self) -> str:
        return (f"OpenAIBackend(model={self.model!r}, base_url={clean_url(self.base_url)!r}, "
                f"top_logprobs={self.top_logprobs})")

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def __enter__(self) -> OpenAIBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the Backend protocol --------------------------------------------------------------------
    def provenance(self) -> dict[str, Any]:
        """What identifies this judge's numbers (never the key).

        Returns
        -------
        dict
            The request's settings (``model`` as requested, ``base_url`` without credentials),
            ``weights_sha256`` None (remote weights), and ``server``, ``hardware``,
            ``chat_template_kwargs`` and ``extra_body`` when given.
        """
        prov: dict[str, Any] = {
            "backend": "openai",
            "model": self.model,
            "base_url": clean_url(self.base_url),
            "top_logprobs": self.top_logprobs,
            "reading": self.reading,
            "temperature": 0.0,
            "max_tokens": 1,
            "seed": self.seed,
            "weights_sha256": None,
            "label_read": f"top-{self.top_logprobs} log-probabilities (the API's cap)",
        }
        if self.server:
            prov["server"] = self.server
        if self.hardware:
            prov["hardware"] = {"class": self.hardware}
        if self.chat_template_kwargs:
            prov["chat_template_kwargs"] = dict(self.chat_template_kwargs)
        if self.extra_body:
            prov["extra_body"] = json.loads(redact(json.dumps(self.extra_body, sort_keys=True), self._secrets))
        return prov

    def score(self, requests: Sequence[ScoreRequest]) -> list[Score]:
        """Score every request, at most ``max_concurrency`` in flight, results in request order.

        Parameters
        ----------
        requests : sequence of ScoreRequest

        Returns
        -------
        list of Score
            One per request, in order. Unreadable answers are ``invalid`` (NaN), never 0.5.

        Raises
        ------
        tefcore.retry.BackendUnavailable
            A request still failed after the retry budget (nothing of this batch is returned).
        tefcore.retry.BackendRejected
            The endpoint refused a request with a non-retryable 4xx.
        """
        return self._map(requests, self._score_one, lambda detail: replace(INVALID, detail=detail),
                         self.max_concurrency)

    # -- concurrency -----------------------------------------------------------------------------
    def _map(self, requests: Sequence[ScoreRequest], attempt: Callable[[ScoreRequest], T],
             unreadable: Callable[[str], T], workers: int) -> list[T]:
        """``attempt`` for every request, each under the retry policy, the batch under :func:`map_batch`."""
        requests = list(requests)
        for r in requests:
            if not isinstance(r, ScoreRequest):
                raise TypeError(f"expected ScoreRequest objects, got {type(r).__name__}")
        where = [f"request {i + 1}/{len(requests)} ({r.kind} of post {r.post_id}, {r.dimension})"
                 for i, r in enumerate(requests)]
        endpoint = f"{clean_url(self.base_url)} (model {self.model})"

        def one(req: ScoreRequest, where: str, abort: threading.Event) -> T:
            return self.policy.run(lambda: attempt(req), self._classify, unreadable, where, endpoint, abort,
                                   self._secrets)

        return map_batch(requests, one, where, int(workers), name="tef-openai")

    # -- one request -----------------------------------------------------------------------------
    def _params(self, req: ScoreRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": req.prompt}],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }
        if self.seed is not None:
            params["seed"] = int(self.seed)
        if self.extra_body:
            params["extra_body"] = dict(self.extra_body)
        return params

    def _score_one(self, req: ScoreRequest) -> Score:
        """One scoring attempt: the response's first position read by :func:`score_token_logprobs`."""
        response = self._client.chat.completions.create(**self._params(req))
        answers = _get(response, "choices")  # the response's, not a dimension's sides
        if isinstance(response, (str, bytes)) or answers is None:
            raise json.JSONDecodeError("not a chat completion", str(response)[:80], 0)
        entries, generated = read_first_position(answers[0] if answers else None)
        return _served(score_token_logprobs(entries, generated, reading=self.reading, letters=req.letters), response)

    # -- the retry policy ------------------------------------------------------------------------
    def _classify(self, exc: BaseException) -> tuple[str, bool, float | None]:
        """(reason, retryable, retry_after) of a failed request; raises what is not a request failure."""
        oa = self._openai
        if isinstance(exc, oa.APITimeoutError):
            return "timeout", True, None
        if isinstance(exc, oa.APIConnectionError):
            return "connection", True, None
        if isinstance(exc, oa.APIStatusError):
            status = int(exc.status_code)  # 429 and 5xx are retried, a 429 after the wait it asks for
            wait = retry_after(exc.response.headers, self.policy.retry_after_cap) if status == 429 else None
            return str(status), status == 429 or status >= 500, wait
        if isinstance(exc, (json.JSONDecodeError, oa.APIResponseValidationError, UnicodeDecodeError)):
            return "unparseable", True, None
        raise exc
