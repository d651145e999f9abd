"""Tests of tefcore.evaluate on a hand-made cache frame."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tefcore import evaluate as ev
from tefcore.fusion import majority_vote, tef

NAN = math.nan


@pytest.fixture()
def cache_frame() -> pd.DataFrame:
    rows = [
        # post, lang, dimension, gold, direct, sentences
        ("en-single-1", "en", "Economy", "change", 0.8, [0.9, 0.45, 0.45]),
        ("en-single-2", "en", "Economy", "stability", 0.6, [0.02, 0.55, 0.55, 0.55, 0.55]),
        ("en-single-3", "en", "Culture", "stability", NAN, [NAN, 0.3]),
        ("en-single-4", "en", "Culture", "change", 0.4, [NAN, NAN]),
        ("zh-single-1", "zh", "Economy", "stability", 0.2, [0.1]),
    ]
    df = pd.DataFrame(rows, columns=["post_id", "lang", "dimension", "side", "direct", "sentences"])
    return df


def test_predict_pairs_drop_policy(cache_frame):
    pred = ev.predict_pairs(cache_frame)
    assert len(pred) == 5 * 6
    tef_rows = pred[pred["rule"] == "tef"].set_index("post_id")
    assert tef_rows.loc["en-single-1", "prediction"] == tef([0.9, 0.45, 0.45]).prediction
    assert tef_rows.loc["en-single-1", "confidence"] == pytest.approx(tef([0.9, 0.45, 0.45]).confidence)
    assert tef_rows.loc["en-single-2", "prediction"] == "stability"
    assert tef_rows.loc["en-single-3", "prediction"] == "stability"  # invalid sentence dropped
    assert tef_rows.loc["en-single-4", "prediction"] == ev.ABSTAIN  # nothing readable left
    assert tef_rows.loc["en-single-4", "n_invalid"] == 2
    assert not tef_rows.loc["en-single-4", "correct"]
    direct = pred[pred["rule"] == "direct"].set_index("post_id")
    assert direct.loc["en-single-3", "prediction"] == ev.ABSTAIN
    mv = pred[pred["rule"] == "majority_vote"].set_index("post_id")
    assert mv.loc["en-single-2", "prediction"] == majority_vote([0.02, 0.55, 0.55, 0.55, 0.55]).prediction


def test_predict_pairs_reference_policy_turns_invalid_into_change_votes(cache_frame):
    pred = ev.predict_pairs(cache_frame, rules=["direct", "majority_vote"], invalid="reference")
    mv = pred[pred["rule"] == "majority_vote"].set_index("post_id")
    assert mv.loc["en-single-4", "prediction"] == "change"  # 0.5 votes count as change
    d = pred[pred["rule"] == "direct"].set_index("post_id")
    assert d.loc["en-single-3", "prediction"] == "change"


def test_score_table_average_is_unweighted_mean_over_dimensions(cache_frame):
    pred = ev.predict_pairs(cache_frame, rules=["tef"])
    table = ev.score_table(pred)
    en = table[(table["lang"] == "en")].set_index("dimension")
    assert list(en.index) == ["Culture", "Economy", "Average"]  # paper's table order, then Average
    assert en.loc["Economy", "accuracy"] == 100.0
    assert en.loc["Culture", "accuracy"] == 50.0
    assert en.loc["Average", "accuracy"] == pytest.approx(75.0)
    assert en.loc["Average", "n"] == 4 and en.loc["Culture", "n_abstain"] == 1
    wide = ev.wide_table(table)
    assert ("Cul.", "accuracy") in wide.columns and ("Average", "macro_f1") in wide.columns


def test_strongest_baseline_and_compare(cache_frame):
    pred = ev.predict_pairs(cache_frame)
    table = ev.score_table(pred)
    best = ev.strongest_baseline(table)
    row = best[(best["lang"] == "en") & (best["dimension"] == "Average")].iloc[0]
    base = table[(table["lang"] == "en") & (table["dimension"] == "Average")
                 & table["rule"].isin(["direct", "majority_vote", "soft_vote"])]["accuracy"].max()
    assert row["baseline"] == pytest.approx(base)
    assert row["gain"] == pytest.approx(row["tef"] - base)
    cmp = ev.compare_rules(pred, "tef", "soft_vote", n_boot=200)
    assert set(cmp["lang"]) == {"en", "zh"}
    assert np.all(cmp["low"] <= cmp["difference"]) and np.all(cmp["difference"] <= cmp["high"])


def test_bad_input(cache_frame):
    with pytest.raises(ValueError, match="unknown rule"):
        ev.predict_pairs(cache_frame, rules=["median"])
    with pytest.raises(ValueError, match="invalid must be"):
        ev.predict_pairs(cache_frame, invalid="ignore")
    with pytest.raises(ValueError, match="lacks column"):
        ev.predict_pairs(cache_frame.drop(columns=["direct"]))
