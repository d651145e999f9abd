"""Tests of tefcore.evaluate on a hand-made cache frame."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tefcore import evaluate as ev
from tefcore.evaluate import score_table
from tefcore.fusion import majority_vote, tef
from tefcore.metrics import macro_f1

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
    assert list(en.index) == ["Economy", "Culture", "Average"]  # order of appearance, then Average
    assert en.loc["Economy", "accuracy"] == 100.0
    assert en.loc["Culture", "accuracy"] == 50.0
    assert en.loc["Average", "accuracy"] == pytest.approx(75.0)
    assert en.loc["Average", "n"] == 4 and en.loc["Culture", "n_abstain"] == 1
    ordered = ev.score_table(pred, orders={"dimension": ["Culture", "Economy"]})
    assert ordered[ordered["lang"] == "en"]["dimension"].tolist() == ["Culture", "Economy", "Average"]


def test_dimension_average_means_values_and_sums_counts():
    t = pd.DataFrame({"lang": ["en", "en", "en", "zh"], "dimension": ["Culture", "Economy", "Average", "Culture"],
                      "accuracy": [60.0, 90.0, 0.0, 70.0], "n": [3, 9, 12, 4]})
    avg = ev.dimension_average(t, ["lang"], ["accuracy"], counts=["n"])
    assert avg.to_dict("list") == {"lang": ["en", "zh"], "accuracy": [75.0, 70.0], "n": [12, 4],
                                   "dimension": ["Average", "Average"]}  # a printed Average row is left out


def test_sort_table_orders():
    t = pd.DataFrame({"g": ["y", "x", "y", "x"], "rule": ["tef", "soft_vote", "direct", "tef"],
                      "dimension": ["Average", "B", "A", "A"]})
    out = ev.sort_table(t, ["g", "rule"])
    assert out[["g", "rule"]].values.tolist() == [["y", "direct"], ["y", "tef"], ["x", "soft_vote"], ["x", "tef"]]
    out = ev.sort_table(t, ["dimension"], orders={"dimension": ["B"]})
    assert out["dimension"].tolist() == ["B", "A", "A", "Average"]


def test_flatten_sentences_and_iter_groups():
    flat, doc = ev.flatten_sentences(pd.Series([[0.1, 0.2], [], [0.3]]))
    assert flat.tolist() == [0.1, 0.2, 0.3] and doc.tolist() == [0, 0, 2]
    assert np.bincount(doc, minlength=3).tolist() == [2, 0, 1]
    flat, doc = ev.flatten_sentences([])
    assert flat.shape == (0,) and flat.dtype == np.float64 and doc.shape == (0,)
    assert ev.flatten_sentences([["a"], ["b", "c"]], dtype=object)[0].tolist() == ["a", "b", "c"]
    frame = pd.DataFrame({"k": ["b", "a", "b"], "v": [1, 2, 3]})
    assert [(key, g["v"].tolist()) for key, g in ev.iter_groups(frame, ["k"])] == [({"k": "b"}, [1, 3]),
                                                                                  ({"k": "a"}, [2])]
    assert [key for key, _ in ev.iter_groups(frame, [])] == [{}]


def test_strongest_baseline_levels():
    # the paper's tidy layout: two dimensions, one language
    rows = [("Culture", "direct", 50.0), ("Culture", "majority_vote", 60.0), ("Culture", "soft_vote", 55.0),
            ("Culture", "tef", 58.0), ("Economy", "direct", 80.0), ("Economy", "majority_vote", 62.0),
            ("Economy", "soft_vote", 79.0), ("Economy", "tef", 81.0)]
    t = pd.DataFrame(rows, columns=["dimension", "method", "value"]).assign(model="m", lang="en")
    cell = ev.strongest_baseline(t, ["model", "lang", "dimension"], value="value", rule="method")
    assert cell["strongest_baseline"].tolist() == ["majority_vote", "direct"]
    assert cell["gain"].tolist() == [-2.0, 1.0]
    avg = ev.strongest_baseline(t, ["model", "lang"], value="value", rule="method").iloc[0]
    # Averages: Direct 65, MV 61, SV 67, TEF 69.5: the best baseline of the averages is SV
    assert avg["strongest_baseline"] == "soft_vote" and avg["baseline"] == 67.0 and avg["gain"] == 2.5
    tie = ev.strongest_baseline(t.assign(value=1.0), ["model"], value="value", rule="method").iloc[0]
    assert tie["strongest_baseline"] == "direct"  # ties go to the first baseline
    only = ev.strongest_baseline(t, ["model"], value="value", rule="method", challenger=None)
    assert list(only.columns) == ["strongest_baseline", "baseline"]
    with pytest.raises(ValueError, match="lack rule"):
        ev.strongest_baseline(t[t["method"] != "soft_vote"], ["model"], value="value", rule="method")


def test_paired_comparisons(cache_frame):
    pred = ev.predict_pairs(cache_frame)
    cmp = ev.paired_comparisons(pred, "tef", "soft_vote", n_boot=200)
    assert cmp["lang"].tolist() == ["en", "zh"]
    table = ev.score_table(pred)
    avg = table[table["dimension"] == ev.AVERAGE].set_index(["lang", "rule"])["accuracy"]
    for lang in ("en", "zh"):
        row = cmp[cmp["lang"] == lang].iloc[0]
        assert row["difference"] == pytest.approx(avg[(lang, "tef")] - avg[(lang, "soft_vote")])
        assert row["low"] <= row["difference"] <= row["high"]
    same = ev.paired_comparisons(pred, "tef", "tef", n_boot=50)
    assert (same["difference"] == 0).all() and (same["p_mcnemar"] == 1).all()
    only_en = ev.paired_comparisons(pred, "tef", {("en",): "direct"}, n_boot=50)
    assert only_en["lang"].tolist() == ["en"] and only_en["b"].tolist() == ["direct"]
    with pytest.raises(ValueError, match="must both be present"):
        ev.paired_comparisons(pred[pred["rule"] != "direct"], "tef", "direct", n_boot=50)
    with pytest.raises(ValueError, match="metric must be"):
        ev.paired_comparisons(pred, "tef", "direct", metric="auc")


def test_bad_input(cache_frame):
    with pytest.raises(ValueError, match="unknown rule"):
        ev.predict_pairs(cache_frame, rules=["median"])
    with pytest.raises(ValueError, match="invalid must be"):
        ev.predict_pairs(cache_frame, invalid="ignore")
    with pytest.raises(ValueError, match="lacks column"):
        ev.predict_pairs(cache_frame.drop(columns=["direct"]))


def test_unknown_names_raise_a_key_error_that_is_a_value_error(cache_frame):
    for call, message in (
        (lambda: ev.predict_pairs(cache_frame, rules=["median"]),
         "unknown rule(s) ['median']; choose from direct, majority_vote, soft_vote, tef, tef_without_entropy, "
         "tef_without_log_odds"),
        (lambda: ev.check_metric("auc"), "metric must be one of ('accuracy', 'macro_f1'), got 'auc'"),
        (lambda: ev.predict_pairs(cache_frame, classes={"Economy": ("change", "stability")}),
         "no sides given for dimension(s) ['Culture']"),
    ):
        with pytest.raises(KeyError) as info:
            call()
        assert isinstance(info.value, ValueError) and str(info.value) == message


def test_score_table_reads_a_task_s_sides_from_the_gold():
    """Without classes=, a task's sides scored a macro-F1 of 0 (it averaged change and stability's F1)."""
    pred = pd.DataFrame({"lang": "en", "rule": "tef", "dimension": ["Commute"] * 4 + ["Tone"] * 2,
                         "side": ["car", "transit", "car", "cycling", "calm", "angry"],
                         "prediction": ["car", "transit", "transit", "cycling", "calm", "calm"]})
    table = score_table(pred).set_index("dimension")
    commute = pred["dimension"] == "Commute"
    for dimension, rows in pred.groupby("dimension"):
        assert table.loc[dimension, "macro_f1"] == pytest.approx(macro_f1(rows["side"], rows["prediction"]))
    assert table.loc["Commute", "macro_f1"] == pytest.approx(100 * (2 / 3 + 1 + 2 / 3) / 3)
    given = score_table(pred, classes={"Commute": ("car", "cycling", "transit"), "Tone": ("angry", "calm")})
    pd.testing.assert_frame_equal(given.set_index("dimension"), table)
    with pytest.raises(ValueError, match="missing label"):
        score_table(pred.assign(side=pred["side"].where(commute, None)))  # unlabelled pairs: leave them out first
