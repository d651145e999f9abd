"""Tests of tefcore.fusion: worked examples, independent literal routes (Algorithm 1, and Majority Vote
counted as the reference release counts it), properties, bad input."""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tefcore import fusion
from tefcore.errors import UnknownName
from tefcore.fusion import (
    CLASSES, RULE_NAMES, clipped_log_odds, direct, entropy_weight, fuse_many, majority_vote, soft_vote, tef,
    tef_without_entropy, tef_without_log_odds,
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


# ------------------------------------------------------------------------------------------------
# an independent route for Majority Vote: count the votes as the reference release does
# ------------------------------------------------------------------------------------------------
def counter_majority_vote(rows: list[list[float]], names: tuple[str, ...]) -> tuple[str, float]:
    """Each sentence votes for its most probable class (the first of equal maxima, as Python's max
    does); collections.Counter.most_common(1) gives the winner and its count."""
    labels = [names[max(range(len(row)), key=row.__getitem__)] for row in rows]
    label, count = Counter(labels).most_common(1)[0]
    return label, count / len(labels)


def counter_majority_vote_binary(p: list[float]) -> tuple[str, float]:
    """K = 2 as the reference writes it: change iff p >= 0.5."""
    label, count = Counter("change" if x >= 0.5 else "stability" for x in p).most_common(1)[0]
    return label, count / len(p)


probs = st.floats(0.0, 1.0, allow_nan=False, allow_subnormal=False)
documents = st.lists(probs, min_size=1, max_size=30)
# few distinct values, so that tied votes are common (0.5 itself is a change vote)
voting_probs = st.one_of(st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9, 0.4999999999999999]), probs)
voting_documents = st.lists(voting_probs, min_size=1, max_size=12)


# ------------------------------------------------------------------------------------------------
# worked examples computed by hand
# ------------------------------------------------------------------------------------------------
def test_weight_and_log_odds_by_hand():
    # p = 0.9: H = -(0.9 ln 0.9 + 0.1 ln 0.1) = 0.325083, w = 1 - H/ln 2 = 0.531004
    h = 0.9 * -math.log(0.9) + 0.1 * -math.log(0.1)
    assert entropy_weight([0.9])[0] == pytest.approx(1 - h / math.log(2), abs=1e-15)
    assert entropy_weight([0.9])[0] == pytest.approx(0.531004406410719, abs=1e-12)
    assert clipped_log_odds([0.9])[0] == pytest.approx(math.log(9.0), abs=1e-15)
    assert entropy_weight([0.5])[0] == 0.0
    assert entropy_weight([0.0, 1.0]).tolist() == [1.0, 1.0]
    # clipping: p = 0 -> eps -> log(1e-6/(1-1e-6)) = -13.8 -> -M
    assert clipped_log_odds([0.0, 1.0]).tolist() == [-10.0, 10.0]
    assert clipped_log_odds([1e-3], M=100.0)[0] == pytest.approx(math.log(1e-3 / 0.999), rel=1e-14)
    assert clipped_log_odds([0.0], M=100.0)[0] == pytest.approx(math.log(1e-6 / (1 - 1e-6)), rel=1e-12)
    # a scalar gives a scalar, and the input is never changed (both work in arrays of their own)
    assert np.ndim(clipped_log_odds(0.9)) == 0 and clipped_log_odds(0.9) == pytest.approx(math.log(9.0))
    assert np.ndim(entropy_weight(0.9)) == 0 and entropy_weight(0.9) == entropy_weight([0.9])[0]
    p = np.array([0.2, 0.9])
    clipped_log_odds(p), entropy_weight(p), tef(p)
    assert p.tolist() == [0.2, 0.9]


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
    assert r.scores["change"] == pytest.approx(s, abs=1e-12)
    assert r.scores["stability"] == pytest.approx(-s, abs=1e-12)
    assert r.confidence == pytest.approx(1 / (1 + math.exp(2 * s / 5)), abs=1e-12)


def test_direct_and_tie_rules():
    # Direct, SV and w/o Log-Odds: change iff the probability (mean) is >= 0.5 (protocol section 6)
    assert direct(0.5).prediction == "change"
    assert direct(0.3) == fusion.FusionResult("stability", 0.7, {"change": 0.3, "stability": 0.7})
    assert soft_vote([0.2, 0.8]).prediction == "change"
    assert soft_vote([0.8, 0.2]).prediction == "change"
    assert tef_without_log_odds([0.5, 0.5]).scores == {"change": 0.5, "stability": 0.5}  # sum of weights 0
    assert tef_without_log_odds([0.5, 0.5]).prediction == "change"
    # MV: a tied vote goes to the side voted first (the reference release), or with ties="first_class" to change
    assert majority_vote([0.6, 0.4]).prediction == "change"
    assert majority_vote([0.4, 0.6]).prediction == "stability"
    assert majority_vote([0.4, 0.6], ties="first_class").prediction == "change"
    assert majority_vote([0.4, 0.6]).confidence == 0.5
    assert majority_vote([0.5, 0.2]).prediction == "change"  # 0.5 is a change vote


def test_issue_example_majority_vote_tie_goes_to_first_vote():
    p = [0.4826, 0.8299, 0.8195, 0.2447]  # votes: stability, change, change, stability
    assert counter_majority_vote_binary(p) == ("stability", 0.5)
    r = majority_vote(p)
    assert r == fusion.FusionResult("stability", 0.5, {"change": 0.5, "stability": 0.5})
    assert majority_vote(p, ties="first_class").prediction == "change"
    batch = fuse_many(p + p[::-1][1:] + [0.9], [0] * 4 + [1] * 4, "majority_vote")
    # second post: 0.8195, 0.8299, 0.4826, 0.9 -> change 3:1; first post as above
    assert batch.prediction.tolist() == ["stability", "change"]
    # the other rules are not vote counts and keep their own decisions
    assert soft_vote(p).prediction == "change" and tef(p).prediction == "change"


def test_majority_vote_ties_with_three_classes():
    rows = [[0.2, 0.5, 0.3], [0.6, 0.2, 0.2], [0.1, 0.1, 0.8], [0.7, 0.2, 0.1], [0.2, 0.6, 0.2]]
    # votes b, a, c, a, b: a and b tie 2-2, b was voted first
    r = majority_vote(rows, classes=("a", "b", "c"))
    assert r.prediction == "b" and r.confidence == pytest.approx(0.4)
    assert r.scores == pytest.approx({"a": 0.4, "b": 0.4, "c": 0.2})
    assert majority_vote(rows, classes=("a", "b", "c"), ties="first_class").prediction == "a"
    # a class voted first but not tied does not win: c first, then a and b tie
    rows2 = [[0.1, 0.1, 0.8], [0.2, 0.7, 0.1], [0.7, 0.2, 0.1], [0.6, 0.3, 0.1], [0.3, 0.6, 0.1]]
    assert majority_vote(rows2).prediction == "class_1"


@pytest.mark.parametrize("p", [[0.3, 0.7], [0.1, 0.9], [0.2, 0.8, 0.5], [0.9, 0.1, 0.6, 0.4],
                               [1e-9, 1 - 1e-9], [4.6e-5, 1 - 4.6e-5], [0.25, 0.75, 0.75, 0.25],
                               [0.5], [0.999, 0.3, 0.001, 0.7]])
def test_balanced_posts_are_exact_ties(p):
    for rule in (tef, tef_without_entropy):
        r = rule(p)
        assert r.scores == {"change": 0.0, "stability": 0.0}
        assert r.prediction == "change" and r.confidence == 0.5
        # any order gives the same tie
        assert rule(p[::-1]).scores == {"change": 0.0, "stability": 0.0}


def test_tiny_evidence_is_not_a_tie():
    # the tolerance is relative to the document's evidence: a faint lean still decides
    for p, side in ((0.5 - 1e-6, "stability"), (0.5 + 1e-6, "change")):
        r = tef([p])
        assert r.prediction == side and 0 < abs(r.scores["change"]) < 1e-15
    assert tef([0.5 - 2**-20, 0.5 + 2**-20]).scores == {"change": 0.0, "stability": 0.0}  # exact complements


def test_three_classes_tied_within_rounding():
    # classes a and b carry the same evidence in another order: equal in exact arithmetic
    rows = [[0.7, 0.2, 0.1], [0.2, 0.7, 0.1], [0.15, 0.05, 0.8], [0.05, 0.15, 0.8], [0.6, 0.3, 0.1],
            [0.3, 0.6, 0.1]]
    for order in (rows, rows[::-1], rows[1::2] + rows[::2]):
        r = tef(order, classes=("a", "b", "c"))
        assert r.scores["a"] == r.scores["b"]
        assert r.prediction == ("a" if r.scores["a"] > r.scores["c"] else "c")


def test_reference_style_separate_sums_can_break_ties_by_noise():
    # the reason for the tie rule: summing the two sides separately is not antisymmetric
    p = [0.1, 0.9, 0.3, 0.7, 0.2, 0.8]
    rows = [[x, 1 - x] for x in p]
    sc, ss = literal_tef_scores(rows)
    assert abs(sc - ss) < 1e-14  # mathematically a tie, numerically only nearly
    assert tef(p).scores == {"change": 0.0, "stability": 0.0}


def test_tef_without_log_odds_by_hand():
    p = [0.9, 0.6]
    w = entropy_weight(p)
    m = (w[0] * 0.9 + w[1] * 0.6) / (w[0] + w[1])
    r = tef_without_log_odds(p)
    assert r.prediction == "change" and r.confidence == pytest.approx(m, abs=1e-15)
    assert r.scores == pytest.approx({"change": m, "stability": 1 - m}, abs=1e-15)


def test_multiclass_by_hand():
    rows = [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]]
    expected = literal_tef_scores(rows)
    r = tef(np.array(rows))
    assert list(r.scores.values()) == pytest.approx(expected, abs=1e-12)
    assert list(r.scores) == ["class_0", "class_1", "class_2"]
    assert r.prediction == f"class_{int(np.argmax(expected))}"
    assert r.confidence == pytest.approx(literal_confidence(expected), abs=1e-12)
    assert entropy_weight(np.array(rows))[2] == pytest.approx(0.0, abs=1e-15)
    mv = majority_vote(np.array(rows))  # votes 0, 2, 0 (row 3's own tie -> its first class)
    assert list(mv.scores.values()) == pytest.approx([2 / 3, 0.0, 1 / 3]) and mv.prediction == "class_0"
    assert list(soft_vote(np.array(rows)).scores.values()) == pytest.approx(np.mean(rows, axis=0).tolist())
    assert direct([[0.2, 0.5, 0.3]]).prediction == "class_1"
    named = tef(np.array(rows), classes=["left", "centre", "right"])
    assert r.prediction == "class_2"
    assert list(named.scores) == ["left", "centre", "right"] and named.prediction == "right"


def test_results_name_their_classes():
    r = tef([0.9, 0.2, 0.6])
    assert list(r.scores) == list(CLASSES) and r.scores["stability"] == -r.scores["change"]
    assert tef([0.9, 0.2, 0.6], classes=("pro", "contra")).prediction == "pro"
    b = fuse_many(np.array([[0.1, 0.2, 0.7], [0.5, 0.3, 0.2]]), rule="direct", classes=("x", "y", "z"))
    assert b.classes == ("x", "y", "z") and b.prediction.tolist() == ["z", "x"]
    assert b.index.tolist() == [2, 0] and b.scores.shape == (2, 3)
    assert fuse_many([0.2, 0.7], rule="direct").classes == CLASSES


# ------------------------------------------------------------------------------------------------
# properties
# ------------------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(documents)
@example([6.66e-05, 6.66e-05])  # a score of 19.2 that the two roundings put 1.2e-12 apart
def test_binary_tef_matches_literal_algorithm(p):
    rows = [[x, 1 - x] for x in p]
    sc, ss = literal_tef_scores(rows)
    r = tef(p)
    # the literal loop rounds its own way (1 - x, two logarithms per class): agreement to 1e-12
    # relative to the size of the score, or absolutely near zero
    assert r.scores["change"] == pytest.approx(sc, rel=1e-12, abs=1e-12)
    assert r.scores["stability"] == pytest.approx(ss, rel=1e-12, abs=1e-12)
    if abs(sc - ss) > 1e-9:
        assert r.prediction == ("change" if sc > ss else "stability")
        assert r.confidence == pytest.approx(literal_confidence([sc, ss]), rel=1e-12, abs=1e-12)
    r0 = tef_without_entropy(p)
    sc0, ss0 = literal_tef_scores(rows, tempered=False)
    assert list(r0.scores.values()) == pytest.approx([sc0, ss0], rel=1e-12, abs=1e-12)


@settings(max_examples=400, deadline=None)
@given(voting_documents)
def test_binary_majority_vote_matches_counter_most_common(p):
    label, share = counter_majority_vote_binary(p)
    r = majority_vote(p)
    assert r.prediction == label and r.confidence == pytest.approx(share, abs=1e-15)
    assert r.scores["change"] == pytest.approx(sum(x >= 0.5 for x in p) / len(p), abs=1e-15)
    # the same through the two-column route and through the general-K counter
    assert majority_vote(np.column_stack([p, 1 - np.asarray(p)])) == r
    assert counter_majority_vote([[x, 1 - x] for x in p], CLASSES)[0] == label
    # ties="first_class" differs only on a tied vote, which it gives to change
    old = majority_vote(p, ties="first_class").prediction
    assert old == label or (share == 0.5 and old == "change")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=9), min_size=1, max_size=12),
       st.integers(0, 2**31))
def test_three_class_majority_vote_matches_counter_most_common(votes, seed):
    # rows with a clear most probable class, often with tied vote counts across the document
    rng = np.random.default_rng(seed)
    names = ("left", "centre", "right")
    docs = []
    for doc in votes:
        rows = rng.dirichlet(np.ones(3), size=len(doc)) * 0.5
        rows[np.arange(len(doc)), doc] += 0.5
        docs.append(rows)
    flat = np.concatenate(docs)
    batch = fuse_many(flat, np.repeat(np.arange(len(docs)), [len(d) for d in docs]), "majority_vote",
                      classes=names)
    for i, rows in enumerate(docs):
        label, share = counter_majority_vote(rows.tolist(), names)
        assert batch.prediction[i] == label
        assert batch.confidence[i] == pytest.approx(share, abs=1e-15)
        assert majority_vote(rows, classes=names) == batch.result(i)


@settings(max_examples=200, deadline=None)
@given(st.lists(voting_documents, min_size=1, max_size=20))
def test_fuse_many_majority_vote_matches_counter_per_document(docs):
    flat = np.concatenate([np.asarray(d) for d in docs])
    batch = fuse_many(flat, np.repeat(np.arange(len(docs)), [len(d) for d in docs]), "majority_vote")
    assert batch.prediction.tolist() == [counter_majority_vote_binary(d)[0] for d in docs]


@settings(max_examples=200, deadline=None)
@given(documents, st.randoms(use_true_random=False))
def test_sentence_order_does_not_matter(p, rnd):
    q = list(p)
    rnd.shuffle(q)
    for name in ("majority_vote", "soft_vote", "tef", "tef_without_entropy", "tef_without_log_odds"):
        a, b = fusion.RULES[name](p), fusion.RULES[name](q)
        gap = abs(a.scores["change"] - a.scores["stability"])
        assert a.prediction == b.prediction or gap < 1e-9  # a tied MV goes to the side voted first
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
    base = tef(p).scores["change"]
    alone = tef([p[i]]).scores["change"]
    assert tef(p + [p[i]]).scores["change"] == pytest.approx(base + alone, abs=1e-12)
    assert tef([p[i], p[i]]).scores["change"] == pytest.approx(2 * alone, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 50), elements=probs))
def test_entropy_weights_lie_in_unit_interval(p):
    w = entropy_weight(p)
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
    assert b.scores.tolist() == [[0.2, 0.8], [0.5, 0.5], [0.9, 0.09999999999999998]]
    with pytest.raises(ValueError, match="exactly one"):
        fuse_many([0.2, 0.5], [0, 0], rule="direct")


# ------------------------------------------------------------------------------------------------
# the rules' API without traps (issue 28)
# ------------------------------------------------------------------------------------------------
def test_direct_refuses_a_flat_list_of_several_values():
    # [0.4, 0.6] read as one distribution gave "stability" with confidence 0.6, while tef() reads the same
    # list as two sentences; the reference release raises ValueError
    with pytest.raises(ValueError, match=r"^direct takes one P\(first class\) per text, got 2 values: .*"
                                         r"direct\(\[\[0\.4, 0\.6\]\]\), or many texts to fuse_many"):
        direct([0.4, 0.6])
    with pytest.raises(ValueError, match=re.escape("got 5 values: pass a distribution as one row, "
                                                   "direct([[0.1, 0.2, 0.3, 0.2, ...]])")):
        direct(np.array([0.1, 0.2, 0.3, 0.2, 0.2]))
    assert direct([[0.4, 0.6]]) == direct(0.4) == direct([0.4]) == direct(np.float64(0.4))
    assert direct([[0.4, 0.6]]).prediction == "stability"
    assert direct([[0.2, 0.5, 0.3]], classes=["left", "centre", "right"]).prediction == "centre"
    with pytest.raises(ValueError, match="exactly one probability"):
        direct([[0.4, 0.6], [0.5, 0.5]])
    assert list(tef([0.4, 0.6]).scores) == ["change", "stability"]  # two sentences, as before


@pytest.mark.parametrize("call, message", [
    (lambda: fuse_many([0.1], rule="median"),
     "unknown fusion rule 'median'; choose one of direct, majority_vote, soft_vote, tef, tef_without_entropy, "
     "tef_without_log_odds"),
    (lambda: majority_vote([0.1], ties="change"), "ties must be one of first_vote, first_class, got 'change'"),
])
def test_unknown_names_raise_a_key_error_that_is_a_value_error(call, message):
    with pytest.raises(KeyError) as info:
        call()
    assert isinstance(info.value, ValueError) and isinstance(info.value, UnknownName)
    assert str(info.value) == message  # printed as written, not quoted as a KeyError's message is


def test_each_rule_is_its_own_function_of_the_class_scores():
    assert tuple(fusion._CLASS_SCORES) == RULE_NAMES and set(fusion.RULES) == set(RULE_NAMES)
    assert len({fn.__name__ for fn in fusion._CLASS_SCORES.values()}) == len(RULE_NAMES)


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
    for kw, match in (({"eps": 0.0}, "eps"), ({"M": -1.0}, "M must"), ({"T": 0.0}, "T must"),
                      ({"T": float("inf")}, "T must"), ({"tie_rtol": -1.0}, "tie_rtol"),
                      ({"classes": ("a",)}, "2 distinct names"), ({"classes": ("a", "a")}, "2 distinct names")):
        with pytest.raises(ValueError, match=match):
            tef([0.1], **kw)
    with pytest.raises(ValueError, match="ties must be one of first_vote, first_class"):
        majority_vote([0.1], ties="change")
    with pytest.raises(ValueError, match="3 distinct names"):
        fuse_many(np.array([[0.2, 0.3, 0.5]]), classes=["a", "b"])


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
