"""Tests of tefcore.fusion: worked examples, an independent literal route, properties, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tefcore import fusion
from tefcore.fusion import (
    RULE_NAMES, clipped_log_odds, direct, fuse_many, majority_vote, soft_vote, tef, tef_without_entropy,
    tef_without_log_odds, weights,
)


# ------------------------------------------------------------------------------------------------
# an independent route: Algorithm 1 of the paper, written literally with Python floats
# ------------------------------------------------------------------------------------------------
def literal_tef_scores(rows: list[list[float]], eps: float = 1e-6, M: float = 10.0,
                       tempered: bool = True) -> list[float]:
    K = len(rows[0])
    scores = [0.0] * K
    for row in rows:
        H = -sum(p * math.log(p) for p in row if p > 0)
        w = 1.0 - H / math.log(K) if tempered else 1.0
        for c, p in enumerate(row):
            pt = min(max(p, eps), 1 - eps)
            ell = min(max(math.log(pt / (1 - pt)), -M), M)
            scores[c] += w * ell
    return scores


def literal_confidence(scores: list[float], T: float = 5.0) -> float:
    top = max(scores)
    z = sum(math.exp((s - top) / T) for s in scores)
    return 1.0 / z


probs = st.floats(0.0, 1.0, allow_nan=False, allow_subnormal=False)
documents = st.lists(probs, min_size=1, max_size=30)


# ------------------------------------------------------------------------------------------------
# worked examples computed by hand
# ------------------------------------------------------------------------------------------------
def test_weight_and_log_odds_by_hand():
    # p = 0.9: H = -(0.9 ln 0.9 + 0.1 ln 0.1) = 0.325083, w = 1 - H/ln 2 = 0.531004
    assert weights([0.9])[0] == pytest.approx(1 - (0.9 * -math.log(0.9) + 0.1 * -math.log(0.1)) / math.log(2),
                                             abs=1e-15)
    assert weights([0.9])[0] == pytest.approx(0.531004406410719, abs=1e-12)
    assert clipped_log_odds([0.9])[0] == pytest.approx(math.log(9.0), abs=1e-15)
    assert weights([0.5])[0] == 0.0
    assert weights([0.0, 1.0]).tolist() == [1.0, 1.0]
    # clipping: p = 0 -> eps -> log(1e-6/(1-1e-6)) = -13.8 -> -M
    assert clipped_log_odds([0.0, 1.0]).tolist() == [-10.0, 10.0]
    assert clipped_log_odds([1e-3], M=100.0)[0] == pytest.approx(math.log(1e-3 / 0.999), rel=1e-14)
    assert clipped_log_odds([0.0], M=100.0)[0] == pytest.approx(math.log(1e-6 / (1 - 1e-6)), rel=1e-12)


def test_one_decisive_sentence_beats_four_uncertain_ones():
    # one decisive stability sentence (p = 0.02) and four mildly-change ones (p = 0.55)
    p = [0.02, 0.55, 0.55, 0.55, 0.55]
    assert majority_vote(p).prediction == "change"
    assert majority_vote(p).confidence == pytest.approx(0.8)
    assert soft_vote(p).prediction == "stability"  # mean = 0.444
    assert soft_vote(p).confidence == pytest.approx(1 - 0.444)
    w_dec = 1 - (0.02 * -math.log(0.02) + 0.98 * -math.log(0.98)) / math.log(2)
    w_unc = 1 - (0.55 * -math.log(0.55) + 0.45 * -math.log(0.45)) / math.log(2)
    s = w_dec * math.log(0.02 / 0.98) + 4 * w_unc * math.log(0.55 / 0.45)
    r = tef(p)
    assert r.prediction == "stability"
    assert r.scores[0] == pytest.approx(s, abs=1e-12)
    assert r.scores[1] == pytest.approx(-s, abs=1e-12)
    assert r.confidence == pytest.approx(1 / (1 + math.exp(2 * s / 5)), abs=1e-12)


def test_direct_and_tie_rules():
    assert direct(0.5).prediction == "change"  # ties go to change
    assert direct(0.3) == fusion.FusionResult("stability", 0.7, (0.3, 0.7), 1)
    assert majority_vote([0.6, 0.4]).prediction == "change"
    assert soft_vote([0.2, 0.8]).prediction == "change"
    assert tef_without_log_odds([0.5, 0.5]).scores == (0.5, 0.5)  # sum of weights is 0 -> 0.5


@pytest.mark.parametrize("p", [[0.3, 0.7], [0.1, 0.9], [0.2, 0.8, 0.5], [0.9, 0.1, 0.6, 0.4],
                               [1e-9, 1 - 1e-9], [4.6e-5, 1 - 4.6e-5], [0.25, 0.75, 0.75, 0.25],
                               [0.5], [0.999, 0.3, 0.001, 0.7]])
def test_balanced_posts_are_exact_ties(p):
    for rule in (tef, tef_without_entropy):
        r = rule(p)
        assert r.scores[0] == r.scores[1] == 0.0
        assert r.prediction == "change" and r.confidence == 0.5
        # any order gives the same tie
        assert rule(p[::-1]).scores == (0.0, 0.0)


def test_reference_style_separate_sums_can_break_ties_by_noise():
    # the reason for the tie rule: summing the two sides separately is not antisymmetric
    p = [0.1, 0.9, 0.3, 0.7, 0.2, 0.8]
    rows = [[x, 1 - x] for x in p]
    sc, ss = literal_tef_scores(rows)
    assert abs(sc - ss) < 1e-14  # mathematically a tie, numerically only nearly
    assert tef(p).scores == (0.0, 0.0)


def test_tef_without_log_odds_by_hand():
    p = [0.9, 0.6]
    w = weights(p)
    m = (w[0] * 0.9 + w[1] * 0.6) / (w[0] + w[1])
    r = tef_without_log_odds(p)
    assert r.prediction == "change" and r.confidence == pytest.approx(m, abs=1e-15)


def test_multiclass_by_hand():
    rows = [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]]
    expected = literal_tef_scores(rows)
    r = tef(np.array(rows))
    assert r.scores == pytest.approx(expected, abs=1e-12)
    assert r.index == int(np.argmax(expected)) and r.prediction == r.index
    assert r.confidence == pytest.approx(literal_confidence(expected), abs=1e-12)
    assert weights(np.array(rows))[2] == pytest.approx(0.0, abs=1e-15)
    mv = majority_vote(np.array(rows))  # votes 0, 2, 0 (row 3 ties -> first class)
    assert mv.scores == pytest.approx((2 / 3, 0.0, 1 / 3)) and mv.prediction == 0
    assert soft_vote(np.array(rows)).scores == pytest.approx(np.mean(rows, axis=0).tolist())
    assert direct([0.2, 0.5, 0.3]).prediction == 1


# ------------------------------------------------------------------------------------------------
# properties
# ------------------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(documents)
def test_binary_tef_matches_literal_algorithm(p):
    rows = [[x, 1 - x] for x in p]
    sc, ss = literal_tef_scores(rows)
    r = tef(p)
    assert r.scores[0] == pytest.approx(sc, abs=1e-12)
    assert r.scores[1] == pytest.approx(ss, abs=1e-12)
    if abs(sc - ss) > 1e-9:
        assert r.prediction == ("change" if sc > ss else "stability")
        assert r.confidence == pytest.approx(literal_confidence([sc, ss]), abs=1e-12)
    r0 = tef_without_entropy(p)
    sc0, ss0 = literal_tef_scores(rows, tempered=False)
    assert r0.scores == pytest.approx((sc0, ss0), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(documents, st.randoms(use_true_random=False))
def test_sentence_order_does_not_matter(p, rnd):
    q = list(p)
    rnd.shuffle(q)
    for name in ("majority_vote", "soft_vote", "tef", "tef_without_entropy", "tef_without_log_odds"):
        a, b = fusion.RULES[name](p), fusion.RULES[name](q)
        assert a.prediction == b.prediction or abs(a.scores[0] - a.scores[1]) < 1e-9
        assert a.scores == pytest.approx(b.scores, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(documents)
def test_uniform_sentence_adds_nothing(p):
    with_uniform, without = tef(p + [0.5]), tef(p)
    assert with_uniform.scores == pytest.approx(without.scores, abs=1e-12)
    assert with_uniform.prediction == without.prediction
    assert tef_without_log_odds(p + [0.5]).scores == pytest.approx(tef_without_log_odds(p).scores,
                                                                   abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(documents, st.integers(0, 29))
def test_duplicating_a_sentence_doubles_its_evidence(p, k):
    i = k % len(p)
    base = tef(p).scores[0]
    alone = tef([p[i]]).scores[0]
    assert tef(p + [p[i]]).scores[0] == pytest.approx(base + alone, abs=1e-12)
    assert tef([p[i], p[i]]).scores[0] == pytest.approx(2 * alone, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 50), elements=probs))
def test_weights_lie_in_unit_interval(p):
    w = weights(p)
    assert np.all(w >= -1e-15) and np.all(w <= 1 + 1e-15)
    assert np.all(np.abs(clipped_log_odds(p)) <= 10.0)


@settings(max_examples=200, deadline=None)
@given(documents)
def test_k2_array_path_equals_binary_path(p):
    arr = np.column_stack([p, 1 - np.asarray(p)])
    for name in RULE_NAMES[1:]:
        assert fusion.RULES[name](arr) == fusion.RULES[name](p)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(probs, min_size=1, max_size=8), min_size=1, max_size=25),
       st.sampled_from(RULE_NAMES[1:]))
def test_fuse_many_equals_per_document_calls(docs, rule):
    flat = np.concatenate([np.asarray(d) for d in docs])
    idx = np.repeat(np.arange(len(docs)) * 3 + 7, [len(d) for d in docs])  # any sorted ids work
    batch = fuse_many(flat, idx, rule)
    assert len(batch) == len(docs)
    assert batch.doc_ids.tolist() == sorted(set(idx.tolist()))
    for i, d in enumerate(docs):
        one = fusion.RULES[rule](d)
        assert batch.result(i) == one  # identical, not merely close


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 5), st.lists(st.integers(1, 6), min_size=1, max_size=10), st.integers(0, 2**31))
def test_fuse_many_multiclass_equals_literal(K, lengths, seed):
    rng = np.random.default_rng(seed)
    rows = rng.dirichlet(np.full(K, 0.7), size=sum(lengths))
    idx = np.repeat(np.arange(len(lengths)), lengths)
    batch = fuse_many(rows, idx, "tef")
    start = 0
    for d, n in enumerate(lengths):
        expected = literal_tef_scores(rows[start:start + n].tolist())
        assert batch.scores[d] == pytest.approx(expected, abs=1e-12)
        assert batch.confidence[d] == pytest.approx(literal_confidence(expected), abs=1e-12)
        start += n


def test_direct_in_batch():
    b = fuse_many([0.2, 0.5, 0.9], rule="direct")
    assert b.prediction.tolist() == ["stability", "change", "change"]
    assert b.confidence.tolist() == [0.8, 0.5, 0.9]
    with pytest.raises(ValueError, match="exactly one"):
        fuse_many([0.2, 0.5], [0, 0], rule="direct")


# ------------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad, match", [
    ([], "empty"),
    ([0.2, float("nan")], "NaN at p\\[1\\]"),
    ([float("inf")], "infinite"),
    ([-0.1], "outside \\[0, 1\\]"),
    ([1.0000001], "outside \\[0, 1\\]"),
    (np.array([[0.5, 0.6]]), "summing to 1"),
    (np.zeros((2, 2, 2)), "shape"),
    (np.array([[1.0]]), "K >= 2"),
    (["a"], "numeric"),
])
def test_bad_probabilities_raise(bad, match):
    with pytest.raises(ValueError, match=match):
        tef(bad)


@pytest.mark.parametrize("idx, match", [
    ([0, 1, 0], "sorted"),
    ([0, 0], "does not match"),
    ([[0, 0, 0]], "1-D"),
    ([0.5, 1, 1], "integers"),
])
def test_bad_doc_index_raises(idx, match):
    with pytest.raises(ValueError, match=match):
        fuse_many([0.1, 0.2, 0.3], idx)


def test_bad_rule_and_parameters():
    with pytest.raises(ValueError, match="unknown fusion rule"):
        fuse_many([0.1], rule="median")
    for kw in ({"eps": 0.0}, {"M": -1.0}, {"T": 0.0}, {"T": float("inf")}):
        with pytest.raises(ValueError):
            tef([0.1], **kw)


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    hnp.arrays(np.float64, st.tuples(st.integers(0, 6)), elements=st.floats(allow_nan=True,
                                                                             allow_infinity=True)),
    hnp.arrays(np.float64, st.tuples(st.integers(0, 4), st.integers(0, 4)),
               elements=st.one_of(st.floats(-1, 2), st.just(float("nan")))),
), st.sampled_from(RULE_NAMES[1:]))
def test_fusion_input_fuzz_either_works_or_raises_value_error(arr, rule):
    try:
        b = fuse_many(arr, np.zeros(arr.shape[0], dtype=int) if arr.ndim and arr.shape[0] else None, rule)
    except ValueError:
        return
    assert np.all(np.isfinite(b.confidence)) and np.all(b.confidence <= 1.0)
    assert np.all(np.isfinite(b.scores))
