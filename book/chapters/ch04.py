"""Chapter 4 (extraction): the provenance comparison of the reproducibility check, and the chapter's figures."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from companion.labels import LANG_LABELS
from companion.provenance import flat_header

TIME_FIELDS: frozenset[str] = frozenset({"started_at", "finished_at", "provenance_id"})
"""Provenance fields that say when a run happened, not how."""

CELL_FIELDS: frozenset[str] = frozenset({"temperature", "median_abs_margin", "n_temperature_sentences", "subsets"})
"""Fields kept per language and dimension (``"en/Culture"``): only the entry of the cell re-extracted is compared."""

PAIR_SET_FIELDS: frozenset[str] = frozenset({"temperature_pairs_sha256", "training_sha256", "fit_pairs_sha256"})
"""Fields that describe the whole set of pairs a judge was fitted on (a cell is a part of it)."""

FEATURE_FIELDS: frozenset[str] = frozenset({"llama_cpp_cpu"})
"""Fields that list CPU features, separated by spaces: a difference shows the features only one side has."""

UNRECORDED = "unrecorded"
"""How :func:`setting_differences` shows a field the older header did not record."""


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0) or (math.isnan(a) and math.isnan(b))
    return a == b


def _short(value: Any, width: int = 40) -> str:
    text = UNRECORDED if value is None else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def setting_differences(recorded: Mapping[str, Any], now: Mapping[str, Any], cell: str) -> tuple[str, ...]:
    """The provenance fields on which a new run differs from a committed cache's header, as ``"name: old → new"``.

    The time stamps (:data:`TIME_FIELDS`) and the fields of the whole fitted pair set (:data:`PAIR_SET_FIELDS`)
    are left out; a per-cell field (:data:`CELL_FIELDS`) is compared on the entries of ``cell`` only; floats
    are equal within a relative 1e-9 (round-off). A field the older header lacks shows as :data:`UNRECORDED`;
    a list of CPU features (:data:`FEATURE_FIELDS`) shows the features only one side has (``–``: none).

    Examples
    --------
    >>> setting_differences({"llama_cpp_cpu": "AVX2 AVX512", "started_at": "x", "temperature": {"en/A": 0.1, "en/B": 0.2}},
    ...                     {"llama_cpp_cpu": "AVX2", "started_at": "y", "temperature": {"en/A": 0.1}}, "en/A")
    ('llama_cpp_cpu: AVX512 → –',)
    >>> setting_differences({}, {"tefcore_version": "0.2.0"}, "en/A")
    ('tefcore_version: unrecorded → 0.2.0',)
    """
    def kept(flat: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for name, value in flat.items():
            head = name.split(".", 1)[0]
            if head in TIME_FIELDS or head in PAIR_SET_FIELDS:
                continue
            if head in CELL_FIELDS and not name.startswith(f"{head}.{cell}"):
                continue
            out[name] = value
        return out

    def shown(name: str, a: Any, b: Any) -> str:
        if name in FEATURE_FIELDS and isinstance(a, str) and isinstance(b, str):
            only_a = [f for f in a.split() if f not in b.split()]
            only_b = [f for f in b.split() if f not in a.split()]
            return f"{name}: {' '.join(only_a) or '–'} → {' '.join(only_b) or '–'}"
        return f"{name}: {_short(a)} → {_short(b)}"

    old, new = kept(flat_header(recorded)), kept(flat_header(now))
    return tuple(shown(name, old.get(name), new.get(name))
                 for name in sorted(old.keys() | new.keys()) if not _same(old.get(name), new.get(name)))


def causes(fields: Sequence[str]) -> list[str]:
    """The differences of :func:`setting_differences` that can change a judge's numbers: all but the library's
    version (which must not) and fields the older header did not record (nothing to compare).

    Examples
    --------
    >>> causes(("tefcore_version: 0.1.0 → 0.2.0", "llama_cpp_cpu: unrecorded → AVX2", "system_prompt: none → default"))
    ['system_prompt: none → default']
    """
    return [f for f in fields if not f.startswith("tefcore_version:") and f": {UNRECORDED} → " not in f]


def mass_figure(answers: pd.DataFrame, names: Mapping[str, str]) -> Any:
    """Overlaid histograms of the C+S mass of every answer (rows ``model, lang, mass``), one per judge and language."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for (model, lang), g in answers.groupby(["model", "lang"], sort=False):
        fig.add_histogram(x=g["mass"], name=f"{names.get(model, model)} · {LANG_LABELS.get(lang, lang)}",
                          xbins={"start": 0, "end": 1.0001, "size": 0.02}, opacity=0.7)
    fig.update_layout(title="C+S mass of every answer (Direct and sentences)", barmode="overlay",
                      xaxis_title="P(C) + P(S)", yaxis_title="answers", height=380,
                      legend={"orientation": "h", "y": -0.25, "x": 0.5, "xanchor": "center"})
    return fig


def probability_figure(sentences: pd.DataFrame, names: Mapping[str, str], langs: Sequence[str]) -> Any:
    """Per judge (a row of panels, titled above), histograms of every sentence's P(change) (left) and TEF weight
    (right), one colour per language (legend); rows ``model, lang, p, weight``."""
    from plotly.subplots import make_subplots

    judges = list(pd.unique(sentences["model"]))
    fig = make_subplots(rows=max(1, len(judges)), cols=2, vertical_spacing=0.1, horizontal_spacing=0.08,
                        subplot_titles=[f"{names.get(m, m)}: {what}" for m in judges
                                        for what in ("sentence P(change)", "TEF weight w(p)")])
    colors = {"en": "#4e79a7", "zh": "#e15759"}
    for row, model in enumerate(judges, start=1):
        for lang in langs:
            g = sentences[(sentences["model"] == model) & (sentences["lang"] == lang)]
            for col, column in ((1, "p"), (2, "weight")):
                fig.add_histogram(x=g[column], name=LANG_LABELS.get(lang, lang), legendgroup=lang,
                                  showlegend=row == 1 and col == 1, marker_color=colors.get(lang), opacity=0.6,
                                  histnorm="percent", xbins={"start": 0, "end": 1.0001, "size": 0.025},
                                  row=row, col=col)
    fig.update_yaxes(title_text="% of sentences", col=1)
    fig.update_xaxes(range=[0, 1])
    fig.update_annotations(font_size=12)
    fig.update_layout(barmode="overlay", height=270 * max(1, len(judges)) + 130,
                      title="What the judges said about each sentence",
                      legend={"orientation": "h", "y": -0.08, "x": 0.5, "xanchor": "center"})
    return fig


def answers_long(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per answer of a cache frame (its Direct answer and each sentence's): ``model, lang, kind,
    source, mass`` (``kind`` is ``"Direct"`` or ``"sentence"``; an e5 judge's mass is NaN).

    Examples
    --------
    >>> frame = pd.DataFrame({"model": ["m"], "lang": ["en"], "direct_source": ["logprobs"], "direct_mass": [0.9],
    ...                       "sentence_sources": [["logprobs", "partial"]], "sentence_masses": [[0.8, 0.4]]})
    >>> answers_long(frame)[["kind", "source", "mass"]].to_numpy().tolist()
    [['Direct', 'logprobs', 0.9], ['sentence', 'logprobs', 0.8], ['sentence', 'partial', 0.4]]
    """
    from tefcore.evaluate import flatten_sentences

    sources, pair_of = flatten_sentences(frame["sentence_sources"], dtype=object)
    return pd.concat([
        pd.DataFrame({"model": frame["model"], "lang": frame["lang"], "kind": "Direct",
                      "source": frame["direct_source"], "mass": frame["direct_mass"].astype(float)}),
        pd.DataFrame({"model": frame["model"].to_numpy()[pair_of], "lang": frame["lang"].to_numpy()[pair_of],
                      "kind": "sentence", "source": sources,
                      "mass": flatten_sentences(frame["sentence_masses"])[0]})], ignore_index=True)


def mass_table(masses: pd.DataFrame, names: Mapping[str, str]) -> Any:
    """The C+S mass summary as shown (count, mean, 5 %, median, 95 %, minimum), or a sentence when no LLM
    judge is on the page."""
    if masses.empty:
        return "no LLM judge among these caches"
    return masses[["count", "mean", "5%", "50%", "95%", "min"]].astype({"count": int}).rename(
        index=names, level=0).round(3)


def verdicts(checks: pd.DataFrame) -> list[str]:
    """The verdict of each row of the reproducibility check: ``reproduced``, the recorded settings that
    differ (their field names), or ``unexplained``.

    Examples
    --------
    >>> checks = pd.DataFrame({"reproduced": [True, False, False], "causes": [[], ["system_prompt: a → b"], []]})
    >>> verdicts(checks)
    ['reproduced', 'differs where the recorded setting differs: system_prompt', 'unexplained']
    """
    return ["reproduced" if ok else
            "differs where the recorded setting differs: " + ", ".join(c.split(":")[0] for c in found)
            if found else "unexplained"
            for ok, found in zip(checks["reproduced"], checks["causes"])]


def check_table(checks: pd.DataFrame) -> pd.DataFrame:
    """The reproducibility check as shown: pairs, largest difference (as ``1.0e-12``) and verdict per cache."""
    return checks.set_index(["judge", "prompt", "lang"])[["pairs", "max |Δ|", "verdict"]].assign(
        **{"max |Δ|": lambda d: d["max |Δ|"].map("{:.1e}".format)})


def check_numbers(checks: pd.DataFrame, differs: pd.DataFrame, smallest: Mapping[str, str]) -> dict[str, Any]:
    """What the prose cites of the reproducibility check: caches checked, reproduced and differing, the
    cells and pairs re-extracted, the largest difference of a reproduced cache, and the caches that differ
    in the llama.cpp build (``llama_cpp_cpu``) with the CPU features and their largest difference."""
    build = differs[differs["causes"].map(lambda c: any(f.startswith("llama_cpp_cpu:") for f in c))]
    features = sorted({f.split(": ", 1)[1] for c in build["causes"] for f in c if f.startswith("llama_cpp_cpu:")})
    return {"n_caches": len(checks), "n_reproduced": int((checks["verdict"] == "reproduced").sum()),
            "n_differs": len(differs), "build_features": "; ".join(features) or "–",
            "cells": " and ".join(f"{LANG_LABELS[lang]} {cell}" for lang, cell in smallest.items()),
            "n_pairs_checked": int(checks["pairs"].sum()), "n_build": len(build),
            "build_caches": ", ".join(f"{r.prompt}/{r.lang}" for r in build.itertuples()) or "none",
            "build_max": float(build["max |Δ|"].max()) if len(build) else 0.0,
            "worst_reproduced": float(checks.loc[checks["reproduced"], "max |Δ|"].max())}


def record_numbers(builds: Mapping[str, Any], measured: pd.DataFrame) -> dict[str, Any]:
    """What the prose cites of the llama.cpp builds record (``data/engines/llama-cpp-builds.json``): the
    machine, the pairs per cache, the largest difference under a cache's own build, the range under the
    other build, and the largest effect of the engine's settings (prefix reuse, threads)."""
    own = measured[measured["build"] == measured["recorded_build"]]
    other = measured[measured["build"] != measured["recorded_build"]]
    return {"rec_processor": f"{builds['machine']['processor']}, {builds['machine']['cpus']} CPUs",
            "rec_pairs": int(measured["pairs"].min()), "rec_own_max": float(own["max_abs_difference"].max()),
            "rec_other_min": float(other["max_abs_difference"].min()),
            "rec_other_max": float(other["max_abs_difference"].max()),
            "rec_caches": int(measured["cache"].nunique()),
            "rec_settings_max": max(d for run in builds["builds"].values()
                                    for d in run["settings"]["max_abs_difference_from_default"].values())}


def engine_numbers(record: Mapping[str, Any], engines: pd.DataFrame) -> dict[str, Any]:
    """What the prose cites of the vLLM-against-llama.cpp record (``data/engines/vllm-cpu-smollm2.json``):
    machine and engine versions, prompts, the float32 and bfloat16 differences and the answers' spread."""
    vllm_run, llama_run, machine = record["engines"]["vllm"], record["provenance"]["llama_cpp"], record["machine"]
    return {"eng_machine": f"{machine['processor']}, {machine['cpus']} CPUs", "eng_pairs": record["pairs_per_language"],
            "eng_vllm": f"vLLM {vllm_run['version']} ({vllm_run['distribution']}, platform {vllm_run['platform']}, "
                        f"torch {vllm_run['torch']})",
            "eng_llama": f"llama-cpp-python {llama_run['llama_cpp_python']} (built for {llama_run['llama_cpp_cpu']})",
            "eng_prompts": len(engines), "eng_max": float(engines["f32 vs llama.cpp"].max()),
            "eng_mean": float(engines["f32 vs llama.cpp"].mean()), "eng_bf16_max": float(engines["bf16 vs f32"].max()),
            "eng_spread": float(engines["p_llama_cpp"].max() - engines["p_llama_cpp"].min())}


def engine_figure(engines: pd.DataFrame) -> Any:
    """Each prompt's P(change) under vLLM (float32 and bfloat16, up) against llama.cpp (across)."""
    import plotly.express as px

    long = engines.rename(columns={"p_vllm_float32": "float32", "p_vllm_bfloat16": "bfloat16"}).melt(
        id_vars=["p_llama_cpp"], value_vars=["float32", "bfloat16"], var_name="vLLM", value_name="p_vllm")
    return px.scatter(long, x="p_llama_cpp", y="p_vllm", color="vLLM", symbol="vLLM", height=420,
                      title="P(change) of the same prompts: vLLM against llama.cpp",
                      labels={"p_llama_cpp": "llama.cpp (Q4_1 kernels)", "p_vllm": "vLLM (dequantized weights)"})


def mass_numbers(masses: pd.DataFrame) -> dict[str, float]:
    """The median C+S mass of the Direct answers of the local LLM judge per language (``mass_en``,
    ``mass_zh``; NaN where it is not on the page), from the chapter's ``describe`` table of the masses.

    Examples
    --------
    >>> import numpy as np
    >>> masses = pd.DataFrame({"50%": [0.44, 0.42]},
    ...                       index=pd.MultiIndex.from_tuples([("local", "en", "Direct"), ("local", "en", "sentence")]))
    >>> mass_numbers(masses)["mass_en"], bool(np.isnan(mass_numbers(masses)["mass_zh"]))
    (0.44, True)
    """
    def median(lang: str) -> float:
        key = ("local", lang, "Direct")
        return float(masses.loc[key, "50%"]) if key in masses.index else float("nan")

    return {"mass_en": median("en"), "mass_zh": median("zh")}


def summary_numbers(summary: pd.DataFrame) -> dict[str, float]:
    """From the posterior summary (indexed ``model, lang``): the local judge's shares of unanimous posts and
    of decisive sentences per language, and the cross-fitted probe's range of decisive shares (NaN for a
    judge or language not on the page)."""
    def value(model: str, lang: str | None, column: str, how: str = "min") -> float:
        if model not in summary.index.get_level_values("model"):
            return float("nan")
        part = summary.xs(model, level="model")[column]
        if lang:
            return float(part.loc[lang]) if lang in part.index else float("nan")
        return float(getattr(part, how)())

    return {"local_unanimous_en": value("local", "en", "unanimous_posts"),
            "local_unanimous_zh": value("local", "zh", "unanimous_posts"),
            "local_decisive_en": value("local", "en", "decisive_share"),
            "local_decisive_zh": value("local", "zh", "decisive_share"),
            "probe_decisive_min": value("e5-crossfit", None, "decisive_share"),
            "probe_decisive_max": value("e5-crossfit", None, "decisive_share", "max")}
