"""The checks of the paper's method, propositions and data card: formula and simulation checks, and counts
of the MIND files.

Each function is registered for its claim of ``claims.yaml`` (:func:`tefpaper.evidence.check`). The
method's rules are computed twice, by :mod:`tefcore.fusion` and by the paper's formulas written out again
with SciPy; the propositions are checked on simulated detectors whose exact posteriors are known
(:mod:`tefcore.simulate`); the data card is counted on the MIND data at hand.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

import numpy as np
from scipy.special import entr, logit

from tefcore import simulate as sim
from tefcore.fusion import CLIP, EPS, FusionBatch, clipped_log_odds, entropy_weight, fuse_many
from tefcore.information import additive_log_odds
from tefcore.mind.load import evaluation_pairs
from tefcore.mind.release import FULL_RELEASE, FULL_RELEASE_PAIRS, pair_counts
from tefcore.mind.schema import DIMENSIONS, LANGS, SIDES, TABLE_ORDER
from tefpaper.evidence import Evidence, Verdict, check, on_data, per_lang
from tefpaper.posts import first_flips, gaussian_shift_posts, random_posts


def _starts(doc: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])


def _hand_score(p: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """Eq. 3 by hand: clipped log-odds from scipy.special.logit, weights from scipy.special.entr."""
    k = 2 if p.ndim == 1 else p.shape[1]
    dist = np.column_stack([p, 1 - p]) if p.ndim == 1 else p
    w = 1.0 - entr(dist).sum(axis=1) / math.log(k)
    ell = np.clip(logit(np.clip(dist, 1e-6, 1 - 1e-6)), -10.0, 10.0)
    return np.add.reduceat(w[:, None] * ell, _starts(doc))


# --------------------------------------------------------------------------------------------------
# method (Sec. 3)
# --------------------------------------------------------------------------------------------------
@check("clipped-log-odds")
def _clipped_log_odds(ev: Evidence) -> Verdict:
    p = np.array([0.0, 1e-9, 1e-6, 1e-3, 0.3, 0.5, 0.7, 1 - 1e-9, 1.0])
    ours = clipped_log_odds(p)
    ref = np.clip(logit(np.clip(p, 1e-6, 1 - 1e-6)), -10.0, 10.0)
    gap = float(np.max(np.abs(ours - ref)))
    return Verdict(
        f"ℓ(0) = {ours[0]:g}, ℓ(1) = {ours[-1]:g}",
        gap <= 1e-12 and (EPS, CLIP) == (1e-6, 10.0),
        f"ε = {EPS:g}, M = {CLIP:g}; largest |difference| from scipy.special.logit of the clipped p: "
        f"{gap:.1e}",
    )


@check("entropy-weight")
def _entropy_weight(ev: Evidence) -> Verdict:
    p2 = np.linspace(0.0, 1.0, 101)
    p3, _ = random_posts(3)
    w2, w3 = entropy_weight(p2), entropy_weight(p3)
    ref2 = 1 - (entr(p2) + entr(1 - p2)) / math.log(2)
    ref3 = 1 - entr(p3).sum(axis=1) / math.log(3)
    gap = float(max(np.abs(w2 - ref2).max(), np.abs(w3 - ref3).max()))
    inside = bool(min(w2.min(), w3.min()) >= 0 and max(w2.max(), w3.max()) <= 1)
    return Verdict(
        f"w(½) = {w2[50]:g}, w(0) = w(1) = {w2[0]:g}",
        gap <= 1e-12 and inside and w2[50] == 0 and w2[0] == w2[-1] == 1,
        f"K = 2 on a grid and K = 3 on {len(p3)} random distributions; largest |difference| from "
        f"1 - H/log K with scipy.special.entr: {gap:.1e}; all weights in [0, 1]: {'yes' if inside else 'no'}",
    )


@check("tempering")
def _tempering(ev: Evidence) -> Verdict:
    # The probabilities of chapter 1's table: an uncertain sentence (0.6), its decisive sentence (0.9, right alone
    # 90 % of the time when calibrated, w >= 1/2) and a near-certain one (0.99). "Preserving the Bayes-optimal
    # weight" is read as keeping at least 90 % of the log-odds.
    p = np.array([0.6, 0.9, 0.99])
    w = entropy_weight(p)
    vanishes, preserved = bool(w[0] < 0.05), bool(w[1] >= 0.9)
    return Verdict(
        f"w(0.6) = {w[0]:.3f}, w(0.9) = {w[1]:.3f}, w(0.99) = {w[2]:.3f}",
        vanishes and preserved,
        f"an uncertain sentence at p = 0.6 keeps {100 * w[0]:.0f} % of its log-odds (the first half holds), but a "
        f"decisive one at p = 0.9 keeps only {100 * w[1]:.0f} %: the Bayes weight is kept only as p nears 0 or 1 "
        f"({100 * w[2]:.0f} % at 0.99)",
    )


def _against_hand(k: int) -> tuple[FusionBatch, np.ndarray, float]:
    """TEF of tefcore.fusion on random K-class posts, Eq. 3 by hand on them, and their largest |difference|."""
    p, doc = random_posts(k)
    b = fuse_many(p, doc, rule="tef")
    hand = _hand_score(p, doc)
    return b, hand, float(np.abs(b.scores - hand).max())


@check("tef-score")
def _tef_score(ev: Evidence) -> Verdict:
    b, _, gap = _against_hand(2)
    return Verdict(
        f"max |Δ| = {gap:.0e}",
        gap <= 1e-9 and bool(np.all(b.scores[:, 1] == -b.scores[:, 0])),
        f"Score(c) of {len(b)} random posts from tefcore.fusion against a hand sum of w_i ℓ(p_i^(c)) "
        "(scipy); Score(stability) = -Score(change) exactly",
    )


@check("argmax")
def _argmax_rule(ev: Evidence) -> Verdict:
    p, doc = random_posts(2, seed=1)
    hand = _hand_score(p, doc)
    pred = fuse_many(p, doc, rule="tef").prediction
    clear = np.abs(hand[:, 0]) > 1e-9
    want = np.where(hand[:, 0] >= 0, "change", "stability")
    agree = int((pred == want)[clear].sum())
    return Verdict(
        f"{agree} of {int(clear.sum())} posts",
        agree == int(clear.sum()),
        "prediction of tefcore.fusion against the argmax of the hand-computed scores (exact ties, "
        f"{int((~clear).sum())} posts, go to change as in the reference release)",
    )


@check("mv-sv")
def _mv_sv(ev: Evidence) -> Verdict:
    p, doc = random_posts(2, seed=2)
    starts, n = _starts(doc), np.bincount(doc)
    votes = np.where(p >= 0.5, "change", "stability")
    mode = [Counter(post).most_common(1)[0][0] for post in np.split(votes, starts[1:])]
    mean = np.add.reduceat(p, starts) / n
    mv = fuse_many(p, doc, rule="majority_vote").prediction == np.array(mode, dtype=object)
    sv = fuse_many(p, doc, rule="soft_vote").prediction == np.where(mean >= 0.5, "change", "stability")
    tied = int((2 * np.add.reduceat((p >= 0.5).astype(int), starts) == n).sum())
    return Verdict(
        f"MV {int(mv.sum())}/{mv.size}, SV {int(sv.sum())}/{sv.size}",
        bool(mv.all() and sv.all()),
        "MV: the mode of the hard labels, counted with collections.Counter.most_common as the reference "
        f"release counts them (a tie goes to the label voted first; {tied} tied posts); SV: the argmax of "
        "the mean probability; tefcore.fusion against counts and means by hand",
    )


@check("general-k")
def _general_k(ev: Evidence) -> Verdict:
    b, hand, gap = _against_hand(3)
    agree = int((b.index == hand.argmax(axis=1)).sum())
    return Verdict(
        f"K = 3: max |Δ| = {gap:.0e}",
        gap <= 1e-9 and agree == len(b),
        f"{len(b)} random 3-class posts: one-vs-rest scores of tefcore.fusion against Eq. 3 by hand "
        f"(w = 1 - H/log 3); the same argmax in {agree} of {len(b)}",
    )


K3_EXAMPLE = np.array([[0.05, 0.15, 0.80], [0.55, 0.40, 0.05]])
"""A post of two sentences over three classes on which Eq. 3 and the Bayes rule pick different classes."""


def _bayes_class(p: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """Argmax of the Bayes log-posterior Σ_i log p_i^(c) per post (equal priors)."""
    return np.add.reduceat(np.log(p), _starts(doc)).argmax(axis=1)


@check("k3-bayes")
def _k3_bayes(ev: Evidence) -> Verdict:
    pair = np.zeros(2, dtype=np.int64)
    eq3 = int(fuse_many(K3_EXAMPLE, pair, rule="tef_without_entropy").index[0])
    tef = int(fuse_many(K3_EXAMPLE, pair, rule="tef").index[0])
    bayes = int(_bayes_class(K3_EXAMPLE, pair)[0])
    p, doc = random_posts(3, n=5000, seed=3)
    truth = _bayes_class(p, doc)
    rates = {r: 100.0 * float(np.mean(fuse_many(p, doc, rule=r).index != truth)) for r in ("tef_without_entropy", "tef")}
    return Verdict(
        f"Eq. 3 picks c{eq3 + 1}, Bayes c{bayes + 1}",
        eq3 == bayes and rates["tef_without_entropy"] == 0,
        f"posts (0.05, 0.15, 0.80) and (0.55, 0.40, 0.05), equal priors: the one-vs-rest sum (w = 1) "
        f"picks c{eq3 + 1}, TEF c{tef + 1}, the Bayes log-posterior Σ log p_i^(c) c{bayes + 1}. On "
        f"{len(truth):,} random 3-class posts the argmax differs from Bayes in "
        f"{rates['tef_without_entropy']:.1f} % (w = 1) and {rates['tef']:.1f} % (TEF). "
        "For K = 2 the two coincide (Proposition 2)",
    )


@check("ablation-rules")
def _ablation_rules(ev: Evidence) -> Verdict:
    p, doc = random_posts(2, seed=4)
    starts = _starts(doc)
    lo = np.add.reduceat(clipped_log_odds(p), starts)
    w = entropy_weight(p)
    num, den = np.add.reduceat(w * p, starts), np.add.reduceat(w, starts)
    mw = np.where(den > 0, num / np.where(den > 0, den, 1), 0.5)
    ent = fuse_many(p, doc, rule="tef_without_entropy")
    lod = fuse_many(p, doc, rule="tef_without_log_odds")
    gap = float(max(np.abs(ent.scores[:, 0] - lo).max(), np.abs(lod.scores[:, 0] - mw).max()))
    return Verdict(
        f"max |Δ| = {gap:.0e}",
        gap <= 1e-9,
        f"{len(ent)} random posts: w/o Entropy = Σ ℓ(p_i), w/o Log-Odds = Σ w_i p_i / Σ w_i "
        "(0.5 when every w_i = 0), from tefcore.fusion and by hand",
    )


@check("voting-surrogates")
def _voting_surrogates(ev: Evidence) -> Verdict:
    ratio_sv = (0.999 - 0.5) / (0.95 - 0.5)  # Soft Vote's contribution p - 1/2
    ratio_lo = float(clipped_log_odds(0.999) / clipped_log_odds(0.95))
    mv = fuse_many([0.51, 0.999], [0, 1], rule="majority_vote").scores[:, 0]
    return Verdict(
        f"p = 0.999 vs 0.95: SV {ratio_sv:.2f}×, ℓ {ratio_lo:.2f}×",
        bool(mv[0] == mv[1] and ratio_sv < ratio_lo),
        "a sentence at 0.51 and one at 0.999 cast the same Majority Vote; Soft Vote's contribution "
        f"p - ½ is bounded by ½, so a sentence at 0.999 counts {ratio_sv:.2f} times one at 0.95 where "
        f"the log-odds count {ratio_lo:.2f} times",
    )


# --------------------------------------------------------------------------------------------------
# propositions
# --------------------------------------------------------------------------------------------------
@check("prop1")
def _prop1(ev: Evidence) -> Verdict:
    mu = np.linspace(0.25, 6.0, 24)
    infos = [sim.gaussian_information(mu, prior=pi) for pi in (0.5, 0.3)]
    gaps = [np.asarray(info.soft) - np.asarray(info.hard) for info in infos]
    low = float(min(g.min() for g in gaps))
    return Verdict(
        f"min I(Y;p) − I(Y;ŷ) = {low:.4f} nats",
        low >= 0.0,
        "exact mutual information of one Gaussian-shift sentence (tefcore.simulate."
        f"gaussian_information), {mu.size} strengths from 0.25 to 6, priors ½ and 0.3",
    )


@check("prop1-same-label")
def _same_label(ev: Evidence) -> Verdict:
    p = np.array([0.55, 0.95])
    c = entropy_weight(p) * clipped_log_odds(p)
    return Verdict(
        f"0.55 → {c[0]:.4f}, 0.95 → {c[1]:.2f}",
        bool(c[1] > 100 * c[0] > 0),
        "TEF's contribution w(p)ℓ(p) of two sentences with the same hard label (change)",
    )


@check("prop2")
def _prop2_equal(ev: Evidence) -> Verdict:
    p, doc, exact = gaussian_shift_posts(0.5)
    gap = float(np.abs(additive_log_odds(p, doc) - exact).max())
    return Verdict(
        f"max |Δ| = {gap:.0e}",
        gap <= 1e-8,
        f"{exact.size} posts of 1-8 calibrated, independent Gaussian-shift sentences: Σ ℓ(p_i) "
        "(tefcore.information.additive_log_odds) against the exact posterior log-odds computed from "
        "the joint Gaussian likelihood (scipy.stats.norm)",
    )


@check("prop2-prior")
def _prop2_prior(ev: Evidence) -> Verdict:
    prior = 0.3
    p, doc, exact = gaussian_shift_posts(prior, seed=6)
    gap = float(np.abs(additive_log_odds(p, doc, prior=prior) - exact).max())
    miss = float(np.abs(additive_log_odds(p, doc) - exact).max())
    return Verdict(
        f"π = {prior}: max |Δ| = {gap:.0e}",
        gap <= 1e-8 and miss > 1.0,
        "with unequal priors the identity needs the term −(N−1)ℓ(π): with it the sum matches the "
        f"exact posterior; the plain sum misses it by up to {miss:.2f} nats (N = "
        f"{int(np.bincount(doc).max())})",
    )


@check("bayes-rule")
def _bayes_rule(ev: Evidence) -> Verdict:
    c = sim.simulate_documents(20000, n_decisive=1, n_uncertain=4, rng=0)
    acc = {r: float(np.mean(fuse_many(c.p, c.doc_index, rule=r).prediction == c.y))
           for r in ("tef_without_entropy", "tef", "soft_vote", "majority_vote")}
    best_other = max(v for r, v in acc.items() if r != "tef_without_entropy")
    return Verdict(
        f"Σℓ {100 * acc['tef_without_entropy']:.1f} %, MV {100 * acc['majority_vote']:.1f} %",
        acc["tef_without_entropy"] >= best_other,
        f"{c.n_docs:,} simulated posts (1 decisive, 4 uncertain calibrated, independent sentences): "
        "accuracy of the log-odds sum (the Bayes rule) "
        + ", ".join(f"{r} {100 * v:.2f} %" for r, v in acc.items()),
    )


@check("soft-censoring")
def _soft_censoring(ev: Evidence) -> Verdict:
    strong, weak = 0.95, 0.45
    evidence = entropy_weight([strong, weak]) * clipped_log_odds([strong, weak])
    rate = float(evidence[0] / -evidence[1])
    n = int(math.floor(rate))
    flips = first_flips(strong, weak, range(40), rules=("majority_vote", "soft_vote")).to_dict()
    flips |= first_flips(strong, weak, [n, n + 1], rules=("tef",)).to_dict()  # a missing flip is None
    return Verdict(
        f"TEF: {flips['tef']:,} hedging sentences",
        flips["tef"] == n + 1 and n > 100 * max(flips["majority_vote"], flips["soft_vote"]),
        f"sentences at p = {weak} needed to overturn one at p = {strong}, decided by fuse_many: "
        f"Majority Vote {flips['majority_vote']}, Soft Vote {flips['soft_vote']}, TEF {flips['tef']:,} "
        f"(the ratio of the two tempered contributions is {rate:,.1f})",
    )


# --------------------------------------------------------------------------------------------------
# the MIND data card
# --------------------------------------------------------------------------------------------------
@check("mind-posts-sum")
def _posts_sum(ev: Evidence) -> Verdict:
    zh, en = FULL_RELEASE["zh"]["posts"], FULL_RELEASE["en"]["posts"]
    return Verdict(
        f"{int(zh):,} + {int(en):,} = {int(zh + en):,}",
        int(zh + en) == 8358,
        "the paper's two language counts (also the published counts of the release) add up",
    )


def _card_check(key: str, digits: int | None) -> Callable[[Evidence], Verdict]:
    """Check one statistic of the data card per language against the published full release."""

    def check(ev: Evidence) -> Verdict:
        got = {lang: ev.cards[lang][key] for lang in ("zh", "en")}
        shown = {lang: f"{v:,.{digits}f}" if digits is not None else f"{v:,}" for lang, v in got.items()}
        same = all(
            (round(float(got[lang]), digits) if digits is not None else got[lang]) == FULL_RELEASE[lang][key]
            for lang in ("zh", "en")
        )
        return on_data(ev, per_lang(shown), same, sample_confirms=False)

    return check


@check("release-pairs-by-dim")
def _pairs_by_dimension(ev: Evidence) -> Verdict:
    same = 0
    for lang in ("zh", "en"):
        counts = pair_counts(evaluation_pairs(ev.posts[lang]))
        for dim in TABLE_ORDER:
            same += sum(int(counts.loc[dim, side]) == FULL_RELEASE_PAIRS[lang][dim][i]
                        for i, side in enumerate(SIDES))
    return on_data(ev, f"{same} of 24 counts equal", same == 24, sample_confirms=False)


@check("mind-dimensions")
def _six_dimensions(ev: Evidence) -> Verdict:
    seen = {lang: {lab.dimension for p in posts for lab in p.labels} for lang, posts in ev.posts.items()}
    holds = len(DIMENSIONS) == 6 and all(s == set(TABLE_ORDER) for s in seen.values())
    return on_data(ev, per_lang({lang: f"{len(s)}" for lang, s in seen.items()}), holds, sample_confirms=True)


@check("mind-languages")
def _two_languages(ev: Evidence) -> Verdict:
    langs = {p.lang for posts in ev.posts.values() for p in posts}
    return on_data(ev, ", ".join(sorted(langs)), langs == set(LANGS) == {"zh", "en"}, sample_confirms=True)


@check("mind-events")
def _events(ev: Evidence) -> Verdict:
    counts = {lang: Counter(p.event for p in posts) for lang, posts in ev.posts.items()}
    holds = all(c["RU"] > 0 and c["GPT"] > 0 for c in counts.values())
    value = "RU " + per_lang({k: c["RU"] for k, c in counts.items()}) + "; GPT " + per_lang(
        {k: c["GPT"] for k, c in counts.items()})
    codes = sorted(set().union(*counts.values()))
    return on_data(ev, value, holds, sample_confirms=True, detail=f"; event codes present: {', '.join(codes)}")


@check("mind-subsets")
def _twelve_subsets(ev: Evidence) -> Verdict:
    subsets = {(pair.lang, pair.dimension) for posts in ev.posts.values() for pair in evaluation_pairs(posts)}
    return on_data(ev, f"{len(subsets)} subsets", len(subsets) == 12, sample_confirms=True)


@check("mind-deduplicated")
def _deduplicated(ev: Evidence) -> Verdict:
    dup = {lang: sum(n - 1 for n in Counter(p.text.strip() for p in posts).values())
           for lang, posts in ev.posts.items()}
    return on_data(ev, per_lang(dup) + " duplicates", not any(dup.values()), sample_confirms=False)


for _id, _key, _digits in (("mind-posts", "posts", None), ("release-labels", "labels", None), ("release-pairs", "pairs", None),
                           ("release-excluded", "excluded_pairs", None), ("release-length", "mean_length", 1),
                           ("release-sentences", "mean_sentences", 2)):
    check(_id)(_card_check(_key, _digits))
