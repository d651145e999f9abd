"""Caches of the paper's models made by a run of ours (``tef reproduce`` on a GPU box), scored like the paper.

When the caches of both languages exist under ``<cache_dir>/<model>/<prompt>/``, :func:`load_run` reads them
and names the run from its provenance (:func:`run_label`: weights, engine, hardware, data), and
:func:`against_paper` sets our accuracies beside the paper's printed ones, each paper number inside or
outside the sampling noise of ours (:func:`tefpaper.review.wilson_interval`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tefcore.evaluate import predict_pairs, score_table
from tefcore.extraction.cache import cache_path, read_cache
from tefcore.mind.release import FULL_RELEASE
from tefcore.mind.schema import LANGS
from tefpaper.review import wilson_interval

__all__ = ["PaperRun", "against_paper", "load_run", "run_label"]


@dataclass(frozen=True)
class PaperRun:
    """The caches of one model and prompt, both languages: rows (``read_cache``), provenance, label."""

    model: str
    prompt: str
    frame: pd.DataFrame
    provenance: dict[str, dict[str, Any]]
    label: str

    def scores(self) -> pd.DataFrame:
        """Accuracy and macro-F1 (percent) of every rule per language and dimension (:func:`tefcore.evaluate.score_table`)."""
        table = score_table(predict_pairs(self.frame))
        return table[table["dimension"] != "Average"].rename(columns={"rule": "method"})


def _text(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(str(v) for k, v in value.items() if k in ("class", "device", "name", "gpu", "cpu") and v)
    return str(value)


def run_label(provenance: Mapping[str, Any], pairs: Mapping[str, int]) -> str:
    """Name a run from its cache header: weights, engine, hardware, data.

    Examples
    --------
    >>> run_label({"model": "Qwen/Qwen2.5-7B-Instruct", "backend": "vllm", "vllm": "0.6.3",
    ...            "hardware": {"class": "GPU", "device": "NVIDIA RTX 3090"}}, {"zh": 10330, "en": 4621})
    'Qwen/Qwen2.5-7B-Instruct, vLLM 0.6.3, GPU, NVIDIA RTX 3090, full MIND release'
    """
    weights = provenance.get("model") or provenance.get("weights_file") or "unknown weights"
    engine = f"vLLM {provenance['vllm']}" if provenance.get("vllm") else _text(
        provenance.get("engine") or provenance.get("backend") or "unknown engine")
    hardware = _text(provenance.get("hardware") or "hardware not recorded")
    full = all(int(pairs.get(lang, -1)) == int(FULL_RELEASE[lang]["pairs"]) for lang in LANGS)
    data = "full MIND release" if full else "not the full release (" + ", ".join(
        f"{pairs.get(lang, 0):,} {lang} pairs" for lang in ("zh", "en")) + ")"
    return f"{weights}, {engine}, {hardware}, {data}"


def load_run(cache_dir: str | Path, model: str, prompt: str = "original") -> PaperRun | None:
    """The caches of ``model`` and ``prompt`` under ``cache_dir``, or ``None`` unless both languages hold pairs.

    The reference release's reading of the answer token (``<lang>.reading-reference.jsonl``, what
    :func:`tefpaper.ledger.reproduce_line` asks for) is read when both languages have it, else the summed
    reading (``<lang>.jsonl``).
    """
    for reading in ("reference", "summed"):
        files = {lang: cache_path(cache_dir, model, prompt, lang, reading=reading) for lang in LANGS}
        if all(f.is_file() for f in files.values()):
            break
    else:
        return None
    read = {lang: read_cache(f) for lang, f in files.items()}
    if any(frame.empty for frame, _ in read.values()):
        return None
    frame = pd.concat([f for f, _ in read.values()], ignore_index=True)
    pairs = frame.groupby("lang").size().to_dict()
    provenance = {lang: dict(p) for lang, (_, p) in read.items()}
    return PaperRun(model, prompt, frame, provenance, run_label(provenance["en"], pairs))


def against_paper(ours: pd.DataFrame, table: pd.DataFrame, model: str, methods: Sequence[str]) -> pd.DataFrame:
    """Our accuracy and macro-F1 beside the paper's, per language, dimension and method.

    Returns
    -------
    pandas.DataFrame
        ``lang, dimension, method, metric, ours, paper, difference`` and, for accuracies, ``inside``: the
        paper's number lies in the 95 % Wilson interval of ours on our ``n`` pairs.
    """
    printed = table[(table["model"] == model) & table["method"].isin(methods) & (table["dimension"] != "Average")]
    long = ours.melt(id_vars=["lang", "dimension", "method", "n"], value_vars=["accuracy", "macro_f1"],
                     var_name="metric", value_name="ours")
    out = printed.merge(long, on=["lang", "dimension", "method", "metric"]).rename(columns={"value": "paper"})
    out["difference"] = out["ours"] - out["paper"]
    low, high = wilson_interval(out["ours"], out["n"])
    out["inside"] = (out["metric"] == "accuracy") & (out["paper"] >= low) & (out["paper"] <= high)
    return out[["lang", "dimension", "method", "metric", "n", "ours", "paper", "difference", "inside"]]
