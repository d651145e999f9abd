"""Tests of the synthetic detectors (tefcore.simulate)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import logit

from tefcore.fusion import entropy_weight, fuse_many
from tefcore.information import (
    additive_log_odds,
    binary_entropy,
    calibration_slope,
    contributions,
    mutual_information,
)
from tefcore.metrics import reliability_table
from tefbook.chapters.theory import decisive_counts, fusion_study
from tefcore.simulate import Detector, gaussian_information, simulate_documents


# --------------------------------------------------------------------------------------------------
# shapes, reproducibility, validation
# --------------------------------------------------------------------------------------------------
def test_shapes_and_layout() -> None:
    c = simulate_documents(50, n_decisive=2, n_uncertain=3, rng=1)
    assert c.n_docs == 50 and c.n_sentences == 250
    assert c.p.shape == c.doc_index.shape == c.decisive.shape == c.sentence_log_odds.shape == (250,)
    assert c.y.shape == c.true_log_odds.shape == (50,)
    assert np.all(np.diff(c.doc_index) >= 0) and c.doc_index[0] == 0 and c.doc_index[-1] == 49
    assert set(np.unique(c.y)) <= {"change", "stability"}
    assert np.all(np.bincount(c.doc_index) == 5)
    # two decisive sentences in each document, at random places: every position holds some
    decisive = c.decisive.reshape(50, 5)
    assert np.all(decisive.sum(axis=1) == 2) and np.all(decisive.any(axis=0))
    # the sentence log-odds of the decisive ones follow them (|mu x| is larger on average)
    assert np.abs(c.sentence_log_odds[c.decisive]).mean() > 2 * np.abs(c.sentence_log_odds[~c.decisive]).mean()
    # feeds fuse_many directly
    b = fuse_many(c.p, c.doc_index, rule="tef")
    assert len(b) == 50


def test_per_document_counts() -> None:
    c = simulate_documents(3, n_decisive=[0, 1, 2], n_uncertain=[1, 0, 3], rng=0)
    assert np.bincount(c.doc_index).tolist() == [1, 1, 5]
    assert np.bincount(c.doc_index, weights=c.decisive).tolist() == [0, 1, 2]


def test_reproducible_with_seed() -> None:
    a = simulate_documents(
        200, n_decisive=1, n_uncertain=4, correlation=0.3, logit_noise=0.2, rng=7
    )
    b = simulate_documents(
        200, n_decisive=1, n_uncertain=4, correlation=0.3, logit_noise=0.2, rng=7
    )
    c = simulate_documents(
        200, n_decisive=1, n_uncertain=4, correlation=0.3, logit_noise=0.2, rng=8
    )
    assert np.array_equal(a.p, b.p) and np.array_equal(a.y, b.y)
    assert np.array_equal(a.true_log_odds, b.true_log_odds)
    assert not np.array_equal(a.p, c.p)
    s1 = fusion_study([0.2], [2], n_docs=100, rng=3)
    s2 = fusion_study([0.2], [2], n_docs=100, rng=3)
    pd.testing.assert_frame_equal(s1, s2)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_docs": 0}, "n_docs"),
        ({"n_docs": 5, "prior": 1.0}, "prior"),
        ({"n_docs": 5, "correlation": 1.0}, "correlation"),
        ({"n_docs": 5, "temperature": 0.0}, "temperature"),
        ({"n_docs": 5, "strength": -1.0}, "strength"),
        ({"n_docs": 5, "logit_noise": -0.1}, "logit_noise"),
        ({"n_docs": 5, "logit_bias": math.inf}, "logit_bias"),
        ({"n_docs": 5, "n_decisive": 0, "n_uncertain": 0}, "at least one sentence"),
        ({"n_docs": 5, "n_decisive": [1, 2]}, "n_decisive"),
        ({"n_docs": 2, "n_uncertain": [1.5, 2]}, "integers"),
        ({"n_docs": 5, "rng": "seed"}, "rng"),
    ],
)
def test_invalid_parameters(kwargs: dict, message: str) -> None:
    n_docs = kwargs.pop("n_docs")
    with pytest.raises(ValueError, match=message):
        simulate_documents(n_docs, **kwargs)


def test_detector_and_keywords_are_one_model() -> None:
    leaning = Detector(strength=2.0, logit_bias=0.4, correlation=0.2)
    a = simulate_documents(300, leaning, n_decisive=1, n_uncertain=2, rng=5)
    b = simulate_documents(300, n_decisive=1, n_uncertain=2, strength=2.0, logit_bias=0.4, correlation=0.2, rng=5)
    c = simulate_documents(300, Detector(strength=2.0), n_decisive=1, n_uncertain=2, logit_bias=0.4,
                           correlation=0.2, rng=5)
    assert np.array_equal(a.p, b.p) and np.array_equal(a.p, c.p) and a.params == b.params == c.params
    assert a.params["logit_bias"] == 0.4 and a.params["n_docs"] == 300 and a.params["n_uncertain"] == 2
    assert not leaning.calibrated and Detector().calibrated
    s1 = fusion_study([0.2], [2], leaning, n_docs=100, rng=3)
    s2 = fusion_study([0.2], [2], n_docs=100, strength=2.0, logit_bias=0.4, correlation=0.2, rng=3)
    pd.testing.assert_frame_equal(s1, s2)
    with pytest.raises(ValueError, match="unknown detector parameter"):
        simulate_documents(5, bias=0.3)
    with pytest.raises(ValueError, match="prior"):
        Detector(prior=0.0)
    with pytest.raises(ValueError, match="temperature"):
        gaussian_information(1.0, temperature=-1.0)


# --------------------------------------------------------------------------------------------------
# calibration of the generated posteriors
# --------------------------------------------------------------------------------------------------
def test_sentence_posteriors_are_calibrated() -> None:
    c = simulate_documents(
        60_000, n_decisive=1, n_uncertain=3, strength=2.5, uncertain_strength=0.8, rng=11
    )
    table = reliability_table(c.p, c.sentence_is_change, n_bins=10)
    assert table["count"].sum() == c.n_sentences
    # every bin within 4 binomial standard errors (and 0.02 absolute) of the diagonal
    assert np.all(np.abs(table["gap"]) <= np.maximum(4 * table["stderr"], 0.0))
    assert np.abs(table["gap"]).max() < 0.02


def test_calibrated_under_unequal_prior_and_correlation() -> None:
    # correlation leaves each sentence's marginal posterior calibrated
    c = simulate_documents(40_000, n_decisive=2, n_uncertain=2, prior=0.3, correlation=0.5, rng=5)
    table = reliability_table(c.p, c.sentence_is_change, n_bins=10)
    assert np.all(np.abs(table["gap"]) <= 4 * table["stderr"] + 1e-3)
    assert abs(c.is_change.mean() - 0.3) < 0.01


def test_miscalibration_shows_in_reliability() -> None:
    c = simulate_documents(40_000, n_decisive=1, n_uncertain=3, temperature=0.5, rng=2)
    table = reliability_table(c.p, c.sentence_is_change, n_bins=10)
    high = table[table["bin_lower"] >= 0.6]
    assert (high["gap"] < -0.02).all()  # overconfident: observed rate below the prediction


# --------------------------------------------------------------------------------------------------
# Proposition 2: the additive identity
# --------------------------------------------------------------------------------------------------
def test_additive_identity_independent_calibrated() -> None:
    c = simulate_documents(20_000, n_decisive=2, n_uncertain=3, strength=2.0, rng=3)
    summed = additive_log_odds(c.p, c.doc_index)
    np.testing.assert_allclose(summed, c.true_log_odds, rtol=1e-9, atol=1e-9)
    # and the sum of the exact sentence log-odds by a second route
    np.testing.assert_allclose(
        np.bincount(c.doc_index, weights=c.sentence_log_odds),
        c.true_log_odds,
        rtol=1e-12,
        atol=1e-12,
    )


def test_additive_identity_with_prior_correction() -> None:
    c = simulate_documents(5_000, n_decisive=1, n_uncertain=2, strength=2.0, prior=0.2, rng=4)
    np.testing.assert_allclose(
        additive_log_odds(c.p, c.doc_index, prior=0.2), c.true_log_odds, rtol=1e-9, atol=1e-9
    )
    # ignoring the prior is off by (N - 1) logit(pi) exactly
    naive = additive_log_odds(c.p, c.doc_index)
    np.testing.assert_allclose(naive - c.true_log_odds, 2 * logit(0.2), rtol=1e-9)


def test_identity_breaks_under_correlation() -> None:
    c = simulate_documents(
        30_000, n_decisive=2, n_uncertain=3, strength=2.0, correlation=0.5, rng=6
    )
    summed = additive_log_odds(c.p, c.doc_index)
    assert np.mean(np.abs(summed - c.true_log_odds)) > 0.5
    # the true log-odds are calibrated; the plain sum is overconfident
    assert calibration_slope(c.true_log_odds, c.y) == pytest.approx(1.0, abs=0.08)
    assert calibration_slope(summed, c.y) < 0.7


def test_calibration_slope_recovers_temperature() -> None:
    c = simulate_documents(
        30_000, n_decisive=1, n_uncertain=2, strength=2.0, temperature=2.0, rng=9
    )
    summed = additive_log_odds(c.p, c.doc_index)
    assert calibration_slope(summed, c.y) == pytest.approx(2.0, rel=0.06)


# --------------------------------------------------------------------------------------------------
# Proposition 1: information
# --------------------------------------------------------------------------------------------------
def test_exact_information_inequality_and_limits() -> None:
    mu = np.linspace(0.0, 8.0, 33)
    info = gaussian_information(mu)
    assert np.all(info.soft >= info.hard - 1e-12)
    assert np.all(np.diff(info.soft) > 0) and np.all(np.diff(info.hard) > 0)
    assert info.soft[0] == 0.0 and info.hard[0] == 0.0
    assert info.soft[-1] == pytest.approx(math.log(2), abs=0.01)
    # hard label at equal priors: a binary symmetric channel with error Phi(-mu/2)
    from scipy.stats import norm

    err = norm.cdf(-1.0)
    assert gaussian_information(2.0).hard == pytest.approx(
        math.log(2) - binary_entropy(err), abs=1e-12
    )
    # a temperature alone is an invertible map: no change
    assert gaussian_information(2.0, temperature=3.0).soft == pytest.approx(
        gaussian_information(2.0).soft
    )
    # logit noise only loses information
    assert gaussian_information(2.0, logit_noise=1.0).soft < gaussian_information(2.0).soft


@pytest.mark.parametrize("kwargs", [{}, {"prior": 0.3, "temperature": 2.0, "logit_noise": 0.5}])
def test_plug_in_information_matches_exact(kwargs: dict) -> None:
    for mu in (1.0, 3.0):
        c = simulate_documents(200_000, n_decisive=1, n_uncertain=0, strength=mu, rng=12, **kwargs)
        exact = gaussian_information(mu, **kwargs)
        soft = mutual_information(c.y, c.p, bins=64)
        hard = mutual_information(c.y, c.p >= 0.5, bins=None)
        assert soft == pytest.approx(exact.soft, abs=0.005)
        assert hard == pytest.approx(exact.hard, abs=0.005)
        assert soft >= hard


def test_plug_in_inequality_holds_on_small_samples() -> None:
    # 0.5 is a bin edge, so the estimate obeys the data processing inequality exactly
    for seed in range(20):
        c = simulate_documents(300, n_decisive=1, n_uncertain=0, strength=1.5, rng=seed)
        assert (
            mutual_information(c.y, c.p, bins=8)
            >= mutual_information(c.y, c.p >= 0.5, bins=None) - 1e-12
        )


# --------------------------------------------------------------------------------------------------
# evidence profile and the study
# --------------------------------------------------------------------------------------------------
def test_decisive_counts_share() -> None:
    n = decisive_counts(0.25, 4, 40_000, rng=0)
    assert set(np.unique(n)) == {1, 2}
    pooled = n.sum() / (n.sum() + 4 * n.size)
    assert pooled == pytest.approx(0.25, abs=0.005)
    assert np.all(decisive_counts(0.0, 3, 10, rng=0) == 0)
    with pytest.raises(ValueError, match="n_uncertain"):
        decisive_counts(0.5, 0, 10)


def test_simulated_decisive_sentences_have_high_weight() -> None:
    c = simulate_documents(
        5_000, n_decisive=1, n_uncertain=4, strength=3.0, uncertain_strength=0.5, rng=1
    )
    w = entropy_weight(c.p)
    assert np.median(w[c.decisive]) > 0.7
    assert np.median(w[~c.decisive]) < 0.05  # |lambda| ~ 0.35: w ~ lambda^2 / (8 log 2) ~ 0.02


def test_fusion_study_calibrated_vs_biased() -> None:
    grid = dict(decisive_shares=[0.1, 0.5], n_uncertain_values=[1, 8], n_docs=3000)
    calm = fusion_study(**grid, rng=0).pivot_table(
        index=["decisive_share", "n_uncertain"], columns="rule", values="accuracy"
    )
    assert set(calm.columns) == {
        "majority_vote",
        "soft_vote",
        "tef",
        "tef_without_entropy",
        "oracle",
    }
    # the oracle is the best any rule can do (up to sampling noise)
    assert (calm["oracle"] >= calm.drop(columns="oracle").max(axis=1) - 0.01).all()
    # calibrated detectors: TEF within 2 points of the better vote everywhere
    best_vote = calm[["majority_vote", "soft_vote"]].max(axis=1)
    assert (np.abs(calm["tef"] - best_vote) < 0.02).all()
    # a detector that leans towards one side: TEF wins where uncertain sentences dominate
    biased = fusion_study(**grid, logit_bias=0.5, rng=0).pivot_table(
        index=["decisive_share", "n_uncertain"], columns="rule", values="accuracy"
    )
    gain = biased["tef"] - biased[["majority_vote", "soft_vote"]].max(axis=1)
    assert gain.loc[(0.1, 8)] > 0.15
    assert gain.loc[(0.5, 1)] == pytest.approx(0.0, abs=0.02)


def test_fusion_study_validation() -> None:
    with pytest.raises(ValueError, match="sentence-level"):
        fusion_study([0.2], [2], rules=["direct"])
    with pytest.raises(ValueError, match="non-empty"):
        fusion_study([], [2])


def test_contributions_match_fusion_decisions() -> None:
    # the sign of the summed contributions is each rule's decision on a random corpus
    corpus = simulate_documents(500, n_decisive=1, n_uncertain=3, logit_bias=0.3, rng=4)
    parts = contributions(corpus.p)
    for rule in parts.columns:
        total = np.bincount(corpus.doc_index, weights=parts[rule].to_numpy())
        if rule == "majority_vote":  # change iff more than half the votes; a tie goes to the first vote
            first = corpus.p[np.searchsorted(corpus.doc_index, np.arange(total.size))] >= 0.5
            expected = np.where((total > 0) | ((total == 0) & first), "change", "stability")
        else:
            expected = np.where(total >= -1e-12, "change", "stability")
        got = fuse_many(corpus.p, corpus.doc_index, rule=rule).prediction
        assert np.mean(got == expected) == 1.0, rule
    with pytest.raises(ValueError, match="probabilities"):
        contributions([1.2])
