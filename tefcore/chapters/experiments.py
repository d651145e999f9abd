r"""Comparisons and tables of the result chapters (5, 6 and 7): predictions in, tidy tables out.

The chapters read the probability caches of one or more judges (:func:`tefcore.chapters.runs.load_runs`),
turn them into per-pair predictions with :func:`tefcore.evaluate.predict_pairs` and summarise them per
run (judge and prompt). The definitions (the "Average", the strongest baseline, paired comparisons)
are those of the evaluation layer, :mod:`tefcore.evaluate`; this module applies them to the runs of a
chapter and lays the results out. The notebooks only choose, show and plot. Calibration and the temperature sweep are in :mod:`tefcore.chapters.calibration`, the
names and number formats the chapters print in :mod:`tefcore.chapters.presentation`.

Main entry points
-----------------
:func:`predict_runs`, :func:`score_runs`
    Predictions and per-dimension accuracy/macro-F1 of every rule, per judge and prompt.
:func:`average_intervals`, :func:`versus_best_baseline`, :func:`compare_runs`
    Bootstrap intervals of the "Average" (the unweighted mean over dimensions), and paired tests.
:func:`side_by_side`
    Our numbers and the paper's (Tables 3 and 4) in the paper's wide layout, each row labelled
    with where it comes from.
:func:`prompt_robustness`
    Table 1 of the paper (protocol §7) for our runs.
:func:`invalid_accounting`, :func:`posterior_summary`
    How many answers could not be read, and how decisive a judge's sentence posteriors are.

Intervals are percentile bootstrap intervals over evaluation pairs, resampled within dimensions
(each dimension keeps its size), so that an interval of the Average reflects the table's own
definition (:func:`tefcore.metrics.bootstrap_ci` with ``average_over_strata=True``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tefcore import evaluate, metrics
from tefcore.evaluate import (
    BASELINES,
    check_metric,
    dimension_average,
    flatten_sentences,
    iter_groups,
    predict_pairs,
    score_table,
    sort_table,
    strongest_baseline,
)
from tefcore.fusion import CLASSES, RULE_NAMES, weights
from tefcore.chapters.presentation import (
    LANG_LABELS,
    METRIC_LABELS,
    RULE_LABELS,
    format_interval,
    judge_label,
    paper_columns,
)
from tefcore.chapters.runs import Runs, frame_of, run_keys
from tefcore.mind.schema import ABBREVIATIONS, TABLE_ORDER

__all__ = [
    "OURS_ORIGIN",
    "PAPER_ORIGIN",
    "average_intervals",
    "compare_runs",
    "interval_table",
    "invalid_accounting",
    "labelled_intervals",
    "majority_rate",
    "posterior_summary",
    "predict_runs",
    "prompt_robustness",
    "score_runs",
    "side_by_side",
    "versus_best_baseline",
]

OURS_ORIGIN = "ours, CPU judge"
"""Row label of our numbers in side-by-side tables."""
PAPER_ORIGIN = "paper, GPU/API LLMs"
"""Row label of the paper's published numbers."""

_ORDERS: dict[str, Sequence[str]] = {"dimension": TABLE_ORDER}
"""Rows of our tables: dimensions in the paper's column order."""


# --------------------------------------------------------------------------------------------------
# predictions and tables
# --------------------------------------------------------------------------------------------------
def predict_runs(
    runs: Runs | pd.DataFrame, rules: Sequence[str] | None = None, invalid: str = "drop"
) -> pd.DataFrame:
    """:func:`tefcore.evaluate.predict_pairs` for every (model, prompt) of a set of runs.

    Returns
    -------
    DataFrame
        The columns of ``predict_pairs`` with ``model`` and ``prompt`` in front (when present).
    """
    frame = frame_of(runs)
    keys = run_keys(frame)
    out = []
    for key, g in iter_groups(frame, keys):
        pred = predict_pairs(g.reset_index(drop=True), rules=rules, invalid=invalid)
        for i, (k, v) in enumerate(key.items()):
            pred.insert(i, k, v)
        out.append(pred)
    if not out:
        raise ValueError("predict_runs: the runs hold no pairs")
    return pd.concat(out, ignore_index=True)


def score_runs(pred: pd.DataFrame) -> pd.DataFrame:
    """:func:`tefcore.evaluate.score_table` grouped by model, prompt (when present), language, rule, dimension."""
    return score_table(pred, by=[*run_keys(pred), "lang", "rule", "dimension"], orders=_ORDERS)


def majority_rate(frame: Runs | pd.DataFrame) -> pd.DataFrame:
    """Accuracy and macro-F1 of always answering the more frequent side, per language and dimension.

    The pairs are every distinct (post, language, dimension) of the runs: the gold side does not depend
    on the judge, and a partial cache (an extraction still running) then does not shrink the reference.

    Returns
    -------
    DataFrame
        ``lang, dimension, n, majority_side, accuracy, macro_f1`` with an ``Average`` row per language
        (unweighted mean over dimensions, like the tables).
    """
    df = frame_of(frame).drop_duplicates(["post_id", "lang", "dimension"])
    counts = df.groupby(["lang", "dimension"], sort=False)["side"].value_counts().unstack(fill_value=0)
    for side in CLASSES:
        if side not in counts.columns:
            counts[side] = 0
    n = counts["change"] + counts["stability"]
    major = np.where(counts["change"] >= counts["stability"], "change", "stability")
    share = np.maximum(counts["change"], counts["stability"]) / n
    out = pd.DataFrame({"n": n, "majority_side": major, "accuracy": 100 * share,
                        # F1 of the majority side is 2s/(1+s); the other side scores 0
                        "macro_f1": 100 * share / (1 + share)}).reset_index()
    out = pd.concat([out, dimension_average(out, ["lang"], counts=["n"])], ignore_index=True)
    return sort_table(out, ["lang", "dimension"], _ORDERS)


def average_intervals(
    pred: pd.DataFrame,
    *,
    metrics_: Sequence[str] = ("accuracy", "macro_f1"),
    rules: Sequence[str] | None = None,
    n_boot: int = 1000,
    level: float = 0.95,
    random_state: int = 0,
    extra_keys: Sequence[str] = (),
) -> pd.DataFrame:
    """Bootstrap intervals of the Average (unweighted mean over dimensions) per run, language and rule.

    Pairs are resampled within dimensions; each replicate's statistic is the mean over dimensions of
    the per-dimension metric, as in the tables (:func:`tefcore.metrics.bootstrap_ci`).

    Parameters
    ----------
    pred : DataFrame
        :func:`predict_runs` output.
    metrics_ : sequence of {"accuracy", "macro_f1"}
    rules : sequence of str, optional
        Default: every rule present.
    n_boot, level, random_state
        Bootstrap settings (same seed for every group, so rules are resampled alike).
    extra_keys : sequence of str
        Further grouping columns (e.g. ``"policy"`` when predictions of two invalid-answer policies
        are stacked).

    Returns
    -------
    DataFrame
        ``model, prompt, lang, rule, metric, estimate, low, high, n``.
    """
    keys = [*run_keys(pred), *extra_keys, "lang", "rule"]
    data = pred if rules is None else pred[pred["rule"].isin(list(rules))]
    rows = []
    for key, g in iter_groups(data, keys):
        for metric in metrics_:
            ci = metrics.bootstrap_ci(check_metric(metric), g["side"].to_numpy(), g["prediction"].to_numpy(),
                                      n_boot=n_boot, level=level, strata=g["dimension"].to_numpy(),
                                      average_over_strata=True, random_state=random_state)
            rows.append({**key, "metric": metric, "estimate": ci.estimate, "low": ci.low, "high": ci.high,
                         "n": len(g)})
    return sort_table(pd.DataFrame(rows), keys) if rows else pd.DataFrame(rows)


def labelled_intervals(cis: pd.DataFrame) -> pd.DataFrame:
    """:func:`average_intervals` output with ``judge``, ``method`` and a formatted ``cell`` column.

    ``cell`` reads ``estimate [low, high]`` (:func:`tefcore.chapters.presentation.format_interval`); ``judge`` and
    ``method`` are the display names of ``model`` and ``rule``.
    """
    out = cis.copy()
    out["judge"] = out["model"].map(judge_label)
    out["method"] = out["rule"].map(RULE_LABELS)
    out["cell"] = [format_interval(e, lo, hi) for e, lo, hi in zip(out["estimate"], out["low"], out["high"])]
    return out


def interval_table(cis: pd.DataFrame, rules: Sequence[str],
                   metric_names: Sequence[str] = ("accuracy", "macro_f1")) -> pd.DataFrame:
    """Wide table of :func:`labelled_intervals` cells: rows (judge, lang), columns (metric, method).

    Columns follow ``metric_names`` then ``rules`` in the given order; rules absent from ``cis`` are
    skipped.
    """
    wide = cis.pivot_table(index=["judge", "lang"], columns=["metric", "method"], values="cell",
                           aggfunc="first", sort=False)
    cols = [(m, RULE_LABELS[r]) for m in metric_names for r in rules]
    return wide[[c for c in cols if c in wide.columns]]


def compare_runs(pred: pd.DataFrame, a: str, b: str | Mapping[tuple[Any, ...], str], **options: Any) -> pd.DataFrame:
    """:func:`tefcore.evaluate.paired_comparisons` per run (model, prompt) and language.

    Parameters
    ----------
    pred : DataFrame
        :func:`predict_runs` output.
    a, b
        The rule under test and the rule compared with (or a mapping from ``(model, prompt, lang)``
        to it).
    **options
        Further options of :func:`tefcore.evaluate.paired_comparisons` (``metric``, ``n_boot``,
        ``strata``, ``by`` ...).
    """
    return evaluate.paired_comparisons(pred, a, b, **{"by": [*run_keys(pred), "lang"], **options})


def versus_best_baseline(
    pred: pd.DataFrame,
    *,
    metrics_: Sequence[str] = ("accuracy", "macro_f1"),
    baselines: Sequence[str] = BASELINES,
    n_boot: int = 1000,
    random_state: int = 0,
) -> pd.DataFrame:
    """TEF against the strongest baseline per (model, prompt, language) and metric.

    The strongest baseline is the best of ``baselines`` on the Average of the same metric, picked on
    the same pairs it is then compared on (this choice favours the baseline, so it makes TEF's gain,
    if any, smaller rather than larger).

    Returns
    -------
    DataFrame
        :func:`compare_runs` rows (``a = "tef"``, ``b`` = the strongest baseline) plus
        ``tef`` and ``baseline`` (the two Averages).
    """
    table = score_runs(pred[pred["rule"].isin([*baselines, "tef"])])
    avg = table[table["dimension"] == evaluate.AVERAGE]
    keys = [*run_keys(pred), "lang"]
    out = []
    for metric in metrics_:
        best = strongest_baseline(avg, keys, value=metric, baselines=baselines)
        mapping = {tuple(r[k] for k in keys): r["strongest_baseline"] for r in best.reset_index().to_dict("records")}
        cmp = compare_runs(pred, "tef", mapping, metric=metric, n_boot=n_boot, random_state=random_state)
        best = best.reset_index().rename(columns={"strongest_baseline": "b"})
        out.append(cmp.merge(best[[*keys, "tef"]], on=keys).merge(best[[*keys, "b", "baseline"]], on=[*keys, "b"]))
    return pd.concat(out, ignore_index=True)


# --------------------------------------------------------------------------------------------------
# side by side with the paper
# --------------------------------------------------------------------------------------------------
def side_by_side(
    ours: pd.DataFrame,
    paper_table: pd.DataFrame | None = None,
    *,
    rules: Sequence[str] | None = None,
    paper_models: Sequence[str] | None = None,
    langs: Sequence[str] = ("zh", "en"),
    metrics_: Sequence[str] = ("accuracy", "macro_f1"),
) -> pd.DataFrame:
    """Our per-dimension numbers and the paper's in one wide table, in the paper's layout.

    Parameters
    ----------
    ours : DataFrame
        :func:`score_runs` output (columns ``model, lang, rule, dimension, accuracy, macro_f1``; a
        ``prompt`` column, if present, should hold one value).
    paper_table : DataFrame, optional
        The paper's Table 3 or Table 4 in tidy form (:func:`tefcore.chapters.paper.load_table`); its printed
        ``Average`` rows are kept, missing ones are the mean over the six dimensions.
    rules : sequence of str, optional
        Rules to show (default: those in ``ours``), in this order.
    paper_models : sequence of str, optional
        The paper's models to show (default: all in ``paper_table``).
    langs : sequence of str
        Languages, in the order of the rows (the paper shows Chinese first).
    metrics_ : sequence of str

    Returns
    -------
    DataFrame
        Index ``(language, source, judge, method)`` where ``source`` is ``"ours, CPU judge"`` or
        ``"paper, GPU/API LLMs"``; columns ``(Cul. ... Env., Average) x (Acc, F1)``; one decimal.
    """
    rules = list(rules) if rules is not None else [r for r in RULE_NAMES if r in set(ours["rule"])]
    long = []
    o = ours[ours["rule"].isin(rules)]
    for metric in metrics_:
        part = o[["model", "lang", "rule", "dimension", metric]].rename(columns={metric: "value"})
        long.append(part.assign(metric=metric, source=OURS_ORIGIN))
    if paper_table is not None and len(paper_table):
        p = paper_table[paper_table["method"].isin(rules) & paper_table["metric"].isin(list(metrics_))]
        if paper_models is not None:
            p = p[p["model"].isin(list(paper_models))]
        p = p.rename(columns={"method": "rule"})[["model", "lang", "rule", "dimension", "metric", "value"]]
        dims = p[p["dimension"] != evaluate.AVERAGE]
        printed = p[p["dimension"] == evaluate.AVERAGE]
        mean = dimension_average(dims, ["model", "lang", "rule", "metric"], ["value"])
        if len(printed):
            mean = mean.merge(printed[["model", "lang", "rule", "metric"]], how="left", indicator=True)
            mean = mean[mean["_merge"] == "left_only"].drop(columns="_merge")
        long.append(pd.concat([dims, printed, mean], ignore_index=True).assign(source=PAPER_ORIGIN))
    tidy = pd.concat(long, ignore_index=True)
    tidy = tidy[tidy["lang"].isin(list(langs))]
    tidy["language"] = tidy["lang"].map(lambda x: LANG_LABELS.get(x, x))
    tidy["judge"] = tidy["model"].map(judge_label)
    tidy["method"] = tidy["rule"].map(lambda r: RULE_LABELS.get(r, r))
    tidy["dim"] = tidy["dimension"].map(lambda d: ABBREVIATIONS.get(d, d))
    tidy["m"] = tidy["metric"].map(METRIC_LABELS)
    wide = tidy.pivot_table(index=["language", "source", "judge", "method"], columns=["dim", "m"],
                            values="value", aggfunc="first", sort=False)
    wide = wide[paper_columns(wide.columns, [METRIC_LABELS[m] for m in metrics_])]
    wide.columns.names = [None, None]
    # row order: languages as asked, ours first, judges in input order, methods in rule order
    lang_order = [LANG_LABELS.get(x, x) for x in langs]
    judge_order = [judge_label(m) for m in pd.unique(tidy["model"])]
    method_order = [RULE_LABELS.get(r, r) for r in rules]
    idx = wide.index.to_frame(index=False)
    sort_key = (idx["language"].map(lang_order.index) * 10**6
                + idx["source"].map({OURS_ORIGIN: 0, PAPER_ORIGIN: 1}) * 10**5
                + idx["judge"].map(judge_order.index) * 10**2 + idx["method"].map(method_order.index))
    return wide.iloc[np.argsort(sort_key.to_numpy(), kind="stable")].round(1)


# --------------------------------------------------------------------------------------------------
# invalid answers and what the posteriors look like
# --------------------------------------------------------------------------------------------------
def invalid_accounting(runs: Runs | pd.DataFrame) -> pd.DataFrame:
    """How many answers could not be read, per model, prompt and language.

    Returns
    -------
    DataFrame
        ``pairs``, ``sentences``, ``invalid_direct`` (unreadable whole-post answers: Direct abstains),
        ``invalid_sentences`` (left out of the fusion under ``invalid="drop"``),
        ``pairs_without_readable_sentence`` (every sentence rule abstains), the share of invalid
        sentences in percent, and one ``source: X`` column per answer source found in
        ``sentence_sources`` (how each sentence probability was read).
    """
    df = frame_of(runs)
    keys = [*run_keys(df), "lang"]
    flat, row = flatten_sentences(df["sentences"])
    lengths = np.bincount(row, minlength=len(df))
    n_bad = np.bincount(row, weights=np.isnan(flat), minlength=len(df))
    work = df[keys].copy()
    work["pairs"] = 1
    work["sentences"] = lengths
    work["invalid_direct"] = df["direct"].isna().to_numpy().astype(int)
    work["invalid_sentences"] = n_bad.astype(int)
    work["pairs_without_readable_sentence"] = (n_bad == lengths).astype(int)
    out = work.groupby(keys, sort=False).sum().reset_index()
    out["invalid_sentence_share"] = 100 * out["invalid_sentences"] / out["sentences"].clip(lower=1)
    if "sentence_sources" in df.columns:
        src = pd.DataFrame({**{k: np.repeat(df[k].to_numpy(), lengths) for k in keys},
                            "source": flatten_sentences(df["sentence_sources"], dtype=object)[0]})
        counts = src.groupby(keys, sort=False)["source"].value_counts().unstack(fill_value=0)
        counts.columns = [f"source: {c}" for c in counts.columns]
        out = out.merge(counts.reset_index(), on=keys, how="left")
    return out


def posterior_summary(runs: Runs | pd.DataFrame, decisive: float = 0.5) -> pd.DataFrame:
    r"""How decisive a judge's sentence posteriors are, per model, prompt and language.

    With :math:`w(p) = 1 - H(p)/\log 2` the TEF weight of a sentence, reports the number of readable
    sentences, the mean and spread of P(change) (standard deviation, 5th and 95th percentiles), the mean and
    median weight, the share of decisive sentences (:math:`w \ge` ``decisive``; :math:`w = 0.5` is
    :math:`p \approx 0.89` or :math:`0.11`), the median :math:`|\ell(p)|`, the share of posts whose
    readable sentences all lean to the same side (``unanimous_posts``, percent: there Majority Vote,
    Soft Vote and TEF cannot disagree) and the spread of the whole-post (Direct) probabilities.
    """
    df = frame_of(runs)
    keys = [*run_keys(df), "lang"]
    rows = []
    for key, g in iter_groups(df, keys):
        flat, doc = flatten_sentences(g["sentences"])
        ok = ~np.isnan(flat)
        p = flat[ok]
        d = g["direct"].to_numpy(dtype=np.float64)
        d = d[~np.isnan(d)]
        if p.size == 0:
            rows.append({**key, "sentences": 0})
            continue
        doc = doc[ok]
        n_read = np.bincount(doc, minlength=len(g))
        n_change = np.bincount(doc, weights=p >= 0.5, minlength=len(g))
        read = n_read > 0
        unanimous = (n_change[read] == 0) | (n_change[read] == n_read[read])
        w = weights(p)
        with np.errstate(divide="ignore"):
            ell = np.abs(np.log(p) - np.log1p(-p))
        rows.append({**key, "sentences": int(p.size), "p_mean": float(p.mean()), "p_std": float(p.std()),
                     "p_q05": float(np.quantile(p, 0.05)), "p_q95": float(np.quantile(p, 0.95)),
                     "mean_weight": float(w.mean()), "median_weight": float(np.median(w)),
                     "decisive_share": 100 * float(np.mean(w >= decisive)),
                     "median_abs_log_odds": float(np.median(np.minimum(ell, 10.0))),
                     "unanimous_posts": 100 * float(unanimous.mean()),
                     "direct_std": float(d.std()) if d.size else math.nan})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------
# Table 1: prompt robustness
# --------------------------------------------------------------------------------------------------
def prompt_robustness(
    pred: pd.DataFrame,
    *,
    baselines: Sequence[str] = BASELINES,
    n_boot: int = 1000,
    random_state: int = 0,
    reference_prompt: str = "original",
) -> pd.DataFrame:
    r"""Table 1 of the paper for our runs (protocol §7).

    Per model and prompt variant: the mean over the languages of the Average accuracy of each rule;
    the strongest baseline is the best of ``baselines`` for that variant separately; TEF's gain over
    it with a paired bootstrap interval (pairs resampled within the language-dimension cells, the
    statistic being the mean over those cells, which equals the mean over languages of the
    per-language Average when every language has the same dimensions).

    Returns
    -------
    DataFrame
        ``model, prompt, langs, strongest_baseline, baseline, tef, gain, low, high, p_bootstrap,
        p_mcnemar``, plus ``drop_baseline`` and ``drop_tef`` (accuracy lost against
        ``reference_prompt``, NaN when that variant is absent).
    """
    if "prompt" not in pred.columns or "model" not in pred.columns:
        raise ValueError("prompt_robustness needs predictions with 'model' and 'prompt' columns")
    table = score_runs(pred[pred["rule"].isin([*baselines, "tef"])])
    avg = table[table["dimension"] == evaluate.AVERAGE]
    best = strongest_baseline(avg, ["model", "prompt"], value="accuracy", baselines=baselines)
    langs = avg.groupby(["model", "prompt"], sort=False)["lang"].agg(lambda s: ",".join(sorted(set(s))))
    out = pd.DataFrame({"langs": langs, **best.reindex(langs.index)})
    mapping = {k: v for k, v in out["strongest_baseline"].items()}
    cmp = evaluate.paired_comparisons(pred, "tef", mapping, by=["model", "prompt"], metric="accuracy",
                                      n_boot=n_boot, random_state=random_state, strata=("lang", "dimension"))
    out = out.reset_index().merge(cmp[["model", "prompt", "low", "high", "p_bootstrap", "p_mcnemar"]],
                                  on=["model", "prompt"], how="left")
    ref = out[out["prompt"] == reference_prompt].set_index("model")
    out["drop_baseline"] = out["model"].map(ref["baseline"]) - out["baseline"]
    out["drop_tef"] = out["model"].map(ref["tef"]) - out["tef"]
    return out

