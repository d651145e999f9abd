r"""How much the judge matters beside the fusion rule: one judge under several settings, on the same pairs.

The cross-fitted e5 judge is kept under three settings, the registry names of
:data:`SENSITIVITY_JUDGES`: raw embeddings with :math:`C = 1` (``e5-crossfit-raw``), standardized
embeddings with :math:`C = 1` (``e5-crossfit-std``), and standardized embeddings with :math:`C` chosen
per probe by nested cross-validation (``e5-crossfit``, :mod:`tefcore.judges.e5`). All three score the
same pairs, so every comparison here is paired.

* :func:`judge_intervals`: the Average of each rule under each setting, with bootstrap intervals.
* :func:`judge_comparisons`: one setting against another under each rule (paired bootstrap of the
  Average difference, McNemar's test).
* :func:`judge_versus_rule`: the two effects in one table, per language and metric: how far the
  setting of the judge moves each rule, and how far the rule (TEF against the strongest baseline)
  moves under each setting.

The statistics are those of :mod:`tefcore.evaluate` and :mod:`tefcore.chapters.experiments`; this
module only chooses what is compared with what.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from tefcore import evaluate
from tefcore.chapters.experiments import average_intervals, versus_best_baseline
from tefcore.evaluate import BASELINES, sort_table

__all__ = [
    "SENSITIVITY_JUDGES",
    "SENSITIVITY_RULES",
    "judge_comparisons",
    "judge_intervals",
    "judge_versus_rule",
]

SENSITIVITY_JUDGES: tuple[str, ...] = ("e5-crossfit-raw", "e5-crossfit-std", "e5-crossfit")
"""The cross-fitted judge's settings, from the first one to the tuned default (registry names)."""

SENSITIVITY_RULES: tuple[str, ...] = (*BASELINES, "tef")
"""Direct, Majority Vote, Soft Vote and TEF."""

_EFFECT_COLUMNS = ["effect", "lang", "metric", "judge", "rule", "versus", "difference", "low", "high",
                   "p_bootstrap", "p_mcnemar", "n"]


def _select(pred: pd.DataFrame, judges: Sequence[str], rules: Sequence[str]) -> pd.DataFrame:
    """The rows of ``judges`` and ``rules``; every judge must be present."""
    missing = [j for j in judges if j not in set(pred["model"])]
    if missing:
        raise ValueError(f"no predictions for judge(s) {missing}; present: {sorted(set(pred['model']))}")
    return pred[pred["model"].isin(list(judges)) & pred["rule"].isin(list(rules))]


def judge_intervals(
    pred: pd.DataFrame,
    judges: Sequence[str] = SENSITIVITY_JUDGES,
    rules: Sequence[str] = SENSITIVITY_RULES,
    **options: Any,
) -> pd.DataFrame:
    """The Average of each rule under each judge, with its bootstrap interval.

    Parameters
    ----------
    pred : DataFrame
        :func:`tefcore.chapters.experiments.predict_runs` output holding every judge of ``judges``.
    judges : sequence of str
        Registry names, in the order of the rows.
    rules : sequence of str
        Rules kept.
    **options
        Options of :func:`tefcore.chapters.experiments.average_intervals` (``metrics_``, ``n_boot``,
        ``level``, ``random_state``).

    Returns
    -------
    DataFrame
        ``model, prompt, lang, rule, metric, estimate, low, high, n``, judges in ``judges`` order.

    Examples
    --------
    >>> pred = pd.DataFrame({"model": ["a", "a", "b", "b"], "post_id": ["p1", "p2"] * 2, "lang": "en",
    ...                      "dimension": "Economy", "side": "change", "rule": "tef",
    ...                      "prediction": ["change", "stability", "change", "change"]})
    >>> judge_intervals(pred, ["b", "a"], ["tef"], metrics_=["accuracy"], n_boot=50)[["model", "estimate"]]
      model  estimate
    0     b     100.0
    1     a      50.0
    """
    cis = average_intervals(_select(pred, judges, rules), rules=list(rules), **options)
    by = [c for c in ("model", "prompt", "lang", "rule", "metric") if c in cis.columns]
    return sort_table(cis, by, {"model": list(judges), "rule": list(rules)})


def judge_comparisons(
    pred: pd.DataFrame,
    a: str,
    b: str,
    rules: Sequence[str] = SENSITIVITY_RULES,
    **options: Any,
) -> pd.DataFrame:
    r"""Judge ``a`` against judge ``b`` under each rule, per language, on the same pairs.

    The difference of the Averages, :math:`\bar s_a(r) - \bar s_b(r)` for rule :math:`r`, with the
    stratified paired bootstrap and McNemar's test of :func:`tefcore.evaluate.paired_comparisons`
    (which compares two values of a ``rule`` column; here the two values are judges, and the rules
    are groups).

    Parameters
    ----------
    pred : DataFrame
        :func:`tefcore.chapters.experiments.predict_runs` output holding both judges.
    a, b : str
        The judge under test and the judge it is compared with (registry names).
    rules : sequence of str
        The rules under which they are compared.
    **options
        Options of :func:`tefcore.evaluate.paired_comparisons` (``metric``, ``n_boot``, ``level``,
        ``random_state``).

    Returns
    -------
    DataFrame
        ``[prompt,] lang, rule, a, b, metric, difference, low, high, p_bootstrap, mcnemar_b, mcnemar_c,
        p_mcnemar, n``; ``difference`` is in points, positive when ``a`` is better.

    Raises
    ------
    ValueError
        When a judge is absent, or the two judges are not scored on the same pairs.

    Examples
    --------
    >>> pred = pd.DataFrame({"model": ["a", "a", "b", "b"], "post_id": ["p1", "p2"] * 2, "lang": "en",
    ...                      "dimension": "Economy", "side": "change", "rule": "tef",
    ...                      "prediction": ["change", "change", "change", "stability"]})
    >>> pred["correct"] = pred["prediction"] == pred["side"]
    >>> judge_comparisons(pred, "a", "b", ["tef"], n_boot=50)[["lang", "rule", "difference", "mcnemar_b"]]
      lang rule  difference  mcnemar_b
    0   en  tef        50.0          1
    """
    data = _select(pred, (a, b), rules).rename(columns={"rule": "_rule"}).rename(columns={"model": "rule"})
    by = [c for c in ("prompt", "lang") if c in data.columns] + ["_rule"]
    out = evaluate.paired_comparisons(data, a, b, by=by, **options)
    return out.rename(columns={"_rule": "rule"})


def _judge_effects(pred: pd.DataFrame, judges: Sequence[str], rules: Sequence[str], metric: str,
                   **options: Any) -> pd.DataFrame:
    """Every judge after the first against the first, under each rule."""
    rows = [judge_comparisons(pred, j, judges[0], rules, metric=metric, **options) for j in judges[1:]]
    out = pd.concat(rows, ignore_index=True)
    return out.rename(columns={"a": "judge", "b": "versus"}).assign(effect="judge")


def _rule_effects(pred: pd.DataFrame, judges: Sequence[str], metric: str, **options: Any) -> pd.DataFrame:
    """TEF against the strongest baseline under each judge."""
    out = versus_best_baseline(_select(pred, judges, SENSITIVITY_RULES), metrics_=[metric], **options)
    return out.rename(columns={"model": "judge", "a": "rule", "b": "versus"}).assign(effect="rule")


def judge_versus_rule(
    pred: pd.DataFrame,
    judges: Sequence[str] = SENSITIVITY_JUDGES,
    rules: Sequence[str] = SENSITIVITY_RULES,
    *,
    metrics_: Sequence[str] = ("accuracy", "macro_f1"),
    n_boot: int = 1000,
    random_state: int = 0,
) -> pd.DataFrame:
    """How much the judge's setting matters, beside how much the fusion rule does, per language.

    Two kinds of rows, each a paired difference of Averages with its bootstrap interval and p-values:

    * ``effect = "judge"``: each judge after the first against the first (``versus``), under each rule
      of ``rules`` (:func:`judge_comparisons`);
    * ``effect = "rule"``: TEF against the strongest baseline (``versus``) under each judge
      (:func:`tefcore.chapters.experiments.versus_best_baseline`).

    Parameters
    ----------
    pred : DataFrame
        :func:`tefcore.chapters.experiments.predict_runs` output holding every judge of ``judges``
        under every rule of :data:`SENSITIVITY_RULES` (one prompt).
    judges : sequence of str
        The first is the reference of the judge effects (default: raw vectors, ``C = 1``).
    rules : sequence of str
        Rules of the judge effects.
    metrics_ : sequence of {"accuracy", "macro_f1"}
    n_boot, random_state
        Bootstrap settings (the same draws for every comparison of a language).

    Returns
    -------
    DataFrame
        ``effect, lang, metric, judge, rule, versus, difference, low, high, p_bootstrap, p_mcnemar, n``.
    """
    if len(judges) < 2:
        raise ValueError(f"judge_versus_rule needs at least two judges, got {list(judges)}")
    if "prompt" in pred.columns and pred["prompt"].nunique() > 1:
        raise ValueError(f"judge_versus_rule takes the runs of one prompt, got {sorted(set(pred['prompt']))}")
    options = {"n_boot": n_boot, "random_state": random_state}
    parts = [part for metric in metrics_ for part in (_judge_effects(pred, judges, rules, metric, **options),
                                                      _rule_effects(pred, judges, metric, **options))]
    out = pd.concat(parts, ignore_index=True)[_EFFECT_COLUMNS]
    return sort_table(out, ["lang", "metric", "effect", "judge", "rule"],
                      {"effect": ["judge", "rule"], "judge": list(judges), "rule": list(rules)})
