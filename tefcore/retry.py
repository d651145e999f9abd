"""The reliability policy of a judge behind an HTTP API, explicit so that it can be tested.

:class:`RetryPolicy` runs one request:

- **retried**: connection errors (refused, reset, a body cut short), timeouts, HTTP 429 and 5xx, with
  exponential backoff and full jitter, :math:`d_n \\sim U(0, \\min(d_{max}, d_0 2^n))`, or a 429's
  ``Retry-After`` (or ``retry-after-ms``) capped at ``retry_after_cap``;
- **bounded**: at most ``max_retries`` retries and ``max_total_wait`` seconds of backoff per request, then
  :class:`BackendUnavailable` (the attempts, the last status, and that the cache is resumable);
- **never retried**: any other 4xx (:class:`BackendRejected` at once), except a prompt the server refuses
  as longer than the model's context (:func:`_is_context_overflow`), recorded as invalid with that reason;
- **unreadable answers are recorded, not voted**: a 200 whose body is not JSON is retried at most
  ``malformed_retries`` times, then recorded invalid (P = NaN), and the run goes on.

:func:`map_batch` runs a batch concurrently and **stops it at its first error**, so that a
:func:`tefcore.extraction.run.run_extraction` chunk is scored whole or not written at all.
:class:`tefcore.judges.openai.OpenAIBackend` uses both.
"""

from __future__ import annotations

import email.utils
import logging
import math
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tefcore.redact import redact

__all__ = ["BackendError", "BackendRejected", "BackendUnavailable", "RetryPolicy",
           "map_batch", "retry_after"]

T = TypeVar("T")
log = logging.getLogger(__name__)

_CONTEXT_OVERFLOW = re.compile(r"maximum context length|maximum model length|context[_ ]length[_ ]exceeded|"
                               r"longer than the max", re.IGNORECASE)
_HINTS = {**dict.fromkeys(("401", "403"), " Check the API key's environment variable and its permissions."),
          "404": " Check the model name and the base URL.",
          **dict.fromkeys(("400", "422"), " Check the request options (top_logprobs cap, model support for logprobs).")}
"""What to check after a refusal, by HTTP status."""


class BackendError(RuntimeError):
    """Base class of the errors an API backend raises on purpose (one clear line each)."""


class BackendUnavailable(BackendError):
    """The endpoint kept failing with retryable errors until the retry budget ran out.

    Attributes
    ----------
    attempts : int
        Requests sent for the request that gave up.
    last_status : str
        The last failure: an HTTP status (``"429"``, ``"503"``), ``"timeout"`` or ``"connection"``.
    """

    def __init__(self, message: str, *, attempts: int, last_status: str) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.last_status = last_status


class BackendRejected(BackendError):
    """The endpoint answered a 4xx other than 429 (wrong model, key or parameter): not retried.

    Attributes
    ----------
    status : int
        The HTTP status.
    """

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class _Aborted(Exception):
    """Another request of the same batch failed: stop quietly."""


@dataclass
class _BackendStats:
    """What a policy did, for the tests and the closing report (updated under the policy's lock).

    Attributes
    ----------
    requests, retries : int
        HTTP requests sent (first attempts and retries), and the retries among them.
    retried : Counter
        Retries by the reason of the failure that caused them (``"429"``, ``"timeout"``, ``"unparseable"``, ...).
    delays : list of float
        Every backoff delay slept, in seconds, in the order slept.
    unreadable, exhausted, rejected, too_long : int
        Requests recorded invalid (body unparseable), given up (:class:`BackendUnavailable`), refused
        (:class:`BackendRejected`), and refused as longer than the context (recorded invalid).
    """

    requests: int = 0
    retries: int = 0
    retried: Counter[str] = field(default_factory=Counter)
    delays: list[float] = field(default_factory=list)
    unreadable: int = 0
    exhausted: int = 0
    rejected: int = 0
    too_long: int = 0


def _is_context_overflow(status: int | str, message: str) -> bool:
    """True when an HTTP error says the prompt does not fit in the model's context.

    Examples
    --------
    >>> _is_context_overflow(400, "This model's maximum context length is 4096 tokens. However, ...")
    True
    >>> _is_context_overflow(400, "top_logprobs must be at most 20")
    False
    """
    return str(status) in ("400", "413", "422") and bool(_CONTEXT_OVERFLOW.search(message))


def _one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters (server error bodies can be pages long)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def retry_after(headers: Any, cap: float) -> float | None:
    """Seconds a 429/503 asks to wait (``retry-after-ms``, ``Retry-After`` seconds or HTTP date)."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    raw = headers.get("retry-after")
    seconds: float | None = None
    try:
        if raw_ms is not None:
            seconds = float(raw_ms) / 1000.0
        elif raw is not None:
            seconds = float(raw)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(raw) if raw else None
        if parsed is not None:
            seconds = parsed.timestamp() - time.time()
    if seconds is None or math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), cap)


@dataclass
class RetryPolicy:
    """How one request is retried (see the module notes); the policy of one judge, shared by its threads.

    Attributes
    ----------
    max_retries, malformed_retries : int
        Retries per request (at most ``max_retries + 1`` requests), of which at most ``malformed_retries``
        for a 200 whose body is not JSON.
    base_delay, max_delay, max_total_wait, retry_after_cap : float
        Backoff :math:`d_0` and :math:`d_{max}`, backoff seconds per request in all, longest ``Retry-After`` honoured.
    rng : random.Random
        Source of the jitter (inject a seeded one in tests).
    sleep : callable, optional
        Called with each backoff delay (default: wait, waking up early when the batch is aborted).
    stats : _BackendStats
        What the policy did.
    """

    max_retries: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_total_wait: float = 300.0
    retry_after_cap: float = 60.0
    malformed_retries: int = 2
    rng: random.Random = field(default_factory=random.Random)
    sleep: Callable[[float], None] | None = None
    stats: _BackendStats = field(default_factory=_BackendStats)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.malformed_retries < 0:
            raise ValueError("max_retries and malformed_retries must be >= 0")
        if min(self.base_delay, self.max_delay, self.max_total_wait, self.retry_after_cap) < 0:
            raise ValueError("base_delay, max_delay, max_total_wait and retry_after_cap must be >= 0")

    def backoff(self, retry_index: int) -> float:
        """Full jitter: :math:`U(0, \\min(d_{max}, d_0 2^n))` for the n-th retry (n from 0)."""
        ceiling = min(self.max_delay, self.base_delay * (2.0 ** min(retry_index, 62)))
        with self.lock:
            return self.rng.uniform(0.0, ceiling)

    def run(self, call: Callable[[], T], classify: Callable[[Exception], tuple[str, bool, float | None]],
            unreadable: Callable[[str], T], where: str, endpoint: str, abort: threading.Event,
            secrets: Sequence[str] = ()) -> T:
        """``call()`` under the policy (see the module notes).

        Parameters
        ----------
        call : callable
            One attempt.
        classify : callable
            ``exception -> (reason, retryable, retry_after)``; it re-raises what is no request failure.
        unreadable : callable
            ``detail -> result`` for a request recorded as invalid (unreadable, or longer than the context).
        where, endpoint : str
            What is asked and of whom, for the messages.
        abort : threading.Event
            Set when the batch stops: the next attempt raises :class:`_Aborted`.
        secrets : sequence of str
            Redacted from every message.
        """
        attempts = 0
        malformed = 0
        waited = 0.0
        while True:
            if abort.is_set():
                raise _Aborted()
            attempts += 1
            with self.lock:
                self.stats.requests += 1
            try:
                return call()
            except Exception as exc:  # noqa: BLE001 - classified below, the rest re-raised
                reason, retryable, wait_for = classify(exc)
                detail = _one_line(redact(f"{type(exc).__name__}: {exc}", secrets))
            if not retryable and _is_context_overflow(reason, detail):
                with self.lock:
                    self.stats.too_long += 1
                log.warning("%s: %s is longer than the model's context (HTTP %s); recorded as invalid",
                            endpoint, where, reason)
                return unreadable(f"prompt longer than the context (HTTP {reason} from the server)")
            if not retryable:
                with self.lock:
                    self.stats.rejected += 1
                raise BackendRejected(
                    f"{endpoint} refused {where} with HTTP {reason}; not retried (a 4xx other than 429 "
                    f"would fail again). {detail}.{_HINTS.get(reason, '')}", status=int(reason)) from None
            if reason == "unparseable":
                malformed += 1
                if malformed > self.malformed_retries or attempts > self.max_retries:
                    with self.lock:
                        self.stats.unreadable += 1
                    log.warning("%s: %s stayed unreadable after %d attempts (%s); recorded as invalid",
                                endpoint, where, attempts, detail)
                    return unreadable("the response stayed unreadable")
            exhausted = attempts > self.max_retries
            delay = 0.0 if exhausted else wait_for if wait_for is not None else self.backoff(attempts - 1)
            if exhausted or waited + delay > self.max_total_wait:
                with self.lock:
                    self.stats.exhausted += 1
                why = ("retries exhausted" if exhausted else
                       f"the next wait ({delay:.1f} s) would pass max_total_wait ({self.max_total_wait:g} s)")
                status = {"timeout": "timeout", "connection": "connection error"}.get(reason, f"HTTP {reason}")
                raise BackendUnavailable(
                    f"{endpoint} unavailable: gave up on {where} after {attempts} attempts and {waited:.1f} s of "
                    f"backoff ({why}); last status: {status} ({detail}). Nothing is lost: pairs already in the "
                    "cache are kept and rerunning the same command resumes from there.",
                    attempts=attempts, last_status=reason) from None
            with self.lock:
                self.stats.retries += 1
                self.stats.retried[reason] += 1
                self.stats.delays.append(delay)
            waited += delay
            log.info("%s: %s failed (%s); retry %d/%d in %.2f s", endpoint, where, detail, attempts,
                     self.max_retries, delay)
            if self.sleep is not None:
                self.sleep(delay)
            else:
                abort.wait(delay)


def map_batch(items: Sequence[Any], one: Callable[[Any, str, threading.Event], T], where: Sequence[str],
              workers: int, name: str = "tef-batch") -> list[T]:
    """``one(item, where, abort)`` for every item, at most ``workers`` at once; results in item order.

    The batch stops at its first error: queued items are cancelled, running ones see ``abort`` set (a
    retrying call gives up at its next attempt, :class:`_Aborted`), and the first real error in item
    order is raised once all have stopped. Ctrl-C returns at once without waiting for calls in flight.
    """
    if workers < 1:
        raise ValueError(f"max_concurrency must be >= 1, got {workers}")
    requests, n = list(items), len(items)
    if n == 0:
        return []
    abort = threading.Event()
    if workers == 1 or n == 1:
        return [one(r, w, abort) for r, w in zip(requests, where)]
    pool = ThreadPoolExecutor(max_workers=min(workers, n), thread_name_prefix=name)
    try:
        futures = [pool.submit(one, r, w, abort) for r, w in zip(requests, where)]
        wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in futures if f.done() and not f.cancelled() and f.exception() is not None]
        if failed:
            abort.set()
            for f in futures:
                f.cancel()
            wait(futures)
            errors = [f.exception() for f in futures if f.done() and not f.cancelled()]
            real = [e for e in errors if e is not None and not isinstance(e, _Aborted)]
            raise real[0] if real else BackendError("scoring aborted")
        results = [f.result() for f in futures]
    except BaseException as exc:
        interrupted = not isinstance(exc, Exception)  # Ctrl-C: do not wait for requests in flight
        if interrupted:
            abort.set()
        pool.shutdown(wait=not interrupted, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results
