"""Tests of tefcore.experiments on hand-made and seeded synthetic cache frames."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tefcore import experiments as ex
from tefcore import metrics
from tefcore.evaluate import ABSTAIN, predict_pairs, score_table
from tefcore.fusion import fuse_many

NAN = math.nan
DIMS = ("Culture", "Economy", "Politics")


def synthetic_cache(seed: int = 0, n_per_cell: int = 40, langs=("en", "zh"), sharp: float = 2.0) -> pd.DataFrame:
    """A cache frame whose sentence posteriors lean, noisily, towards the gold side."""
    rng = np.random.default_rng(seed)
    rows = []
    for lang in langs:
        for d, dim in enumerate(DIMS):
            for i in range(n_per_cell):
                side = "change" if rng.random() < 0.6 else "stability"
                sign = 1.0 if side == "change" else -1.0
                k = int(rng.integers(1, 6))
                logits = rng.normal(0.4 * sign, sharp, size=k)
                sent = list(1.0 / (1.0 + np.exp(-logits)))
                direct = float(1.0 / (1.0 + np.exp(-rng.normal(0.3 * sign, 1.0))))
                rows.append((f"{lang}-{dim}-{i}", lang, dim, side, direct, sent))
    return pd.DataFrame(rows, columns=["post_id", "lang", "dimension", "side", "direct", "sentences"])


@pytest.fixture()
def hand_frame() -> pd.DataFrame:
    rows = [
        ("a", "en", "Economy", "change", 0.8, [0.9, 0.45, 0.45], ["logprobs"] * 3),
        ("b", "en", "Economy", "stability", 0.6, [0.02, 0.55, 0.55], ["logprobs", "partial", "logprobs"]),
        ("c", "en", "Culture", "stability", NAN, [NAN, 0.3], ["invalid", "logprobs"]),
        ("d", "en", "Culture", "change", 0.4, [NAN, NAN], ["invalid", "invalid"]),
        ("e", "en", "Culture", "stability", 0.2, [0.1], ["generated_text"]),
    ]
    return pd.DataFrame(rows, columns=["post_id", "lang", "dimension", "side", "direct", "sentences",
                                       "sentence_sources"])


# ---------------------------------------------------------------------------------------------------
def test_parse_list_splits_and_dedupes():
    assert ex.parse_list(" local, e5-zeroshot ,,local") == ["local", "e5-zeroshot"]
    assert ex.parse_list(["a", "b"]) == ["a", "b"]
    assert ex.parse_list(None) == []


def test_repo_path_resolves_against_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert ex.repo_path("data/paper").is_dir()
    assert ex.repo_path(tmp_path) == tmp_path


def test_load_runs_concatenates_and_notes_missing(tmp_path):
    for model in ("m1", "m2"):
        (tmp_path / model / "original").mkdir(parents=True)
        (tmp_path / model / "original" / "en.jsonl").write_text("x")
    frames = {"m1": synthetic_cache(1, 5, ("en",)), "m2": synthetic_cache(2, 3, ("en",))}

    def reader(path):
        model = path.parts[-3]
        return frames[model], {"backend": model, "model": "org/weights", "nested": {"seed": 7}, "folds": [1, 2]}

    runs = ex.load_runs("m1,m2", "original", ["en", "zh"], tmp_path, reader=reader)
    assert list(runs.frame.columns[:2]) == ["model", "prompt"]
    assert len(runs.frame) == 5 * 3 + 3 * 3
    assert runs.models == ["m1", "m2"]
    assert runs.provenance["nested.seed"].tolist() == [7, 7]
    assert runs.provenance["folds"].tolist() == ["1, 2", "1, 2"]
    assert runs.provenance["n_pairs"].tolist() == [15, 9]
    assert runs.provenance["model"].tolist() == ["m1", "m2"]  # the run's name, not the recorded one
    assert runs.provenance["model_id"].tolist() == ["org/weights"] * 2
    assert len(runs.missing) == 3 and all("/zh" in m for m in runs.missing[:2])
    assert "different numbers of pairs (m1/original: 15, m2/original: 9)" in runs.missing[2]
    assert len(runs.select(model="m2").frame) == 9


def test_load_runs_with_nothing_found_is_empty_not_an_error(tmp_path):
    runs = ex.load_runs("nope", "original", "en", tmp_path, reader=lambda p: (None, {}))
    assert runs.frame.empty and runs.models == [] and len(runs.missing) == 1
    with pytest.raises(ValueError, match="at least one model"):
        ex.load_runs("", "original", "en", tmp_path)
    assert runs.notes_markdown == f"* note: nope/original/en: no cache at {tmp_path}/nope/original/en.jsonl"
    with pytest.raises(FileNotFoundError, match="no cache found under .*tef extract"):
        ex.chapter_runs("nope", "original", "en", tmp_path)


def test_chapter_runs_reads_the_committed_caches_and_notes_the_absent_ones():
    runs = ex.chapter_runs("e5-zeroshot,absent-judge", "original", "en,zh", "data/caches")
    assert runs.models == ["e5-zeroshot"]
    assert runs.provenance["n_pairs"].tolist() == [605, 1215]
    assert runs.notes_markdown.count("* note: absent-judge/original/") == 2


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
    cell = wide.loc[(ex.judge_label("e5-zeroshot"), "en"), ("accuracy", "TEF")]
    assert cell == ex.format_interval(r["estimate"], r["low"], r["high"])
    assert cell.startswith(f"{r['estimate']:.1f}")


def test_best_rule_and_versus_best_baseline():
    pred = ex.predict_runs(synthetic_cache(6).assign(model="A", prompt="p"))
    table = ex.score_runs(pred)
    best = ex.best_rule(table).set_index("lang")
    res = ex.versus_best_baseline(pred, n_boot=300)
    for lang in ("en", "zh"):
        avg = table[(table["dimension"] == "Average") & (table["lang"] == lang)].set_index("rule")["accuracy"]
        assert best.loc[lang, "value"] == pytest.approx(avg[["direct", "majority_vote", "soft_vote"]].max())
        row = res[(res["lang"] == lang) & (res["metric"] == "accuracy")].iloc[0]
        assert row["b"] == best.loc[lang, "best"]
        assert row["difference"] == pytest.approx(avg["tef"] - avg[row["b"]])
        assert row["tef"] - row["baseline"] == pytest.approx(row["difference"])
        assert row["low"] <= row["difference"] <= row["high"] and 0 <= row["p_mcnemar"] <= 1
    assert set(res["metric"]) == {"accuracy", "macro_f1"}


def test_paired_comparison_of_a_rule_with_itself_is_zero():
    pred = ex.predict_runs(synthetic_cache(7).assign(model="A", prompt="p"))
    cmp = ex.paired_comparisons(pred, "tef", "tef", n_boot=100)
    assert (cmp["difference"] == 0).all() and (cmp["p_mcnemar"] == 1).all()
    assert (cmp["mcnemar_b"] == 0).all()


# ---------------------------------------------------------------------------------------------------
def test_side_by_side_layout_with_the_paper():
    from tefcore.paper import load_table

    pred = ex.predict_runs(synthetic_cache(8).assign(model="e5-zeroshot", prompt="original"))
    wide = ex.side_by_side(ex.score_runs(pred), load_table("table3"), rules=["direct", "tef"],
                           paper_models=["qwen2.5-7b"])
    assert wide.index.names == ["language", "source", "judge", "method"]
    assert wide.index[0] == ("Chinese", "ours, CPU judge", ex.judge_label("e5-zeroshot"), "Direct")
    paper_zh = wide.xs(("Chinese", "paper, GPU/API LLMs", "Qwen2.5-7B"), level=[0, 1, 2])
    assert paper_zh.loc["Direct", ("Cul.", "Acc")] == 44.6  # paper, Table 3
    assert paper_zh.loc["TEF", ("Average", "Acc")] == pytest.approx(71.25, abs=0.051)  # mean of 6 dims
    dims = list(dict.fromkeys(wide.columns.get_level_values(0)))
    assert dims == ["Cul.", "Eco.", "Soc.", "Pol.", "Tech.", "Env.", "Average"]
    # our rows: dimensions we did not score are empty, Average is ours
    ours = wide.sort_index().loc[("English", "ours, CPU judge", ex.judge_label("e5-zeroshot"), "TEF")]
    table = ex.score_runs(pred)
    want = table[(table["lang"] == "en") & (table["rule"] == "tef") & (table["dimension"] == "Average")]
    assert ours[("Average", "F1")] == round(float(want["macro_f1"].iloc[0]), 1)
    assert np.isnan(ours[("Soc.", "Acc")])


def test_side_by_side_keeps_table4_printed_averages():
    from tefcore.paper import load_table

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


# ---------------------------------------------------------------------------------------------------
def test_ece_rows_match_the_metric():
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.5, 1.0, 300)
    corr = (rng.random(300) < conf).astype(float)
    idx = np.vstack([np.arange(300), rng.integers(0, 300, 300)])
    got = ex._ece_rows(conf, corr, idx, 10)
    assert got[0] == pytest.approx(metrics.expected_calibration_error(conf, corr))
    assert got[1] == pytest.approx(metrics.expected_calibration_error(conf[idx[1]], corr[idx[1]]))


def test_stratified_draws_stay_within_strata():
    strata = np.array(["a"] * 5 + ["b"] * 3 + ["a"] * 2)
    idx = ex._stratified_draws(strata, 50, np.random.default_rng(1))
    assert idx.shape == (50, 10)
    assert (np.sort(strata[idx], axis=1) == np.sort(strata)).all()


def test_calibration_summary_values(hand_frame):
    pred = predict_pairs(hand_frame).assign(model="m")
    cal = ex.calibration_summary(pred, n_boot=200).set_index("rule")
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


def test_reliability_table_counts_every_scored_pair():
    pred = ex.predict_runs(synthetic_cache(11).assign(model="A", prompt="p"))
    rel = ex.reliability_table(pred)
    scored = pred[pred["prediction"] != "abstain"].groupby(["lang", "rule"]).size()
    got = rel.groupby(["lang", "rule"])["count"].sum()
    pd.testing.assert_series_equal(got.sort_index(), scored.sort_index(), check_names=False)
    assert (rel["low"] >= 0.5).all() or (rel["confidence"] >= 0.5).all()  # binary confidences are >= 0.5


# ---------------------------------------------------------------------------------------------------
def test_retemper():
    p = np.array([0.0, 0.2, 0.5, 0.9, 1.0, NAN])
    assert np.allclose(ex.retemper(p, 1.0)[:5], p[:5]) and np.isnan(ex.retemper(p, 1.0)[5])
    sharp = ex.retemper(p, 0.5)
    assert sharp[1] == pytest.approx(1 / (1 + 16)) and sharp[2] == 0.5 and sharp[3] == pytest.approx(81 / 82)
    assert sharp[0] == 0.0 and sharp[4] == 1.0
    with pytest.raises(ValueError, match="positive"):
        ex.retemper(p, 0.0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ex.retemper([1.5], 2.0)


@pytest.mark.slow
def test_temperature_sweep():
    df = synthetic_cache(12, 30).assign(model="A", prompt="original")
    sweep = ex.temperature_sweep(df, [0.01, 1.0, 4.0], n_boot=200)
    assert len(sweep) == 3 * 2 and list(sweep["t"].unique()) == [0.01, 1.0, 4.0]
    at1 = sweep[sweep["t"] == 1.0].set_index("lang")
    ref = ex.versus_best_baseline(ex.predict_runs(df), metrics_=("accuracy",), n_boot=200).set_index("lang")
    for lang in ("en", "zh"):
        assert at1.loc[lang, "gain"] == pytest.approx(ref.loc[lang, "difference"])
        assert at1.loc[lang, "best_baseline"] == ref.loc[lang, "b"]
    # very sharp posteriors: every weight -> 1, |l| -> M, TEF decides like Majority Vote
    hot = ex._retemper_frame(df, 0.001)
    pred = predict_pairs(hot.drop(columns=["model", "prompt"]), rules=["majority_vote", "tef"])
    mv = pred[pred["rule"] == "majority_vote"]["prediction"].to_numpy()
    tf = pred[pred["rule"] == "tef"]["prediction"].to_numpy()
    assert np.mean(mv == tf) > 0.97
    assert (sweep.groupby("lang")["mean_weight"].apply(lambda s: s.is_monotonic_decreasing)).all()
    # Direct and Majority Vote do not move with the temperature
    t4 = predict_pairs(ex._retemper_frame(df, 4.0).drop(columns=["model", "prompt"]),
                       rules=["direct", "majority_vote"])
    t1 = predict_pairs(df.drop(columns=["model", "prompt"]), rules=["direct", "majority_vote"])
    assert (t4["prediction"].to_numpy() == t1["prediction"].to_numpy()).all()


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


def test_fuse_many_agrees_with_sweep_frame_split():
    df = synthetic_cache(14, 4)
    hot = ex._retemper_frame(df, 2.0)
    assert [len(s) for s in hot["sentences"]] == [len(s) for s in df["sentences"]]
    flat = np.concatenate([ex.retemper(s, 2.0) for s in df["sentences"]])
    assert np.allclose(np.concatenate(hot["sentences"].to_list()), flat)
    assert len(fuse_many(flat, np.repeat(np.arange(len(df)), df["sentences"].map(len)), "tef")) == len(df)


def test_dot_interval_figure_places_series_side_by_side():
    frame = pd.DataFrame({"m": ["A", "B", "A", "B"], "v": [1.0, 2.0, 3.0, 4.0], "lo": [0.5, 1.5, 2.5, 3.5],
                          "hi": [1.5, 2.5, 3.5, 4.5], "lang": ["zh", "zh", "en", "en"], "judge": "J",
                          "metric": "accuracy"})
    fig = ex.dot_interval_figure(frame, x="m", y="v", low="lo", high="hi", color="lang", row="judge", col="metric",
                                 x_order=["A", "B"], color_order=["zh", "en"], zero_line=True)
    zh, en = fig.data
    assert list(zh.x) == [-0.125, 0.875] and list(en.x) == [0.125, 1.125]
    assert list(zh.error_y.array) == [0.5, 0.5] and zh.name == "zh"


def test_provenance_view_shortens_hashes(tmp_path):
    (tmp_path / "m" / "original").mkdir(parents=True)
    (tmp_path / "m" / "original" / "en.jsonl").write_text("x")
    meta = {"backend": "b", "weights_sha256": "a" * 64, "provenance_id": "b" * 64, "other": 1}
    runs = ex.load_runs("m", "original", "en", tmp_path, reader=lambda p: (synthetic_cache(1, 2, ("en",)), meta))
    view = ex.provenance_view(runs)
    assert view.index.names == ["model", "prompt", "lang"]
    assert view.iloc[0]["weights_sha256"] == "a" * 12 and view.iloc[0]["provenance_id"] == "b" * 12
    assert "other" not in view.columns
