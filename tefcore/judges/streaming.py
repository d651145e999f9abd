"""Time to first token of an OpenAI-compatible endpoint, measured on the client (protocol §7, Efficiency): the
judge's own scoring request (:class:`~tefcore.judges.openai.OpenAIBackend`) sent with ``stream=True`` and
``stream_options={"include_usage": True}`` under its retry policy, timed until the first chunk with answer text."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tefcore.judges.base import INVALID, Score, ScoreRequest
from tefcore.judges.labels import score_token_logprobs
from tefcore.judges.openai import OpenAIBackend, _get, read_first_position

__all__ = ["StreamTiming", "measure_streaming", "measure_ttft"]


@dataclass(frozen=True)
class StreamTiming:
    """One streamed request, timed on the client.

    Attributes
    ----------
    ttft : float
        Seconds from sending the request to the first chunk carrying answer text (NaN if none came).
    total : float
        Seconds until the stream ended.
    prompt_tokens, completion_tokens : int or None
        Token usage when the server reports it (``stream_options={"include_usage": True}``).
    text : str
        The streamed answer.
    score : Score
        The answer read from the streamed log-probabilities, as :meth:`OpenAIBackend.score` would.
    """

    ttft: float
    total: float
    prompt_tokens: int | None
    completion_tokens: int | None
    text: str
    score: Score


def measure_streaming(backend: OpenAIBackend, requests: Sequence[ScoreRequest], *,
                      max_concurrency: int = 1) -> list[StreamTiming]:
    """Send each of a judge's requests streamed and time it on the client.

    Parameters
    ----------
    backend : OpenAIBackend
        The judge whose endpoint, request and retry policy are timed.
    requests : sequence of ScoreRequest
    max_concurrency : int, default 1
        Streams in flight at once; one by default, so that a time to first token is the endpoint's
        latency, not queueing (``llama_cpp.server`` even interrupts a stream when a request arrives).

    Returns
    -------
    list of StreamTiming
        One per request, in order (an unreadable answer: NaN times and an invalid score).
    """
    return backend._map(requests, lambda req: _stream_one(backend, req), lambda detail: StreamTiming(
        math.nan, math.nan, None, None, "", replace(INVALID, detail=detail)), max_concurrency)


def measure_ttft(backend: OpenAIBackend, requests: Sequence[ScoreRequest], *,
                 max_concurrency: int = 1) -> list[float]:
    """Client-side time to first token, in seconds, per request (see :func:`measure_streaming`)."""
    return [t.ttft for t in measure_streaming(backend, requests, max_concurrency=max_concurrency)]


def _stream_one(backend: OpenAIBackend, req: ScoreRequest) -> StreamTiming:
    """One streamed attempt, timed on the client."""
    t0 = time.perf_counter()
    stream = backend._client.chat.completions.create(
        **backend._params(req), stream=True, stream_options={"include_usage": True})
    ttft = first_any = math.nan  # the first chunk with answer text, the first chunk with any choice
    text: list[str] = []
    entries: list[tuple[str, float]] = []
    usage: Any = None
    with stream:
        for chunk in stream:
            now = time.perf_counter() - t0
            usage = _get(chunk, "usage") or usage
            for choice in _get(chunk, "choices") or ():
                if math.isnan(first_any):
                    first_any = now
                part_entries, part = read_first_position(choice)
                if part and math.isnan(ttft):
                    ttft = now
                if part:
                    text.append(part)
                if part_entries and not entries:
                    entries = part_entries
    total = time.perf_counter() - t0
    answer = "".join(text)
    return StreamTiming(ttft if not math.isnan(ttft) else first_any, total, _get(usage, "prompt_tokens"),
                        _get(usage, "completion_tokens"), answer,
                        score_token_logprobs(entries, answer or None, reading=backend.reading, letters=req.letters))
