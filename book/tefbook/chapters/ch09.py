"""Chapter 9 (calibration): how the chapter lays out its table and figures. The numbers are computed on the page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tefbook.companion.labels import LANG_LABELS
from tefbook.companion.tables import bold_best, format_cell, format_columns, format_interval, plain
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


def shown(frame: pd.DataFrame, names: Mapping[str, str], digits: int = 1, index: bool = True) -> Any:
    """A table of the chapter as the reader sees it: the ``model``, ``lang`` and ``rule`` levels of its
    index (and such columns) in words and headed ``judge``, ``language``, ``rule`` (``post_id`` and
    ``prediction`` as ``post`` and ``decision``); numbers, counts and verdicts (yes / no) as
    :func:`tefbook.companion.tables.plain` prints them; ``index=False`` leaves out an index that is only a row
    number.

    Examples
    --------
    >>> t = pd.DataFrame({"ECE": [0.0412], "clears": [True]},
    ...                  index=pd.MultiIndex.from_tuples([("local", "zh")], names=["model", "lang"]))
    >>> table = shown(t, {"local": "SmolLM2"}, digits=3).data
    >>> list(table.index.names), table.index.tolist()
    (['judge', 'language'], [('SmolLM2', 'Chinese')])
    >>> shown(t, {"local": "SmolLM2"}, digits=3).to_html().count("yes")
    1
    """
    words = {"model": dict(names), "lang": LANG_LABELS, "rule": RULE_LABELS}
    heads = {"model": "judge", "lang": "language", "rule": "rule", "post_id": "post", "prediction": "decision"}
    out = frame.copy()
    for key, labels in words.items():
        if key in out.index.names:
            out = out.rename(index=labels, level=key)
        if key in out.columns:
            out[key] = out[key].map(lambda v, w=labels: w.get(v, v))
    out = out.rename_axis([heads.get(n, n) for n in out.index.names]).rename(columns=heads)
    return plain(out, digits) if index else plain(out, digits).hide(axis="index")


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
    return "; ".join(f"{names[model]} ({LANG_LABELS[lang]})" for model, lang in cells) or "none"


def best_numbers(best: pd.DataFrame) -> dict[str, Any]:
    """Of the table of best-calibrated rules: the cells, those where TEF has the lowest ECE (and clearly
    so), and those where TEF's gap is the closest to zero."""
    tef = best["lowest ECE"] == "TEF"
    return {"n_cells": len(best), "tef_lowest": int(tef.sum()), "tef_clearly": int((tef & best["clearly"]).sum()),
            "tef_gap_closest": int((best["gap closest to 0"] == "TEF").sum())}


def profile_table(profile: pd.DataFrame, names: Mapping[str, str]) -> Any:
    """The profile of each judge, language and rule as shown: short column names, judges, languages and rules
    in words, shares with one decimal, the confidence and the gap with three (as text).

    Examples
    --------
    >>> profile = pd.DataFrame({"accuracy": [57.12], "confidence": [0.9391], "confidence_one": [0.0],
    ...                         "says_change": [100.0], "gold_change": [57.12], "gap": [0.3679]},
    ...                        index=pd.MultiIndex.from_tuples([("local", "zh", "tef")], names=["model", "lang", "rule"]))
    >>> profile_table(profile, {"local": "SmolLM2"}).data.reset_index().iloc[0].tolist()
    ['SmolLM2', 'Chinese', 'TEF', '57.1', '0.939', '0.0', '100.0', '57.1', '0.368']
    """
    shown = profile[["accuracy", "confidence", "confidence_one", "says_change", "gold_change", "gap"]].rename(
        columns={"accuracy": "acc %", "confidence": "conf", "confidence_one": "conf = 1 %", "says_change": "change %",
                 "gold_change": "gold change %"})
    shown = shown.rename(index=names, level="model").rename(index=LANG_LABELS, level="lang").rename(
        index=RULE_LABELS, level="rule").rename_axis(["judge", "language", "rule"])
    return plain(format_columns(shown, 1, conf=3, gap=3))


def profile_words(numbers: Mapping[str, float], zero_clears: pd.Series) -> dict[str, Any]:
    """What the bullet points say in words of the profile's numbers (:func:`profile_numbers`) and of zero-shot
    e5's floor check (``zero_clears``, by language): how far SmolLM2's accuracies lie from the share of
    *change* at the page's one decimal, and in how many languages zero-shot e5 stays under the floor.

    Examples
    --------
    >>> words = profile_words({"small_acc_off": 0.04}, pd.Series([False, False], index=["zh", "en"]))
    >>> words["small_acc_words"], words["zero_below_of"], words["zero_below"]
    ('no difference at one decimal', 'both languages', 2)
    >>> profile_words({"small_acc_off": 0.31}, pd.Series([True, False]))["small_acc_words"]
    'to within 0.3 points'
    """
    from tefbook.companion.labels import of_count

    off, below = float(numbers["small_acc_off"]), int((~zero_clears.astype(bool)).sum())
    return {"zero_below": below, "zero_langs": len(zero_clears),
            "zero_below_of": of_count(below, len(zero_clears), "language"),
            "small_acc_words": "no difference at one decimal" if round(off, 1) == 0 else f"to within {off:.1f} points"}


def profile_numbers(profile: pd.DataFrame, rules: Sequence[str]) -> dict[str, float]:
    """The numbers the three bullet points of the chapter cite from the profile: SmolLM2 (``local``), the
    cross-fitted probe's Soft Vote, TEF (accuracy, mean confidence, gap) and Majority Vote rows and the zero-shot
    judge's TEF rows (accuracy, mean confidence, gap; all NaN
    unless the three judges are on the page)."""
    rows = profile.reset_index()

    def part(model: str, which: Sequence[str] = rules) -> pd.DataFrame:
        return rows[(rows["model"] == model) & rows["rule"].isin(which)]

    small, probe, zero = part("local"), part("e5-crossfit", ["soft_vote", "tef"]), part("e5-zeroshot", ["tef"])
    probe_mv = part("e5-crossfit", ["majority_vote"])
    values = {
        "small_change": small["says_change"].min(),
        "small_acc_off": (small["accuracy"] - small["gold_change"]).abs().max(),
        "small_mv_one": part("local", ["majority_vote"])["confidence_one"].min(),
        "small_gap_min": small["gap"].min(), "small_gap_max": small["gap"].max(),
        "probe_gap_min": probe["gap"].min(), "probe_gap_max": probe["gap"].max(),
        "probe_acc_min": probe["accuracy"].min(), "probe_acc_max": probe["accuracy"].max(),
        "probe_conf_min": probe["confidence"].min(), "probe_conf_max": probe["confidence"].max(),
        "probe_mv_one_min": probe_mv["confidence_one"].min(), "probe_mv_one_max": probe_mv["confidence_one"].max(),
        "probe_mv_gap_min": probe_mv["gap"].min(), "probe_mv_gap_max": probe_mv["gap"].max(),
        "zero_tef_gap_min": zero["gap"].min(), "zero_tef_gap_max": zero["gap"].max(),
        "zero_tef_conf_min": zero["confidence"].min(), "zero_tef_conf_max": zero["confidence"].max(),
        "zero_tef_acc_min": zero["accuracy"].min(), "zero_tef_acc_max": zero["accuracy"].max()}
    present = len(small) and len(probe) and len(zero)
    return {name: float(value) if present else float("nan") for name, value in values.items()}
