"""Tests of tefcore.information: entropy, plug-in information, the additive identity, contributions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tefcore.fusion import clipped_log_odds, entropy_weight
from tefcore.information import (
    additive_log_odds,
    binary_entropy,
    calibration_slope,
    contributions,
    mutual_information,
)


def test_binary_entropy() -> None:
    np.testing.assert_allclose(binary_entropy([0.0, 0.5, 1.0]), [0.0, math.log(2), 0.0])


def test_additive_log_odds_validation() -> None:
    with pytest.raises(ValueError, match="strictly inside"):
        additive_log_odds([0.0, 0.5], [0, 0])
    with pytest.raises(ValueError, match="aligned"):
        additive_log_odds([0.2, 0.5], [0])


def test_additive_log_odds_by_hand() -> None:
    p = [0.8, 0.5, 0.2, 0.9]
    got = additive_log_odds(p, [0, 0, 1, 1], prior=0.25)
    lo = [math.log(x / (1 - x)) for x in p]
    prior_lo = math.log(0.25 / 0.75)
    assert got.tolist() == pytest.approx([lo[0] + lo[1] - prior_lo, lo[2] + lo[3] - prior_lo])
    with pytest.raises(ValueError, match="prior"):
        additive_log_odds(p, [0, 0, 1, 1], prior=1.0)


def test_calibration_slope_of_a_known_logistic_model() -> None:
    rng = np.random.default_rng(0)
    s = rng.normal(0, 2, 40_000)
    y = rng.random(40_000) < 1 / (1 + np.exp(-0.5 * s))  # true slope 0.5
    assert calibration_slope(s, y) == pytest.approx(0.5, abs=0.03)
    with pytest.raises(ValueError, match="both classes"):
        calibration_slope([0.1, 0.2], [True, True])
    with pytest.raises(ValueError, match="finite"):
        calibration_slope([0.1, math.inf], [True, False])


def test_mutual_information_of_a_perfect_and_a_useless_label() -> None:
    y = np.array(["change", "stability"] * 50)
    assert mutual_information(y, y == "change", bins=None) == pytest.approx(math.log(2))
    assert mutual_information(y, np.zeros(100), bins=None) == 0.0


def test_mutual_information_validation() -> None:
    with pytest.raises(ValueError, match="bins"):
        mutual_information([True, False], [0.2, 0.8], bins=1)
    with pytest.raises(ValueError, match="labels"):
        mutual_information(["yes", "no"], [0.2, 0.8])


def test_contributions_by_hand() -> None:
    p = np.array([0.95, 0.45, 0.5, 0.02])
    c = contributions(p)
    assert list(c.columns) == ["majority_vote", "soft_vote", "tef_without_entropy", "tef"]
    assert c["majority_vote"].tolist() == [1.0, -1.0, 1.0, -1.0]
    np.testing.assert_allclose(c["soft_vote"], p - 0.5)
    np.testing.assert_allclose(c["tef_without_entropy"], clipped_log_odds(p))
    np.testing.assert_allclose(c["tef"], entropy_weight(p) * clipped_log_odds(p))
    with pytest.raises(ValueError, match="probabilities"):
        contributions([0.5, math.nan])
