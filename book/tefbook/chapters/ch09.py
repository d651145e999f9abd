"""Chapter 9 (calibration): how the chapter lays out its table and figures. The numbers are computed on the page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tefbook.companion.labels import LANG_LABELS
from tefbook.companion.tables import bold_best, format_cell, format_interval
from tefcore.fusion import RULE_LABELS


def calibration_table(cal: pd.DataFrame, names: Mapping[str, str]) -> Any:
    """The chapter's calibration frame (index ``model, lang, rule``; columns ``decisions, accuracy,
    mean confidence, ECE, ECE low, ECE high, gap``) as a table: the ECE with its interval, the lowest ECE
    and the gap closest to zero of each judge and language in bold."""
    index = pd.MultiIndex.from_arrays([cal.index.get_level_values("model").map(names),
                                       cal.index.get_level_values("lang").map(LANG_LABELS),
                                       cal.index.get_level_values("rule").map(RULE_LABELS)],
                                      names=["judge", "language", "rule"])
    values = pd.DataFrame({"decisions": np.nan, "accuracy": np.nan, "mean confidence": np.nan,
                           "ECE [95 % CI]": cal["ECE"].to_numpy(), "gap": cal["gap"].to_numpy()}, index=index)
    text = pd.DataFrame({
        "decisions": cal["decisions"].astype(int).map(format_cell).to_numpy(),
        "accuracy": cal["accuracy"].map(format_cell).to_numpy(),
        "mean confidence": cal["mean confidence"].map(lambda v: format_cell(v, 3)).to_numpy(),
        "ECE [95 % CI]": [format_interval(e, lo, hi, digits=3) for e, lo, hi in
                          zip(cal["ECE"], cal["ECE low"], cal["ECE high"])],
        "gap": cal["gap"].map(lambda v: format_cell(v, 3, signed=True)).to_numpy()}, index=index)
    return bold_best(text, values=values, by=["judge", "language"], lower=("ECE [95 % CI]",),
                     closest_to_zero=("gap",), digits=None)


def reliability_figure(pred: pd.DataFrame, name: str, langs: Sequence[str], rules: Sequence[str],
                       n_bins: int = 10) -> Any:
    """A reliability diagram per language for one judge: each confidence bin's mean confidence against its
    share of correct decisions, one line per rule (legend), marker area by the number of decisions."""
    import plotly.express as px
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(langs), subplot_titles=[LANG_LABELS.get(x, x) for x in langs],
                        shared_yaxes=True, horizontal_spacing=0.06)
    palette = px.colors.qualitative.D3
    binned = pred.assign(bin=np.minimum((pred["confidence"] * n_bins).astype(int), n_bins - 1))
    rel = binned.groupby(["lang", "rule", "bin"]).agg(confidence=("confidence", "mean"),
                                                      accuracy=("correct", "mean"), n=("correct", "size"))
    biggest = max(1, int(rel["n"].max()))
    for i, lang in enumerate(langs, start=1):
        fig.add_trace(go.Scatter(x=[0.5, 1], y=[0.5, 1], mode="lines", line={"color": "grey", "dash": "dash"},
                                 name="perfect calibration", showlegend=i == 1), row=1, col=i)
        for k, rule in enumerate(rules):
            if (lang, rule) not in rel.index.droplevel("bin"):
                continue
            s = rel.loc[(lang, rule)]
            fig.add_trace(go.Scatter(
                x=s["confidence"], y=s["accuracy"], mode="lines+markers", name=RULE_LABELS[rule], legendgroup=rule,
                showlegend=i == 1, line={"color": palette[k % len(palette)]},
                marker={"size": (6 + 26 * (s["n"] / biggest) ** 0.5).to_numpy()}, customdata=s["n"],
                hovertemplate="confidence %{x:.3f}<br>accuracy %{y:.3f}<br>%{customdata} decisions"
                              "<extra>" + RULE_LABELS[rule] + "</extra>"), row=1, col=i)
        fig.update_xaxes(range=[0.48, 1.02], title_text="mean confidence in the bin", row=1, col=i)
    fig.update_yaxes(range=[0, 1.02], title_text="share correct in the bin", col=1)
    fig.update_layout(height=440, title=f"Reliability: {name}",
                      legend={"orientation": "h", "y": -0.25, "x": 0.5, "xanchor": "center"})
    return fig


def temperature_figure(sweep: pd.DataFrame, names: Mapping[str, str], langs: Sequence[str],
                       reference: float) -> Any:
    """TEF's ECE against its softmax temperature T, one panel per language, one line per judge (legend),
    the reference release's T dashed."""
    from tefbook.companion.figures import lines_per_language

    fig = lines_per_language(sweep, "T", "ECE", langs, names, "T = %{x:g}: ECE %{y:.3f}")
    fig.add_vline(x=float(reference), line={"color": "black", "dash": "dash", "width": 1})
    fig.update_xaxes(title_text="T (log scale)")
    fig.update_yaxes(title_text="ECE of TEF", col=1)
    fig.update_layout(title=f"TEF's ECE against its temperature T (dashed: the reference release's T = "
                            f"{format_cell(reference, 0)})")
    return fig


def below_numbers(clears: pd.Series, models: Sequence[str], names: Mapping[str, str]) -> dict[str, Any]:
    """How many of the judges clear the majority-class floor in no language, and which.

    Examples
    --------
    >>> clears = pd.Series([True, False, False, False],
    ...                    index=pd.MultiIndex.from_product([["a", "b"], ["en", "zh"]], names=["model", "lang"]))
    >>> below_numbers(clears, ["a", "b"], {"a": "A", "b": "B"})
    {'n_below': 1, 'n_judges': 2, 'below_names': 'B'}
    """
    below = [m for m in models if not clears.xs(m, level="model").any()]
    return {"n_below": len(below), "n_judges": len(models),
            "below_names": " and ".join(names[m] for m in below) or "none"}


def cell_names(cells: pd.Index, names: Mapping[str, str]) -> str:
    """Judge-language cells ``(model, lang)`` as the prose names them, ``"none"`` when there are none.

    Examples
    --------
    >>> cell_names(pd.MultiIndex.from_tuples([("local", "en")], names=["model", "lang"]), {"local": "SmolLM2"})
    'SmolLM2 (English)'
    """
    return ", ".join(f"{names[model]} ({LANG_LABELS[lang]})" for model, lang in cells) or "none"


def best_numbers(best: pd.DataFrame) -> dict[str, Any]:
    """Of the table of best-calibrated rules: the cells, those where TEF has the lowest ECE (and clearly
    so), and those where TEF's gap is the closest to zero."""
    tef = best["lowest ECE"] == "TEF"
    return {"n_cells": len(best), "tef_lowest": int(tef.sum()), "tef_clearly": int((tef & best["clearly"]).sum()),
            "tef_gap_closest": int((best["gap closest to 0"] == "TEF").sum())}


def sweep_numbers(sweep: pd.DataFrame, reference: float) -> dict[str, Any]:
    """Of the temperature sweep (rows ``model, lang, T, ECE``): in how many judge-language cells the lowest
    ECE of the grid is at a ``T`` other than ``reference``, the range of those best ``T``, and the largest
    fall of the ECE from ``reference`` to the best ``T``.

    Examples
    --------
    >>> sweep = pd.DataFrame({"model": "a", "lang": ["en", "en", "zh", "zh"], "T": [1.0, 10.0, 1.0, 10.0],
    ...                       "ECE": [0.30, 0.10, 0.05, 0.20]})
    >>> sweep_numbers(sweep, reference=1.0)
    {'sweep_cells': 2, 'sweep_moved': 1, 'sweep_best_min': 1.0, 'sweep_best_max': 10.0, 'sweep_fall': 0.2}
    """
    by_cell = sweep.groupby(["model", "lang"], sort=False)
    best_t = sweep.loc[by_cell["ECE"].idxmin(), "T"].to_numpy()
    at_reference = sweep[np.isclose(sweep["T"], reference)].set_index(["model", "lang"])["ECE"]
    fall = at_reference - by_cell["ECE"].min()
    return {"sweep_cells": len(best_t), "sweep_moved": int((~np.isclose(best_t, reference)).sum()),
            "sweep_best_min": float(best_t.min()), "sweep_best_max": float(best_t.max()),
            "sweep_fall": round(float(fall.max()), 12)}


def profile_table(profile: pd.DataFrame, names: Mapping[str, str]) -> pd.DataFrame:
    """The profile of each judge, language and rule as shown: rounded, short column names, display labels."""
    shown = profile.round({"accuracy": 1, "confidence": 3, "confidence_one": 1, "says_change": 1, "gap": 3})
    return shown.rename(columns={"accuracy": "acc %", "confidence": "conf", "confidence_one": "conf = 1 %",
                                 "says_change": "change %"}).rename(index=names, level="model").rename(
        index=RULE_LABELS, level="rule")


def profile_numbers(profile: pd.DataFrame, rules: Sequence[str]) -> dict[str, float]:
    """The numbers the three bullet points of the chapter cite from the profile: SmolLM2 (``local``), the
    cross-fitted probe's Soft Vote, TEF and Majority Vote rows and the zero-shot judge's TEF rows (all NaN
    unless the three judges are on the page)."""
    rows = profile.reset_index()

    def part(model: str, which: Sequence[str] = rules) -> pd.DataFrame:
        return rows[(rows["model"] == model) & rows["rule"].isin(which)]

    small, probe, zero = part("local"), part("e5-crossfit", ["soft_vote", "tef"]), part("e5-zeroshot", ["tef"])
    probe_mv = part("e5-crossfit", ["majority_vote"])
    values = {
        "small_change": small["says_change"].min(),
        "small_mv_one": part("local", ["majority_vote"])["confidence_one"].min(),
        "small_gap_min": small["gap"].min(), "small_gap_max": small["gap"].max(),
        "probe_gap_min": probe["gap"].min(), "probe_gap_max": probe["gap"].max(),
        "probe_acc_min": probe["accuracy"].min(), "probe_acc_max": probe["accuracy"].max(),
        "probe_mv_one_min": probe_mv["confidence_one"].min(), "probe_mv_one_max": probe_mv["confidence_one"].max(),
        "probe_mv_gap_min": probe_mv["gap"].min(), "probe_mv_gap_max": probe_mv["gap"].max(),
        "zero_tef_gap_min": zero["gap"].min(), "zero_tef_gap_max": zero["gap"].max()}
    present = len(small) and len(probe) and len(zero)
    return {name: float(value) if present else float("nan") for name, value in values.items()}
