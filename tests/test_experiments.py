"""Tests of tefcore.chapters.experiments on hand-made and seeded synthetic cache frames."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from cache_frames import hand_cache, synthetic_cache

from tefcore.chapters import experiments as ex
from tefcore import metrics
from tefcore.chapters import presentation as pres
from tefcore.evaluate import ABSTAIN, predict_pairs, score_table


@pytest.fixture()
def hand_frame() -> pd.DataFrame:
    return hand_cache()


# ---------------------------------------------------------------------------------------------------
def test_majority_rate_counts_the_larger_side(hand_frame):
    mr = ex.majority_rate(hand_frame).set_index("dimension")
    assert list(mr.index) == ["Culture", "Economy", "Average"]
    assert mr.loc["Culture", "accuracy"] == pytest.approx(200 / 3)  # 2 of 3 stability
    assert mr.loc["Culture", "majority_side"] == "stability"
    assert mr.loc["Economy", "accuracy"] == pytest.approx(50.0)
    assert mr.loc["Economy", "majority_side"] == "change"  # tie goes to change
    # the constant predictor's macro-F1 (F1 of the majority side / 2)
    y = hand_frame[hand_frame["dimension"] == "Culture"]["side"]
    assert mr.loc["Culture", "macro_f1"] == pytest.approx(metrics.macro_f1(y, ["stability"] * 3))
    assert mr.loc["Average", "accuracy"] == pytest.approx((200 / 3 + 50) / 2)
    assert mr.loc["Average", "n"] == 5
    # a second (partial) run of the same pairs changes nothing
    both = pd.concat([hand_frame.assign(model="a"), hand_frame.iloc[:2].assign(model="b")])
    pd.testing.assert_frame_equal(ex.majority_rate(both), ex.majority_rate(hand_frame))


def test_invalid_accounting(hand_frame):
    acc = ex.invalid_accounting(hand_frame.assign(model="m", prompt="original")).iloc[0]
    assert acc["pairs"] == 5 and acc["sentences"] == 11
    assert acc["invalid_direct"] == 1 and acc["invalid_sentences"] == 3
    assert acc["pairs_without_readable_sentence"] == 1
    assert acc["invalid_sentence_share"] == pytest.approx(300 / 11)
    assert acc["source: invalid"] == 3 and acc["source: partial"] == 1 and acc["source: generated_text"] == 1


def test_posterior_summary_of_uniform_and_decisive_judges():
    flat = pd.DataFrame({"post_id": ["a", "b"], "lang": "en", "dimension": "Economy", "side": "change",
                         "direct": [0.5, 0.5], "sentences": [[0.5, 0.5], [0.5]]})
    s = ex.posterior_summary(flat).iloc[0]
    assert s["sentences"] == 3 and s["mean_weight"] == pytest.approx(0.0) and s["decisive_share"] == 0
    sharp = flat.assign(sentences=[[0.999, 0.001], [1.0]])
    s = ex.posterior_summary(sharp).iloc[0]
    assert s["decisive_share"] == 100 and s["mean_weight"] > 0.98
    assert s["median_abs_log_odds"] == pytest.approx(math.log(0.999 / 0.001))
    assert s["unanimous_posts"] == 50.0  # post a: 0.999 and 0.001 disagree; post b has one sentence


# ---------------------------------------------------------------------------------------------------
def test_predict_runs_matches_predict_pairs_per_model():
    a, b = synthetic_cache(3, 10).assign(model="A", prompt="p"), synthetic_cache(4, 10).assign(model="B", prompt="p")
    pred = ex.predict_runs(pd.concat([a, b], ignore_index=True))
    ref = predict_pairs(b.drop(columns=["model", "prompt"]))
    got = pred[pred["model"] == "B"].drop(columns=["model", "prompt"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, ref)


def test_average_intervals_estimate_is_the_table_average():
    pred = ex.predict_runs(synthetic_cache(5).assign(model="A", prompt="p"))
    ci = ex.average_intervals(pred, n_boot=200)
    table = ex.score_runs(pred)
    avg = table[table["dimension"] == "Average"].set_index(["lang", "rule"])
    for _, r in ci.iterrows():
        assert r["estimate"] == pytest.approx(avg.loc[(r["lang"], r["rule"]), r["metric"]])
        assert r["low"] <= r["estimate"] <= r["high"]
    assert ci[ci["metric"] == "accuracy"]["rule"].tolist()[:6] == [
        "direct", "majority_vote", "soft_vote", "tef", "tef_without_entropy", "tef_without_log_odds"]


def test_interval_table_lays_out_formatted_cells():
    pred = ex.predict_runs(synthetic_cache(5).assign(model="e5-zeroshot", prompt="p"))
    cis = ex.labelled_intervals(ex.average_intervals(pred, n_boot=100))
    wide = ex.interval_table(cis, ["tef", "direct"])
    assert list(wide.columns) == [("accuracy", "TEF"), ("accuracy", "Direct"), ("macro_f1", "TEF"),
                                  ("macro_f1", "Direct")]
    assert wide.index.names == ["judge", "lang"] and len(wide) == 2
    r = cis[(cis["rule"] == "tef") & (cis["metric"] == "accuracy") & (cis["lang"] == "en")].iloc[0]
    cell = wide.loc[(pres.judge_label("e5-zeroshot"), "en"), ("accuracy", "TEF")]
    assert cell == pres.format_interval(r["estimate"], r["low"], r["high"])
    assert cell.startswith(f"{r['estimate']:.1f}")


def test_versus_best_baseline():
    pred = ex.predict_runs(synthetic_cache(6).assign(model="A", prompt="p"))
    table = ex.score_runs(pred)
    res = ex.versus_best_baseline(pred, n_boot=300)
    for lang in ("en", "zh"):
        avg = table[(table["dimension"] == "Average") & (table["lang"] == lang)].set_index("rule")["accuracy"]
        row = res[(res["lang"] == lang) & (res["metric"] == "accuracy")].iloc[0]
        assert row["baseline"] == avg[["direct", "majority_vote", "soft_vote"]].max()
        assert row["b"] == avg[["direct", "majority_vote", "soft_vote"]].idxmax()
        assert row["difference"] == pytest.approx(avg["tef"] - avg[row["b"]])
        assert row["tef"] - row["baseline"] == pytest.approx(row["difference"])
        assert row["low"] <= row["difference"] <= row["high"] and 0 <= row["p_mcnemar"] <= 1
    assert set(res["metric"]) == {"accuracy", "macro_f1"}


def test_paired_comparison_of_a_rule_with_itself_is_zero():
    pred = ex.predict_runs(synthetic_cache(7).assign(model="A", prompt="p"))
    cmp = ex.compare_runs(pred, "tef", "tef", n_boot=100)
    assert list(cmp.columns[:3]) == ["model", "prompt", "lang"]
    assert (cmp["difference"] == 0).all() and (cmp["p_mcnemar"] == 1).all()
    assert (cmp["mcnemar_b"] == 0).all()


# ---------------------------------------------------------------------------------------------------
def test_side_by_side_layout_with_the_paper():
    from tefcore.chapters.paper import load_table

    pred = ex.predict_runs(synthetic_cache(8).assign(model="e5-zeroshot", prompt="original"))
    wide = ex.side_by_side(ex.score_runs(pred), load_table("table3"), rules=["direct", "tef"],
                           paper_models=["qwen2.5-7b"])
    assert wide.index.names == ["language", "source", "judge", "method"]
    assert wide.index[0] == ("Chinese", "ours, CPU judge", pres.judge_label("e5-zeroshot"), "Direct")
    paper_zh = wide.xs(("Chinese", "paper, GPU/API LLMs", "Qwen2.5-7B"), level=[0, 1, 2])
    assert paper_zh.loc["Direct", ("Cul.", "Acc")] == 44.6  # paper, Table 3
    assert paper_zh.loc["TEF", ("Average", "Acc")] == pytest.approx(71.25, abs=0.051)  # mean of 6 dims
    dims = list(dict.fromkeys(wide.columns.get_level_values(0)))
    assert dims == ["Cul.", "Eco.", "Soc.", "Pol.", "Tech.", "Env.", "Average"]
    # our rows: dimensions we did not score are empty, Average is ours
    ours = wide.sort_index().loc[("English", "ours, CPU judge", pres.judge_label("e5-zeroshot"), "TEF")]
    table = ex.score_runs(pred)
    want = table[(table["lang"] == "en") & (table["rule"] == "tef") & (table["dimension"] == "Average")]
    assert ours[("Average", "F1")] == round(float(want["macro_f1"].iloc[0]), 1)
    assert np.isnan(ours[("Soc.", "Acc")])


def test_side_by_side_keeps_table4_printed_averages():
    from tefcore.chapters.paper import load_table

    pred = ex.predict_runs(synthetic_cache(9).assign(model="local", prompt="original"))
    wide = ex.side_by_side(ex.score_runs(pred), load_table("table4"),
                           rules=["tef", "tef_without_entropy", "tef_without_log_odds"])
    row = wide.sort_index().loc[("English", "paper, GPU/API LLMs", "DeepSeek-V3.2", "w/o Entropy")]
    assert row[("Average", "Acc")] == 60.3 and row[("Env.", "Acc")] == 51.4  # paper, Table 4


# ---------------------------------------------------------------------------------------------------
def test_prompt_robustness_means_over_languages():
    frames = [synthetic_cache(10 + i).assign(model="A", prompt=p) for i, p in enumerate(["original", "verbose"])]
    pred = ex.predict_runs(pd.concat(frames, ignore_index=True))
    pr = ex.prompt_robustness(pred, n_boot=200).set_index("prompt")
    table = ex.score_runs(pred)
    avg = table[table["dimension"] == "Average"]
    for prompt in ("original", "verbose"):
        per = avg[avg["prompt"] == prompt].groupby("rule")["accuracy"].mean()
        best = per[["direct", "majority_vote", "soft_vote"]]
        assert pr.loc[prompt, "baseline"] == pytest.approx(best.max())
        assert pr.loc[prompt, "strongest_baseline"] == best.idxmax()
        assert pr.loc[prompt, "tef"] == pytest.approx(per["tef"])
        assert pr.loc[prompt, "low"] <= pr.loc[prompt, "gain"] <= pr.loc[prompt, "high"]
    assert pr.loc["original", "drop_tef"] == 0
    assert pr.loc["verbose", "drop_tef"] == pytest.approx(pr.loc["original", "tef"] - pr.loc["verbose", "tef"])


def test_score_runs_agrees_with_per_group_sklearn_metrics(hand_frame):
    """Counts route (score_table) against one scikit-learn call per group (metrics.accuracy/macro_f1)."""
    frames = [synthetic_cache(13, 5).assign(model="A", prompt="p"),
              synthetic_cache(14, 7).assign(model="B", prompt="p"),
              hand_frame.drop(columns="sentence_sources").assign(model="C", prompt="q")]
    pred = ex.predict_runs(pd.concat(frames, ignore_index=True))
    pred.loc[pred.index[::11], "prediction"] = ABSTAIN  # abstentions count as misses
    table = ex.score_runs(pred)
    assert list(table.columns[:5]) == ["model", "prompt", "lang", "rule", "dimension"]
    by = ["model", "prompt", "lang", "rule", "dimension"]
    dims = table[table["dimension"] != "Average"].set_index(by)
    for key, g in pred.groupby(by):
        row = dims.loc[key]
        assert row["n"] == len(g) and row["n_abstain"] == int((g["prediction"] == ABSTAIN).sum())
        assert row["accuracy"] == pytest.approx(metrics.accuracy(g["side"], g["prediction"]), abs=1e-9)
        assert row["macro_f1"] == pytest.approx(metrics.macro_f1(g["side"], g["prediction"]), abs=1e-9)
    avg = table[table["dimension"] == "Average"].set_index(by[:-1])
    means = dims.groupby(level=by[:-1])[["accuracy", "macro_f1"]].mean()
    pd.testing.assert_frame_equal(avg[["accuracy", "macro_f1"]].sort_index(), means.sort_index(),
                                  check_dtype=False)
    assert score_table(pred, by=["lang", "rule"])["n"].sum() == len(pred)

