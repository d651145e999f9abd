"""The claims of the paper's method and propositions (Sec. 3), each with its check."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from scipy.special import entr, logit

from tefcore import simulate as sim
from tefcore.fusion import CLIP, EPS, clipped_log_odds, fuse_many, entropy_weight
from tefcore.information import additive_log_odds
from tefcore.paper.evidence import RUNS, SECTIONS, Claim, Evidence, Verdict

_M, _P, _D, _H = SECTIONS[0], SECTIONS[1], SECTIONS[2], SECTIONS[3]
_T3, _T4, _T1, _T2, _F4 = SECTIONS[4], SECTIONS[5], SECTIONS[6], SECTIONS[7], SECTIONS[8]
_CH1, _CH2, _CH3, _CH4 = "01_derivation", "02_propositions", "03_mind_statistics", "04_extraction"
_CH5, _CH6, _CH7, _CH8, _CH9 = (
    "05_main_results", "06_ablation", "07_prompt_robustness", "08_efficiency", "09_calibration")
_RELEASE = "MIND release (published counts)"


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


def _entropy_weight(ev: Evidence) -> Verdict:
    p2 = np.linspace(0.0, 1.0, 101)
    p3, _ = sim.random_posts(3)
    w2, w3 = entropy_weight(p2), entropy_weight(p3)
    ref2 = 1 - (entr(p2) + entr(1 - p2)) / math.log(2)
    ref3 = 1 - entr(p3).sum(axis=1) / math.log(3)
    gap = float(max(np.abs(w2 - ref2).max(), np.abs(w3 - ref3).max()))
    inside = bool(min(w2.min(), w3.min()) >= 0 and max(w2.max(), w3.max()) <= 1)
    return Verdict(
        f"w(½) = {w2[50]:g}, w(0) = w(1) = {w2[0]:g}",
        gap <= 1e-12 and inside and w2[50] == 0 and w2[0] == w2[-1] == 1,
        f"K = 2 on a grid and K = 3 on {len(p3)} random distributions; largest |difference| from "
        f"1 - H/log K with scipy.special.entr: {gap:.1e}; all weights in [0, 1]: {inside}",
    )


def _tempering(ev: Evidence) -> Verdict:
    p = np.array([0.4, 0.6, 0.99, 0.999])
    w = entropy_weight(p)
    holds = bool(w[:2].max() < 0.05 and w[2:].min() > 0.9)
    return Verdict(
        f"w(0.6) = {w[1]:.3f}, w(0.99) = {w[2]:.3f}",
        holds,
        "read as: a sentence at p = 0.4 or 0.6 keeps under 5 % of its log-odds, one at p >= 0.99 over "
        f"90 %; w(0.999) = {w[3]:.3f}",
    )


def _tef_score(ev: Evidence) -> Verdict:
    p, doc = sim.random_posts(2)
    b = fuse_many(p, doc, rule="tef")
    hand = _hand_score(p, doc)
    gap = float(np.abs(b.scores - hand).max())
    return Verdict(
        f"max |Δ| = {gap:.0e}",
        gap <= 1e-9 and bool(np.all(b.scores[:, 1] == -b.scores[:, 0])),
        f"Score(c) of {len(b)} random posts from tefcore.fusion against a hand sum of w_i ℓ(p_i^(c)) "
        "(scipy); Score(stability) = -Score(change) exactly",
    )


def _argmax_rule(ev: Evidence) -> Verdict:
    p, doc = sim.random_posts(2, seed=1)
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


def _mv_sv(ev: Evidence) -> Verdict:
    p, doc = sim.random_posts(2, seed=2)
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


def _general_k(ev: Evidence) -> Verdict:
    p, doc = sim.random_posts(3)
    b = fuse_many(p, doc, rule="tef")
    hand = _hand_score(p, doc)
    gap = float(np.abs(b.scores - hand).max())
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


def _k3_bayes(ev: Evidence) -> Verdict:
    pair = np.zeros(2, dtype=np.int64)
    eq3 = int(fuse_many(K3_EXAMPLE, pair, rule="tef_without_entropy").index[0])
    tef = int(fuse_many(K3_EXAMPLE, pair, rule="tef").index[0])
    bayes = int(_bayes_class(K3_EXAMPLE, pair)[0])
    p, doc = sim.random_posts(3, n=5000, seed=3)
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


def _ablation_rules(ev: Evidence) -> Verdict:
    p, doc = sim.random_posts(2, seed=4)
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


def _same_label(ev: Evidence) -> Verdict:
    p = np.array([0.55, 0.95])
    c = entropy_weight(p) * clipped_log_odds(p)
    return Verdict(
        f"0.55 → {c[0]:.4f}, 0.95 → {c[1]:.2f}",
        bool(c[1] > 100 * c[0] > 0),
        "TEF's contribution w(p)ℓ(p) of two sentences with the same hard label (change)",
    )


def _prop2_equal(ev: Evidence) -> Verdict:
    p, doc, exact = sim.gaussian_shift_posts(0.5)
    gap = float(np.abs(additive_log_odds(p, doc) - exact).max())
    return Verdict(
        f"max |Δ| = {gap:.0e}",
        gap <= 1e-8,
        f"{exact.size} posts of 1-8 calibrated, independent Gaussian-shift sentences: Σ ℓ(p_i) "
        "(tefcore.information.additive_log_odds) against the exact posterior log-odds computed from "
        "the joint Gaussian likelihood (scipy.stats.norm)",
    )


def _prop2_prior(ev: Evidence) -> Verdict:
    prior = 0.3
    p, doc, exact = sim.gaussian_shift_posts(prior, seed=6)
    gap = float(np.abs(additive_log_odds(p, doc, prior=prior) - exact).max())
    miss = float(np.abs(additive_log_odds(p, doc) - exact).max())
    return Verdict(
        f"π = {prior}: max |Δ| = {gap:.0e}",
        gap <= 1e-8 and miss > 1.0,
        "with unequal priors the identity needs the term −(N−1)ℓ(π): with it the sum matches the "
        f"exact posterior; the plain sum misses it by up to {miss:.2f} nats (N = "
        f"{int(np.bincount(doc).max())})",
    )


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


def _first_flip(strong: float, weak: float, counts: range | list[int], rule: str) -> int | None:
    """The smallest n in ``counts`` for which one ``strong`` sentence and n ``weak`` ones flip the decision."""
    n = np.asarray(list(counts), dtype=np.int64)
    flat = np.concatenate([np.r_[strong, np.full(k, weak)] for k in n])
    pred = fuse_many(flat, np.repeat(np.arange(n.size), n + 1), rule=rule).prediction
    flipped = np.flatnonzero(pred != fuse_many([strong], [0], rule=rule).prediction[0])
    return int(n[flipped[0]]) if flipped.size else None


def _soft_censoring(ev: Evidence) -> Verdict:
    strong, weak = 0.95, 0.45
    evidence = entropy_weight([strong, weak]) * clipped_log_odds([strong, weak])
    rate = float(evidence[0] / -evidence[1])
    n = int(math.floor(rate))
    flips = {r: _first_flip(strong, weak, range(40), r) for r in ("majority_vote", "soft_vote")}
    flips["tef"] = _first_flip(strong, weak, [n, n + 1], "tef")
    return Verdict(
        f"TEF: {flips['tef']:,} hedging sentences",
        flips["tef"] == n + 1 and n > 100 * max(flips["majority_vote"], flips["soft_vote"]),
        f"sentences at p = {weak} needed to overturn one at p = {strong}, decided by fuse_many: "
        f"Majority Vote {flips['majority_vote']}, Soft Vote {flips['soft_vote']}, TEF {flips['tef']:,} "
        f"(the ratio of the two tempered contributions is {rate:,.1f})",
    )


METHOD_CLAIMS: list[Claim] = [
    # --- method -----------------------------------------------------------------------------------
    Claim("clipped-log-odds", _M, "Sec. 3, Alg. 1", "probabilities are clipped to [ε, 1−ε] before the "
          "logit, and log-odds values are clipped to [−M, M]", "ε = 10⁻⁶, M = 10", _CH1, RUNS,
          _clipped_log_odds),
    Claim("entropy-weight", _M, "Sec. 3 (Reliability Weighting)", "w_i = 1 − H(p_i)/log K ∈ [0, 1]",
          "[0, 1]", _CH1, RUNS, _entropy_weight),
    Claim("tempering", _M, "Abstract, Sec. 1", "the fused score nearly vanishes for uncertain sentences "
          "while preserving the Bayes-optimal weight of decisive evidence", "—", _CH1, RUNS, _tempering),
    Claim("tef-score", _M, "Sec. 3, Eq. 3", "Score(c) = Σ_i w_i log p_i^(c) / (1 − p_i^(c))", "—", _CH1,
          RUNS, _tef_score),
    Claim("argmax", _M, "Sec. 3, Alg. 1", "the final measurement outcome is argmax_c Score(c)", "—", _CH1,
          RUNS, _argmax_rule),
    Claim("mv-sv", _M, "Sec. 3, Eq. 2", "Majority Vote: the mode of the hard labels; Soft Vote: the argmax "
          "of the mean probability vector", "—", _CH1, RUNS, _mv_sv),
    Claim("general-k", _M, "Sec. 3, Eq. 3, Alg. 1", "categories c_1 … c_K, p_i ∈ Δ^(K−1), one-vs-rest "
          "log-odds per category", "any K", _CH1, RUNS, _general_k),
    Claim("k3-bayes", _M, "Sec. 3 (after Prop. 2)", "TEF uses the one-vs-rest transform g(p) = log p/(1−p) "
          "to implement this additive evidence scale", "—", _CH1, RUNS, _k3_bayes, expected=False),
    Claim("ablation-rules", _M, "Table 4 caption", "w/o Entropy keeps only the log-odds sum; w/o Log-Odds "
          "averages entropy-weighted probabilities", "—", _CH6, RUNS, _ablation_rules),
    Claim("voting-surrogates", _M, "Sec. 1", "majority voting keeps only the sign of each sentence "
          "judgment, and soft voting uses a bounded surrogate that underweights highly decisive "
          "sentences", "—", _CH1, RUNS, _voting_surrogates),
    # --- propositions -------------------------------------------------------------------------------
    Claim("prop1", _P, "Sec. 3, Prop. 1", "I(Y; p_i) ≥ I(Y; ŷ_i): hard voting can discard reliability "
          "information", "≥ 0", _CH2, RUNS, _prop1),
    Claim("prop1-same-label", _P, "Sec. 3 (after Prop. 1)", "two segments with the same hard label can "
          "contribute different amounts", "—", _CH1, RUNS, _same_label),
    Claim("prop2", _P, "Sec. 3, Prop. 2", "for a binary contrast with equal priors, calibrated "
          "conditionally independent segment posteriors add on the log-odds scale", "Σ ℓ(p_i)", _CH2,
          RUNS, _prop2_equal),
    Claim("prop2-prior", _P, "Sec. 3, Prop. 2 (its equal priors)", "the identity is stated for equal "
          "priors; with prior π the sum carries N − 1 extra prior terms", "—", _CH2, RUNS, _prop2_prior),
    Claim("bayes-rule", _P, "Sec. 1", "under conditional independence and calibrated sentence posteriors, "
          "the Bayes-optimal document-level rule sums sentence log-likelihood ratios", "—", _CH2, RUNS,
          _bayes_rule),
    Claim("soft-censoring", _P, "Sec. 3 (after Prop. 2)", "uncertain sentences do not accumulate by sheer "
          "number, while decisive sentences can determine the outcome even when they are few", "—", _CH1,
          RUNS, _soft_censoring),
]
