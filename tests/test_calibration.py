"""Tests of companion.calibration on hand-made and seeded synthetic cache frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cache_frames import NAN, hand_cache, synthetic_cache

from chapters import ch09
from companion import calibration as calib
from companion import results as ex
from tefcore import metrics
from tefcore.evaluate import predict_pairs
from tefcore.fusion import fuse_many


@pytest.fixture()
def hand_frame() -> pd.DataFrame:
    return hand_cache()


# ---------------------------------------------------------------------------------------------------
def test_ece_rows_match_the_metric():
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.5, 1.0, 300)
    corr = (rng.random(300) < conf).astype(float)
    idx = np.vstack([np.arange(300), rng.integers(0, 300, 300)])
    got = ch09._ece_rows(conf, corr, idx, 10)
    assert got[0] == pytest.approx(metrics.expected_calibration_error(conf, corr))
    assert got[1] == pytest.approx(metrics.expected_calibration_error(conf[idx[1]], corr[idx[1]]))


def test_calibration_summary_values(hand_frame):
    pred = predict_pairs(hand_frame).assign(model="m")
    cal = ch09.calibration_summary(pred, n_boot=200).set_index("rule")
    tef = pred[(pred["rule"] == "tef") & (pred["prediction"] != "abstain")]
    row = cal.loc["tef"]
    assert row["n"] == 4 and row["n_abstain"] == 1
    conf, corr = tef["confidence"].to_numpy(), tef["correct"].to_numpy()
    assert row["ece"] == pytest.approx(metrics.expected_calibration_error(conf, corr))
    assert row["gap"] == pytest.approx(conf.mean() - corr.mean())
    assert row["ece_low"] <= row["ece_high"] and row["gap_low"] <= row["gap"] + 1e-12 <= row["gap_high"] + 1e-9
    p = metrics.probability_of_change(tef["prediction"].to_numpy(), conf)
    assert row["brier"] == pytest.approx(metrics.brier_score(tef["side"].to_numpy(), p))
    assert row["nll"] == pytest.approx(metrics.negative_log_likelihood(tef["side"].to_numpy(), p))


def test_reliability_by_rule_counts_every_scored_pair():
    pred = ex.predict_runs(synthetic_cache(11).assign(model="A", prompt="p"))
    rel = ch09.reliability_by_rule(pred)
    assert list(rel.columns[:4]) == ["model", "prompt", "lang", "rule"]
    scored = pred[pred["prediction"] != "abstain"].groupby(["lang", "rule"]).size()
    got = rel.groupby(["lang", "rule"])["count"].sum()
    pd.testing.assert_series_equal(got.sort_index(), scored.sort_index(), check_names=False)
    assert (rel["mean_predicted"] >= 0.5).all()  # binary confidences are >= 0.5
    # one group is the metric's table of that group
    tef_en = pred[(pred["rule"] == "tef") & (pred["lang"] == "en") & (pred["prediction"] != "abstain")]
    want = metrics.reliability_table(tef_en["confidence"].to_numpy(), tef_en["correct"].to_numpy())
    got = rel[(rel["rule"] == "tef") & (rel["lang"] == "en")].drop(columns=["model", "prompt", "lang", "rule"])
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want)


# ---------------------------------------------------------------------------------------------------
def test_retemper():
    p = np.array([0.0, 0.2, 0.5, 0.9, 1.0, NAN])
    assert np.allclose(calib.retemper(p, 1.0)[:5], p[:5]) and np.isnan(calib.retemper(p, 1.0)[5])
    sharp = calib.retemper(p, 0.5)
    assert sharp[1] == pytest.approx(1 / (1 + 16)) and sharp[2] == 0.5 and sharp[3] == pytest.approx(81 / 82)
    assert sharp[0] == 0.0 and sharp[4] == 1.0
    with pytest.raises(ValueError, match="positive"):
        calib.retemper(p, 0.0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        calib.retemper([1.5], 2.0)


@pytest.mark.slow
def test_temperature_sweep():
    df = synthetic_cache(12, 30).assign(model="A", prompt="original")
    sweep = calib.temperature_sweep(df, [0.01, 1.0, 4.0], n_boot=200)
    assert len(sweep) == 3 * 2 and list(sweep["t"].unique()) == [0.01, 1.0, 4.0]
    at1 = sweep[sweep["t"] == 1.0].set_index("lang")
    ref = ex.versus_best_baseline(ex.predict_runs(df), metrics_=("accuracy",), n_boot=200).set_index("lang")
    for lang in ("en", "zh"):
        assert at1.loc[lang, "gain"] == pytest.approx(ref.loc[lang, "difference"])
        assert at1.loc[lang, "best_baseline"] == ref.loc[lang, "b"]
    # very sharp posteriors: every weight -> 1, |l| -> M, TEF decides like Majority Vote, except on a
    # tied vote, which TEF (a zero score) gives to change and Majority Vote to the side voted first
    hot = calib._retemper_frame(df, 0.001)
    pred = predict_pairs(hot.drop(columns=["model", "prompt"]), rules=["majority_vote", "tef"])
    mv = pred[pred["rule"] == "majority_vote"]["prediction"].to_numpy()
    tf = pred[pred["rule"] == "tef"]["prediction"].to_numpy()
    change_votes = np.array([np.sum(np.asarray(s) >= 0.5) for s in hot["sentences"]])  # NaN is no vote
    readable = np.array([np.sum(~np.isnan(np.asarray(s, dtype=float))) for s in hot["sentences"]])
    tied = (2 * change_votes == readable) & (readable > 0)
    assert tied.any() and np.mean((mv == tf)[~tied]) > 0.97
    assert np.mean(tf[tied] == "change") > 0.97
    assert (sweep.groupby("lang")["mean_weight"].apply(lambda s: s.is_monotonic_decreasing)).all()
    # Direct and Majority Vote do not move with the temperature
    t4 = predict_pairs(calib._retemper_frame(df, 4.0).drop(columns=["model", "prompt"]),
                       rules=["direct", "majority_vote"])
    t1 = predict_pairs(df.drop(columns=["model", "prompt"]), rules=["direct", "majority_vote"])
    assert (t4["prediction"].to_numpy() == t1["prediction"].to_numpy()).all()


def test_fuse_many_agrees_with_sweep_frame_split():
    df = synthetic_cache(14, 4)
    hot = calib._retemper_frame(df, 2.0)
    assert [len(s) for s in hot["sentences"]] == [len(s) for s in df["sentences"]]
    flat = np.concatenate([calib.retemper(s, 2.0) for s in df["sentences"]])
    assert np.allclose(np.concatenate(hot["sentences"].to_list()), flat)
    assert len(fuse_many(flat, np.repeat(np.arange(len(df)), df["sentences"].map(len)), "tef")) == len(df)



# ---------------------------------------------------------------------------------------------------
# TEF's temperature, the verdicts and the table
# ---------------------------------------------------------------------------------------------------
def test_tef_temperature_calibration_at_the_reference_t_is_the_summary():
    """At T = 5 the sweep's ECE and gap are calibration_summary's for TEF; at other T they follow a
    second route: the score recovered from the T = 5 confidence, sigma(2|s|/T) recomputed by hand."""
    frame = synthetic_cache(21, 30).assign(model="A", prompt="p")
    sweep = ch09.tef_temperature_calibration(frame, [1.0, 5.0, 25.0])
    pred = ex.predict_runs(frame, rules=["tef"])
    cal = ch09.calibration_summary(pred, n_boot=20).set_index("lang")
    for lang in ("en", "zh"):
        at5 = sweep[(sweep["lang"] == lang) & (sweep["T"] == 5.0)].iloc[0]
        assert bool(at5["reference"]) and at5["ece"] == pytest.approx(cal.loc[lang, "ece"])
        assert at5["gap"] == pytest.approx(cal.loc[lang, "gap"])
        p = pred[pred["lang"] == lang]
        score = 5.0 / 2 * np.log(p["confidence"] / (1 - p["confidence"]))  # |s| from sigma(2|s|/5)
        for t in (1.0, 25.0):
            conf = 1 / (1 + np.exp(-2 * score / t))
            row = sweep[(sweep["lang"] == lang) & (sweep["T"] == t)].iloc[0]
            assert row["confidence"] == pytest.approx(conf.mean(), rel=1e-9)
            assert row["ece"] == pytest.approx(metrics.expected_calibration_error(conf.to_numpy(),
                                                                                   p["correct"].to_numpy()))
            assert row["accuracy"] == pytest.approx(at5["accuracy"])  # decisions do not depend on T
    means = sweep[sweep["lang"] == "en"]["confidence"].to_numpy()
    assert means[0] > means[1] > means[2]  # a larger T pulls every confidence towards 0.5
    with pytest.raises(ValueError, match="positive finite"):
        ch09.tef_temperature_calibration(frame, [0.0])


def test_tef_temperature_calibration_leaves_abstentions_out(hand_frame):
    sweep = ch09.tef_temperature_calibration(hand_frame.assign(model="m"), [5.0])
    pred = predict_pairs(hand_frame, rules=["tef"])
    decided = pred[pred["prediction"] != "abstain"]
    assert sweep["accuracy"].iloc[0] == pytest.approx(100 * decided["correct"].mean())
    assert sweep["confidence"].iloc[0] == pytest.approx(decided["confidence"].mean())


def test_verdicts_and_the_sentence_fit_the_counts():
    cal = pd.DataFrame({"model": "a", "lang": ["en"] * 3 + ["zh"] * 3, "rule": ["soft_vote", "tef", "direct"] * 2,
                        "ece": [0.10, 0.05, 0.20, 0.08, 0.08, 0.30], "ece_low": 0.0, "ece_high": [.2, .06, .3, .1, .1, .4],
                        "gap": [0.1, -0.02, 0.2, 0.05, -0.05, 0.3]})
    v = ch09.calibration_verdicts(cal, {"a": "ours: A"})
    assert v.loc[("ours: A", "en"), "lowest ECE"] == "TEF" and bool(v.loc[("ours: A", "en"), "clearly lowest"])
    assert v.loc[("ours: A", "zh"), "lowest ECE"] == "SV, TEF" and not v.loc[("ours: A", "zh"), "alone"]
    assert v.loc[("ours: A", "zh"), "smallest |gap|"] == "SV, TEF"
    assert ch09.verdict_sentence(v) == ("TEF has the lowest ECE in 2 of 2 run-language cells: 1 alone, 1 tied "
                                         "with another rule.")
    assert ch09.verdict_sentence(v.iloc[:1]) == "TEF has the lowest ECE in 1 of 1 run-language cell, alone."
    assert ch09.verdict_sentence(v, rule="Direct") == "Direct has the lowest ECE in none of 2 run-language cells."


def test_calibration_table_bolds_the_lowest_ece_and_the_gap_nearest_zero():
    import re

    pred = ex.predict_runs(synthetic_cache(22, 25).assign(model="A", prompt="p"),
                           rules=["direct", "soft_vote", "tef"])
    cal = ch09.calibration_summary(pred, n_boot=30)
    styler = ch09.calibration_table(cal, {"A": "ours: A"})
    text = styler.data
    assert text.index.names == ["run", "lang", "method"] and len(text) == 6
    css = styler.to_html().split("</style>")[0]
    bold = {(int(r), int(c)) for r, c in re.findall(r"_row(\d+)_col(\d+)", css)}
    cols = list(text.columns)
    for i, lang in enumerate(pd.unique(text.index.get_level_values("lang"))):
        block = cal[cal["lang"] == lang].set_index("rule").reindex(["direct", "soft_vote", "tef"])
        rows = range(3 * i, 3 * i + 3)
        assert {r for r in rows if (r, cols.index("ECE")) in bold} == {3 * i + int(np.argmin(block["ece"]))}
        assert {r for r in rows if (r, cols.index("gap")) in bold} == {3 * i + int(np.argmin(block["gap"].abs()))}
        assert not any((r, cols.index("n")) in bold for r in rows)
