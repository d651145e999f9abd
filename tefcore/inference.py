"""What a score table needs before it is published: the bootstrap intervals of its cells, each rule's test
against the strongest baseline on the same texts, and the *blind* rules, which give one side to (nearly)
every text of a dimension, so that their score says what the gold's balance is, not what the judge read.
All of them take the pairs :func:`tefcore.evaluate.predict_pairs` scored and build on the aggregates of
:mod:`tefcore.evaluate` (the Average, the strongest baseline, paired comparisons).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tefcore import metrics
from tefcore.evaluate import (ABSTAIN, AVERAGE, BASELINES, METRICS, check_metric, iter_groups, paired_comparisons,
                              score_table, sort_table, strongest_baseline)
from tefcore.fusion import RULE_LABELS

__all__ = ["BLIND_MIN_TEXTS", "BLIND_SHARE", "BlindWarning", "baseline_tests", "blind_message", "blind_rows",
           "interval_table"]

BLIND_SHARE = 0.95
"""A rule is *blind* on a dimension when it gives one side to at least this share of its texts (the texts it
abstains on count among them): its score then says what the gold's balance is, not what the judge read."""
BLIND_MIN_TEXTS = 10
""":func:`blind_rows` judges a dimension from this many texts on: on fewer, one side for every text is too
likely by chance to mean anything."""


class BlindWarning(UserWarning):
    """A rule that gives one side to (nearly) every text of a dimension (:func:`blind_rows`)."""


def blind_rows(
    pred: pd.DataFrame,
    by: Sequence[str] = ("lang", "rule", "dimension"),
    *,
    share: float = BLIND_SHARE,
    min_texts: int = BLIND_MIN_TEXTS,
    warn: bool = True,
) -> pd.DataFrame:
    r"""The rules that give one side to (nearly) every text of a dimension: per group of ``by``, the most
    frequent decision's share of the group's pairs, :math:`\max_c n_c / n \ge` ``share``, on groups of at least
    ``min_texts`` pairs (an abstention is no side, but counts in :math:`n`). Such a rule's accuracy is the gold's
    balance, not evidence that it read the texts.

    Parameters
    ----------
    pred : DataFrame
        :func:`~tefcore.evaluate.predict_pairs` output (key columns such as ``model`` may be added and put in ``by``).
    by : sequence of str
        The groups (a rule on a dimension, by default per language).
    share, min_texts
        :data:`BLIND_SHARE` and :data:`BLIND_MIN_TEXTS` by default.
    warn : bool
        Also warn (:class:`BlindWarning`, the one line of :func:`blind_message`) when a row is found.

    Returns
    -------
    DataFrame
        One row per blind group: ``*by, side, count, n, share``, in the order of ``by``.

    Examples
    --------
    >>> pred = pd.DataFrame({"lang": "en", "rule": "tef", "dimension": "Tone", "side": ["calm", "angry"] * 6,
    ...                      "prediction": "calm"})
    >>> blind_rows(pred, warn=False)
      lang rule dimension  side  count   n  share
    0   en  tef      Tone  calm     12  12    1.0
    """
    by = list(by)
    n = pred.groupby(by, sort=False).size().rename("n").reset_index()
    decided = pred.loc[pred["prediction"] != ABSTAIN, [*by, "prediction"]]
    tally = decided.groupby([*by, "prediction"], sort=False).size().rename("count").reset_index()
    top = tally.sort_values("count", ascending=False, kind="stable").drop_duplicates(by)
    rows = top.merge(n, on=by).rename(columns={"prediction": "side"})
    rows = rows.assign(share=rows["count"] / rows["n"])
    rows = rows[(rows["n"] >= min_texts) & (rows["share"] >= share)]
    rows = sort_table(rows, by) if len(rows) else rows.reset_index(drop=True)
    if warn and len(rows):
        warnings.warn(blind_message(rows, share), BlindWarning, stacklevel=2)
    return rows


def blind_message(rows: pd.DataFrame, share: float = BLIND_SHARE, names: Mapping[str, str] | None = None) -> str:
    """One line naming the rules of :func:`blind_rows`, those blind on the same dimensions together.

    Parameters
    ----------
    rows : DataFrame
        :func:`blind_rows` output (with ``rule`` and ``dimension`` columns; other key columns, such as
        ``lang``, lead each part).
    share : float
        The share the rows were found with.
    names : mapping, optional
        Display names of the rules (default :data:`tefcore.fusion.RULE_LABELS`).

    Examples
    --------
    >>> rows = pd.DataFrame({"lang": "en", "rule": ["direct", "tef", "tef"], "dimension": ["Tone", "Tone", "Topic"],
    ...                      "side": "calm", "count": 12, "n": 12, "share": 1.0})
    >>> blind_message(rows)
    'one side for >= 95% of the texts (blind; no best mark): en: TEF on Tone, Topic; Direct on Tone'
    """
    names = RULE_LABELS if names is None else names
    keys = [c for c in rows.columns if c not in ("rule", "dimension", "side", "count", "n", "share")]
    parts = []
    for key, g in iter_groups(rows, keys):
        dims = g.groupby("rule", sort=False)["dimension"].agg(tuple)
        grouped = dims.groupby(dims, sort=False).apply(lambda s: list(s.index))
        said = sorted(grouped.items(), key=lambda kv: -len(kv[0]))
        text = "; ".join(f"{', '.join(names.get(r, r) for r in rules)} on {', '.join(d)}" for d, rules in said)
        lead = " ".join(str(v) for v in key.values())
        parts.append(f"{lead}: {text}" if lead else text)
    return f"one side for >= {100 * share:g}% of the texts (blind; no best mark): " + " | ".join(parts)


def interval_table(
    pred: pd.DataFrame,
    by: Sequence[str] = ("lang", "rule", "dimension"),
    *,
    classes: Mapping[str, Sequence[str]] | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
    random_state: int = 0,
    orders: Mapping[str, Sequence[Any]] | None = None,
) -> pd.DataFrame:
    """:func:`~tefcore.evaluate.score_table`'s accuracy and macro-F1 with their percentile bootstrap intervals
    (:func:`tefcore.metrics.bootstrap_ci`, the pairs resampled; the Average's within each dimension, its
    statistic the unweighted mean over them), each cell with the same seed.

    Parameters
    ----------
    pred : DataFrame
        :func:`~tefcore.evaluate.predict_pairs` output (pairs with a gold side).
    by : sequence of str
        Grouping columns, ``"dimension"`` last.
    classes : mapping of str to sequence of str, optional
        A task's sides per dimension (macro-F1 runs over them, as in :func:`~tefcore.evaluate.score_table`).
    n_boot, level, random_state
        The bootstrap's resamples, level and seed.
    orders : mapping, optional
        Orders of the rows (:func:`~tefcore.evaluate.sort_table`).

    Returns
    -------
    DataFrame
        ``*by, n, accuracy, accuracy_low, accuracy_high, macro_f1, macro_f1_low, macro_f1_high`` (percent).

    Examples
    --------
    >>> pred = pd.DataFrame({"lang": "en", "rule": "tef", "dimension": "Tone",
    ...                      "side": ["calm"] * 8 + ["angry"] * 2, "prediction": ["calm"] * 9 + ["angry"]})
    >>> row = interval_table(pred, n_boot=200).iloc[1]
    >>> row["dimension"], float(row["accuracy"]), bool(row["accuracy_low"] < 90.0 <= row["accuracy_high"])
    ('Average', 90.0, True)
    """
    by = list(by)
    if by[-1] != "dimension":
        raise ValueError(f"by must end with 'dimension', got {by}")
    options = {"n_boot": n_boot, "level": level, "random_state": random_state}
    rows = []
    for key, g in iter_groups(pred, by[:-1]):
        gold, guess, dims = (g[c].to_numpy() for c in ("side", "prediction", "dimension"))
        cells = [({**key, "dimension": d}, dims == d, {"labels": None if classes is None else classes[d]})
                 for d in pd.unique(dims)]
        cells.append(({**key, "dimension": AVERAGE}, np.ones(len(g), dtype=bool),
                      {"strata": dims, "average_over_strata": True, "labels": classes}))
        for cell, mask, how in cells:
            stats = {"n": int(mask.sum())}
            for name in METRICS:
                fn = check_metric(name)
                extra = how if name == "macro_f1" else {k: v for k, v in how.items() if k != "labels"}
                if "strata" in extra:
                    extra = {**extra, "strata": extra["strata"][mask]}
                ci = metrics.bootstrap_ci(fn, gold[mask], guess[mask], **options, **extra)
                stats.update({name: ci.estimate, f"{name}_low": ci.low, f"{name}_high": ci.high})
            rows.append({**cell, **stats})
    return sort_table(pd.DataFrame(rows), by, orders)


def baseline_tests(
    pred: pd.DataFrame,
    by: Sequence[str] = ("lang",),
    *,
    metric: str = "accuracy",
    baselines: Sequence[str] = BASELINES,
    n_boot: int = 2000,
    level: float = 0.95,
    random_state: int = 0,
) -> pd.DataFrame:
    """Every rule that is not a baseline against the strongest baseline of each dimension and of the Average
    (:func:`~tefcore.evaluate.strongest_baseline` on ``metric``), by
    :func:`~tefcore.evaluate.paired_comparisons`: the difference in points, its
    paired bootstrap interval and p-value, and McNemar's p-value.

    Parameters
    ----------
    pred : DataFrame
        :func:`~tefcore.evaluate.predict_pairs` output (pairs with a gold side).
    by : sequence of str
        The groups above the dimension (a language, by default).
    metric : {"accuracy", "macro_f1"}
    baselines : sequence of str
        The baselines; those present in ``pred`` are compared with.
    n_boot, level, random_state
        The bootstrap's settings.

    Returns
    -------
    DataFrame
        ``*by, dimension, rule, baseline, difference, low, high, p_bootstrap, p_mcnemar, n``; empty when
        ``pred`` holds no baseline or no other rule.

    Examples
    --------
    >>> pred = pd.DataFrame({"post_id": list("abcd") * 2, "lang": "en", "dimension": "Tone", "side": "calm",
    ...                      "rule": ["tef"] * 4 + ["direct"] * 4, "prediction": ["calm"] * 7 + ["angry"]})
    >>> pred["correct"] = pred["prediction"] == pred["side"]
    >>> baseline_tests(pred, n_boot=200)[["dimension", "rule", "baseline", "difference"]]
      dimension rule baseline  difference
    0      Tone  tef   direct        25.0
    1   Average  tef   direct        25.0
    """
    by, rules = list(by), list(pd.unique(pred["rule"]))
    present = [b for b in baselines if b in rules]
    challengers = [r for r in rules if r not in baselines]
    columns = [*by, "dimension", "rule", "baseline", "difference", "low", "high", "p_bootstrap", "p_mcnemar", "n"]
    if not present or not challengers:
        return pd.DataFrame(columns=columns)
    table = score_table(pred, by=[*by, "rule", "dimension"])
    table = table[table["dimension"] != AVERAGE]
    options = {"metric": metric, "n_boot": n_boot, "level": level, "random_state": random_state}
    frames = []
    for level_by in ([*by, "dimension"], by):
        best = strongest_baseline(table, level_by, value=metric, baselines=present, challenger=None)
        chosen = {(k if isinstance(k, tuple) else (k,)): v for k, v in best["strongest_baseline"].items()}
        for rule in challengers:
            out = paired_comparisons(pred, rule, chosen, by=level_by, **options)
            frames.append(out if "dimension" in level_by else out.assign(dimension=AVERAGE))
    out = pd.concat(frames, ignore_index=True).rename(columns={"a": "rule", "b": "baseline"})
    return sort_table(out[columns], [*by, "dimension", "rule"])
