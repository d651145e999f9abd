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
    with where it comes from: ours from the caches' provenance
    (:func:`tefcore.chapters.runs.row_labels`), the paper's as ``"paper: <model>"``, with the pairs
    per dimension and the majority-class rate of the same pairs beside them.
:func:`below_floor`, :func:`floor_markdown`
    Which of our results fall below the majority-class rate, in a table and in words.
:func:`gain_facts`, :func:`gain_markdown`, :func:`versus_table`
    TEF against the strongest baseline: the numbers a chapter's prose quotes, and the table.
:func:`has_invalid`, :func:`policy_table`
    Whether any answer could not be read, and the Averages under both invalid-answer policies.
:func:`ablation_comparisons`, :func:`comparison_table`, :func:`soft_vote_margins`
    Chapter 6: full TEF against its ablations, and every variant's margin over Soft Vote.
:func:`prompt_robustness`, :func:`prompt_coverage`, :func:`prompt_table`, :func:`prompt_by_language`,
:func:`paper_prompt_facts`
    Table 1 of the paper (protocol §7) for our runs, with every requested variant shown (``not run``
    where its caches are missing), and the paper's margins in numbers.
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
from tefcore.fusion import CLASSES, RULE_NAMES, entropy_weight
from tefcore.chapters.presentation import (
    LANG_LABELS,
    METRIC_LABELS,
    RULE_LABELS,
    bold_best,
    format_cell,
    format_interval,
    format_p,
    judge_label,
    paper_columns,
    round_half_up,
    short_label,
)
from tefcore.chapters.provenance import PAPER_LABEL
from tefcore.chapters.runs import Runs, chapter_runs, data_statement, frame_of, row_labels, run_keys
from tefcore.mind.release import FULL_RELEASE_DIR
from tefcore.mind.schema import ABBREVIATIONS, TABLE_ORDER

__all__ = [
    "open_runs",
    "ABLATION_NAMES",
    "COUNT_ROW",
    "FLOOR_ROW",
    "NOT_RUN",
    "REFERENCE_ROWS",
    "REFERENCE_RUN",
    "ablation_comparisons",
    "ablation_markdown",
    "average_intervals",
    "below_floor",
    "compare_runs",
    "comparison_table",
    "complete_runs",
    "effect_markdown",
    "effects_table",
    "reproduce_markdown",
    "floor_markdown",
    "gain_facts",
    "gain_markdown",
    "has_invalid",
    "interval_table",
    "invalid_accounting",
    "labelled_intervals",
    "majority_rate",
    "paper_ablation_facts",
    "paper_gain_table",
    "paper_label",
    "paper_prompt_facts",
    "table1_side_by_side",
    "MARGIN_ROW",
    "prompt_markdown",
    "prompt_posteriors",
    "policy_table",
    "posterior_summary",
    "predict_runs",
    "prompt_by_language",
    "prompt_coverage",
    "prompt_robustness",
    "prompt_table",
    "row_label",
    "score_runs",
    "side_by_side",
    "templates_markdown",
    "soft_vote_margins",
    "versus_best_baseline",
    "versus_table",
]


def open_runs(models: str | Sequence[str], prompts: str | Sequence[str], langs: str | Sequence[str],
              cache_dir: str, reading: str = "summed", show: bool = True) -> tuple[Runs, dict[str, str]]:
    """A result chapter's opening: load its runs, label them from their provenance and say what they are.

    Loads the caches (:func:`tefcore.chapters.runs.chapter_runs`), labels each judge's rows
    (:func:`tefcore.chapters.runs.row_labels`) and, with ``show``, displays which data the caches hold
    (:func:`tefcore.chapters.runs.data_statement`), the notes on missing or mismatched caches and the
    table of judges.

    Returns
    -------
    runs : Runs
    labels : dict of str to str
        Registry name -> row label.
    """
    from tefcore.chapters.presentation import say, show_judges

    runs = chapter_runs(models, prompts, langs, cache_dir, reading=reading)
    labels = row_labels(runs)
    if show:
        say(data_statement(runs), runs.notes_markdown)
        show_judges(models, labels)
    return runs, labels

COUNT_ROW = "pairs (n)"
"""Row of a side-by-side table that counts the evaluation pairs of each dimension."""
FLOOR_ROW = "majority class"
"""Row of a side-by-side table with the majority-class rate of the same pairs (the floor)."""
REFERENCE_ROWS: tuple[str, ...] = (COUNT_ROW, FLOOR_ROW)
"""Rows that are shown beside the rules but never ranked (:func:`tefcore.chapters.presentation.bold_best`)."""
REFERENCE_RUN = "ours: the pairs scored"
"""The run label of the counts and the majority-class rate."""
NOT_RUN = "not run"
"""What a table says where a run's caches are missing (never 0.0)."""

_ORDERS: dict[str, Sequence[str]] = {"dimension": TABLE_ORDER}
"""Rows of our tables: dimensions in the paper's column order."""

_METRIC_NAMES: dict[str, str] = {"accuracy": "accuracy", "macro_f1": "macro-F1"}


def row_label(model: str, labels: Mapping[str, str] | None = None) -> str:
    """The label of a judge's rows: its provenance label (:func:`tefcore.chapters.runs.row_labels`), else
    ``"ours: <the book's name of the judge>"``.

    Examples
    --------
    >>> row_label("local", {"local": "ours: SmolLM2-135M, llama.cpp, CPU, MIND sample"})
    'ours: SmolLM2-135M, llama.cpp, CPU, MIND sample'
    >>> row_label("my-judge")
    'ours: my-judge'
    """
    return (labels or {}).get(model) or f"ours: {judge_label(model)}"


def paper_label(model: str) -> str:
    """The label of the paper's rows of a model: ``"paper: <model>"``.

    Examples
    --------
    >>> paper_label("qwen2.5-7b")
    'paper: Qwen2.5-7B'
    """
    return f"{PAPER_LABEL}: {judge_label(model)}"


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
    if df.empty:
        return pd.DataFrame(columns=["lang", "dimension", "n", "majority_side", "accuracy", "macro_f1"])
    counts = pd.crosstab([df["lang"], df["dimension"]], df["side"])
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


def labelled_intervals(cis: pd.DataFrame, labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """:func:`average_intervals` output with ``run``, ``judge``, ``method`` and a formatted ``cell`` column.

    ``cell`` reads ``estimate [low, high]`` (:func:`tefcore.chapters.presentation.format_interval`);
    ``run`` is the label of the judge's rows (:func:`row_label`), ``judge`` the book's short name of the
    judge and ``method`` the paper's name of the rule.
    """
    out = cis.copy()
    out["run"] = out["model"].map(lambda m: row_label(m, labels))
    out["judge"] = out["model"].map(judge_label)
    out["method"] = out["rule"].map(RULE_LABELS)
    out["cell"] = [format_interval(e, lo, hi) for e, lo, hi in zip(out["estimate"], out["low"], out["high"])]
    return out


def interval_table(cis: pd.DataFrame, rules: Sequence[str],
                   metric_names: Sequence[str] = ("accuracy", "macro_f1")) -> Any:
    """The Averages with their intervals in the paper's layout, the best rule of each run in bold.

    Parameters
    ----------
    cis : DataFrame
        :func:`labelled_intervals` output.
    rules : sequence of str
        Rules, in the order of the rows (absent ones are skipped).
    metric_names : sequence of str
        Metrics, in the order of the columns.

    Returns
    -------
    pandas.io.formats.style.Styler
        Rows ``(run, lang, method)``, one column per metric with ``estimate [low, high]``; the best
        estimate of each (run, language) in bold (:func:`tefcore.chapters.presentation.bold_best`).
    """
    keep = cis[cis["rule"].isin(list(rules)) & cis["metric"].isin(list(metric_names))]
    order = {"rule": list(rules), "metric": list(metric_names)}
    keep = sort_table(keep, ["run", "lang", "rule", "metric"], {**order, "run": list(pd.unique(keep["run"])),
                                                                 "lang": list(pd.unique(keep["lang"]))})
    text = keep.pivot_table(index=["run", "lang", "method"], columns="metric", values="cell", aggfunc="first",
                            sort=False)
    values = keep.pivot_table(index=["run", "lang", "method"], columns="metric", values="estimate",
                              aggfunc="first", sort=False)
    cols = [m for m in metric_names if m in text.columns]
    text, values = text[cols], values[cols].reindex(text.index)
    text.columns = values.columns = pd.Index([_METRIC_NAMES.get(m, m) for m in cols], name=None)
    return bold_best(text, values=values, by=["run", "lang"])


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


def _in_run_order(frame: pd.DataFrame, then: Sequence[str]) -> pd.DataFrame:
    """Rows by judge and language in order of first appearance, then by ``then`` (also in that order)."""
    keys = [*run_keys(frame), "lang", *then]
    return sort_table(frame, keys, {k: list(pd.unique(frame[k])) for k in keys})


def versus_table(vs: pd.DataFrame, labels: Mapping[str, str] | None = None, n_boot: int | None = None) -> pd.DataFrame:
    """:func:`versus_best_baseline` as a chapter shows it, numbers as text.

    Returns
    -------
    DataFrame
        Index ``(run, lang, metric)``; columns ``strongest`` (the paper's name of the best baseline),
        ``baseline``, ``TEF``, ``TEF - baseline`` (with its paired-bootstrap interval), ``p (bootstrap)``,
        ``b`` and ``c`` (pairs only TEF / only the baseline gets right) and ``p (McNemar)``.
    """
    vs = _in_run_order(vs, ["metric"])
    out = pd.DataFrame({
        "run": vs["model"].map(lambda m: row_label(m, labels)), "lang": vs["lang"],
        "metric": vs["metric"].map(lambda m: _METRIC_NAMES.get(m, m)),
        "strongest": vs["b"].map(RULE_LABELS), "baseline": vs["baseline"].map(format_cell),
        "TEF": vs["tef"].map(format_cell),
        "TEF - baseline": [format_interval(d, lo, hi, signed=True)
                           for d, lo, hi in zip(vs["difference"], vs["low"], vs["high"])],
        "p (bootstrap)": [format_p(p, n_boot) for p in vs["p_bootstrap"]],
        "b": vs["mcnemar_b"], "c": vs["mcnemar_c"], "p (McNemar)": [format_p(p) for p in vs["p_mcnemar"]],
    })
    return out.set_index(["run", "lang", "metric"])


def gain_facts(vs: pd.DataFrame, labels: Mapping[str, str] | None = None, metric: str = "accuracy") -> dict[str, Any]:
    """The numbers a chapter's prose quotes about TEF against the strongest baseline, for one metric.

    Returns
    -------
    dict
        ``cells`` (run-language cells), ``gain_min`` and ``gain_max`` (points), ``n_above``, ``n_below``
        and ``n_crossing`` (cells whose 95 % interval lies above zero, below zero, or crosses it) and
        ``above`` / ``below`` (those cells named, or ``"none"``).
    """
    m = vs[vs["metric"] == metric]
    up, down = m[m["low"] > 0], m[m["high"] < 0]

    def named(frame: pd.DataFrame) -> str:
        return "; ".join(f"{row_label(r['model'], labels)}, {LANG_LABELS.get(r['lang'], r['lang'])}"
                         for _, r in frame.iterrows()) or "none"

    if len(up) == 0:
        verdict = ("In none of our cells is TEF clearly ahead of the strongest baseline: on these judges and "
                   "these pairs TEF does not beat the best of Direct, MV and SV.")
    elif len(up) == len(m):
        verdict = "TEF is clearly ahead of the strongest baseline in every cell of ours."
    else:
        verdict = (f"TEF is clearly ahead of the strongest baseline in {len(up)} of {len(m)} cells of ours, "
                   "not in the others.")
    return {"cells": len(m), "gain_min": float(m["difference"].min()), "gain_max": float(m["difference"].max()),
            "n_above": len(up), "n_below": len(down), "n_crossing": len(m) - len(up) - len(down),
            "above": named(up), "below": named(down), "verdict": verdict}


def paper_gain_table(table3: pd.DataFrame) -> pd.DataFrame:
    """The paper's TEF minus its strongest baseline on the Average, per model and language (Table 3).

    Returns
    -------
    DataFrame
        Index ``(run, lang)`` (``"paper: <model>"``, the paper's model order, Chinese first); columns
        ``strongest`` (accuracy's best baseline) and the gain in ``accuracy`` and ``macro-F1`` (points).
    """
    from tefcore.chapters import paper

    g = paper.strongest_baseline_gain(table3, level="model_lang").reset_index()
    g = sort_table(g, ["model", "lang"], {"model": paper.MODELS, "lang": ["zh", "en"]})
    wide = g.pivot_table(index=["model", "lang"], columns="metric", values="gain", sort=False)
    best = g[g["metric"] == "accuracy"].set_index(["model", "lang"])["strongest_baseline"]
    out = pd.DataFrame({"strongest": best.reindex(wide.index).map(RULE_LABELS),
                        **{_METRIC_NAMES[m]: wide[m] for m in ("accuracy", "macro_f1")}})
    out.index = pd.MultiIndex.from_tuples([(paper_label(m), lang) for m, lang in out.index], names=["run", "lang"])
    return out


def gain_markdown(vs: pd.DataFrame, labels: Mapping[str, str] | None = None, metric: str = "accuracy") -> str:
    """One bullet per run and language: TEF's Average, the strongest baseline's, and the paired difference."""
    lines = []
    for _, r in vs[vs["metric"] == metric].iterrows():
        diff = format_interval(r["difference"], r["low"], r["high"], signed=True)
        verdict = ("TEF ahead" if r["low"] > 0 else "the baseline ahead" if r["high"] < 0
                   else "no difference the interval can tell")
        lines.append(f"* {row_label(r['model'], labels)}, {LANG_LABELS.get(r['lang'], r['lang'])}: TEF "
                     f"{format_cell(r['tef'])} against {RULE_LABELS[r['b']]} {format_cell(r['baseline'])}, "
                     f"difference {diff} points: {verdict}.")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# side by side with the paper
# --------------------------------------------------------------------------------------------------
def _paper_long(paper_table: pd.DataFrame, rules: Sequence[str], paper_models: Sequence[str] | None,
                metrics_: Sequence[str]) -> pd.DataFrame:
    """The paper's six dimensions and their mean (the one definition of the Average), long form."""
    p = paper_table[paper_table["method"].isin(list(rules)) & paper_table["metric"].isin(list(metrics_))]
    if paper_models is not None:
        p = p[p["model"].isin(list(paper_models))]
    dims = p[p["dimension"] != evaluate.AVERAGE].rename(columns={"method": "rule"})
    dims = dims[["model", "lang", "rule", "dimension", "metric", "value"]]
    mean = dimension_average(dims, ["model", "lang", "rule", "metric"], ["value"])
    out = pd.concat([dims, mean], ignore_index=True)
    return out.assign(run=out["model"].map(paper_label), order=2)


def _reference_long(reference: pd.DataFrame, metrics_: Sequence[str]) -> pd.DataFrame:
    """The counts and the majority-class rate of :func:`majority_rate`, long form."""
    parts = [reference.assign(rule=FLOOR_ROW, metric=m, value=reference[m]) for m in metrics_]
    parts += [reference.assign(rule=COUNT_ROW, metric=m, value=reference["n"]) for m in metrics_]
    out = pd.concat(parts, ignore_index=True)[["lang", "rule", "dimension", "metric", "value"]]
    return out.assign(run=REFERENCE_RUN, order=0)


def side_by_side(
    ours: pd.DataFrame,
    paper_table: pd.DataFrame | None = None,
    *,
    labels: Mapping[str, str] | None = None,
    reference: pd.DataFrame | None = None,
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
        The paper's Table 3 or Table 4 in tidy form (:func:`tefcore.chapters.paper.load_table`). Its
        Average is the mean of its six printed dimensions, for both tables (Table 4's printed
        Average is that mean rounded half up, :func:`tefcore.chapters.paper.table4_average_check`),
        so that one quantity has one value in every chapter.
    labels : mapping, optional
        The label of each judge's rows (:func:`tefcore.chapters.runs.row_labels`); default
        :func:`row_label`.
    reference : DataFrame, optional
        :func:`majority_rate` of the same pairs: shown first in each language as the rows
        :data:`COUNT_ROW` (pairs per dimension) and :data:`FLOOR_ROW` (the majority-class rate), under
        the run :data:`REFERENCE_RUN`.
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
        Index ``(language, run, method)``: ``run`` is the label of our judge's rows or
        ``"paper: <model>"`` (:func:`paper_label`); columns ``(Cul. ... Env., Average) x (Acc, F1)``.
        Numbers as computed (the chapters round them when they print them); the counts are integers.
    """
    rules = list(rules) if rules is not None else [r for r in RULE_NAMES if r in set(ours["rule"])]
    o = ours[ours["rule"].isin(rules)]
    long = [pd.concat([o[["model", "lang", "rule", "dimension", m]].rename(columns={m: "value"}).assign(metric=m)
                       for m in metrics_], ignore_index=True)]
    long[0] = long[0].assign(run=long[0]["model"].map(lambda m: row_label(m, labels)), order=1)
    if reference is not None and len(reference):
        long.append(_reference_long(reference, metrics_))
    if paper_table is not None and len(paper_table):
        long.append(_paper_long(paper_table, rules, paper_models, metrics_))
    tidy = pd.concat(long, ignore_index=True)
    tidy = tidy[tidy["lang"].isin(list(langs))]
    tidy["language"] = tidy["lang"].map(lambda x: LANG_LABELS.get(x, x))
    tidy["method"] = tidy["rule"].map(lambda r: RULE_LABELS.get(r, r))
    tidy["dim"] = tidy["dimension"].map(lambda d: ABBREVIATIONS.get(d, d))
    tidy["m"] = tidy["metric"].map(METRIC_LABELS)
    runs = list(pd.unique(tidy.sort_values("order", kind="stable")["run"]))
    methods = [*REFERENCE_ROWS, *(RULE_LABELS.get(r, r) for r in rules)]
    tidy = sort_table(tidy, ["language", "run", "method"], {
        "language": [LANG_LABELS.get(x, x) for x in langs], "run": runs, "method": methods})
    wide = tidy.pivot_table(index=["language", "run", "method"], columns=["dim", "m"], values="value",
                            aggfunc="first", sort=False)
    wide = wide[paper_columns(wide.columns, [METRIC_LABELS[m] for m in metrics_])].astype(object)
    wide.columns.names = [None, None]
    counts = wide.index.get_level_values("method") == COUNT_ROW
    wide.loc[counts] = wide.loc[counts].map(lambda v: int(v) if pd.notna(v) else v)
    return wide


# --------------------------------------------------------------------------------------------------
# the majority-class floor
# --------------------------------------------------------------------------------------------------
def below_floor(table: pd.DataFrame, reference: pd.DataFrame, metric: str = "accuracy") -> pd.DataFrame:
    """Our Averages that fall below the majority-class rate of the same pairs.

    Parameters
    ----------
    table : DataFrame
        :func:`score_runs` output.
    reference : DataFrame
        :func:`majority_rate` of the same pairs.
    metric : {"accuracy", "macro_f1"}

    Returns
    -------
    DataFrame
        ``model, [prompt,] lang, rule, <metric>, floor`` for every Average under the floor.
    """
    floor = reference[reference["dimension"] == evaluate.AVERAGE].set_index("lang")[metric]
    avg = table[table["dimension"] == evaluate.AVERAGE]
    avg = avg.assign(floor=avg["lang"].map(floor))
    return avg.loc[avg[metric] < avg["floor"], [*run_keys(avg), "lang", "rule", metric, "floor"]] \
        .reset_index(drop=True)


def floor_markdown(table: pd.DataFrame, reference: pd.DataFrame, labels: Mapping[str, str] | None = None) -> str:
    """Which of our results fall below the majority-class floor (Average accuracy), as Markdown.

    One bullet per run and language with at least one rule below the floor: the rules and their
    Average accuracy against the floor; one sentence when no result is below it.
    """
    below = below_floor(table, reference)
    avg = table[table["dimension"] == evaluate.AVERAGE]
    if below.empty:
        return ("Every Average accuracy of ours clears the majority-class floor of its language "
                f"({len(avg)} judge-language-rule cells).")
    lines = []
    keys = [*run_keys(below), "lang"]
    for key, g in iter_groups(below, keys):
        rules = ", ".join(f"{RULE_LABELS[r]} {format_cell(v)}" for r, v in zip(g["rule"], g["accuracy"]))
        n_rules = int(((avg["model"] == key["model"]) & (avg["lang"] == key["lang"])).sum())
        lines.append(f"* {row_label(key['model'], labels)}, {LANG_LABELS.get(key['lang'], key['lang'])}: "
                     f"{len(g)} of {n_rules} rules below the floor of {format_cell(g['floor'].iloc[0])} ({rules})")
    return (f"{len(below)} of the {len(avg)} Average accuracies of ours fall **below the majority-class "
            "floor** of their language:\n\n" + "\n".join(lines))


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


def has_invalid(runs: Runs | pd.DataFrame) -> bool:
    """Whether any whole-post or sentence answer of the runs could not be read (is NaN)."""
    df = frame_of(runs)
    if df.empty:
        return False
    flat = flatten_sentences(df["sentences"])[0]
    return bool(df["direct"].isna().any() or np.isnan(flat).any())


def policy_table(runs: Runs | pd.DataFrame, rules: Sequence[str], labels: Mapping[str, str] | None = None,
                 metrics_: Sequence[str] = ("accuracy", "macro_f1")) -> pd.DataFrame:
    """The Averages of each rule under both invalid-answer policies, side by side.

    Returns
    -------
    DataFrame
        Index ``(run, lang, policy)`` with policies ``drop`` and ``reference``
        (:data:`tefcore.evaluate.INVALID_POLICIES`); columns ``(metric, method)``.
    """
    parts = [score_runs(predict_runs(runs, rules=rules, invalid=policy)).assign(policy=policy)
             for policy in evaluate.INVALID_POLICIES]
    both = pd.concat(parts, ignore_index=True)
    both = both[both["dimension"] == evaluate.AVERAGE]
    both = both.assign(run=both["model"].map(lambda m: row_label(m, labels)), method=both["rule"].map(RULE_LABELS))
    wide = both.pivot_table(index=["run", "lang", "policy"], columns="method", values=list(metrics_), sort=False)
    return wide[[(m, RULE_LABELS[r]) for m in metrics_ for r in rules if (m, RULE_LABELS[r]) in wide.columns]]


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
        w = entropy_weight(p)
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



# --------------------------------------------------------------------------------------------------
# Table 4: the ablations
# --------------------------------------------------------------------------------------------------
ABLATION_NAMES: dict[str, str] = {"tef_without_entropy": "entropy weighting",
                                  "tef_without_log_odds": "log-odds transform"}
"""What each ablation removes from TEF."""


def ablation_comparisons(
    pred: pd.DataFrame,
    ablations: Sequence[str] = tuple(ABLATION_NAMES),
    *,
    metrics_: Sequence[str] = ("accuracy", "macro_f1"),
    n_boot: int = 1000,
    random_state: int = 0,
) -> pd.DataFrame:
    """Full TEF against each ablation, per run, language and metric (:func:`compare_runs`).

    A positive difference means that the component the ablation removes helped on these pairs.
    """
    parts = [compare_runs(pred, "tef", ablation, metric=metric, n_boot=n_boot, random_state=random_state)
             for ablation in ablations for metric in metrics_]
    return pd.concat(parts, ignore_index=True)


def comparison_table(cmp: pd.DataFrame, labels: Mapping[str, str] | None = None, n_boot: int | None = None,
                     names: Mapping[str, str] = ABLATION_NAMES) -> pd.DataFrame:
    """:func:`ablation_comparisons` as a chapter shows it: index ``(run, lang, removed, metric)``, numbers as text."""
    cmp = _in_run_order(cmp, ["b", "metric"])
    out = pd.DataFrame({
        "run": cmp["model"].map(lambda m: row_label(m, labels)), "lang": cmp["lang"],
        "removed": cmp["b"].map(lambda b: names.get(b, b)),
        "metric": cmp["metric"].map(lambda m: _METRIC_NAMES.get(m, m)),
        "TEF - ablation": [format_interval(d, lo, hi, signed=True)
                           for d, lo, hi in zip(cmp["difference"], cmp["low"], cmp["high"])],
        "p (bootstrap)": [format_p(p, n_boot) for p in cmp["p_bootstrap"]],
        "b": cmp["mcnemar_b"], "c": cmp["mcnemar_c"], "p (McNemar)": [format_p(p) for p in cmp["p_mcnemar"]],
    })
    return out.set_index(["run", "lang", "removed", "metric"])


def soft_vote_margins(table: pd.DataFrame, table3: pd.DataFrame, table4: pd.DataFrame,
                      labels: Mapping[str, str] | None = None,
                      variants: Sequence[str] = ("tef", *ABLATION_NAMES)) -> pd.DataFrame:
    """The Average accuracy margin over Soft Vote of TEF and of each ablation, ours and the paper's.

    Ours from :func:`score_runs` output; the paper's from its Tables 3 (Soft Vote) and 4 (the ablated
    models), both Averages being the mean of six dimensions
    (:func:`tefcore.chapters.paper.ablation_versus_soft_vote`).

    Returns
    -------
    DataFrame
        Index ``(run, lang)``; one column per variant (the paper's names), in points.
    """
    from tefcore.chapters import paper

    avg = table[table["dimension"] == evaluate.AVERAGE].pivot_table(
        index=["model", "lang"], columns="rule", values="accuracy", sort=False).reset_index()
    ours = pd.DataFrame({"run": avg["model"].map(lambda m: row_label(m, labels)), "lang": avg["lang"],
                         **{RULE_LABELS[v]: avg[v] - avg["soft_vote"] for v in variants}})
    pv = paper.ablation_versus_soft_vote(table3, table4).xs("accuracy", level="metric").reset_index()
    pv = sort_table(pv, ["model", "lang"], {"model": paper.MODELS, "lang": ["zh", "en"]})
    theirs = pd.DataFrame({"run": pv["model"].map(paper_label), "lang": pv["lang"],
                           **{RULE_LABELS[v]: pv[f"margin_{v}"] for v in variants}})
    return pd.concat([ours, theirs], ignore_index=True).set_index(["run", "lang"])


# --------------------------------------------------------------------------------------------------
# Table 1: which variants exist, and the tables with every requested variant
# --------------------------------------------------------------------------------------------------
def prompt_coverage(runs: Runs, models: Sequence[str], prompts: Sequence[str], langs: Sequence[str]) -> pd.DataFrame:
    """Which (judge, prompt, language) caches a chapter found.

    Returns
    -------
    DataFrame
        Index ``(model, prompt)`` in the requested order, one column per language with the number of
        pairs, or :data:`NOT_RUN`; a column ``complete`` (every language present).
    """
    found = runs.provenance.set_index(["model", "prompt", "lang"])["n_pairs"] if len(runs.provenance) else \
        pd.Series(dtype=object)
    rows = []
    for model in models:
        for prompt in prompts:
            cells = {lang: int(found[(model, prompt, lang)]) if (model, prompt, lang) in found.index else NOT_RUN
                     for lang in langs}
            rows.append({"model": model, "prompt": prompt, **cells,
                         "complete": all(c != NOT_RUN for c in cells.values())})
    return pd.DataFrame(rows).set_index(["model", "prompt"])


def prompt_table(rob: pd.DataFrame, models: Sequence[str], prompts: Sequence[str],
                 labels: Mapping[str, str] | None = None, n_boot: int | None = None) -> pd.DataFrame:
    """:func:`prompt_robustness` as a chapter shows it, a row for every requested (judge, prompt).

    A variant without caches in every language reads :data:`NOT_RUN` in every column; a drop (accuracy
    lost against the reference prompt) reads :data:`NOT_RUN` when either of its two variants was not
    run, never 0.0.

    Returns
    -------
    DataFrame
        Index ``(run, prompt)``; columns ``strongest``, ``baseline``, ``TEF``, ``TEF - baseline``,
        ``p (bootstrap)``, ``p (McNemar)``, ``baseline drop``, ``TEF drop``.
    """
    have = rob.set_index(["model", "prompt"])
    rows = []
    for model in models:
        for prompt in prompts:
            row: dict[str, Any] = {"run": row_label(model, labels), "prompt": prompt}
            if (model, prompt) not in have.index:
                rows.append({**row, **dict.fromkeys(_PROMPT_COLUMNS, NOT_RUN)})
                continue
            r = have.loc[(model, prompt)]
            rows.append({**row, "strongest": RULE_LABELS[r["strongest_baseline"]],
                         "baseline": format_cell(r["baseline"]), "TEF": format_cell(r["tef"]),
                         "TEF - baseline": format_interval(r["gain"], r["low"], r["high"], signed=True),
                         "p (bootstrap)": format_p(r["p_bootstrap"], n_boot), "p (McNemar)": format_p(r["p_mcnemar"]),
                         "baseline drop": _drop(r["drop_baseline"]), "TEF drop": _drop(r["drop_tef"])})
    return pd.DataFrame(rows).set_index(["run", "prompt"])


_PROMPT_COLUMNS = ("strongest", "baseline", "TEF", "TEF - baseline", "p (bootstrap)", "p (McNemar)",
                   "baseline drop", "TEF drop")


def _drop(value: float) -> str:
    return format_cell(value, signed=True) if np.isfinite(value) else NOT_RUN


def prompt_by_language(pred: pd.DataFrame, models: Sequence[str], prompts: Sequence[str], langs: Sequence[str],
                       labels: Mapping[str, str] | None = None, *, n_boot: int = 1000,
                       random_state: int = 0) -> pd.DataFrame:
    """Per judge, prompt and language: the strongest baseline, TEF and the paired difference (Average
    accuracy), a row for every requested combination (:data:`NOT_RUN` where the cache is missing).

    Returns
    -------
    DataFrame
        Index ``(run, prompt, lang)``; columns ``strongest``, ``baseline``, ``TEF``, ``TEF - baseline``.
    """
    vs = versus_best_baseline(pred, metrics_=("accuracy",), n_boot=n_boot, random_state=random_state) \
        if len(pred) else pd.DataFrame(columns=["model", "prompt", "lang"])
    have = vs.set_index(["model", "prompt", "lang"])
    rows = []
    for model in models:
        for prompt in prompts:
            for lang in langs:
                row = {"run": row_label(model, labels), "prompt": prompt, "lang": lang}
                if (model, prompt, lang) not in have.index:
                    rows.append({**row, "strongest": NOT_RUN, "baseline": NOT_RUN, "TEF": NOT_RUN,
                                 "TEF - baseline": NOT_RUN})
                    continue
                r = have.loc[(model, prompt, lang)]
                rows.append({**row, "strongest": RULE_LABELS[r["b"]], "baseline": format_cell(r["baseline"]),
                             "TEF": format_cell(r["tef"]),
                             "TEF - baseline": format_interval(r["difference"], r["low"], r["high"], signed=True)})
    return pd.DataFrame(rows).set_index(["run", "prompt", "lang"])


def paper_prompt_facts(table1: pd.DataFrame) -> dict[str, Any]:
    """What the paper's Table 1 says about TEF's margin under the three prompts, as the text a chapter quotes.

    Returns
    -------
    dict of str to str
        ``margin_min`` / ``margin_max`` (points, over the five models and three prompts),
        ``n_models``, ``n_grows`` (models whose margin grows from original to verbose to minimal),
        ``n_shrinks`` (models whose margin under a perturbed prompt is smaller than under the original),
        ``margins`` (each model's three margins as text, e.g. ``"Qwen2.5-7B 8.7 → 9.0 → 9.4"``),
        ``n_tef_loses_less`` (of the model x perturbed-prompt cells, those where TEF loses no more than
        the strongest baseline) and ``n_drop_cells``.
    """
    from tefcore.chapters import paper

    pr = paper.prompt_robustness_summary(table1)
    m = pr[[f"margin_{p}" for p in ("original", "verbose", "minimal")]].map(round_half_up)
    grows = (m["margin_verbose"] > m["margin_original"]) & (m["margin_minimal"] > m["margin_verbose"])
    shrinks = (m["margin_verbose"] < m["margin_original"]) | (m["margin_minimal"] < m["margin_original"])
    less = [pr[f"drop_tef_{p}"].map(round_half_up) <= pr[f"drop_strongest_baseline_{p}"].map(round_half_up)
            for p in ("verbose", "minimal")]
    return {"margin_min": format_cell(m.to_numpy().min()), "margin_max": format_cell(m.to_numpy().max()),
            "n_models": str(len(m)), "n_grows": str(int(grows.sum())), "n_shrinks": str(int(shrinks.sum())),
            "margins": "; ".join(f"{paper.MODEL_LABELS[k]} " + " → ".join(format_cell(v) for v in row)
                                 for k, row in zip(m.index, m.to_numpy())),
            "n_tef_loses_less": str(int(sum(s.sum() for s in less))), "n_drop_cells": str(int(sum(len(s) for s in less)))}


# --------------------------------------------------------------------------------------------------
# how much the judge matters beside the rule (tefcore.chapters.judges)
# --------------------------------------------------------------------------------------------------
def effects_table(effects: pd.DataFrame, labels: Mapping[str, str] | None = None,
                  n_boot: int | None = None) -> pd.DataFrame:
    """:func:`tefcore.chapters.judges.judge_versus_rule` as a chapter shows it: both effects in one table.

    One row per language, metric and judge setting; under each rule, the setting's Average minus the
    reference setting's (the first judge, which reads ``reference``), and in the last column TEF minus
    the strongest baseline under that setting. Each cell is the paired difference in points with its
    95 % bootstrap interval and the bootstrap p-value.

    Returns
    -------
    DataFrame
        Index ``(lang, metric, judge)`` (judges by the judge part of their labels,
        :func:`tefcore.chapters.presentation.short_label`); columns ``<rule> vs reference`` and
        ``TEF - strongest baseline``.
    """
    def cell(r: pd.Series) -> str:
        p = format_p(r["p_bootstrap"], n_boot)
        p = p if p.startswith("<") else f"={p}"
        return f"{format_interval(r['difference'], r['low'], r['high'], signed=True)} p{p}"

    out = effects.assign(
        cell=effects.apply(cell, axis=1),
        metric=effects["metric"].map(lambda m: _METRIC_NAMES.get(m, m)),
        judge=effects["judge"].map(lambda m: short_label(row_label(m, labels))),
        column=[f"{RULE_LABELS.get(r, r)} vs reference" if e == "judge" else "TEF - strongest baseline"
                for e, r in zip(effects["effect"], effects["rule"])])
    reference = effects.loc[effects["effect"] == "judge", "versus"]
    order = list(dict.fromkeys([*reference, *effects["judge"]]))
    wide = out.pivot_table(index=["lang", "metric", "judge"], columns="column", values="cell", aggfunc="first",
                           sort=False)
    wide = wide.reindex(pd.MultiIndex.from_tuples(
        [(lang, m, short_label(row_label(j, labels))) for lang in pd.unique(out["lang"])
         for m in pd.unique(out["metric"]) for j in order], names=["lang", "metric", "judge"]))
    rules = dict.fromkeys(effects.loc[effects["effect"] == "judge", "rule"])
    cols = [c for c in [*(f"{RULE_LABELS.get(r, r)} vs reference" for r in rules), "TEF - strongest baseline"]
            if c in wide.columns]
    wide = wide[cols]
    wide.columns.name = None
    first = wide.index.get_level_values("judge") == short_label(row_label(order[0], labels))
    wide.loc[first, [c for c in cols if c.endswith("vs reference")]] = "reference"
    return wide


def effect_markdown(effects: pd.DataFrame, metric: str = "accuracy") -> str:
    """Per language, the largest judge effect beside the largest rule effect, in words (Markdown bullets)."""
    lines = []
    m = effects[effects["metric"] == metric]
    for lang, g in m.groupby("lang", sort=False):
        judge, rule = g[g["effect"] == "judge"], g[g["effect"] == "rule"]
        if judge.empty or rule.empty:
            continue
        j = judge.loc[judge["difference"].abs().idxmax()]
        r = rule.loc[rule["difference"].abs().idxmax()]
        lines.append(
            f"* {LANG_LABELS.get(lang, lang)}: the judge's setting moves a rule's Average {metric} by up to "
            f"{format_cell(abs(j['difference']))} points ({RULE_LABELS.get(j['rule'], j['rule'])}, `{j['judge']}` "
            f"against `{j['versus']}`); the fusion rule, TEF against the strongest baseline under one setting, "
            f"by at most {format_cell(abs(r['difference']))} points (`{r['judge']}`).")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# the commands a chapter prints for its GPU claims
# --------------------------------------------------------------------------------------------------
def reproduce_markdown(chapter: str, model: str = "qwen2.5-7b", *, data_dir: str = FULL_RELEASE_DIR,
                       reading: str = "reference") -> str:
    """The commands that add a paper model to a chapter on a GPU box, as a Markdown code block.

    Generated by :func:`tefcore.chapters.commands.command_for_chapter` on the full release with the
    reference release's reading of the answer token (the setting of the paper's numbers), never typed
    by hand.
    """
    from contextlib import chdir

    from tefcore.chapters.commands import command_for_chapter
    from tefcore.chapters.runs import project_root

    with chdir(project_root()):  # the commands name paths relative to the project, wherever the kernel runs
        command = command_for_chapter(chapter, model, data_dir=data_dir, reading=reading)
    return f"```bash\n{command}\n```"


def ablation_markdown(cmp: pd.DataFrame, labels: Mapping[str, str] | None = None, metric: str = "accuracy",
                      names: Mapping[str, str] = ABLATION_NAMES) -> str:
    """Per run and language, what removing each component did to TEF's Average, in words (Markdown bullets).

    A component *helped* when full TEF minus the ablation has an interval above zero, *hurt* when below,
    and had no effect the interval can tell otherwise.
    """
    lines = []
    m = cmp[cmp["metric"] == metric]
    for key, g in iter_groups(m, [*run_keys(m), "lang"]):
        parts = []
        for _, r in g.iterrows():
            effect = "helped" if r["low"] > 0 else "hurt" if r["high"] < 0 else "no effect the interval can tell"
            parts.append(f"removing the {names.get(r['b'], r['b'])}: TEF − ablation "
                         f"{format_interval(r['difference'], r['low'], r['high'], signed=True)} ({effect})")
        lines.append(f"* {row_label(key['model'], labels)}, {LANG_LABELS.get(key['lang'], key['lang'])}: "
                     + "; ".join(parts) + ".")
    return "\n".join(lines)


def paper_ablation_facts(table3: pd.DataFrame, table4: pd.DataFrame) -> dict[str, str]:
    """The numbers behind the paper's ablation text, recomputed from its Tables 3 and 4, as text.

    Returns
    -------
    dict of str to str
        ``drop_entropy`` and ``drop_log_odds`` (TEF minus each ablation, DeepSeek-V3.2, English,
        Environment, accuracy: the largest drops of Table 4), ``largest_at`` (where the largest drop of
        each ablation is), ``qwen_kept`` (the range of the share of TEF's margin over Soft Vote that
        Qwen2.5-7B's ablations keep, per language and metric) and ``deepseek_below`` (how many of
        DeepSeek-V3.2's ablation Averages, two ablations x two languages in accuracy, fall below Soft
        Vote's).
    """
    from tefcore.chapters import paper

    drops = paper.ablation_drops(table4).xs("accuracy", level="metric")
    at = ("deepseek-v3.2", "en", "Environment")
    largest = drops[["drop_without_entropy", "drop_without_log_odds"]].idxmax()
    versus = paper.ablation_versus_soft_vote(table3, table4)
    kept = versus.loc["qwen2.5-7b"][["retained_tef_without_entropy", "retained_tef_without_log_odds"]].to_numpy()
    ds = versus.loc["deepseek-v3.2"].xs("accuracy", level="metric")
    below = int((ds[["margin_tef_without_entropy", "margin_tef_without_log_odds"]] < 0).to_numpy().sum())
    return {"drop_entropy": format_cell(drops.loc[at, "drop_without_entropy"]),
            "drop_log_odds": format_cell(drops.loc[at, "drop_without_log_odds"]),
            "largest_at": "; ".join(f"{ABLATION_NAMES[k.removeprefix('drop_').replace('without', 'tef_without')]}: "
                                    f"{judge_label(v[0])} {LANG_LABELS[v[1]]} {v[2]}" for k, v in largest.items()),
            "qwen_kept": f"{format_cell(100 * kept.min(), 0)}–{format_cell(100 * kept.max(), 0)} %",
            "deepseek_below": f"{below} of 4"}


def complete_runs(runs: Runs, langs: Sequence[str]) -> pd.DataFrame:
    """The cache rows of the (judge, prompt) runs that have a cache in every language of ``langs``."""
    prov = runs.provenance
    have = prov.groupby(["model", "prompt"], sort=False)["lang"].agg(set) if len(prov) else pd.Series(dtype=object)
    keep = [key for key, got in have.items() if set(langs) <= got]
    frame = runs.frame
    mask = pd.Series(list(zip(frame["model"], frame["prompt"])), index=frame.index).isin(keep)
    return frame[mask & frame["lang"].isin(list(langs))].reset_index(drop=True)


MARGIN_ROW = "TEF - baseline"
"""Row of a Table 1 layout with TEF's margin over the strongest baseline (shown, never ranked)."""


def table1_side_by_side(rob: pd.DataFrame, table1: pd.DataFrame, prompts_of: Mapping[str, Sequence[str]],
                        labels: Mapping[str, str] | None = None,
                        prompts: Sequence[str] = ("original", "verbose", "minimal")) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1 in the paper's layout, ours beside the paper's: per run, the strongest baseline, TEF and
    TEF's margin under each prompt (Average accuracy, mean over the languages).

    Parameters
    ----------
    rob : DataFrame
        :func:`prompt_robustness` output.
    table1 : DataFrame
        The paper's Table 1 in tidy form.
    prompts_of : mapping
        Our judges (registry names, in row order) -> the prompts that apply to them (a judge that reads
        no prompt has one); a prompt that applies but has no row in ``rob`` reads :data:`NOT_RUN`, one
        that does not apply reads ``"—"``.
    labels : mapping, optional
    prompts : sequence of str
        The columns.

    Returns
    -------
    (DataFrame, DataFrame)
        The cells (numbers or text) and the numbers that rank them, index ``(run, method)`` with methods
        ``strongest baseline``, ``TEF`` and :data:`MARGIN_ROW`; for
        :func:`tefcore.chapters.presentation.bold_best` with ``by="run"`` and ``skip=(MARGIN_ROW,)``.
    """
    from tefcore.chapters import paper

    have = rob.set_index(["model", "prompt"])
    rows: list[tuple[tuple[str, str], dict[str, Any]]] = []
    for model, own in prompts_of.items():
        run = row_label(model, labels)
        for method, field in (("strongest baseline", "baseline"), ("TEF", "tef"), (MARGIN_ROW, "gain")):
            rows.append(((run, method), {p: float(have.loc[(model, p), field]) if (model, p) in have.index
                                         else NOT_RUN if p in own else "—" for p in prompts}))
    wide = table1.pivot_table(index="model", columns=["method", "prompt"], values="value", aggfunc="first")
    for model in [m for m in paper.MODELS if m in wide.index]:
        base, tef = wide.loc[model, "strongest_baseline"], wide.loc[model, "tef"]
        for method, values in (("strongest baseline", base), ("TEF", tef), (MARGIN_ROW, tef - base)):
            rows.append(((paper_label(model), method), {p: float(values[p]) for p in prompts}))
    cells = pd.DataFrame([r for _, r in rows], index=pd.MultiIndex.from_tuples([k for k, _ in rows],
                                                                             names=["run", "method"]))
    numbers = cells.apply(lambda c: pd.to_numeric(c, errors="coerce"))
    return cells.astype(object), numbers


def prompt_markdown(rob: pd.DataFrame, coverage: pd.DataFrame, models: Sequence[str], prompts: Sequence[str],
                    labels: Mapping[str, str] | None = None) -> str:
    """For each judge that reads the prompt: which variants ran in every language, and TEF's margin
    over the strongest baseline under each (Markdown bullets)."""
    lines = []
    have = rob.set_index(["model", "prompt"])
    for model in models:
        done = [p for p in prompts if (model, p) in coverage.index and coverage.loc[(model, p), "complete"]]
        missing = [p for p in prompts if p not in done]
        margins = "; ".join(
            f"{p}: {format_interval(have.loc[(model, p), 'gain'], have.loc[(model, p), 'low'], have.loc[(model, p), 'high'], signed=True)}"
            for p in done if (model, p) in have.index)
        lines.append(f"* {row_label(model, labels)}: run in every language with {', '.join(done) or 'no variant'}"
                     + (f"; {NOT_RUN}: {', '.join(missing)}" if missing else "")
                     + (f". TEF − strongest baseline (points): {margins}." if margins else "."))
    return "\n".join(lines)


def prompt_posteriors(runs: Runs, labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Per judge, prompt and language: how decisive the sentence posteriors are and how many answers
    could not be read (:func:`posterior_summary` beside :func:`invalid_accounting`), numbers as text.
    """
    keys = ["model", "prompt", "lang"]
    post = posterior_summary(runs).merge(
        invalid_accounting(runs)[[*keys, "invalid_sentence_share", "invalid_direct"]], on=keys)
    post = post.assign(run=post["model"].map(lambda m: row_label(m, labels))).set_index(["run", "prompt", "lang"])
    cols = ["sentences", "p_mean", "p_std", "mean_weight", "decisive_share", "invalid_sentence_share",
            "invalid_direct"]
    return post[cols].pipe(lambda f: f.apply(lambda c: c.map(
        lambda v: format_cell(v, 1 if c.name in ("decisive_share", "invalid_sentence_share") else 3))))


def templates_markdown(variants: Sequence[str], lang: str = "en") -> str:
    """The prompt templates of ``variants`` verbatim (protocol §4), each with the SHA-256 of both languages'
    templates, as Markdown."""
    from tefcore.mind.prompts import template, template_hash

    return "\n\n".join(f"**{v}** (template sha256: en `{template_hash('en', v)[:12]}`, zh "
                        f"`{template_hash('zh', v)[:12]}`)\n\n```text\n{template(lang, v)}\n```" for v in variants)
