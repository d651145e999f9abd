"""The openai backend under injected API faults (issue 5, "Faulty APIs").

A scripted fault server (:mod:`fault_server`) answers 429 (with and without ``Retry-After``), 500, 503,
connection resets, timeouts, malformed and truncated bodies, answers without log-probabilities or
without either letter, 400/401, and correct answers in between. The tests count on the server side what
was sent and check that only retryable faults are retried, that backoff respects ``Retry-After`` and its
bounds, that results keep their order, that unreadable answers are recorded as such, that exhaustion is
one clear error, and that an extraction stopped by exhausted retries resumes with no pair lost or
duplicated. The figures of every test add up in :data:`FIGURES`, printed by the last test.
"""

from __future__ import annotations

import math
import os
import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from fault_server import MASS, FaultServer, expected_p, make_requests, marker
from sigint import default_sigint
from tefcore.mind import mind_task
from tefcore.judges.base import Backend, Score
from tefcore.judges.openai import OpenAIBackend
from tefcore.judges.streaming import measure_streaming, measure_ttft
from tefcore.retry import BackendRejected, BackendUnavailable

KEY_ENV = "TEF_FAULT_TEST_API_KEY"
CLIENT_TIMEOUT = 0.5
FIGURES: dict[str, Any] = {"requests": 0, "faults": Counter(), "retries": 0, "pairs": 0, "pairs_lost": 0,
                           "invalid_recorded": 0}


def fast_sleep(delay: float) -> None:
    """Backoff delays are recorded by the backend; sleep only a token amount so the suite stays fast."""
    time.sleep(min(delay, 0.02))


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "fault-test-key-0123456789abcdef")


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer(hang=2 * CLIENT_TIMEOUT) as fs:
        yield fs


def make_backend(server: FaultServer, **kw: Any) -> OpenAIBackend:
    opts: dict[str, Any] = dict(
        model="fault-model", base_url=server.base_url, api_key_env=KEY_ENV, top_logprobs=5,
        max_concurrency=4, timeout=CLIENT_TIMEOUT, max_retries=4, base_delay=0.01, max_delay=0.05,
        retry_after_cap=5.0, rng=random.Random(1234), sleep=fast_sleep)
    opts.update(kw)
    return OpenAIBackend(**opts)


def record(server: FaultServer, backend: OpenAIBackend, n_pairs: int, scores: list[Score] | None) -> None:
    """Add one test's figures to :data:`FIGURES` (pairs lost: requests without a score in a result)."""
    FIGURES["requests"] += server.n_requests
    FIGURES["faults"].update(server.faults())
    FIGURES["retries"] += backend.stats.retries
    if scores is not None:
        FIGURES["pairs"] += n_pairs
        FIGURES["pairs_lost"] += n_pairs - len(scores)
        FIGURES["invalid_recorded"] += sum(not s.valid for s in scores)


def assert_ok(score: Score, prompt: str) -> None:
    assert score.source == "logprobs"
    assert score.p_change == pytest.approx(expected_p(prompt), abs=1e-9)
    assert score.mass == pytest.approx(MASS, abs=1e-9)


# -- healthy endpoint -------------------------------------------------------------------------------

def test_healthy_endpoint_scores_in_order(server: FaultServer) -> None:
    reqs = make_requests(24, "h")
    backend = make_backend(server, max_concurrency=6)
    assert isinstance(backend, Backend) and backend.prepare([]) is None
    scores = backend.score(reqs)
    assert len(scores) == 24
    for s, r in zip(scores, reqs):
        assert_ok(s, r.prompt)
    assert server.n_requests == 24 and backend.stats.retries == 0
    assert all(rec.body["max_tokens"] == 1 and rec.body["temperature"] == 0 and rec.body["logprobs"] is True
               and rec.body["top_logprobs"] == 5 for rec in server.records)
    record(server, backend, 24, scores)


def test_request_carries_seed_and_single_user_message(server: FaultServer) -> None:
    backend = make_backend(server, seed=7, max_concurrency=1)
    (req,) = make_requests(1, "seed")
    backend.score([req])
    body = server.records[0].body
    assert body["seed"] == 7 and body["model"] == "fault-model"
    assert body["messages"] == [{"role": "user", "content": req.prompt}]
    record(server, backend, 1, None)


# -- retryable faults -------------------------------------------------------------------------------

RETRYABLE_PLAN: dict[int, list[str]] = {
    0: ["429", "ok"],
    1: ["429:2", "ok"],
    2: ["500", "ok"],
    3: ["503", "503", "ok"],
    4: ["reset", "ok"],
    5: ["timeout", "ok"],
    6: ["short-body", "ok"],
    7: ["truncated", "ok"],
    8: ["malformed", "ok"],
    9: ["429", "500", "reset", "ok"],
}


def test_retryable_faults_are_retried_and_order_is_kept(server: FaultServer) -> None:
    n = 30
    reqs = make_requests(n, "r")
    server.script(plan={marker("r", i): acts for i, acts in RETRYABLE_PLAN.items()})
    backend = make_backend(server, max_concurrency=4)
    t0 = time.monotonic()
    scores = backend.score(reqs)
    elapsed = time.monotonic() - t0
    assert len(scores) == n
    for s, r in zip(scores, reqs):  # every request ends with its own correct answer, in order
        assert_ok(s, r.prompt)
    # exactly one request per scripted action: each fault retried once, nothing retried needlessly
    for i in range(n):
        assert server.attempts_of(marker("r", i)) == len(RETRYABLE_PLAN.get(i, ["ok"])), i
    n_faults = sum(len(a) - 1 for a in RETRYABLE_PLAN.values())
    assert server.n_requests == n + n_faults
    assert backend.stats.retries == n_faults
    assert backend.stats.retried == Counter({"429": 3, "500": 2, "503": 2, "connection": 3, "timeout": 1,
                                             "unparseable": 2})
    # Retry-After: 2 honoured exactly; every other delay within the jitter ceiling
    delays = backend.stats.delays
    assert delays.count(2.0) == 1
    assert all(0.0 <= d <= 0.05 for d in delays if d != 2.0)
    assert elapsed < 10
    record(server, backend, n, scores)


def test_retry_after_is_capped(server: FaultServer) -> None:
    (req,) = make_requests(1, "cap")
    server.script(plan={marker("cap", 0): ["429:3600", "429", "ok"]})
    backend = make_backend(server, retry_after_cap=0.3, max_concurrency=1)
    t0 = time.monotonic()
    (score,) = backend.score([req])
    assert_ok(score, req.prompt)
    assert backend.stats.delays[0] == pytest.approx(0.3)  # 3600 s asked, capped
    assert 0 <= backend.stats.delays[1] <= 0.02  # no Retry-After: jitter, n=1 ceiling = 0.01 * 2
    assert time.monotonic() - t0 < 2
    record(server, backend, 1, [score])


def test_backoff_is_full_jitter_within_exponential_ceiling(server: FaultServer) -> None:
    backend = make_backend(server, base_delay=0.1, max_delay=1.0, rng=random.Random(42))
    draws = {n: [backend.policy.backoff(n) for _ in range(400)] for n in range(6)}
    for n, ds in draws.items():
        ceiling = min(1.0, 0.1 * 2**n)
        assert all(0.0 <= d <= ceiling for d in ds)
        assert max(ds) > 0.9 * ceiling and min(ds) < 0.1 * ceiling  # spread over the whole range
    again = make_backend(server, base_delay=0.1, max_delay=1.0, rng=random.Random(42))
    assert [again.policy.backoff(n) for n in range(6) for _ in range(400)] == [d for n in range(6) for d in draws[n]]


# -- unreadable answers are recorded, not voted ------------------------------------------------------

def test_unreadable_answers_are_recorded_not_retried(server: FaultServer) -> None:
    reqs = make_requests(8, "u")
    plan = {marker("u", 1): ["no-logprobs"], marker("u", 3): ["empty-content"], marker("u", 5): ["neither"]}
    server.script(plan=plan)
    backend = make_backend(server)
    scores = backend.score(reqs)
    for i, (s, r) in enumerate(zip(scores, reqs)):
        if i in (1, 3, 5):
            assert s.source == "invalid" and math.isnan(s.p_change), (i, s)
        else:
            assert_ok(s, r.prompt)
    assert server.n_requests == 8 and backend.stats.retries == 0  # an answer is not a fault to retry
    record(server, backend, 8, scores)


def test_reference_reading_falls_back_to_generated_text(server: FaultServer) -> None:
    reqs = make_requests(3, "g")
    server.script(plan={marker("g", 0): ["no-logprobs"], marker("g", 1): ["neither"]})
    backend = make_backend(server, reading="reference", max_concurrency=1)
    scores = backend.score(reqs)
    assert scores[0].source == "generated_text" and scores[0].p_change == 1.0  # the text said "C"
    assert scores[1].source == "invalid" and math.isnan(scores[1].p_change)  # the text said "The"
    assert scores[2].source == "logprobs"
    record(server, backend, 3, scores)


def test_body_that_stays_unparseable_is_recorded_invalid(server: FaultServer) -> None:
    reqs = make_requests(5, "m")
    server.script(plan={marker("m", 2): ["malformed", "truncated", "malformed", "ok"]})
    backend = make_backend(server, malformed_retries=2)
    scores = backend.score(reqs)
    assert scores[2].source == "invalid" and math.isnan(scores[2].p_change)
    assert server.attempts_of(marker("m", 2)) == 3  # first try + malformed_retries, never the 4th
    for i in (0, 1, 3, 4):
        assert_ok(scores[i], reqs[i].prompt)
    assert backend.stats.unreadable == 1 and backend.stats.retried["unparseable"] == 2
    record(server, backend, 5, scores)


# -- non-retryable and exhausted ---------------------------------------------------------------------

@pytest.mark.parametrize("status", ["400", "401"])
def test_client_errors_are_not_retried(server: FaultServer, status: str) -> None:
    reqs = make_requests(3, "c" + status)
    server.script(plan={marker("c" + status, 1): [status, "ok"]})
    backend = make_backend(server, max_concurrency=1)
    with pytest.raises(BackendRejected) as err:
        backend.score(reqs)
    assert err.value.status == int(status)
    assert server.attempts_of(marker("c" + status, 1)) == 1
    assert backend.stats.retries == 0
    msg = str(err.value)
    assert f"HTTP {status}" in msg and "not retried" in msg and "\n" not in msg
    record(server, backend, 3, None)


def test_exhaustion_is_one_clear_error(server: FaultServer) -> None:
    server.script(default="503")
    (req,) = make_requests(1, "x")
    backend = make_backend(server, max_retries=3, max_concurrency=1)
    with pytest.raises(BackendUnavailable) as err:
        backend.score([req])
    msg = str(err.value)
    assert server.n_requests == 4 == err.value.attempts  # 1 + max_retries
    assert err.value.last_status == "503"
    assert "4 attempts" in msg and "HTTP 503" in msg and "resumes" in msg and "\n" not in msg
    assert isinstance(err.value, RuntimeError)
    record(server, backend, 1, None)


def test_exhaustion_under_concurrency_stops_the_batch(server: FaultServer) -> None:
    server.script(default="500")
    reqs = make_requests(40, "xc")
    backend = make_backend(server, max_retries=2, max_concurrency=4)
    with pytest.raises(BackendUnavailable):
        backend.score(reqs)
    # the batch is aborted: queued requests are never sent
    assert server.n_requests <= 4 * 3 + 4
    record(server, backend, 40, None)


def test_total_wait_is_bounded(server: FaultServer) -> None:
    server.script(default="429:30")
    (req,) = make_requests(1, "w")
    backend = make_backend(server, retry_after_cap=60.0, max_total_wait=1.0, max_concurrency=1,
                           sleep=None)
    t0 = time.monotonic()
    with pytest.raises(BackendUnavailable) as err:
        backend.score([req])
    assert time.monotonic() - t0 < 1.5  # gave up instead of sleeping 30 s
    assert "max_total_wait" in str(err.value) and err.value.last_status == "429"
    record(server, backend, 1, None)


def test_connection_refused_is_retried_then_exhausted() -> None:
    fs = FaultServer().start()
    base_url = fs.base_url
    fs.stop()  # nothing listens on that port any more
    backend = OpenAIBackend("m", base_url, KEY_ENV, max_retries=2, timeout=CLIENT_TIMEOUT, base_delay=0.01,
                            max_delay=0.02, rng=random.Random(0), max_concurrency=1)
    with pytest.raises(BackendUnavailable) as err:
        backend.score(make_requests(1, "refused"))
    assert err.value.attempts == 3 and err.value.last_status == "connection"
    assert backend.stats.retried == Counter({"connection": 2})


def test_ctrl_c_does_not_wait_for_requests_in_flight(server: FaultServer) -> None:
    server.hang = 5.0
    server.script(default="timeout")
    backend = make_backend(server, timeout=10.0, max_concurrency=2)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))  # a real Ctrl-C
    t0 = time.monotonic()
    with default_sigint():  # the suite may run with SIGINT ignored (a background job)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            backend.score(make_requests(4, "ctrl-c"))
    assert time.monotonic() - t0 < 2.0  # not the 5 s the server hangs
    timer.cancel()
    record(server, backend, 4, None)


# -- streaming -----------------------------------------------------------------------------------------

def test_measure_ttft_streams_and_reports_usage(server: FaultServer) -> None:
    server.first_chunk_delay = 0.1
    reqs = make_requests(4, "t")
    server.script(plan={marker("t", 2): ["503", "ok"]})
    backend = make_backend(server, max_concurrency=2)
    timings = measure_streaming(backend, reqs, max_concurrency=2)
    for t, r in zip(timings, reqs):
        assert 0.1 <= t.ttft <= t.total < 2
        assert (t.prompt_tokens, t.completion_tokens) == (7, 1)
        assert_ok(t.score, r.prompt)
    assert all(rec.body["stream"] is True and rec.body["stream_options"] == {"include_usage": True}
               for rec in server.records)
    assert backend.stats.retried == Counter({"503": 1})
    ttft = measure_ttft(backend, reqs[:2])
    assert len(ttft) == 2 and all(0.1 <= x < 2 for x in ttft)
    record(server, backend, 4, [t.score for t in timings])


# -- extraction end to end: exhausted midway, resumed, nothing lost or doubled -------------------------

def test_extraction_resumes_after_exhaustion(server: FaultServer, tmp_path: Any) -> None:
    extract = pytest.importorskip("tefcore.extraction.run", reason="tefcore.extraction.run not written yet")
    if not hasattr(extract, "run_extraction"):
        pytest.skip("tefcore.extraction.run.run_extraction not available")
    from fault_server import cache_pairs, run_openai_extraction, synthetic_mind

    data_dir = synthetic_mind(tmp_path / "mind", n_posts=6)
    out = tmp_path / "out"
    # first run: healthy for a while, then the endpoint goes down for good
    server.script(sequence=["ok"] * 25 + ["503", "429", "500"], default="503")
    backend = make_backend(server, max_retries=3, max_concurrency=2)
    with pytest.raises(BackendUnavailable):
        run_openai_extraction(backend, data_dir, out)
    first_requests, first_backend = server.n_requests, backend
    partial = cache_pairs(out)
    assert 0 < len(partial) < 6 and len(partial) == len(set(partial))
    # second run: the endpoint is healthy again (with a few transient faults)
    server.script(sequence=["429", "ok", "reset", "ok", "500"], default="ok")
    backend = make_backend(server, max_retries=3, max_concurrency=2)
    run_openai_extraction(backend, data_dir, out)
    pairs = cache_pairs(out)
    assert sorted(pairs) == sorted(set(pairs)) and len(pairs) == 6  # every pair exactly once
    # and with the values an uninterrupted healthy run gives (each a function of its prompt)
    from tefcore.extraction.cache import read_cache
    from tefcore.mind.load import evaluation_pairs, load_posts

    frame, _ = read_cache(out)
    rows = {(r.post_id, r.dimension): r for r in frame.itertuples()}
    for pair in evaluation_pairs(load_posts("en", data_dir)):
        reqs = extract.build_requests(pair, mind_task("original"), "reference")
        row = rows[(pair.post_id, pair.dimension)]
        assert row.direct == pytest.approx(expected_p(reqs[0].prompt), abs=1e-12)
        assert list(row.sentences) == pytest.approx([expected_p(r.prompt) for r in reqs[1:]], abs=1e-12)
        assert set(row.sentence_sources) == {"logprobs"} and row.direct_source == "logprobs"
    FIGURES["requests"] += server.n_requests
    FIGURES["faults"].update(server.faults())
    FIGURES["retries"] += first_backend.stats.retries + backend.stats.retries
    FIGURES["pairs"] += 6
    FIGURES["pairs_lost"] += 6 - len(set(pairs))
    assert first_requests < server.n_requests


# -- the figures of the closing report ------------------------------------------------------------------

def test_zz_fault_figures(capsys: pytest.CaptureFixture[str]) -> None:
    faults = FIGURES["faults"]
    assert FIGURES["pairs_lost"] == 0
    assert FIGURES["requests"] > 0 and sum(faults.values()) > 0
    kinds = ", ".join(f"{k}={v}" for k, v in sorted(faults.items()))
    line = (f"fault suite: requests sent={FIGURES['requests']}, faults injected={sum(faults.values())} "
            f"({kinds}), retries={FIGURES['retries']}, pairs={FIGURES['pairs']}, "
            f"invalid recorded={FIGURES['invalid_recorded']}, pairs lost={FIGURES['pairs_lost']}")
    with capsys.disabled():
        print("\n" + line)
