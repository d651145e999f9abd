"""Predictions and score tables of the runs a result chapter reads, beside the paper's numbers.

The chapters read the probability caches of one or more judges (:func:`tefbook.companion.runs.load_runs`),
turn them into per-pair predictions with :func:`tefcore.evaluate.predict_pairs` and summarise them per
run (judge and prompt). The definitions (the "Average", the strongest baseline, paired comparisons)
are those of :mod:`tefcore.evaluate`; this module applies them to the runs of a chapter and lays the
results out.

:func:`predict_runs`, :func:`score_runs`, :func:`majority_rate`, :func:`majority_floor`
    Predictions and per-dimension accuracy/macro-F1 of every rule, per judge and prompt, and the
    majority-class floor of the same pairs (per dimension, and its Average per language).
:func:`versus_best_baseline`, :func:`compare_runs`
    Paired tests of two rules on the "Average" (the unweighted mean over dimensions).
:func:`side_by_side`
    Our numbers and the paper's (Tables 3 and 4) in the paper's wide layout, each row labelled with
    where it comes from, with the pairs per dimension and the majority-class rate beside them.
:func:`posterior_summary`
    How decisive a judge's sentence posteriors are.
:func:`reader_labels`
    A table's judges, languages and rules named in words for the reader.

Paired intervals are percentile bootstrap intervals over evaluation pairs, resampled within dimensions
(:func:`tefcore.evaluate.paired_comparisons`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tefbook.companion.labels import LANG_LABELS, paper_label, row_label
from tefbook.companion.runs import Runs, frame_of, run_keys
from tefbook.companion.tables import paper_columns
from tefcore import evaluate
from tefcore.evaluate import (
    BASELINES,
    METRIC_LABELS,
    dimension_average,
    flatten_sentences,
    iter_groups,
    predict_pairs,
    score_table,
    sort_table,
    strongest_baseline,
)
from tefcore.fusion import CLASSES, RULE_LABELS, RULE_NAMES, entropy_weight
from tefcore.mind.schema import ABBREVIATIONS, TABLE_ORDER
from tefpaper.review import majority_class
from tefpaper.tables import MODEL_LABELS


COUNT_ROW = "pairs (n)"
"""Row of a side-by-side table that counts the evaluation pairs of each dimension."""


FLOOR_ROW = "majority class"
"""Row of a side-by-side table with the majority-class rate of the same pairs (the floor)."""


REFERENCE_ROWS: tuple[str, ...] = (COUNT_ROW, FLOOR_ROW)
"""Rows that are shown beside the rules but never ranked (:func:`tefbook.companion.tables.bold_best`)."""


REFERENCE_RUN = "ours: the pairs scored"
"""The run label of the counts and the majority-class rate."""


NOT_RUN = "not run"
"""What a table says where a run's caches are missing (never 0.0)."""


_ORDERS: dict[str, Sequence[str]] = {"dimension": TABLE_ORDER}
"""Rows of our tables: dimensions in the paper's column order."""


METRIC_NAMES: dict[str, str] = {"accuracy": "accuracy", "macro_f1": "macro-F1"}


READER_LEVELS: dict[str, str] = {"model": "judge", "lang": "language", "rule": "rule", "method": "rule",
                                 "dimension": "dimension", "metric": "metric"}
"""How a table's index and column levels are headed for a reader (the library's keys on the left)."""


def reader_labels(frame: pd.DataFrame, names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A table's row and column labels in words: judges by ``names`` (the paper's models by their names),
    languages and rules by the book's names, and the levels :data:`READER_LEVELS` knows headed in words.

    Examples
    --------
    >>> t = pd.DataFrame({"tef": [1.0], "soft_vote": [2.0]},
    ...                  index=pd.MultiIndex.from_tuples([("e5", "zh")], names=["model", "lang"]))
    >>> reader_labels(t.rename_axis(columns="rule"), {"e5": "e5 probe"})
    rule               TEF   SV
    judge    language
    e5 probe Chinese   1.0  2.0
    """
    words = {"model": {**MODEL_LABELS, **(names or {})}, "lang": LANG_LABELS, "rule": RULE_LABELS,
             "method": RULE_LABELS}
    out = frame.copy()
    for axis in ("index", "columns"):
        labels = getattr(out, axis)
        for level, name in enumerate(labels.names):
            if name in words:
                labels = labels.set_levels(labels.levels[level].map(lambda v, w=words[name]: w.get(v, v)), level=level) \
                    if isinstance(labels, pd.MultiIndex) else labels.map(lambda v, w=words[name]: w.get(v, v))
        setattr(out, axis, labels.set_names([READER_LEVELS.get(n, n) for n in labels.names]))
    return out


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
    """Accuracy and macro-F1 of always answering the more frequent side, per language and dimension
    (the floor as :func:`tefpaper.review.majority_class` defines it, on the pairs of the runs).

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
    counts = pd.crosstab([df["lang"], df["dimension"]], df["side"]).reindex(columns=list(CLASSES), fill_value=0)
    out = majority_class(counts).rename(columns={"majority": "majority_side", "floor": "accuracy",
                                                 "floor_f1": "macro_f1"}).reset_index()
    out = pd.concat([out, dimension_average(out, ["lang"], counts=["n"])], ignore_index=True)
    return sort_table(out, ["lang", "dimension"], _ORDERS)


def majority_floor(frame: Runs | pd.DataFrame) -> pd.Series:
    """The majority-class floor per language: the Average over dimensions of the accuracy of always
    answering a dimension's more frequent side (:func:`majority_rate`), percent.

    Examples
    --------
    >>> frame = pd.DataFrame({"post_id": [1, 2, 3, 1], "lang": "en", "dimension": ["Cul."] * 3 + ["Env."],
    ...                       "side": ["change", "change", "stability", "stability"]})
    >>> majority_floor(frame).round(1).to_dict()
    {'en': 83.3}
    """
    rates = majority_rate(frame)
    return rates[rates["dimension"] == "Average"].set_index("lang")["accuracy"].rename("majority rate")


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
        The paper's Table 3 or Table 4 in tidy form (:func:`tefpaper.tables.load_table`). Its
        Average is the mean of its six printed dimensions, for both tables (Table 4's printed
        Average is that mean rounded half up, :func:`tefpaper.tables.table4_average_check`),
        so that one quantity has one value in every chapter.
    labels : mapping, optional
        The label of each judge's rows (:func:`tefbook.companion.provenance.run_labels`); default
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


