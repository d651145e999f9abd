r"""Calibration of the rules' confidences (paper Fig. 4) and the temperature sweep of a judge's posteriors.

:func:`calibration_summary` reports, per run, language and rule, the expected calibration error
(with a bootstrap interval over pairs resampled within dimensions), the overconfidence gap, the
Brier score and the log-loss; :func:`reliability_by_rule` gives the bins of a reliability diagram
(:func:`tefcore.metrics.reliability_table`) per run, language and rule. :func:`calibration_verdicts`
says which rule is best calibrated for each run and language, and :func:`verdict_sentence` says it in
words.

TEF's confidence is the softmax of its two side scores at a temperature :math:`T`; the paper defines
no confidence for any rule, and :math:`T = 5` (:data:`tefcore.fusion.TEMPERATURE`) is the constant of
the reference release. :func:`tef_temperature_calibration` measures TEF's calibration over a range of
:math:`T` (its decisions do not depend on :math:`T`, only its confidence does).

:func:`retemper` sharpens or flattens probabilities, :math:`p' = \sigma(\operatorname{logit}(p)/t)`,
and :func:`temperature_sweep` re-runs the rules on a judge's re-tempered posteriors to follow TEF's
gain over the strongest baseline (:func:`tefcore.chapters.experiments.versus_best_baseline`) as the judge
becomes more or less decisive.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import expit, logit

from tefcore import metrics
from tefcore.chapters.experiments import predict_runs, versus_best_baseline
from tefcore.chapters.runs import Runs, frame_of, run_keys
from tefcore.evaluate import (ABSTAIN, BASELINES, check_metric, flatten_sentences, iter_groups, predict_pairs,
                              sort_table)
from tefcore.fusion import TEMPERATURE, entropy_weight, fuse_many

__all__ = [
    "calibration_summary",
    "calibration_table",
    "calibration_verdicts",
    "reliability_by_rule",
    "retemper",
    "tef_temperature_calibration",
    "temperature_markdown",
    "temperature_sweep",
    "verdict_sentence",
]


# --------------------------------------------------------------------------------------------------
# calibration (paper Fig. 4)
# --------------------------------------------------------------------------------------------------
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
    from tefcore.chapters.experiments import row_label
    from tefcore.chapters.presentation import RULE_LABELS

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


# --------------------------------------------------------------------------------------------------
# temperature sweep
# --------------------------------------------------------------------------------------------------
def retemper(p: npt.ArrayLike, t: float) -> np.ndarray:
    r"""Sharpen (``t < 1``) or flatten (``t > 1``) probabilities: :math:`p' = \sigma(\operatorname{logit}(p)/t)`.

    NaN (an unreadable answer) stays NaN; 0 and 1 stay put; 0.5 is the fixed point, so every rule that
    only looks at the side of 0.5 (Direct, Majority Vote) is unchanged.

    Parameters
    ----------
    p : array_like
        Probabilities in [0, 1] or NaN.
    t : float
        A positive, finite temperature.
    """
    if not (t > 0 and math.isfinite(t)):
        raise ValueError(f"temperature must be a positive finite number, got {t!r}")
    arr = np.asarray(p, dtype=np.float64)
    bad = ~np.isnan(arr) & ((arr < 0) | (arr > 1))
    if bad.any():
        raise ValueError(f"probabilities must lie in [0, 1] (or be NaN); found {arr[bad][0]!r}")
    with np.errstate(divide="ignore"):
        return expit(logit(arr) / t)


def _retemper_frame(df: pd.DataFrame, t: float) -> pd.DataFrame:
    """A copy of a cache frame with every probability re-tempered (one flat array, no loop over posts)."""
    flat, doc = flatten_sentences(df["sentences"])
    lengths = np.bincount(doc, minlength=len(df))
    new = retemper(flat, t)
    out = df.copy()
    out["direct"] = retemper(df["direct"].to_numpy(dtype=np.float64), t)
    out["sentences"] = np.split(new, np.cumsum(lengths)[:-1])
    return out


def temperature_sweep(
    df: Runs | pd.DataFrame,
    factors: Sequence[float],
    *,
    metric: str = "accuracy",
    baselines: Sequence[str] = BASELINES,
    n_boot: int = 500,
    level: float = 0.95,
    random_state: int = 0,
    invalid: str = "drop",
) -> pd.DataFrame:
    r"""TEF's gain over the strongest baseline when a judge's posteriors are re-tempered.

    Every probability, whole-post (Direct) and per sentence, becomes
    :math:`\sigma(\operatorname{logit}(p)/t)` for each ``t`` in ``factors``; then the rules are re-run
    and TEF is compared with the best of ``baselines`` (picked per ``t`` and language on the Average)
    by a paired bootstrap over pairs resampled within dimensions.

    What to expect: Direct and Majority Vote do not move (0.5 is the fixed point); TEF without
    entropy weighting only rescales its sum (same decisions unless the log-odds clip at :math:`M`
    binds). As :math:`t \to 0` every sentence becomes decisive (:math:`w \to 1`,
    :math:`|\ell| \to M`) and TEF turns into Majority Vote; as :math:`t \to \infty`,
    :math:`w(p) \approx \ell^2 / (8 \log 2)`, so TEF follows the sign of :math:`\sum_i \ell_i^3`,
    while Soft Vote follows :math:`\sum_i \ell_i`.

    Parameters
    ----------
    df : Runs or DataFrame
        Cache rows of one or more runs (``model``/``prompt`` columns group them).
    factors : sequence of float
        Temperatures; 1 is the judge as it is.
    metric : {"accuracy", "macro_f1"}
    baselines : sequence of str
    n_boot, level, random_state
        Paired-bootstrap settings.
    invalid : {"drop", "reference"}

    Returns
    -------
    DataFrame
        ``model, prompt, lang, t, best_baseline, baseline, tef, gain, low, high, p_bootstrap,
        mean_weight, decisive_share`` (``decisive_share``: percent of sentences with weight at least
        0.5).
    """
    frame = frame_of(df)
    check_metric(metric)
    factors = [float(t) for t in factors]
    if not factors:
        raise ValueError("temperature_sweep needs at least one factor")
    if "model" not in frame.columns:
        frame = frame.assign(model="")
    keys = [*run_keys(frame), "lang"]
    rows = []
    for t in factors:
        hot = _retemper_frame(frame, t)
        pred = predict_runs(hot, rules=[*baselines, "tef"], invalid=invalid)
        res = versus_best_baseline(pred, metrics_=(metric,), baselines=baselines, n_boot=n_boot,
                                   random_state=random_state)
        flat_rows = []
        for key, g in iter_groups(hot, keys):
            flat = flatten_sentences(g["sentences"])[0]
            w = entropy_weight(flat[~np.isnan(flat)])
            flat_rows.append({**key, "mean_weight": float(w.mean()) if w.size else math.nan,
                              "decisive_share": 100 * float(np.mean(w >= 0.5)) if w.size else math.nan})
        res = res.rename(columns={"b": "best_baseline", "difference": "gain"}).assign(t=t)
        rows.append(res.merge(pd.DataFrame(flat_rows), on=keys))
    out = pd.concat(rows, ignore_index=True)
    cols = [*run_keys(out), "lang", "t", "best_baseline", "baseline", "tef", "gain", "low", "high",
            "p_bootstrap", "mean_weight", "decisive_share"]
    rank = out.groupby(keys, sort=False).ngroup().to_numpy()
    order = np.lexsort((out["t"].to_numpy(), rank))  # groups in order of appearance, t ascending
    return out[cols].iloc[order].reset_index(drop=True)


# --------------------------------------------------------------------------------------------------
# what the chapter shows
# --------------------------------------------------------------------------------------------------
_CAL_COLUMNS: dict[str, str] = {"n": "n", "n_abstain": "abstain", "accuracy": "accuracy", "confidence": "confidence",
                                "ece": "ECE", "ece_equal_mass": "ECE (equal mass)", "gap": "gap", "brier": "Brier",
                                "nll": "log-loss"}
_LOWER = ("ECE", "ECE (equal mass)", "Brier", "log-loss")


def calibration_table(cal: pd.DataFrame, labels: dict[str, str] | None = None) -> Any:
    """:func:`calibration_summary` as the chapter shows it, the best rule of each judge and language in bold.

    ECE and the gap carry their bootstrap intervals; the lowest ECE, Brier score and log-loss, the gap
    closest to zero and the highest accuracy are bold (:func:`tefcore.chapters.presentation.bold_best`);
    counts and the mean confidence are never ranked.

    Returns
    -------
    pandas.io.formats.style.Styler
        Rows ``(run, lang, method)``.
    """
    from tefcore.chapters.experiments import row_label
    from tefcore.chapters.presentation import RULE_LABELS, bold_best, format_cell, format_interval

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
    from tefcore.chapters.experiments import row_label
    from tefcore.chapters.presentation import LANG_LABELS, format_cell

    lines = []
    for key, g in iter_groups(sweep, [*run_keys(sweep), "lang"]):
        ref, best = g[g["reference"]], g.loc[g["ece"].idxmin()]
        at_ref = f"ECE {format_cell(ref['ece'].iloc[0], 3)} at T = {ref['T'].iloc[0]:g}" if len(ref) else \
            "the reference T is not on the grid"
        lines.append(f"* {row_label(key['model'], labels)}, {LANG_LABELS.get(key['lang'], key['lang'])}: {at_ref}; "
                     f"lowest on the grid {format_cell(best['ece'], 3)} at T = {best['T']:g} "
                     f"(gap there {format_cell(best['gap'], 3, signed=True)}).")
    return "\n".join(lines)
