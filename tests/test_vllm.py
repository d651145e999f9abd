"""The vLLM backend without a GPU: a stand-in ``vllm`` module with vLLM's documented shapes.

vLLM is CUDA-only and cannot be installed here. What is tested: the engine and sampling options, the
prompt rendering (chat template, no system message, Qwen3's ``enable_thinking``), the parsing of
``RequestOutput -> CompletionOutput -> logprobs[0]: dict[token_id, Logprob]`` objects built here,
both label routes (``logprob_token_ids`` when the installed ``SamplingParams`` has it, else top-k),
and the message when vLLM is missing.
"""

from __future__ import annotations

import math
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import pytest

import tefcore.judges.labels as labels
from tefcore.judges.base import ScoreRequest

QWEN25_TEMPLATE = (
    "{%- if messages[0]['role'] == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if not (message.role == 'system' and loop.first) %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}"
)
VOCAB = ["<|im_start|>", "<|im_end|>", "C", " C", "S", " S", "The", "C.", "Ｓ", "x", "assistant", "\n"]


# -- vLLM's documented output shapes ----------------------------------------------------------
@dataclass
class Logprob:
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    logprobs: list[dict[int, Logprob]] | None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool = True


def output(logprobs: dict[int, float] | None, text: str = "C") -> RequestOutput:
    first = None if logprobs is None else [{i: Logprob(lp, r + 1, VOCAB[i]) for r, (i, lp) in
                                             enumerate(sorted(logprobs.items(), key=lambda e: -e[1]))}]
    return RequestOutput("0", None, [1], [CompletionOutput(0, text, [2], None, first)])


# -- the stand-in module ---------------------------------------------------------------------
class FakeTokenizer:
    chat_template = QWEN25_TEMPLATE
    bos_token = None
    eos_token = "<|im_end|>"

    def __len__(self) -> int:
        return len(VOCAB)

    def batch_decode(self, ids: list[list[int]]) -> list[str]:
        return ["".join(VOCAB[i] for i in seq) for seq in ids]

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        assert add_special_tokens is False  # the template already holds the special tokens
        return [len(text)]  # a stand-in: one id carrying the length


@dataclass
class SamplingParamsNew:
    temperature: float = 1.0
    max_tokens: int | None = 16
    seed: int | None = None
    logprobs: int | None = None
    logprob_token_ids: list[int] | None = None


@dataclass
class SamplingParamsOld:
    temperature: float = 1.0
    max_tokens: int | None = 16
    seed: int | None = None
    logprobs: int | None = None


@dataclass
class FakeLLM:
    model: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    answers: list[RequestOutput] = field(default_factory=list)
    calls: list[tuple[list[Any], Any]] = field(default_factory=list)

    def get_tokenizer(self) -> FakeTokenizer:
        return FakeTokenizer()

    def generate(self, prompts: list[Any], params: Any, use_tqdm: bool = True) -> list[RequestOutput]:
        self.calls.append((prompts, params))
        return self.answers[:len(prompts)]


def install(monkeypatch: pytest.MonkeyPatch, sampling_params: type = SamplingParamsNew) -> dict[str, FakeLLM]:
    made: dict[str, FakeLLM] = {}

    def llm(model: str, **kwargs: Any) -> FakeLLM:
        made["llm"] = FakeLLM(model, kwargs)
        return made["llm"]

    module = types.ModuleType("vllm")
    module.LLM, module.SamplingParams, module.__version__ = llm, sampling_params, "0.0-test"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)
    return made


def backend(monkeypatch: pytest.MonkeyPatch, sampling_params: type = SamplingParamsNew, **kw: Any) -> Any:
    from tefcore.judges.vllm import VLLMBackend

    made = install(monkeypatch, sampling_params)
    judge = VLLMBackend("Qwen/Qwen2.5-7B-Instruct", **kw)
    return judge, made["llm"]


REQ = ScoreRequest("Dimension: Economy. Text: hello\nAnswer C or S:", "hello", "en", "Economy", "p1", "sentence")


# -- tests -------------------------------------------------------------------------------------
def test_engine_options(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, llm = backend(monkeypatch, tensor_parallel_size=2, dtype="bfloat16")
    assert llm.model == "Qwen/Qwen2.5-7B-Instruct"
    assert llm.kwargs == {"tensor_parallel_size": 2, "max_model_len": 4096, "seed": 0,
                          "gpu_memory_utilization": 0.9, "enable_prefix_caching": True, "max_logprobs": 64,
                          "dtype": "bfloat16"}
    assert judge.name == "Qwen2.5-7B-Instruct"
    prov = judge.provenance()
    assert prov["backend"] == "vllm" and prov["vllm"] == "0.0-test" and prov["reading"] == "summed"
    assert prov["label_read"] == "exact label ids" and prov["label_tokens"] == {"C": 3, "S": 3}
    assert prov["system_prompt"] == "template default (reference rendering)"


def test_exact_label_ids_when_available(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, _ = backend(monkeypatch)
    assert judge.labels == {"C": (2, 3, 7), "S": (4, 5, 8)}
    params = judge._params
    assert (params.temperature, params.max_tokens, params.seed) == (0.0, 1, 0)
    assert params.logprob_token_ids == [2, 3, 4, 5, 7, 8] and params.logprobs == 6


def test_top_k_when_label_ids_are_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, _ = backend(monkeypatch, SamplingParamsOld, seed=3)
    assert not judge.exact and judge._params.logprobs == 20 and judge._params.seed == 3
    assert judge.provenance()["label_read"] == "top-20"
    judge, _ = backend(monkeypatch, SamplingParamsNew, exact_labels="never", top_logprobs=5)
    assert not judge.exact and judge._params.logprob_token_ids is None and judge._params.logprobs == 5
    with pytest.raises(ValueError, match="no SamplingParams.logprob_token_ids"):
        backend(monkeypatch, SamplingParamsOld, exact_labels="always")


def test_bad_options(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch)
    from tefcore.judges.vllm import VLLMBackend

    with pytest.raises(ValueError, match="reading"):
        VLLMBackend("m", reading="first")
    with pytest.raises(ValueError, match="top_logprobs"):
        VLLMBackend("m", top_logprobs=100)
    with pytest.raises(ValueError, match="exceed max_logprobs"):
        VLLMBackend("m", max_logprobs=4, top_logprobs=4)
    with pytest.raises(ValueError, match="exact_labels"):
        VLLMBackend("m", exact_labels="sometimes")


def test_rendering_keeps_the_template_default_system_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, _ = backend(monkeypatch)
    assert judge.chat.render("hi").startswith("<|im_start|>system\nYou are Qwen")
    assert judge.chat.render("hi").endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
    removed, _ = backend(monkeypatch, keep_default_system=False)
    assert removed.chat.render("hi") == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_qwen3_thinking_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, _ = backend(monkeypatch, chat_template_kwargs={"enable_thinking": False})
    assert judge.chat.render("hi").endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert judge.provenance()["chat_template_kwargs"] == {"enable_thinking": False}


def test_score_parses_request_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, llm = backend(monkeypatch)
    llm.answers = [
        output({2: math.log(0.5), 3: math.log(0.1), 4: math.log(0.2), 5: math.log(0.05), 7: -9.0, 8: -9.0}),
        output({6: math.log(0.9), 9: math.log(0.05)}, text="The"),
        output(None, text=""),
    ]
    scores = judge.score([REQ, REQ, REQ])
    prompts, params = llm.calls[0]
    rendered = judge.chat.render(REQ.prompt)
    assert prompts == [{"prompt_token_ids": [len(rendered)]}] * 3 and params is judge._params
    pc, ps = 0.6 + math.exp(-9.0), 0.25 + math.exp(-9.0)
    assert scores[0].source == "logprobs"
    assert scores[0].p_change == pytest.approx(pc / (pc + ps), abs=1e-12)
    assert scores[0].mass == pytest.approx(pc + ps, abs=1e-12)
    assert scores[1].source == "invalid" and math.isnan(scores[1].p_change)
    assert scores[2].source == "invalid"
    assert judge.score([]) == []


def test_reference_reading_uses_generated_text(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, llm = backend(monkeypatch, SamplingParamsOld, reading="reference")
    llm.answers = [output({3: math.log(0.6), 6: math.log(0.3)}, text=" C")]
    s = judge.score([REQ])[0]
    assert (s.source, s.p_change) == ("generated_text", 1.0)


def test_output_count_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, llm = backend(monkeypatch)
    llm.answers = [output({2: -0.1, 4: -2.0})]
    with pytest.raises(RuntimeError, match="1 outputs for 2 prompts"):
        judge.score([REQ, REQ])


def test_cpu_and_gpu_share_the_code_after_the_model_call(monkeypatch: pytest.MonkeyPatch) -> None:
    import tefcore.judges.local as local
    import tefcore.judges.vllm as vllm_backend

    assert vllm_backend.score_token_logprobs is labels.score_token_logprobs
    assert local.score_token_logprobs is labels.score_token_logprobs
    seen: list[tuple[list[tuple[str, float]], str | None, str]] = []

    def spy(entries: Any, generated: str | None = None, *, reading: str = "summed") -> Any:
        seen.append((list(entries), generated, reading))
        return labels.score_token_logprobs(seen[-1][0], generated, reading=reading)

    monkeypatch.setattr(vllm_backend, "score_token_logprobs", spy)
    judge, llm = backend(monkeypatch)
    llm.answers = [output({2: -0.5, 4: -1.5, 6: -3.0})]
    judge.score([REQ])
    assert seen == [([("C", -0.5), ("S", -1.5), ("The", -3.0)], "C", "summed")]


def test_missing_vllm_gives_a_helpful_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from tefcore.judges.vllm import MissingVLLM, VLLMBackend

    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    with pytest.raises(MissingVLLM, match=r"CUDA machine: pip install 'tefcore\[vllm\]'.*--model local"):
        VLLMBackend("Qwen/Qwen2.5-7B-Instruct")
    assert issubclass(MissingVLLM, ImportError)


def test_supports_label_ids_reads_fields_and_signatures() -> None:
    from tefcore.judges.vllm import supports_label_ids

    class Struct:  # msgspec.Struct exposes __struct_fields__
        __struct_fields__ = ("temperature", "logprob_token_ids")

    def signature_only(temperature: float = 1.0, logprob_token_ids: list[int] | None = None) -> None:
        return None

    assert supports_label_ids(SamplingParamsNew) and not supports_label_ids(SamplingParamsOld)
    assert supports_label_ids(Struct) and supports_label_ids(signature_only)
