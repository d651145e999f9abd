"""The GPU judge: offline vLLM (``vllm.LLM``), greedy, one output token, first-position log-probabilities.

Settings follow protocol §8 (``max_model_len=4096``, greedy, ``seed=0``; tensor parallelism per model).
Each prompt is rendered with the model's chat template as one user turn with the generation prompt
(:class:`tefcore.judges.local.ChatTemplate` on the tokenizer's template: the same rendering code as
the local backend: a default system turn that a template inserts, e.g. Qwen2.5's "You are Qwen...", is
kept, as in the reference release; ``keep_default_system=False`` removes it). The rendered text is tokenised
without extra special tokens (the template already holds BOS) and sent as token ids, so no second BOS
is added.

Reading the answer: when the installed vLLM has ``SamplingParams.logprob_token_ids``, the exact
log-probabilities of every label token (all ids that decode to C or S) are requested; otherwise the
top-k (``top_logprobs``, 20 by default, vLLM's ``max_logprobs`` cap) and the variants present are summed.
Both routes end in :func:`tefcore.judges.labels.score_token_logprobs`, the code shared with the CPU
backend.

Prefix caching stays on: the protocol's prompts start with the instruction of their dimension, so the
prompts of one (language, dimension) share their prefix; the extraction loop sends them together.

vLLM is imported lazily (inside the constructor): it is a CUDA-only optional extra
(``pip install 'tefcore[vllm]'`` on a GPU box) and never needed to import :mod:`tefcore`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tefcore.judges.base import Score, ScoreRequest
from tefcore.judges.labels import READINGS, label_token_ids, score_token_logprobs
from tefcore.judges.local import ChatTemplate

if TYPE_CHECKING:  # pragma: no cover
    from tefcore.mind.load import EvaluationPair

log = logging.getLogger(__name__)

EXACT_MODES: tuple[str, ...] = ("auto", "always", "never")


class MissingVLLM(ImportError):
    """vLLM is not installed (or cannot start here)."""


def _import_vllm() -> Any:
    try:
        import vllm
    except ImportError as exc:
        raise MissingVLLM("the vllm backend needs vLLM on a CUDA machine: pip install 'tefcore[vllm]'; "
                          "on a CPU-only machine use --model local or an OpenAI-compatible server "
                          "(--model vllm-serve)") from exc
    return vllm


def supports_label_ids(sampling_params_cls: Any) -> bool:
    """True when ``SamplingParams`` has a ``logprob_token_ids`` field (msgspec, dataclass or signature)."""
    fields: set[str] = set(getattr(sampling_params_cls, "__struct_fields__", ()))
    if dataclasses.is_dataclass(sampling_params_cls):
        fields |= {f.name for f in dataclasses.fields(sampling_params_cls)}
    try:
        fields |= set(inspect.signature(sampling_params_cls).parameters)
    except (TypeError, ValueError):
        pass
    return "logprob_token_ids" in fields


class VLLMBackend:
    """Score prompts with an offline ``vllm.LLM`` (see the module notes).

    Parameters
    ----------
    model : str
        A Hugging Face id or a local model directory.
    tensor_parallel_size : int
        GPUs per model (Qwen3-14B: 2 in the paper's set-up).
    max_model_len : int
        Context length (4096 in the paper).
    seed : int
        Engine and sampling seed (0 in the paper; greedy decoding does not depend on it).
    top_logprobs : int
        k of the top-k route (protocol §5: 20).
    exact_labels : {"auto", "always", "never"}
        Use ``logprob_token_ids`` when available (``"auto"``), require it, or never use it.
    reading : {"summed", "reference"}
        How P(change) is read (:mod:`tefcore.judges.labels`).
    keep_default_system : bool
        Keep a default system turn inserted by the chat template (default, the reference rendering);
        ``False`` removes it.
    chat_template_kwargs : mapping, optional
        Extra template variables, e.g. ``{"enable_thinking": False}`` for Qwen3.
    gpu_memory_utilization : float
        Passed to ``vllm.LLM``.
    max_logprobs : int
        vLLM's cap on returned log-probabilities (must cover every label id in exact mode).
    name : str, optional
        Judge name (default: the model's last path component).
    **engine_kwargs
        Any other ``vllm.LLM`` argument (``dtype``, ``quantization``, ``trust_remote_code``, ...).
    """

    preferred_batch_size = 4096

    def __init__(self, model: str, *, tensor_parallel_size: int = 1, max_model_len: int = 4096,
                 seed: int = 0, top_logprobs: int = 20, exact_labels: str = "auto",
                 reading: str = "summed", keep_default_system: bool = True,
                 chat_template_kwargs: Mapping[str, Any] | None = None,
                 gpu_memory_utilization: float = 0.9, max_logprobs: int = 64, name: str | None = None,
                 **engine_kwargs: Any) -> None:
        self._check_options(model, reading, exact_labels, top_logprobs, max_logprobs)
        self.model, self.reading, self.seed = model, reading, seed
        self.name = name or model.rstrip("/").rsplit("/", 1)[-1]
        self.top_logprobs, self.exact_labels = top_logprobs, exact_labels
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.engine_options = {"tensor_parallel_size": tensor_parallel_size, "max_model_len": max_model_len,
                               "seed": seed, "gpu_memory_utilization": gpu_memory_utilization,
                               "enable_prefix_caching": True, "max_logprobs": max_logprobs, **engine_kwargs}
        vllm = _import_vllm()
        self._vllm_version = str(getattr(vllm, "__version__", "unknown"))
        self._llm = vllm.LLM(model=model, **self.engine_options)
        self._tokenizer = self._llm.get_tokenizer()
        self._pieces = self._decode_vocabulary()
        self.labels = label_token_ids(self._pieces.__getitem__, len(self._pieces))
        self.chat = self._chat_template(keep_default_system)
        self.exact = self._use_exact(vllm.SamplingParams, max_logprobs)
        self._params = self._sampling_params(vllm.SamplingParams)

    @staticmethod
    def _check_options(model: str, reading: str, exact: str, top_logprobs: int, max_logprobs: int) -> None:
        if not model:
            raise ValueError("model must be a Hugging Face id or a model directory")
        if reading not in READINGS:
            raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
        if exact not in EXACT_MODES:
            raise ValueError(f"exact_labels must be one of {EXACT_MODES}, got {exact!r}")
        if not 1 <= top_logprobs <= max_logprobs:
            raise ValueError(f"top_logprobs must lie in [1, max_logprobs={max_logprobs}], got {top_logprobs}")

    # -- set-up --------------------------------------------------------------------------------
    def _decode_vocabulary(self) -> list[str]:
        """Decoded text of every token id, each alone (the same table for labels and parsing)."""
        size = len(self._tokenizer)
        return list(self._tokenizer.batch_decode([[i] for i in range(size)]))

    def _chat_template(self, keep_default_system: bool) -> ChatTemplate:
        source = getattr(self._tokenizer, "chat_template", None)
        if not source:
            raise ValueError(f"{self.model} has no chat template")
        return ChatTemplate(source, getattr(self._tokenizer, "bos_token", None) or "",
                            getattr(self._tokenizer, "eos_token", None) or "", keep_default_system,
                            self.chat_template_kwargs)

    def _use_exact(self, sampling_params_cls: Any, max_logprobs: int) -> bool:
        available = supports_label_ids(sampling_params_cls)
        if self.exact_labels == "always" and not available:
            raise ValueError("exact_labels='always' but this vLLM has no SamplingParams.logprob_token_ids")
        exact = available and self.exact_labels != "never"
        n_ids = sum(len(v) for v in self.labels.values())
        if exact and n_ids > max_logprobs:
            raise ValueError(f"{n_ids} label tokens exceed max_logprobs={max_logprobs}; raise max_logprobs")
        return exact

    def _label_ids(self) -> list[int]:
        return sorted(self.labels["C"] + self.labels["S"])

    def _sampling_params(self, sampling_params_cls: Any) -> Any:
        """Greedy, one token, seeded; exact label ids or the top-k."""
        options: dict[str, Any] = {"temperature": 0.0, "max_tokens": 1, "seed": self.seed}
        if self.exact:
            ids = self._label_ids()
            options.update(logprobs=len(ids), logprob_token_ids=ids)
        else:
            options["logprobs"] = self.top_logprobs
        return sampling_params_cls(**options)

    # -- the protocol --------------------------------------------------------------------------
    def provenance(self) -> dict[str, Any]:
        """Backend, model, vLLM version, sampling, template and reading options."""
        return {
            "backend": "vllm", "model": self.model, "vllm": self._vllm_version,
            "engine": {k: v for k, v in self.engine_options.items() if k != "gpu_memory_utilization"},
            "chat_template_sha256": hashlib.sha256(self.chat.source.encode("utf-8")).hexdigest(),
            "chat_template_kwargs": self.chat_template_kwargs,
            "system_prompt": self.chat.system_prompt,
            "label_read": "exact label ids" if self.exact else f"top-{self.top_logprobs}",
            "reading": self.reading, "label_tokens": {k: len(v) for k, v in self.labels.items()},
        }

    def prepare(self, pairs: Sequence[EvaluationPair]) -> None:
        """Nothing to fit for an LLM judge."""

    def render(self, prompt: str) -> list[int]:
        """Token ids of one prompt as the model sees it (chat template, no extra special tokens)."""
        text = self.chat.render(prompt)
        return list(self._tokenizer.encode(text, add_special_tokens=False))

    def score(self, requests: Sequence[ScoreRequest]) -> list[Score]:
        """Score every request in one ``LLM.generate`` call (order preserved)."""
        if not requests:
            return []
        prompts = [{"prompt_token_ids": self.render(r.prompt)} for r in requests]
        outputs = self._llm.generate(prompts, self._params, use_tqdm=False)
        if len(outputs) != len(requests):
            raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(requests)} prompts")
        return [self.read_output(output) for output in outputs]

    def read_output(self, output: Any) -> Score:
        """Score one ``RequestOutput``: its first completion's first-position log-probabilities."""
        completion = output.outputs[0] if getattr(output, "outputs", None) else None
        generated = getattr(completion, "text", None)
        positions = getattr(completion, "logprobs", None) or []
        first: Mapping[int, Any] = positions[0] if positions else {}
        entries = sorted(((self._text(tid, lp), float(lp.logprob)) for tid, lp in first.items()),
                         key=lambda e: -e[1])
        return score_token_logprobs(entries, generated, reading=self.reading)

    def _text(self, token_id: int, logprob: Any) -> str:
        """Our decoding of the id (as for the label scan); vLLM's ``decoded_token`` for unknown ids."""
        if 0 <= token_id < len(self._pieces):
            return self._pieces[token_id]
        return getattr(logprob, "decoded_token", None) or ""
