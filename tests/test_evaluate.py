"""Tests of tefcore.evaluate on a hand-made cache frame."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tefcore import evaluate as ev
from tefcore import inference as inf
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


# --- results to publish: intervals, the strongest baseline, blind rules ----------------------------------
def _three_sides(n: int = 30, seed: int = 0) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """Predictions of three rules on a three-side and a two-side dimension: tef mostly right, direct noisier,
    majority_vote one side for every text."""
    rng = np.random.default_rng(seed)
    sides = {"Transport": ["car", "transit", "cycling"], "Housing": ["up", "down"]}
    frames = []
    for dim, names in sides.items():
        gold = np.array(names * n)[:n]
        for rule, right in (("tef", 0.8), ("direct", 0.6), ("majority_vote", None)):
            guess = (np.full(n, names[0]) if right is None else
                     np.where(rng.random(n) < right, gold, rng.choice(names, n)))
            frames.append(pd.DataFrame({"post_id": [f"{dim}{i}" for i in range(n)], "lang": "en", "dimension": dim,
                                        "side": gold, "rule": rule, "prediction": guess}))
    pred = pd.concat(frames, ignore_index=True)
    return pred.assign(correct=pred["prediction"] == pred["side"]), sides


def test_interval_table_holds_the_score_tables_numbers_inside_their_intervals():
    pred, sides = _three_sides()
    table = score_table(pred, classes=sides)
    intervals = inf.interval_table(pred, classes=sides, n_boot=300)
    merged = table.merge(intervals, on=["lang", "rule", "dimension"], suffixes=("", "_ci"))
    assert len(merged) == len(table) == 3 * 3
    for metric in ("accuracy", "macro_f1"):
        np.testing.assert_allclose(merged[f"{metric}_ci"], merged[metric], atol=1e-9)
        assert (merged[f"{metric}_low"] <= merged[metric]).all() and (merged[metric] <= merged[f"{metric}_high"]).all()
    assert (merged["accuracy_high"] - merged["accuracy_low"] > 0).any()
    with pytest.raises(ValueError, match="end with 'dimension'"):
        inf.interval_table(pred, by=["lang", "rule"])


def test_baseline_tests_compare_each_rule_with_the_strongest_baseline_on_the_same_texts():
    pred, _ = _three_sides()
    tests = inf.baseline_tests(pred, n_boot=300)
    assert set(tests["rule"]) == {"tef"} and list(tests["dimension"]) == ["Transport", "Housing", "Average"]
    table = score_table(pred)
    for _, row in tests.iterrows():
        cells = table[(table["dimension"] == row["dimension"]) & table["rule"].isin(["direct", "majority_vote"])]
        assert row["baseline"] == cells.sort_values("accuracy", ascending=False)["rule"].iloc[0]
        tef = table[(table["dimension"] == row["dimension"]) & (table["rule"] == "tef")]["accuracy"].item()
        assert row["difference"] == pytest.approx(tef - cells["accuracy"].max())
        assert row["low"] <= row["difference"] <= row["high"] and 0 <= row["p_mcnemar"] <= 1
    assert inf.baseline_tests(pred[pred["rule"] == "tef"]).empty  # no baseline to compare with


def test_a_rule_that_gives_one_side_to_every_text_is_named_and_warned_about():
    pred, _ = _three_sides()
    with pytest.warns(inf.BlindWarning, match=r"one side for >= 95% of the texts .*MV on Transport, Housing") as seen:
        rows = inf.blind_rows(pred)
    assert len(seen) == 1 and "\n" not in str(seen[0].message)
    assert rows[["rule", "dimension", "side", "share"]].values.tolist() == [
        ["majority_vote", "Transport", "car", 1.0], ["majority_vote", "Housing", "up", 1.0]]
    assert inf.blind_rows(pred[pred["rule"] == "tef"], warn=False).empty
    few = pred.groupby(["rule", "dimension"]).head(inf.BLIND_MIN_TEXTS - 1)  # too few texts to judge from
    assert inf.blind_rows(few, warn=False).empty


def test_score_table_refuses_a_gold_side_outside_the_sides_it_is_given():
    pred, sides = _three_sides()
    with pytest.raises(ValueError, match="lack the gold label 'cycling'"):
        score_table(pred, classes={**sides, "Transport": ["car", "transit"]})
