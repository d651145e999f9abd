"""Tests of tefcore.metrics: hand-computed values and second routes (scikit-learn, scipy, loops)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score

from tefcore import metrics as m

sides = st.sampled_from(["change", "stability"])


def test_accuracy_and_macro_f1_by_hand():
    y = ["change", "change", "change", "stability"]
    p = ["change", "stability", "change", "stability"]
    assert m.accuracy(y, p) == 75.0
    # change: tp=2 fp=0 fn=1 -> F1 = 4/5; stability: tp=1 fp=1 fn=0 -> F1 = 2/3
    assert m.macro_f1(y, p) == pytest.approx(100 * (0.8 + 2 / 3) / 2)


def test_macro_f1_counts_absent_side_as_zero():
    y = ["change"] * 4
    p = ["change"] * 4
    assert m.macro_f1(y, p) == 50.0  # stability absent from truth and prediction scores 0
    assert m.macro_f1(y, ["abstain"] * 4) == 0.0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(sides, st.sampled_from(["change", "stability", "abstain"])), min_size=1, max_size=60))
def test_macro_f1_matches_sklearn(pairs):
    y, p = map(list, zip(*pairs))
    expected = 100 * f1_score(y, p, labels=["change", "stability"], average="macro", zero_division=0)
    assert m.macro_f1(y, p) == pytest.approx(expected, abs=1e-12)


def test_macro_f1_reads_a_task_s_sides_from_the_gold():
    # labels defaulted to change/stability, so any other sides scored 0.0 without a word
    y = ["car", "transit", "car", "cycling"]
    p = ["car", "transit", "transit", "cycling"]
    assert m.side_labels(y) == ("car", "cycling", "transit")
    assert m.macro_f1(y, p) == pytest.approx(100 * f1_score(y, p, average="macro"), abs=1e-12)
    assert m.macro_f1(y, p) == pytest.approx(100 * (2 / 3 + 1 + 2 / 3) / 3, abs=1e-12)
    assert m.macro_f1(["a", "b"], ["a", "abstain"]) == 50.0  # a prediction that is no side is a miss
    assert m.macro_f1(y, p, labels=["car", "cycling", "transit", "walk"]) == pytest.approx(100 * (7 / 3) / 4)
    assert m.side_labels(["stability"]) == ("change", "stability")  # MIND's gold: both sides, always


def test_macro_f1_refuses_a_label_set_it_cannot_use():
    with pytest.raises(ValueError, match=r"labels \('change', 'stability'\) lack the gold label 'left': pass the"):
        m.macro_f1(["left", "right"], ["left", "right"], labels=["change", "stability"])  # was 0.0
    with pytest.raises(ValueError, match="missing label"):
        m.macro_f1(["car", None], ["car", "car"])
    with pytest.raises(ValueError, match="cannot order the gold labels"):
        m.macro_f1(np.array(["car", 1], dtype=object), ["car", "car"])


def test_bootstrap_of_macro_f1_reads_a_task_s_sides():
    rng = np.random.default_rng(2)
    y = rng.choice(["car", "cycling", "transit"], 150)
    p = np.where(rng.random(150) < 0.6, y, rng.choice(["car", "cycling", "transit"], 150))
    fast = m.bootstrap_ci(m.macro_f1, y, p, n_boot=200, random_state=1)  # was 0.0: the sides were change/stability
    slow = m.bootstrap_ci(lambda a, b: m.macro_f1(a, b, labels=m.side_labels(y)), y, p, n_boot=200, random_state=1)
    assert fast.estimate == pytest.approx(m.macro_f1(y, p), abs=1e-12) and fast.estimate > 30
    assert (fast.estimate, fast.low, fast.high) == pytest.approx((slow.estimate, slow.low, slow.high), abs=1e-9)


def test_unknown_strategy_is_a_key_error_that_is_a_value_error():
    with pytest.raises(KeyError) as info:
        m.bin_index([0.5], strategy="median")
    assert isinstance(info.value, ValueError)
    assert str(info.value) == "strategy must be 'uniform' or 'quantile', got 'median'"


def _ece_loop(conf, correct, n_bins=10):
    total = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        sel = [(c, k) for c, k in zip(conf, correct) if lo <= c < hi or (b == n_bins - 1 and c == 1.0)]
        if sel:
            total += len(sel) / len(conf) * abs(np.mean([k for _, k in sel]) - np.mean([c for c, _ in sel]))
    return total


def test_ece_by_hand_and_by_loop():
    conf = [0.95, 0.95, 0.55, 0.55, 1.0]
    correct = [1, 0, 1, 1, 1]
    # bins: [0.9,1.0] holds 0.95, 0.95, 1.0 -> conf 0.9667 acc 0.6667; [0.5,0.6) holds 0.55 x2 -> acc 1
    expected = 3 / 5 * abs(2 / 3 - (0.95 + 0.95 + 1.0) / 3) + 2 / 5 * abs(1.0 - 0.55)
    assert m.expected_calibration_error(conf, correct) == pytest.approx(expected, abs=1e-12)
    assert m.expected_calibration_error(conf, correct) == pytest.approx(_ece_loop(conf, correct), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=80))
def test_ece_matches_loop(items):
    conf, correct = map(list, zip(*items))
    assert m.expected_calibration_error(conf, correct) == pytest.approx(_ece_loop(conf, correct), abs=1e-12)
    assert 0.0 <= m.expected_calibration_error(conf, correct, strategy="quantile") <= 1.0


def test_equal_mass_bins():
    conf = np.linspace(0.5, 1.0, 100)
    correct = np.ones(100)
    bins = m.reliability_table(conf, correct, n_bins=4, strategy="quantile")
    assert bins["count"].tolist() == [25, 25, 25, 25]
    assert bins["bin_lower"].iloc[0] == 0.5 and bins["bin_upper"].iloc[-1] == 1.0
    # perfectly accurate: ECE = 1 - mean confidence
    assert m.expected_calibration_error(conf, correct, strategy="quantile") == pytest.approx(1 - conf.mean())


def test_overconfidence_gap():
    assert m.overconfidence_gap([0.9, 0.8], [1, 0]) == pytest.approx(0.85 - 0.5)


def test_bad_calibration_input():
    with pytest.raises(ValueError, match="same length"):
        m.expected_calibration_error([0.5], [1, 0])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        m.expected_calibration_error([1.5], [1])
    with pytest.raises(ValueError, match="strategy"):
        m.expected_calibration_error([0.5], [1], strategy="median")


def test_bootstrap_interval_vectorised_equals_generic():
    rng = np.random.default_rng(1)
    y = rng.choice(["change", "stability"], 200)
    p = np.where(rng.random(200) < 0.7, y, rng.choice(["change", "stability"], 200))
    fast = m.bootstrap_ci(m.macro_f1, y, p, n_boot=300, random_state=3)
    slow = m.bootstrap_ci(lambda a, b: m.macro_f1(a, b), y, p, n_boot=300, random_state=3)
    assert (fast.estimate, fast.low, fast.high) == pytest.approx((slow.estimate, slow.low, slow.high), abs=1e-9)
    acc = m.bootstrap_ci(m.accuracy, y, p, n_boot=500)
    assert acc.low < acc.estimate < acc.high
    # binomial standard error check: width ~ 2 * 1.96 * sqrt(a(1-a)/n)
    a = acc.estimate / 100
    assert acc.high - acc.low == pytest.approx(2 * 1.96 * 100 * math.sqrt(a * (1 - a) / 200), rel=0.2)


def test_bootstrap_average_over_strata():
    y = np.array(["change"] * 10 + ["stability"] * 4)
    p = np.array(["change"] * 5 + ["stability"] * 5 + ["stability"] * 4)
    dims = np.array(["A"] * 10 + ["B"] * 4)
    ci = m.bootstrap_ci(m.accuracy, y, p, strata=dims, average_over_strata=True, n_boot=200)
    assert ci.estimate == pytest.approx((50.0 + 100.0) / 2)
    assert ci.high <= 100.0 and ci.low >= 25.0
    with pytest.raises(ValueError, match="needs strata"):
        m.bootstrap_ci(m.accuracy, y, p, average_over_strata=True)


def test_paired_bootstrap_and_mcnemar():
    y = np.array(["change"] * 50 + ["stability"] * 50)
    a = y.copy()
    b = y.copy()
    b[:20] = "stability"  # b wrong on 20 pairs a gets right
    cmp = m.paired_bootstrap(m.accuracy, y, a, b, n_boot=500)
    assert cmp.difference == pytest.approx(20.0)
    assert cmp.low > 0 and cmp.p_value < 0.01
    same = m.paired_bootstrap(m.accuracy, y, a, a, n_boot=100)
    assert same.difference == 0.0 and same.p_value == 1.0
    res = m.mcnemar_test(a == y, b == y)
    assert (res.b, res.c, res.exact) == (20, 0, True)
    assert res.p_value == pytest.approx(2 * 0.5 ** 20)  # exact binomial, by hand
    big = m.mcnemar_test(np.r_[np.ones(30), np.zeros(10)].astype(bool), np.zeros(40, bool))
    assert big.exact is False
    assert big.statistic == pytest.approx((30 - 1) ** 2 / 30)
    assert m.mcnemar_test([True], [True]).p_value == 1.0


# ---------------------------------------------------------------------------------------------------
def test_bin_index_equal_width_closes_the_last_bin():
    assert m.bin_index([0.0, 0.0999, 0.1, 0.5, 0.9999, 1.0], 10).tolist() == [0, 0, 1, 5, 9, 9]
    assert m.bin_index([0.3, 0.1, 0.2, 0.4], 2, "quantile").tolist() == [1, 0, 0, 1]
    with pytest.raises(ValueError, match="n_bins"):
        m.bin_index([0.5], 0)


def test_reliability_table_values():
    t = m.reliability_table([0.05, 0.15, 0.15, 1.0], [False, True, False, True], n_bins=10)
    assert t["bin"].tolist() == [0, 1, 9]
    assert t["bin_lower"].tolist() == [0.0, 0.1, 0.9] and t["bin_upper"].tolist() == [0.1, 0.2, 1.0]
    assert t["count"].tolist() == [1, 2, 1]
    assert t["mean_predicted"].tolist() == pytest.approx([0.05, 0.15, 1.0])
    assert t["observed"].tolist() == [0.0, 0.5, 1.0]
    assert t["gap"].tolist() == pytest.approx([-0.05, 0.35, 0.0])
    assert t["stderr"].iloc[1] == pytest.approx(math.sqrt(0.15 * 0.85 / 2))
    # outcomes as sides, and the table is the ECE's bins
    sides = m.reliability_table([0.05, 0.15, 0.15, 1.0], ["stability", "change", "stability", "change"])
    assert sides.equals(t)
    ece = float((t["count"] / t["count"].sum() * t["gap"].abs()).sum())
    assert m.expected_calibration_error([0.05, 0.15, 0.15, 1.0], [0, 1, 0, 1]) == pytest.approx(ece)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        m.reliability_table([1.5], [True])
    with pytest.raises(ValueError, match="labels must be"):
        m.reliability_table([0.5], ["maybe"])


def test_is_change():
    assert m.is_change(np.array(["change", "stability"], dtype=object)).tolist() == [True, False]
    assert m.is_change([True, False]).tolist() == [True, False]
    assert m.is_change([1.0, 0.0]).tolist() == [True, False]
    for bad in (["up"], [2], [0.5]):
        with pytest.raises(ValueError, match="labels must be"):
            m.is_change(bad)


def test_bootstrap_indices_resample_within_strata():
    strata = np.array(["a"] * 5 + ["b"] * 3 + ["a"] * 2)
    idx = m.bootstrap_indices(10, 50, strata, random_state=1)
    assert idx.shape == (50, 10)
    assert (np.sort(strata[idx], axis=1) == np.sort(strata)).all()
    assert np.array_equal(idx, m.bootstrap_indices(10, 50, strata, random_state=1))
    free = m.bootstrap_indices(10, 50, random_state=1)
    assert free.min() >= 0 and free.max() <= 9 and not np.array_equal(free, idx)


# --- the sides a macro-F1 runs over: never a silent 0 for a side set the gold does not name ---------------
def test_a_stratified_macro_f1_runs_over_each_strata_own_sides():
    gold = np.array(["car", "bus", "car", "bus", "up", "down", "up", "down"])
    pred = np.array(["car", "car", "car", "bus", "up", "up", "down", "down"])
    dims = np.array(["Transport"] * 4 + ["Housing"] * 4)
    per_dim = [m.macro_f1(gold[dims == d], pred[dims == d]) for d in ("Transport", "Housing")]
    ci = m.bootstrap_ci(m.macro_f1, gold, pred, n_boot=50, strata=dims, average_over_strata=True)
    assert ci.estimate == pytest.approx(np.mean(per_dim))  # not diluted by the other dimension's sides
    sides = {"Transport": ["car", "bus", "bike"], "Housing": ["up", "down"]}  # a side no gold label takes
    named = m.bootstrap_ci(m.macro_f1, gold, pred, n_boot=50, strata=dims, average_over_strata=True, labels=sides)
    expected = [m.macro_f1(gold[dims == d], pred[dims == d], labels=sides[d]) for d in ("Transport", "Housing")]
    assert named.estimate == pytest.approx(np.mean(expected)) and named.estimate < ci.estimate
    with pytest.raises(ValueError, match="lack the gold label 'bus'"):
        m.bootstrap_ci(m.macro_f1, gold[:4], pred[:4], n_boot=10, labels=["car"])
    with pytest.raises(ValueError, match="average_over_strata"):
        m.paired_bootstrap(m.macro_f1, gold, pred, pred, n_boot=10, labels=sides)


def test_macro_f1_reads_a_tasks_sides_or_refuses_in_one_line():
    assert m.macro_f1(["left", "right"], ["left", "left"]) == pytest.approx(100 * (2 / 3 + 0) / 2)
    with pytest.raises(ValueError, match="missing label"):
        m.macro_f1(["left", None], ["left", "left"])
