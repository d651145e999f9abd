"""Tests of tefbook.chapters.theory (chapters 1, 2 and 10) and of tefbook.companion.tables.bold_best."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy.special import entr, logit
from scipy.stats import norm

from tefbook.chapters import theory
from tefbook.companion import tables as pres
from tefbook.companion.results import majority_floor
from tefcore import information
from tefcore import simulate as sim
from tefcore.fusion import clipped_log_odds, entropy_weight
from tefpaper.ledger import LEDGER, evaluate_ledger
from tefpaper.posts import first_flips


# ---------------------------------------------------------------------------------------------------
# presentation.bold_best: the best value per column in bold
# ---------------------------------------------------------------------------------------------------
def _bold_cells(styler) -> set[tuple[int, int]]:
    """(row, column) positions that the Styler's CSS makes bold."""
    css = styler.to_html().split("</style>")[0]
    return {(int(r), int(c)) for r, c in re.findall(r"_row(\d+)_col(\d+)", css)}


def test_bold_best_marks_every_tie_and_honours_lower_is_better():
    table = pd.DataFrame({"Acc": [61.2, 64.0, 64.0], "ECE": [0.10, 0.05, 0.07]}, index=["MV", "SV", "TEF"])
    assert _bold_cells(pres.bold_best(table, lower={"ECE"})) == {(1, 0), (2, 0), (1, 1)}
    assert _bold_cells(pres.bold_best(table)) == {(1, 0), (2, 0), (0, 1)}


def test_bold_best_within_groups_and_from_separate_values():
    index = pd.MultiIndex.from_tuples([("en", "SV"), ("en", "TEF"), ("zh", "SV"), ("zh", "TEF")],
                                      names=["lang", "rule"])
    numbers = pd.DataFrame({"Acc": [60.0, 58.0, 70.0, 75.0]}, index=index)
    shown = pd.DataFrame({"Acc": ["60.0 [55, 65]", "58.0 [53, 63]", "70.0 [66, 74]", "75.0 [71, 79]"]},
                         index=index)
    assert _bold_cells(pres.bold_best(shown, values=numbers, by="lang")) == {(0, 0), (3, 0)}
    assert _bold_cells(pres.bold_best(numbers)) == {(3, 0)}


def test_bold_best_is_stable_and_checks_alignment():
    table = pd.DataFrame({"a": [1.0, np.nan, 3.0]})
    first, second = pres.bold_best(table).to_html(), pres.bold_best(table.copy()).to_html()
    assert first == second and "3.0" in first and "1.0" in first
    with pytest.raises(ValueError, match="index and columns"):
        pres.bold_best(table, values=table.iloc[:2])


# ---------------------------------------------------------------------------------------------------
# tefbook.chapters.theory
# ---------------------------------------------------------------------------------------------------


def _ledger_row(claim_id: str) -> pd.Series:
    return evaluate_ledger([c for c in LEDGER if c.id == claim_id]).iloc[0]


# --- chapter 1: K classes ---------------------------------------------------------------------------
def test_bayes_log_posterior_is_the_normalised_product_of_sentence_posteriors_over_priors():
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(3), 7)
    doc = np.array([0, 0, 0, 1, 1, 2, 2])
    prior = np.array([0.2, 0.3, 0.5])
    got = np.exp(theory.bayes_log_posterior(p, doc, prior))
    for d in range(3):  # second route: products in probability space
        rows = p[doc == d]
        raw = rows.prod(axis=0) / prior ** (len(rows) - 1)
        np.testing.assert_allclose(got[d], raw / raw.sum(), rtol=1e-12)


def test_bayes_log_posterior_for_two_classes_is_the_additive_identity():
    rng = np.random.default_rng(2)
    q = rng.uniform(0.05, 0.95, 12)
    doc = np.repeat(np.arange(4), 3)
    post = theory.bayes_log_posterior(np.column_stack([q, 1 - q]), doc, [0.3, 0.7])
    np.testing.assert_allclose(post[:, 0] - post[:, 1], information.additive_log_odds(q, doc, prior=0.3),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p, doc, prior, match", [
    ([[0.5, 0.6, 0.1]], [0], None, "distribution"),
    ([[0.5, 0.5, 0.0]], [0], None, "positive"),
    ([[0.5, 0.5]], [0, 0], None, "aligned"),
    ([[0.5, 0.5]], [0], [1.0, 0.0], "prior"),
    ([[0.5, 0.5]], [-1], None, "non-negative"),
])
def test_bayes_log_posterior_rejects_bad_input(p, doc, prior, match):
    with pytest.raises(ValueError, match=match):
        theory.bayes_log_posterior(p, doc, prior)


def test_k_class_scores_show_eq3_and_bayes_picking_different_classes():
    scores = theory.k_class_scores(theory.K3_EXAMPLE)
    assert scores.idxmax().tolist() == ["c2", "c3", "c3"]
    ell = np.clip(logit(np.clip(theory.K3_EXAMPLE, 1e-6, 1 - 1e-6)), -10, 10)  # Eq. 3 by hand
    np.testing.assert_allclose(scores.iloc[:, 1], ell.sum(axis=0), rtol=1e-12)
    w = 1 - entr(theory.K3_EXAMPLE).sum(axis=1) / np.log(3)
    np.testing.assert_allclose(scores.iloc[:, 2], (w[:, None] * ell).sum(axis=0), rtol=1e-12)


def test_for_two_classes_eq3_never_disagrees_with_bayes():
    rng = np.random.default_rng(3)
    q = rng.uniform(0.01, 0.99, 400)
    doc = np.sort(rng.integers(0, 100, 400))
    doc = np.unique(doc, return_inverse=True)[1]
    rates = theory.bayes_disagreement(np.column_stack([q, 1 - q]), doc, rules=["tef_without_entropy"])
    assert rates["tef_without_entropy"] == 0.0


def test_k3_disagreement_is_the_ledgers_number():
    rates, n = theory.k3_disagreement()
    note = _ledger_row("k3-bayes")["note"]
    assert f"On {n:,} random 3-class posts" in note
    assert f"{rates['tef_without_entropy']:.1f} % (w = 1)" in note
    assert f"{rates['tef']:.1f} % (TEF)" in note
    assert 0 < rates["tef_without_entropy"] < 100


# --- chapter 1: the rules on one post ---------------------------------------------------------------
def test_first_flips_agree_with_the_ratio_of_contributions():
    strong, weak = 0.95, 0.45
    c = information.contributions([strong, weak])
    flips = first_flips(strong, weak, range(41))
    assert flips["majority_vote"] == 2  # one against one is a tie, which goes to change
    for rule in ("soft_vote", "tef_without_entropy"):
        ratio = c[rule][0] / -c[rule][1]
        expected = int(np.floor(ratio)) + 1 if not np.isclose(ratio, round(ratio)) else int(round(ratio)) + 1
        assert flips[rule] == expected
    assert pd.isna(flips["tef"])
    n = int(np.floor(c["tef"][0] / -c["tef"][1]))
    assert first_flips(strong, weak, [n - 1, n, n + 1], rules=["tef"])["tef"] == n + 1


def test_first_flips_rejects_counts_that_do_not_increase():
    with pytest.raises(ValueError, match="increasing"):
        first_flips(0.9, 0.4, [3, 2])


# --- chapter 2: checks and simulations --------------------------------------------------------------
def test_checks_say_what_they_can_catch_and_raise_on_failure(capsys):
    checks = theory.Checks()
    checks.at_least("a", 0.1, 0, kind="code")
    checks.measure("b", 2.0)
    with pytest.raises(AssertionError, match="c: measured 0.5"):
        checks.at_most("c", 0.5, 0.1, kind="simulator")
    with pytest.raises(ValueError, match="kind"):
        checks.add("d", 1.0, "x", True, kind="maybe")
    with pytest.raises(TypeError):
        checks.at_most("e", 0.5, 1.0)  # every check names what it can catch
    table = checks.table()
    assert table["result"].tolist() == ["PASS", "measured", "FAIL"]  # a measurement has no verdict
    assert table.loc["a", "could catch"] == theory.KINDS["code"]
    assert table.loc["b", "tolerance"] == "—"
    assert "a: measured 0.1; tolerance >= 0 -> PASS" in capsys.readouterr().out


def test_sentence_accuracy_matches_simulated_sentences():
    c = sim.simulate_documents(40_000, n_decisive=1, n_uncertain=0, strength=1.5, rng=4)
    simulated = np.mean((c.p >= 0.5) == c.is_change)
    assert theory.sentence_accuracy(1.5) == pytest.approx(norm.cdf(0.75))
    assert simulated == pytest.approx(theory.sentence_accuracy(1.5), abs=0.01)


def test_decisive_threshold_has_the_asked_weight():
    q = theory.decisive_threshold(0.5)
    assert float(entropy_weight(q)) == pytest.approx(0.5, abs=1e-10) and 0.88 < q < 0.9
    with pytest.raises(ValueError, match="decisive_weight"):
        theory.decisive_threshold(1.0)


def test_information_table_exact_values_and_plug_in_estimates():
    info = theory.information_table([0.5, 2.0], 20_000, 16, rng=5)
    exact = sim.gaussian_information(np.array([0.5, 2.0]))
    np.testing.assert_allclose(info["I(Y;p) exact"], exact.soft)
    assert (info["I(Y;p) plug-in"] >= info["I(Y;ŷ) plug-in"]).all()
    assert ((info["share lost by ŷ"] > 0) & (info["share lost by ŷ"] < 1)).all()
    np.testing.assert_allclose(info["I(Y;p) plug-in"], info["I(Y;p) exact"], atol=0.01)


def test_prop2_table_is_the_ledgers_check():
    table = theory.prop2_table()
    assert table.index.tolist() == [0.5, 0.3]
    assert (table["with the prior term"] <= 1e-8).all()
    assert table.loc[0.5, "plain sum"] == table.loc[0.5, "with the prior term"]
    assert table.loc[0.3, "plain sum"] > 1
    assert _ledger_row("prop2")["value"] == f"max |Δ| = {table.loc[0.5, 'with the prior term']:.0e}"
    assert _ledger_row("prop2-prior")["value"] == f"π = 0.3: max |Δ| = {table.loc[0.3, 'with the prior term']:.0e}"
    assert f"up to {table.loc[0.3, 'plain sum']:.2f} nats" in _ledger_row("prop2-prior")["note"]


def test_stress_table_identity_holds_without_correlation_and_breaks_with_it():
    stress = theory.stress_table([("ρ = 0", 0.0, 1.0), ("ρ = 0.5", 0.5, 1.0), ("T = 2", 0.0, 2.0)], 3000, rng=6,
                                 strength=2.0)
    assert stress.loc["ρ = 0", "mean |sum - exact|"] < 1e-9
    assert stress.loc["ρ = 0.5", "mean |sum - exact|"] > 0.5
    assert stress.loc["ρ = 0.5", "slope, sum"] < 1 and stress.loc["T = 2", "slope, sum"] > 1.5
    assert (stress["accuracy, oracle"] >= stress["accuracy, sum"] - 0.02).all()


def test_gain_maps_and_summary_from_a_hand_made_study():
    rows = [(0.1, 2, "majority_vote", 0.60), (0.1, 2, "soft_vote", 0.70), (0.1, 2, "tef", 0.75),
            (0.1, 2, "oracle", 0.80), (0.3, 2, "majority_vote", 0.80), (0.3, 2, "soft_vote", 0.78),
            (0.3, 2, "tef", 0.77), (0.3, 2, "oracle", 0.85)]
    study = pd.DataFrame(rows, columns=["decisive_share", "n_uncertain", "rule", "accuracy"])
    maps = theory.gain_maps({"toy": study})
    assert maps["toy"].loc[0.1, 2] == pytest.approx(5.0) and maps["toy"].loc[0.3, 2] == pytest.approx(-3.0)
    gains, accuracy = theory.study_summary({"toy": study}, maps)
    assert gains["toy"].tolist() == pytest.approx([5.0, -3.0, 1.0])
    assert accuracy.index[-1] == "oracle (Bayes)" and accuracy.loc["TEF", "toy"] == pytest.approx(76.0)


# --- chapter 2: real judges --------------------------------------------------------------------------
def _cache_frame() -> pd.DataFrame:
    """Two judges, two posts each: known decisive and uncertain sentences."""
    return pd.DataFrame({
        "model": ["a", "a", "b", "b"], "lang": ["en"] * 4, "post_id": ["1", "2", "1", "2"],
        "dimension": ["Politics"] * 4, "side": ["change", "stability"] * 2, "direct": [0.6, 0.4, 0.5, 0.5],
        "sentences": [[0.99, 0.6, 0.7], [0.01, 0.6, 0.55], [0.6, 0.4], [0.55, float("nan")]],
    })


def test_judge_map_counts_and_leans():
    placed = theory.judge_map(_cache_frame(), {"a": "A", "b": "B"})
    a, b = placed.loc[("A", "en")], placed.loc[("B", "en")]
    assert (a["posts"], a["sentences"], a["decisive sentences"]) == (2, 6, 2)
    assert a["decisive share (%)"] == pytest.approx(100 / 3) and a["uncertain per post"] == pytest.approx(2.0)
    assert a["decisive agree (%)"] == pytest.approx(100.0)
    ell = clipped_log_odds(np.array([0.6, 0.7, 0.6, 0.55]))
    assert a["l, change posts"] == pytest.approx(ell[:2].mean()) and a["l, stability posts"] == pytest.approx(ell[2:].mean())
    assert a["lean b"] == pytest.approx((ell[:2].mean() + ell[2:].mean()) / 2)
    assert a["uncertain agree (%)"] == pytest.approx(50.0)  # change post: 2 of 2 agree; stability: 0 of 2
    assert b["sentences"] == 3 and b["decisive sentences"] == 0 and np.isnan(b["decisive agree (%)"])


def test_probe_setting_and_judge_names_come_from_the_provenance():
    from tefbook.companion.runs import Runs

    prov = pd.DataFrame([{"model": "e5-crossfit", "backend": "e5-crossfit", "standardize": False, "C": 1.0,
                          "lang": "en", "n_pairs": 3},
                         {"model": "e5-zeroshot", "backend": "e5-zeroshot", "lang": "en", "n_pairs": 2}])
    runs = Runs(pd.DataFrame({"model": ["e5-crossfit", "e5-zeroshot"], "lang": ["en", "en"],
                              "post_id": ["1", "1"], "dimension": ["Politics"] * 2}), prov)
    assert theory.judge_names(runs) == {"e5-crossfit": "e5 cross-fit (raw vectors, C = 1)", "e5-zeroshot": "e5 zero-shot"}
    sources = theory.judge_sources(runs)
    assert sources.loc["e5 cross-fit (raw vectors, C = 1)", "pairs, en"] == 3
    assert sources.loc["e5 zero-shot", "from the caches' provenance"].endswith(", CPU, custom data")


def _verdict_inputs(low: float, high: float, tef: float):
    placed = pd.DataFrame([{"judge": "J", "lang": "en", "decisive sentences": 10, "decisive share (%)": 20.0,
                            "uncertain per post": 4.0, "lean b": 0.4, "decisive agree (%)": 95.0}]
                          ).set_index(["judge", "lang"])
    nearest = pd.DataFrame([{"judge": "J", "lang": "en", "nearest cell": "4 uncertain, 20% decisive",
                             "simulated gain, leaning": 5.0}]).set_index(["judge", "lang"])
    sweep = pd.DataFrame([{"judge": "J", "lang": "en", "t": 1.0, "best_baseline": "soft_vote",
                           "gain": (low + high) / 2, "low": low, "high": high, "tef": tef, "baseline": 60.0}])
    return placed, nearest, sweep


def test_premises_fail_for_a_judge_without_decisive_sentences():
    placed, nearest, sweep = _verdict_inputs(1.0, 2.0, 70.0)
    placed.loc[("J", "en"), ["decisive sentences", "lean b"]] = [0, 0.1]
    table = theory.premises_table(placed, nearest, lean=0.5)
    assert table.loc[("J", "en")].tolist() == ["yes", "no", "–", "no"]


def test_sweep_table_and_majority_floor():
    frame = _cache_frame()
    floor = majority_floor(frame)
    assert floor["en"] == pytest.approx(50.0)  # one change and one stability post
    _, _, sweep = _verdict_inputs(-1.0, 2.0, 45.0)
    table = theory.sweep_table(sweep, floor)
    assert table.loc[("J", "en"), "TEF − baseline"] == "+0.5 [-1.0, +2.0]"
    assert table.loc[("J", "en"), "TEF < majority"] == "yes" and table.loc[("J", "en"), "baseline"] == "SV"


def test_nearest_cells_pick_the_closest_grid_cell():
    m = pd.DataFrame([[1.0, 2.0], [3.0, 4.0]], index=[0.1, 0.3], columns=[2, 8])
    placed = pd.DataFrame([{"judge": "J", "lang": "zh", "uncertain per post": 6.0, "decisive share (%)": 25.0}]
                          ).set_index(["judge", "lang"])
    cell = theory.nearest_cells(placed, {"leaning": m}).loc[("J", "zh")]
    assert cell["nearest cell"] == "8 uncertain, 30% decisive" and cell["simulated gain, leaning"] == 4.0


def test_glue_numbers_of_chapter_2():
    assert theory.lean_numbers(0.0) == {"lean_p": 0.5, "lean_w": 0.0}
    nums = theory.detector_numbers(3.0, 0.5)
    assert nums["acc_dec"] == pytest.approx(100 * norm.cdf(1.5)) and nums["decisive_p"] == theory.decisive_threshold()
    stress = pd.DataFrame({"accuracy, sum": [0.9, 0.8], "accuracy, TEF": [0.89, 0.85], "slope, TEF": [1.5, 0.9],
                           "slope, sum": [1.0, 0.4]}, index=["ρ = 0.0", "ρ = 0.6"])
    s = theory.stress_numbers(stress, [0.0, 0.6])
    assert (s["acc_sum_0"], s["acc_tef_max"], s["rho_max"]) == (pytest.approx(90.0), pytest.approx(85.0), 0.6)


def test_figures_draw_their_series():
    grid = np.linspace(0.01, 0.99, 21)
    assert len(theory.curve_figure(grid).data) == 3
    names = ["MV", "SV", "log-odds sum (w/o Entropy)", "TEF"]
    contributions = theory.contribution_figure(grid, 0.95)
    assert [t.name for t in contributions.data] == names * 2  # over p, and over the log-odds
    assert max(max(abs(y) for y in t.y) for t in contributions.data) > 2  # nothing cut at ±2
    assert contributions.layout.yaxis.range is None
    m = pd.DataFrame([[1.0, 2.0], [3.0, 4.0]], index=[0.1, 0.3], columns=[2, 8])
    placed = pd.DataFrame([{"judge": "J", "lang": "en", "uncertain per post": 6.0, "decisive share (%)": 25.0}]
                          ).set_index(["judge", "lang"])
    assert len(theory.gain_map_figure({"a": m, "b": m}).data) == 2
    assert len(theory.gain_map_figure({"a": m, "b": m}, placed).data) == 4
    hist = theory.weight_histogram_figure(_cache_frame(), [0.5, 0.9], {"a": "A", "b": "B"})
    assert [t.name for t in hist.data] == ["simulated (calibrated)", "A", "B"]

