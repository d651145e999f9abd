"""Chapter 9 (calibration): what only that chapter uses."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from companion.labels import LANG_LABELS, short_label
from companion.plots import judge_language_lines
from companion.runs import Runs, frame_of, run_keys
from tefcore import metrics
from tefcore.evaluate import ABSTAIN, flatten_sentences, iter_groups, predict_pairs, sort_table
from tefcore.fusion import RULE_LABELS, TEMPERATURE, fuse_many


def _ece_rows(conf: np.ndarray, correct: np.ndarray, idx: np.ndarray, n_bins: int) -> np.ndarray:
    r"""ECE of every bootstrap row at once: :math:`\sum_b |\sum_{j\in b} (c_j - a_j)| / n`."""
    n_boot, n = idx.shape
    key = (metrics.bin_index(conf, n_bins)[idx] + n_bins * np.arange(n_boot)[:, None]).ravel()
    diff = np.bincount(key, weights=(conf - correct)[idx].ravel(), minlength=n_boot * n_bins)
    return np.abs(diff.reshape(n_boot, n_bins)).sum(axis=1) / n


def calibration_summary(
    pred: pd.DataFrame,
    *,
    n_bins: int = 10,
    n_boot: int = 1000,
    level: float = 0.95,
    random_state: int = 0,
    rules: Sequence[str] | None = None,
) -> pd.DataFrame:
    r"""Calibration of each rule's confidence, pooled over dimensions, per run and language.

    The confidence is that of the predicted side (protocol §6); abstentions carry none and are left
    out (their number is reported). Columns:

    * ``ece`` — expected calibration error with ``n_bins`` equal-width bins, the last closed at 1.0,
      with a bootstrap interval (``ece_low``, ``ece_high``; pairs resampled within dimensions);
    * ``ece_equal_mass`` — the same with equal-mass bins (point value);
    * ``gap`` — overconfidence gap, mean confidence minus accuracy, with its interval;
    * ``brier``, ``nll`` — Brier score and log-loss of the implied P(change);
    * ``accuracy`` (percent, over scored pairs), ``confidence`` (mean), ``n``, ``n_abstain``.

    All but ``accuracy`` are fractions.

    .. math::

        \text{ECE} = \sum_b \frac{n_b}{n}\,|\text{acc}(b) - \text{conf}(b)|, \qquad
        \text{gap} = \overline{\text{conf}} - \overline{\text{acc}}
    """
    keys = [*run_keys(pred), "lang", "rule"]
    data = pred if rules is None else pred[pred["rule"].isin(list(rules))]
    rng_seed = random_state
    rows = []
    for key, g in iter_groups(data, keys):
        ok = (g["prediction"] != ABSTAIN).to_numpy()
        s = g[ok]
        row: dict[str, Any] = {**key, "n": int(ok.sum()), "n_abstain": int((~ok).sum())}
        if ok.sum() == 0:
            rows.append(row)
            continue
        conf = s["confidence"].to_numpy(dtype=np.float64)
        corr = s["correct"].to_numpy(dtype=np.float64)
        p_change = metrics.probability_of_change(s["prediction"].to_numpy(), conf)
        idx = metrics.bootstrap_indices(len(s), n_boot, s["dimension"].to_numpy(), rng_seed)
        eces = _ece_rows(conf, corr, idx, n_bins)
        gaps = conf[idx].mean(axis=1) - corr[idx].mean(axis=1)
        q = [(1 - level) / 2, (1 + level) / 2]
        row.update({
            "accuracy": 100 * float(corr.mean()), "confidence": float(conf.mean()),
            "ece": metrics.expected_calibration_error(conf, corr, n_bins),
            "ece_low": float(np.quantile(eces, q[0])), "ece_high": float(np.quantile(eces, q[1])),
            "ece_equal_mass": metrics.expected_calibration_error(conf, corr, n_bins, strategy="quantile"),
            "gap": metrics.overconfidence_gap(conf, corr),
            "gap_low": float(np.quantile(gaps, q[0])), "gap_high": float(np.quantile(gaps, q[1])),
            "brier": metrics.brier_score(s["side"].to_numpy(), p_change),
            "nll": metrics.negative_log_likelihood(s["side"].to_numpy(), p_change),
        })
        rows.append(row)
    return pd.DataFrame(rows)


def reliability_by_rule(
    pred: pd.DataFrame, *, n_bins: int = 10, strategy: str = "uniform", rules: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Reliability-diagram bins of each rule's confidence per run, language and rule.

    Pooled over dimensions, abstentions left out; the bins are those of
    :func:`tefcore.metrics.reliability_table` with the confidence of the predicted side as the forecast
    and its correctness as the outcome.

    Returns
    -------
    DataFrame
        ``*keys`` (``model, prompt, lang, rule``) and the columns of
        :func:`tefcore.metrics.reliability_table` (``mean_predicted`` is the mean confidence,
        ``observed`` the accuracy of the bin, both fractions).
    """
    keys = [*run_keys(pred), "lang", "rule"]
    data = pred if rules is None else pred[pred["rule"].isin(list(rules))]
    rows = [metrics.reliability_table(g["confidence"].to_numpy(dtype=np.float64), g["correct"].to_numpy(),
                                      n_bins, strategy).assign(**key)
            for key, g in iter_groups(data[data["prediction"] != ABSTAIN], keys)]
    if not rows:
        return pd.DataFrame()
    out = pd.concat(rows, ignore_index=True)
    return out[[*keys, *(c for c in out.columns if c not in keys)]]


def calibration_verdicts(cal: pd.DataFrame, labels: dict[str, str] | None = None,
                         tol: float = 5e-4) -> pd.DataFrame:
    """Which rule is best calibrated, per run and language.

    Parameters
    ----------
    cal : DataFrame
        :func:`calibration_summary` output (with ``model``).
    labels : dict, optional
        The label of each judge's rows.
    tol : float
        Rules within ``tol`` of the lowest ECE (or of the smallest :math:`|gap|`) share the place.

    Returns
    -------
    DataFrame
        Index ``(run, lang)``; ``lowest ECE`` (the rules, the paper's names), ``ECE``, ``alone`` (a single
        rule has the lowest ECE), ``clearly lowest`` (alone, and its interval lies below every other
        rule's estimate), ``TEF's ECE``, ``smallest |gap|``, ``gap``, ``TEF's gap``.
    """
    from companion.labels import row_label

    rows = []
    for key, g in iter_groups(cal, [*run_keys(cal), "lang"]):
        lowest = g[g["ece"] <= g["ece"].min() + tol]
        rest = g.drop(index=lowest.index)
        closest = g[g["gap"].abs() <= g["gap"].abs().min() + tol]
        tef = g[g["rule"] == "tef"]
        rows.append({"run": row_label(key["model"], labels), "lang": key["lang"],
                     "lowest ECE": ", ".join(lowest["rule"].map(RULE_LABELS)), "ECE": float(lowest["ece"].min()),
                     "alone": len(lowest) == 1,
                     "clearly lowest": bool(len(lowest) == 1 and len(rest)
                                            and lowest["ece_high"].iloc[0] < rest["ece"].min()),
                     "TEF's ECE": float(tef["ece"].iloc[0]) if len(tef) else math.nan,
                     "smallest |gap|": ", ".join(closest["rule"].map(RULE_LABELS)),
                     "gap": float(closest["gap"].iloc[0]),
                     "TEF's gap": float(tef["gap"].iloc[0]) if len(tef) else math.nan})
    return pd.DataFrame(rows).set_index(["run", "lang"])


def verdict_sentence(verdicts: pd.DataFrame, rule: str = "TEF") -> str:
    """How often ``rule`` has the lowest ECE, in words that fit the counts.

    Examples
    --------
    >>> v = pd.DataFrame({"lowest ECE": ["TEF", "SV", "SV"], "alone": [True, True, True]})
    >>> verdict_sentence(v)
    'TEF has the lowest ECE in 1 of 3 run-language cells, alone.'
    >>> v = pd.DataFrame({"lowest ECE": ["TEF", "SV, TEF", "SV"], "alone": [True, False, True]})
    >>> verdict_sentence(v)
    'TEF has the lowest ECE in 2 of 3 run-language cells: 1 alone, 1 tied with another rule.'
    >>> verdict_sentence(v.iloc[2:])
    'TEF has the lowest ECE in none of 1 run-language cell.'
    """
    has = verdicts["lowest ECE"].str.split(", ").map(lambda rules: rule in rules)
    n, total = int(has.sum()), len(verdicts)
    alone = int((has & verdicts["alone"]).sum())
    cells = f"{total} run-language cell{'s' if total != 1 else ''}"
    if n == 0:
        return f"{rule} has the lowest ECE in none of {cells}."
    if alone == n:
        return f"{rule} has the lowest ECE in {n} of {cells}, {'alone' if n == 1 else 'each time alone'}."
    if alone == 0:
        return f"{rule} has the lowest ECE in {n} of {cells}, {'tied' if n == 1 else 'each time tied'} with another rule."
    return f"{rule} has the lowest ECE in {n} of {cells}: {alone} alone, {n - alone} tied with another rule."


def _tef_confidences(frame: pd.DataFrame, temperatures: Sequence[float]) -> np.ndarray:
    """TEF's confidence of every pair at every temperature, shape (len(temperatures), pairs).

    An unreadable sentence adds nothing to TEF's score under either invalid-answer policy (left out, or
    read as 0.5, whose weight is 0), so it enters as 0.5 here.
    """
    flat, doc = flatten_sentences(frame["sentences"])
    p = np.where(np.isnan(flat), 0.5, flat)
    return np.stack([fuse_many(p, doc, "tef", T=float(t)).confidence for t in temperatures])


def tef_temperature_calibration(
    runs: Runs | pd.DataFrame,
    temperatures: Sequence[float],
    *,
    n_bins: int = 10,
    invalid: str = "drop",
) -> pd.DataFrame:
    r"""TEF's calibration when its confidence is the softmax of its scores at another temperature.

    TEF's confidence of a post is :math:`\sigma(2|s|/T)` with :math:`s = \sum_i w_i \ell_i`; its decision
    does not depend on :math:`T`. For each :math:`T` the expected calibration error (``n_bins``
    equal-width bins, pooled over dimensions), the overconfidence gap and the mean confidence are
    computed over the pairs TEF decides (abstentions left out, as in :func:`calibration_summary`).

    Parameters
    ----------
    runs : Runs or DataFrame
        Cache rows of one or more runs.
    temperatures : sequence of float
        Positive temperatures; :data:`tefcore.fusion.TEMPERATURE` is the reference release's.
    n_bins : int
    invalid : {"drop", "reference"}

    Returns
    -------
    DataFrame
        ``model, prompt, lang, T, accuracy, confidence, ece, gap, reference`` (``reference`` marks the
        reference release's :math:`T`).
    """
    temps = [float(t) for t in temperatures]
    if not temps or any(not (t > 0 and math.isfinite(t)) for t in temps):
        raise ValueError(f"temperatures must be positive finite numbers, got {list(temperatures)!r}")
    frame = frame_of(runs)
    rows = []
    for key, g in iter_groups(frame, [*run_keys(frame), "lang"]):
        g = g.reset_index(drop=True)
        pred = predict_pairs(g, rules=["tef"], invalid=invalid)
        ok = (pred["prediction"] != ABSTAIN).to_numpy()
        correct = pred["correct"].to_numpy(dtype=np.float64)[ok]
        for t, conf in zip(temps, _tef_confidences(g, temps)):
            c = conf[ok]
            rows.append({**key, "T": t, "accuracy": 100 * float(correct.mean()), "confidence": float(c.mean()),
                         "ece": metrics.expected_calibration_error(c, correct, n_bins),
                         "gap": metrics.overconfidence_gap(c, correct), "reference": t == TEMPERATURE})
    return pd.DataFrame(rows)


_CAL_COLUMNS: dict[str, str] = {"n": "n", "n_abstain": "abstain", "accuracy": "accuracy", "confidence": "confidence",
                                "ece": "ECE", "ece_equal_mass": "ECE (equal mass)", "gap": "gap", "brier": "Brier",
                                "nll": "log-loss"}


_LOWER = ("ECE", "ECE (equal mass)", "Brier", "log-loss")


def calibration_table(cal: pd.DataFrame, labels: dict[str, str] | None = None) -> Any:
    """:func:`calibration_summary` as the chapter shows it, the best rule of each judge and language in bold.

    ECE and the gap carry their bootstrap intervals; the lowest ECE, Brier score and log-loss, the gap
    closest to zero and the highest accuracy are bold (:func:`companion.tables.bold_best`);
    counts and the mean confidence are never ranked.

    Returns
    -------
    pandas.io.formats.style.Styler
        Rows ``(run, lang, method)``.
    """
    from companion.labels import row_label
    from companion.tables import bold_best, format_cell, format_interval

    cal = sort_table(cal, ["model", "lang", "rule"], {"model": list(pd.unique(cal["model"])),
                                                     "lang": list(pd.unique(cal["lang"]))})
    index = pd.MultiIndex.from_arrays([cal["model"].map(lambda m: row_label(m, labels)), cal["lang"],
                                       cal["rule"].map(RULE_LABELS)], names=["run", "lang", "method"])
    values = cal[list(_CAL_COLUMNS)].set_axis(index).rename(columns=_CAL_COLUMNS)
    values[["n", "abstain", "confidence"]] = np.nan  # shown, never ranked
    text = cal[list(_CAL_COLUMNS)].set_axis(index).rename(columns=_CAL_COLUMNS)
    text["ECE"] = [format_interval(e, lo, hi, digits=3) for e, lo, hi in zip(cal["ece"], cal["ece_low"], cal["ece_high"])]
    text["gap"] = [format_interval(e, lo, hi, digits=3, signed=True)
                   for e, lo, hi in zip(cal["gap"], cal["gap_low"], cal["gap_high"])]
    for col in ("confidence", "ECE (equal mass)", "Brier", "log-loss"):
        text[col] = text[col].map(lambda v: format_cell(v, 3))
    return bold_best(text, values=values, by=["run", "lang"], lower=_LOWER, closest_to_zero=("gap",))


def temperature_markdown(sweep: pd.DataFrame, labels: dict[str, str] | None = None) -> str:
    """Per run and language: TEF's ECE at the reference release's T, and the T of the grid with the lowest
    ECE (chosen on the same pairs, so an optimistic figure), as Markdown bullets."""
    from companion.labels import LANG_LABELS, row_label
    from companion.tables import format_cell

    lines = []
    for key, g in iter_groups(sweep, [*run_keys(sweep), "lang"]):
        ref, best = g[g["reference"]], g.loc[g["ece"].idxmin()]
        at_ref = f"ECE {format_cell(ref['ece'].iloc[0], 3)} at T = {ref['T'].iloc[0]:g}" if len(ref) else \
            "the reference T is not on the grid"
        lines.append(f"* {row_label(key['model'], labels)}, {LANG_LABELS.get(key['lang'], key['lang'])}: {at_ref}; "
                     f"lowest on the grid {format_cell(best['ece'], 3)} at T = {best['T']:g} "
                     f"(gap there {format_cell(best['gap'], 3, signed=True)}).")
    return "\n".join(lines)


def reliability_figure(rel: pd.DataFrame, title: str, langs: Sequence[str], rules: Sequence[str]) -> Any:
    """A reliability diagram per language: each bin's mean confidence against its accuracy, per rule.

    Parameters
    ----------
    rel : DataFrame
        :func:`chapters.ch09.reliability_by_rule` rows of one run.
    title : str
        The run's label.
    """
    import plotly.express as px
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(langs), subplot_titles=[LANG_LABELS.get(x, x) for x in langs],
                        shared_yaxes=True)
    palette = px.colors.qualitative.D3
    biggest = max(1, int(rel["count"].max())) if len(rel) else 1
    for i, lang in enumerate(langs):
        fig.add_trace(go.Scatter(x=[0.5, 1], y=[0.5, 1], mode="lines", line={"color": "grey", "dash": "dash"},
                                 name="perfect calibration", showlegend=i == 0), row=1, col=i + 1)
        for k, rule in enumerate(rules):
            s = rel[(rel["lang"] == lang) & (rel["rule"] == rule)]
            fig.add_trace(go.Scatter(
                x=s["mean_predicted"], y=s["observed"], mode="lines+markers", name=RULE_LABELS[rule],
                legendgroup=rule, showlegend=i == 0, line={"color": palette[k % len(palette)]},
                marker={"size": (6 + 30 * (s["count"] / biggest) ** 0.5).to_numpy()},
                customdata=s[["count", "bin_lower", "bin_upper"]].to_numpy(),
                hovertemplate="bin [%{customdata[1]:.1f}, %{customdata[2]:.1f}]<br>confidence %{x:.3f}<br>"
                              "accuracy %{y:.3f}<br>posts %{customdata[0]}"), row=1, col=i + 1)
    fig.update_xaxes(range=[0.48, 1.02], title_text="mean confidence in bin")
    fig.update_yaxes(range=[0, 1.02], title_text="accuracy in bin", col=1)
    fig.update_layout(height=430, title=f"Reliability: {short_label(title)}")
    return fig


def temperature_figure(frame: pd.DataFrame, labels: Mapping[str, str], langs: Sequence[str],
                       reference: float) -> Any:
    """TEF's ECE and overconfidence gap against its softmax temperature T, the reference release's T marked.

    Parameters
    ----------
    frame : DataFrame
        :func:`chapters.ch09.tef_temperature_calibration` output.
    reference : float
        The reference release's T (a dashed vertical line).
    """
    fig = judge_language_lines(frame, "T", langs, labels,
                                [("ece", "ECE", None), ("gap", "confidence - accuracy", None)], vertical_spacing=0.1)
    for i in range(len(langs)):
        fig.add_hline(y=0, line={"color": "grey", "width": 1}, row=2, col=i + 1)
    fig.add_vline(x=float(reference), line={"color": "black", "dash": "dash", "width": 1}, row="all", col="all")
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="T (log scale)", row=2)
    fig.update_layout(height=560, legend={"orientation": "h", "y": -0.18},
                      title=f"TEF's calibration against its temperature T (dashed: T = {reference:g})")
    return fig
