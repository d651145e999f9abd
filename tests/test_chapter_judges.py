"""Tests of :mod:`chapters.ch05`: one judge under several settings, compared on the same pairs.

The three "settings" are synthetic caches of the same pairs (:func:`cache_frames.synthetic_cache`):
the sharp judge itself, and copies whose posteriors are turned around on a fixed share of pairs.
Every number is checked against a second route (score tables, hand counts).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cache_frames import synthetic_cache

from chapters.ch05 import SENSITIVITY_JUDGES, SENSITIVITY_RULES, judge_comparisons, judge_intervals, judge_versus_rule
from companion.results import predict_runs, score_runs
from tefcore.evaluate import AVERAGE, strongest_baseline

RAW, STD, TUNED = SENSITIVITY_JUDGES


def _turned(cache: pd.DataFrame, share: float, seed: int) -> pd.DataFrame:
    """The same pairs, with every posterior of a random ``share`` of the pairs replaced by 1 - p."""
    out = cache.copy()
    flip = np.random.default_rng(seed).random(len(out)) < share
    out.loc[flip, "direct"] = 1.0 - out.loc[flip, "direct"]
    out.loc[flip, "sentences"] = out.loc[flip, "sentences"].map(lambda s: [1.0 - p for p in s])
    return out


@pytest.fixture(scope="module")
def pred() -> pd.DataFrame:
    base = synthetic_cache(seed=3, n_per_cell=50)
    runs = pd.concat([_turned(base, 0.4, 1).assign(model=RAW), _turned(base, 0.2, 2).assign(model=STD),
                      base.assign(model=TUNED)], ignore_index=True)
    runs.insert(1, "prompt", "original")
    return predict_runs(runs)


def _average(pred: pd.DataFrame, metric: str = "accuracy") -> pd.Series:
    table = score_runs(pred)
    return table[table["dimension"] == AVERAGE].set_index(["model", "lang", "rule"])[metric]


def test_judge_intervals_are_the_table_averages_in_the_judges_order(pred: pd.DataFrame) -> None:
    cis = judge_intervals(pred, (TUNED, RAW), ("direct", "tef"), n_boot=200)
    assert list(pd.unique(cis["model"])) == [TUNED, RAW]
    assert set(cis["rule"]) == {"direct", "tef"} and set(cis["metric"]) == {"accuracy", "macro_f1"}
    avg = {m: _average(pred, m) for m in ("accuracy", "macro_f1")}
    for row in cis.itertuples():
        assert row.estimate == pytest.approx(avg[row.metric][(row.model, row.lang, row.rule)])
        assert row.low <= row.estimate <= row.high
    assert (cis["n"] == 150).all()  # 3 dimensions x 50 pairs per language


def test_judge_comparisons_match_the_tables_and_hand_counts(pred: pd.DataFrame) -> None:
    cmp = judge_comparisons(pred, TUNED, RAW, n_boot=300)
    assert len(cmp) == 2 * len(SENSITIVITY_RULES) and set(cmp["a"]) == {TUNED} and set(cmp["b"]) == {RAW}
    avg = _average(pred)
    keys = ["post_id", "lang", "dimension"]
    for row in cmp.itertuples():
        assert row.difference == pytest.approx(avg[(TUNED, row.lang, row.rule)] - avg[(RAW, row.lang, row.rule)])
        a = pred[(pred["model"] == TUNED) & (pred["rule"] == row.rule) & (pred["lang"] == row.lang)]
        b = pred[(pred["model"] == RAW) & (pred["rule"] == row.rule) & (pred["lang"] == row.lang)]
        both = a.merge(b, on=keys, suffixes=("_a", "_b"))
        assert row.mcnemar_b == int((both["correct_a"] & ~both["correct_b"]).sum())
        assert row.mcnemar_c == int((~both["correct_a"] & both["correct_b"]).sum())
        assert row.low <= row.difference <= row.high
    # the judge whose posteriors were turned around on 40 % of the pairs is clearly worse
    assert (cmp["difference"] > 5).all() and (cmp["p_mcnemar"] < 0.05).mean() >= 0.5


def test_judges_must_be_present_and_on_the_same_pairs(pred: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="no predictions for judge"):
        judge_comparisons(pred, TUNED, "e5-zeroshot")
    fewer = pred[~((pred["model"] == RAW) & (pred["post_id"] == pred["post_id"].iloc[0]))]
    with pytest.raises(ValueError, match="same pairs"):
        judge_comparisons(fewer, TUNED, RAW, ["tef"], n_boot=50)


def test_judge_versus_rule_sets_both_effects_side_by_side(pred: pd.DataFrame) -> None:
    table = judge_versus_rule(pred, n_boot=200, metrics_=["accuracy"])
    judge_rows, rule_rows = table[table["effect"] == "judge"], table[table["effect"] == "rule"]
    assert len(judge_rows) == 2 * 2 * len(SENSITIVITY_RULES)  # languages x (std, tuned) x rules
    assert set(judge_rows["versus"]) == {RAW} and list(pd.unique(judge_rows["judge"])) == [STD, TUNED]
    assert len(rule_rows) == 2 * 3 and set(rule_rows["rule"]) == {"tef"}
    avg = score_runs(pred)
    avg = avg[avg["dimension"] == AVERAGE]
    best = strongest_baseline(avg, ["model", "lang"])
    for row in rule_rows.itertuples():
        expected = best.loc[(row.judge, row.lang)]
        assert row.versus == expected["strongest_baseline"]
        assert row.difference == pytest.approx(expected["gain"])
    assert list(table.columns) == ["effect", "lang", "metric", "judge", "rule", "versus", "difference", "low",
                                   "high", "p_bootstrap", "p_mcnemar", "n"]


def test_judge_versus_rule_refuses_what_it_cannot_compare(pred: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="at least two judges"):
        judge_versus_rule(pred, (TUNED,))
    two_prompts = pd.concat([pred, pred.assign(prompt="minimal")], ignore_index=True)
    with pytest.raises(ValueError, match="one prompt"):
        judge_versus_rule(two_prompts)
