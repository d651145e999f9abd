r"""The claims ledger: every checkable claim of the paper, one row each, as data.

:data:`LEDGER` is a list of small :class:`Claim` objects. Each holds the paper's words and number,
where the paper says it, the chapter of the book that examines it, how it is checked (:data:`HOW`) and
a short check function that returns a :class:`Verdict`: our value, whether the claim holds (``None``
when it is not checked here) and a note saying how, or why not.

How a claim is checked:

* ``"reproduced on our runs"``: computed by this library on the MIND data at hand, on simulated
  detectors or on the fusion rules themselves;
* ``"recomputed from the paper's own tables"``: arithmetic on the paper's Tables 1-4
  (:mod:`tefcore.chapters.paper`);
* ``"GPU command"``: needs the paper's models; the note gives the command;
* ``"cannot be checked from the release"``: the note says why.

Claims about the full MIND release are checked when the data directory holds it
(``MIND_DATA_DIR``, see :func:`tefcore.mind.load.resolve_data_dir`); on the embedded sample the
ledger shows the sample's value and says that the full release is needed.

Each claim also records the verdict the ledger expects (``expected``): a few statements of the paper
do not hold on its own tables, and the ledger says so. A checked claim *fails* when its check gives
another verdict than the one recorded, or raises; :func:`assert_ledger` then raises, which fails the
book's ledger page and makes ``tef claims`` exit non-zero.

Examples
--------
>>> from tefcore.chapters.claims import LEDGER, evaluate_ledger
>>> len(LEDGER) >= 40
True
>>> row = evaluate_ledger([c for c in LEDGER if c.id == "gain-accuracy"]).iloc[0]
>>> row["value"], row["verdict"]
('4.465', 'holds')
"""

from __future__ import annotations

import html
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import entr, logit

from tefcore import simulate as sim
from tefcore.chapters import paper
from tefcore.fusion import CLIP, EPS, TEMPERATURE, clipped_log_odds, entropy_weight, fuse_many
from tefcore.information import additive_log_odds
from tefcore.mind.load import Post, evaluation_pairs, load_posts
from tefcore.mind.release import (
    DATA_KINDS,
    FULL_RELEASE,
    FULL_RELEASE_DIR,
    FULL_RELEASE_PAIRS,
    data_card,
    describe_data,
    is_full_release,
    pair_counts,
)
from tefcore.mind.schema import DIMENSIONS, LANGS, SIDES, TABLE_ORDER

__all__ = [
    "CANNOT",
    "FORMATS",
    "GPU",
    "RUNS",
    "TABLES",
    "HOW",
    "HOW_SHORT",
    "LEDGER",
    "SECTIONS",
    "Claim",
    "Evidence",
    "LedgerError",
    "Verdict",
    "assert_ledger",
    "claim_anchor",
    "claim_link",
    "evaluate_ledger",
    "failures",
    "format_ledger",
    "ledger_html",
    "summary_counts",
]

RUNS = "reproduced on our runs"
TABLES = "recomputed from the paper's own tables"
GPU = "GPU command"
CANNOT = "cannot be checked from the release"
HOW: tuple[str, ...] = (RUNS, TABLES, GPU, CANNOT)
"""How a claim is checked."""

HOW_SHORT: dict[str, str] = {RUNS: "runs", TABLES: "tables", GPU: "GPU", CANNOT: "n/a"}
"""Short labels of :data:`HOW` for compact tables."""

SECTIONS: tuple[str, ...] = (
    "Method (Sec. 3)",
    "Propositions 1 and 2 (Sec. 3)",
    "The MIND data card (Sec. 4)",
    "Headline numbers (Abstract, Sec. 1, Sec. 5)",
    "Table 3: main results",
    "Table 4: ablation",
    "Table 1: prompt robustness",
    "Table 2: efficiency",
    "Fig. 4: calibration",
)
"""Ledger sections, in the order of the ledger page."""

FORMATS: tuple[str, ...] = ("text", "csv", "markdown", "json")

HOLDS, NOT_HOLD, NOT_CHECKED, FAILS = "holds", "does not hold", "not checked", "FAILS"
SAMPLE, FULL, CUSTOM = DATA_KINDS
_SLACK = 1e-9  # floating-point slack on comparisons of printed one-decimal numbers
_ID = re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*")


# --------------------------------------------------------------------------------------------------
# the objects
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """The outcome of one check.

    Attributes
    ----------
    value : str
        Our value, as printed in the ledger.
    holds : bool or None
        Whether the claim holds; ``None`` when it is not checked here.
    note : str
        How it was computed, or why it is not checked.
    """

    value: str
    holds: bool | None
    note: str = ""


class Evidence:
    """What the checks read, loaded once and on demand: the paper's tables and the MIND data at hand.

    Parameters
    ----------
    tables : mapping of str to DataFrame, optional
        The paper's tables as :func:`tefcore.chapters.paper.load_tables` returns them; read from
        ``paper_dir`` when omitted.
    paper_dir : str or Path, optional
        Directory of the paper's CSV tables (default: the tables shipped with the package).
    data_dir : str or Path, optional
        MIND data directory (default: ``$MIND_DATA_DIR``, else the embedded sample).
    """

    def __init__(
        self,
        tables: Mapping[str, pd.DataFrame] | None = None,
        *,
        paper_dir: str | Path | None = None,
        data_dir: str | Path | None = None,
    ) -> None:
        self._given = dict(tables) if tables is not None else None
        self.paper_dir = paper_dir or None
        self.data_dir = data_dir or None

    @cached_property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Tables 1-4, keyed ``table1`` .. ``table4``."""
        return self._given if self._given is not None else paper.load_tables(self.paper_dir)

    def table(self, number: int) -> pd.DataFrame:
        """Table ``number`` (1-4) of the paper, tidy."""
        return self.tables[f"table{number}"]

    @cached_property
    def posts(self) -> dict[str, list[Post]]:
        """The posts of the data at hand, per language."""
        return {lang: load_posts(lang, self.data_dir) for lang in ("zh", "en")}

    @cached_property
    def cards(self) -> dict[str, dict]:
        """:func:`tefcore.mind.release.data_card` (reference segmentation) per language."""
        return {lang: data_card(posts) for lang, posts in self.posts.items()}

    @cached_property
    def dataset(self) -> str:
        """``"full MIND release"``, ``"MIND sample"`` or ``"custom data"``.

        The full release is recognised by its number of posts alone, so that its other published
        counts remain claims to check; otherwise :func:`tefcore.mind.release.describe_data` decides.
        """
        if is_full_release({lang: len(p) for lang, p in self.posts.items()}):
            return FULL
        return describe_data(self.data_dir).kind


@dataclass(frozen=True)
class Claim:
    """One checkable claim of the paper.

    Attributes
    ----------
    id : str
        Stable identifier (lower case, ``-`` and ``.``); the ledger page's anchor is
        :func:`claim_anchor` of it.
    section : str
        One of :data:`SECTIONS`.
    where : str
        Where the paper says it.
    words : str
        The paper's words (quoted or closely paraphrased).
    number : str
        The paper's number, or ``"—"``.
    chapter : str
        Stem of the chapter that examines it (``"05_main_results"``).
    how : str
        One of :data:`HOW`.
    check : callable
        ``check(evidence) -> Verdict``.
    expected : bool
        The verdict the ledger records for a checked claim: ``False`` for the statements that do not
        hold on the paper's own tables.
    """

    id: str
    section: str
    where: str
    words: str
    number: str
    chapter: str
    how: str
    check: Callable[[Evidence], Verdict]
    expected: bool = True

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.id):
            raise ValueError(f"claim id {self.id!r} must be lower-case words joined by '-' or '.'")
        if self.how not in HOW:
            raise ValueError(f"claim {self.id}: how must be one of {HOW}, got {self.how!r}")
        if self.section not in SECTIONS:
            raise ValueError(f"claim {self.id}: unknown section {self.section!r}")


class LedgerError(AssertionError):
    """Raised by :func:`assert_ledger` when a checked claim does not give the recorded verdict."""


# --------------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------------
def _f(x: float, digits: int = 1) -> str:
    return f"{x:.{digits}f}"


def _close(a: float, b: float) -> bool:
    """Within the rounding of a number printed with one decimal."""
    return abs(a - b) <= paper.ROUNDING_TOLERANCE + _SLACK


def _gpu(command: str, what: str) -> Callable[[Evidence], Verdict]:
    def check(ev: Evidence) -> Verdict:
        return Verdict("—", None, f"needs {what}: {command}")

    return check


def _cannot(reason: str) -> Callable[[Evidence], Verdict]:
    def check(ev: Evidence) -> Verdict:
        return Verdict("—", None, reason)

    return check


def _starts(doc: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])


def _hand_score(p: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """Eq. 3 by hand: clipped log-odds from scipy.special.logit, weights from scipy.special.entr."""
    k = 2 if p.ndim == 1 else p.shape[1]
    dist = np.column_stack([p, 1 - p]) if p.ndim == 1 else p
    w = 1.0 - entr(dist).sum(axis=1) / math.log(k)
    ell = np.clip(logit(np.clip(dist, 1e-6, 1 - 1e-6)), -10.0, 10.0)
    return np.add.reduceat(w[:, None] * ell, _starts(doc))


def _per_lang(values: Mapping[str, object]) -> str:
    return " / ".join(f"{values[lang]} {lang}" for lang in ("zh", "en"))


def _on_data(ev: Evidence, value: str, holds: bool, *, sample_confirms: bool) -> Verdict:
    """A data-card verdict: checked on the full release, and on the sample where a sample can confirm."""
    if ev.dataset == FULL or (sample_confirms and ev.dataset == SAMPLE):
        return Verdict(value, holds, f"on the {ev.dataset}")
    why = "the claim is about MIND" if ev.dataset == CUSTOM else "needs the full release (tef download)"
    return Verdict(value, None, f"{why}; the value is that of the {ev.dataset}")


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


def _k3_bayes(ev: Evidence) -> Verdict:
    from tefcore.chapters import theory

    example = theory.K3_EXAMPLE
    eq3 = int(fuse_many(example, [0, 0], rule="tef_without_entropy").index[0])
    tef = int(fuse_many(example, [0, 0], rule="tef").index[0])
    bayes = int(theory.bayes_log_posterior(example, [0, 0]).argmax(axis=1)[0])
    rates, n = theory.k3_disagreement()
    return Verdict(
        f"Eq. 3 picks c{eq3 + 1}, Bayes c{bayes + 1}",
        eq3 == bayes and rates["tef_without_entropy"] == 0,
        f"posts (0.05, 0.15, 0.80) and (0.55, 0.40, 0.05), equal priors: the one-vs-rest sum (w = 1) "
        f"picks c{eq3 + 1}, TEF c{tef + 1}, the Bayes log-posterior Σ log p_i^(c) c{bayes + 1}. On "
        f"{n:,} random 3-class posts the argmax differs from Bayes in "
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


def _soft_censoring(ev: Evidence) -> Verdict:
    from tefcore.chapters.theory import first_flips

    strong, weak = 0.95, 0.45
    evidence = entropy_weight([strong, weak]) * clipped_log_odds([strong, weak])
    rate = float(evidence[0] / -evidence[1])
    n = int(math.floor(rate))
    flips = first_flips(strong, weak, range(40), rules=("majority_vote", "soft_vote")).to_dict()
    flips["tef"] = first_flips(strong, weak, [n, n + 1], rules=("tef",))["tef"]
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
        return _on_data(ev, _per_lang(shown), same, sample_confirms=False)

    return check


def _pairs_by_dimension(ev: Evidence) -> Verdict:
    same = 0
    for lang in ("zh", "en"):
        counts = pair_counts(evaluation_pairs(ev.posts[lang]))
        for dim in TABLE_ORDER:
            same += sum(int(counts.loc[dim, side]) == FULL_RELEASE_PAIRS[lang][dim][i]
                        for i, side in enumerate(SIDES))
    return _on_data(ev, f"{same} of 24 counts equal", same == 24, sample_confirms=False)


def _six_dimensions(ev: Evidence) -> Verdict:
    seen = {lang: {lab.dimension for p in posts for lab in p.labels} for lang, posts in ev.posts.items()}
    holds = len(DIMENSIONS) == 6 and all(s == set(TABLE_ORDER) for s in seen.values())
    return _on_data(ev, _per_lang({lang: f"{len(s)}" for lang, s in seen.items()}), holds, sample_confirms=True)


def _two_languages(ev: Evidence) -> Verdict:
    langs = {p.lang for posts in ev.posts.values() for p in posts}
    return _on_data(ev, ", ".join(sorted(langs)), langs == set(LANGS) == {"zh", "en"}, sample_confirms=True)


def _events(ev: Evidence) -> Verdict:
    counts = {lang: Counter(p.event for p in posts) for lang, posts in ev.posts.items()}
    holds = all(c["RU"] > 0 and c["GPT"] > 0 for c in counts.values())
    value = "RU " + _per_lang({k: c["RU"] for k, c in counts.items()}) + "; GPT " + _per_lang(
        {k: c["GPT"] for k, c in counts.items()})
    verdict = _on_data(ev, value, holds, sample_confirms=True)
    codes = sorted(set().union(*counts.values()))
    return Verdict(verdict.value, verdict.holds, f"{verdict.note}; event codes present: {', '.join(codes)}")


def _twelve_subsets(ev: Evidence) -> Verdict:
    subsets = {(pair.lang, pair.dimension) for posts in ev.posts.values() for pair in evaluation_pairs(posts)}
    return _on_data(ev, f"{len(subsets)} subsets", len(subsets) == 12, sample_confirms=True)


def _deduplicated(ev: Evidence) -> Verdict:
    dup = {lang: sum(n - 1 for n in Counter(p.text.strip() for p in posts).values())
           for lang, posts in ev.posts.items()}
    return _on_data(ev, _per_lang(dup) + " duplicates", not any(dup.values()), sample_confirms=False)


# --------------------------------------------------------------------------------------------------
# headline numbers (Table 3)
# --------------------------------------------------------------------------------------------------
def _gain(metric: str, stated: float) -> Callable[[Evidence], Verdict]:
    def check(ev: Evidence) -> Verdict:
        got = paper.average_gain(ev.table(3), level="model_lang")[metric]
        return Verdict(
            _f(got, 3),
            _close(got, stated),
            "the strongest of Direct, MV and SV chosen per model and language after averaging the six "
            "dimensions, the ten gains then averaged",
        )

    return check


def _gain_per_cell(ev: Evidence) -> Verdict:
    cell = paper.average_gain(ev.table(3), level="cell")
    model = paper.average_gain(ev.table(3), level="model")
    return Verdict(
        f"{_f(cell['accuracy'], 2)} / {_f(cell['macro_f1'], 2)}",
        _close(cell["accuracy"], 4.5) and _close(cell["macro_f1"], 4.6),
        "the strongest baseline chosen per (model, language, dimension) cell instead; per model with "
        f"both languages pooled (as Table 1 does): {_f(model['accuracy'], 3)} / {_f(model['macro_f1'], 3)}",
    )


def _gain_table1(ev: Evidence) -> Verdict:
    margin = float(paper.prompt_robustness_summary(ev.table(1))["margin_original"].mean())
    return Verdict(_f(margin, 2), _close(margin, 4.5), "mean of Ours − Strongest baseline, Original column")


def _best_every_model(ev: Evidence) -> Verdict:
    ml = paper.strongest_baseline_gain(ev.table(3), level="model_lang")
    n = int((ml["gain"] > 0).sum())
    return Verdict(
        f"{n} of {len(ml)}",
        n == len(ml) == 20,
        "Average accuracy and macro-F1 per model and language (5 × 2 × 2); smallest margin "
        f"{_f(ml['gain'].min(), 2)} ({', '.join(map(str, ml['gain'].idxmin()))})",
    )


def _best_or_tied(ev: Evidence) -> Verdict:
    won, total = paper.best_or_tied(ev.table(3))
    lost = paper.shortfalls(ev.table(3))
    return Verdict(
        f"{won} of {total}",
        (won, total) == (116, 120),
        "TEF trails in: " + "; ".join(f"{' '.join(k)} by {_f(s)}" for k, s in lost["shortfall"].items()),
    )


def _shortfall(ev: Evidence) -> Verdict:
    lost = paper.shortfalls(ev.table(3))
    worst = float(lost["shortfall"].max()) if len(lost) else 0.0
    where = " ".join(lost["shortfall"].idxmax()) if len(lost) else "nowhere"
    return Verdict(_f(worst), worst <= 2.6 + _SLACK, f"largest shortfall: {where}")


def _voting_direct(ev: Evidence) -> Verdict:
    vd = paper.voting_versus_direct(ev.table(3))
    mv, sv = (vd.loc[r].to_dict() for r in ("majority_vote", "soft_vote"))
    mv, sv = ({k: int(v) if k != "mean_difference" else v for k, v in d.items()} for d in (mv, sv))
    return Verdict(
        f"MV {mv['better']}/120, SV {sv['better']}/120 better",
        bool((vd["better"] < 120).all() and (vd["worse"] > 0).all()),
        f"cells where voting beats / ties / trails Direct: MV {mv['better']}/{mv['tied']}/{mv['worse']}, "
        f"SV {sv['better']}/{sv['tied']}/{sv['worse']}; mean difference MV {_f(mv['mean_difference'], 2)}, "
        f"SV {_f(sv['mean_difference'], 2)} points",
    )


def _gains_models(ev: Evidence) -> Verdict:
    by_model = paper.gain_by_group(ev.table(3), ["model"])
    top = list(by_model.index[:2])
    return Verdict(
        ", ".join(paper.MODEL_LABELS[m] for m in top),
        set(top) == {"qwen2.5-7b", "llama3-8b"},
        "largest mean cell-level accuracy gains: "
        + ", ".join(f"{paper.MODEL_LABELS[m]} {_f(v, 2)}" for m, v in by_model.items()),
    )


def _gains_dimensions(ev: Evidence) -> Verdict:
    by = paper.gain_by_group(ev.table(3), ["lang", "dimension"])
    zh, en = list(by.xs("zh", level="lang").index[:2]), list(by.xs("en", level="lang").index[:1])
    return Verdict(
        f"zh {', '.join(zh)}; en {', '.join(en)}",
        set(zh) == {"Culture", "Politics"} and en == ["Environment"],
        "largest mean cell-level accuracy gains per language: "
        + "; ".join(f"{lang} {d} {_f(v, 2)}" for (lang, d), v in list(by.items())[:4]),
    )


def _direct_strong(ev: Evidence) -> Verdict:
    gains = paper.strongest_baseline_gain(ev.table(3), level="cell").xs("accuracy", level="metric")
    direct = paper.main_results_wide(ev.table(3)).xs("accuracy", level="metric")["direct"]
    strong = direct.reindex(gains.index) >= 80.0
    inside, outside = float(gains["gain"][strong].mean()), float(gains["gain"][~strong].mean())
    return Verdict(
        f"{_f(inside, 2)} vs {_f(outside, 2)} points",
        abs(inside) < 1.0 and outside > 4 * abs(inside),
        f"read as: mean accuracy gain over the strongest baseline in the {int(strong.sum())} cells where "
        f"Direct reaches 80 % against the {int((~strong).sum())} others",
    )


# --------------------------------------------------------------------------------------------------
# Table 3 marks
# --------------------------------------------------------------------------------------------------
def _marked_cells(ev: Evidence, ranking: str) -> set[tuple[str, ...]]:
    check = paper.typesetting_check(ev.table(3), ranking=ranking)
    return set(map(tuple, check[["model", "lang", "dimension", "metric"]].to_numpy()))


def _bold(ev: Evidence) -> Verdict:
    dense = paper.typesetting_check(ev.table(3), ranking="dense")
    wrong = int(((dense["typeset"] == "bold") | (dense["expected"] == "bold")).sum())
    return Verdict(f"{120 - wrong} of 120 cells", wrong == 0, "bold against the ranking of each cell's numbers")


def _underline(ev: Evidence) -> Verdict:
    dense, comp = _marked_cells(ev, "dense"), _marked_cells(ev, "competition")
    neither = sorted(dense & comp)
    return Verdict(
        f"{len(neither)} cells fit neither",
        not neither,
        f"underlines differ from dense ranking in {len(dense)} cells and from competition ranking (ties "
        f"for best leave no second) in {len(comp)}; neither fits: " + "; ".join(" ".join(c) for c in neither),
    )


# --------------------------------------------------------------------------------------------------
# Table 4
# --------------------------------------------------------------------------------------------------
def _t4_averages(ev: Evidence) -> Verdict:
    avg = paper.table4_average_check(ev.table(4))
    qwen = avg.loc[("qwen2.5-7b", "zh", "tef", "accuracy")]
    return Verdict(
        f"{int(avg['consistent'].sum())} of {len(avg)}",
        bool(avg["consistent"].all()),
        f"printed Average against the mean of the six dimensions; largest |difference| "
        f"{_f(avg['difference'].abs().max(), 3)} (Qwen2.5-7B zh TEF accuracy: printed "
        f"{_f(qwen['printed'])}, mean {_f(qwen['recomputed'], 2)})",
    )


def _t4_equals_t3(ev: Evidence) -> Verdict:
    keys = ["model", "lang", "dimension", "method", "metric"]
    ours = ev.table(4)[(ev.table(4)["method"] == "tef") & (ev.table(4)["dimension"] != "Average")]
    merged = ours.merge(ev.table(3)[ev.table(3)["method"] == "tef"], on=keys, suffixes=("_4", "_3"))
    diff = float((merged["value_4"] - merged["value_3"]).abs().max())
    return Verdict(
        f"{len(merged)} numbers, max |Δ| {_f(diff, 1)}",
        len(merged) == 48 and diff <= _SLACK,
        "Table 4's full-TEF rows against Table 3's TEF rows",
    )


def _largest_drop(ev: Evidence) -> Verdict:
    drops = paper.ablation_drops(ev.table(4)).xs("accuracy", level="metric")
    at = ("deepseek-v3.2", "en", "Environment")
    d_ent, d_lo = (float(drops.loc[at, c]) for c in ("drop_without_entropy", "drop_without_log_odds"))
    largest = drops[["drop_without_entropy", "drop_without_log_odds"]].idxmax()
    return Verdict(
        f"{_f(d_ent)} / {_f(d_lo)}",
        _close(d_ent, 22.9) and _close(d_lo, 23.8) and all(ix == at for ix in largest),
        "TEF minus each ablation, DeepSeek-V3.2 English Environment accuracy; the largest drops of "
        "Table 4 are at " + "; ".join(f"{k.removeprefix('drop_')}: {' '.join(v)}" for k, v in largest.items()),
    )


def _deepseek_below_sv(ev: Evidence) -> Verdict:
    ds = paper.ablation_versus_soft_vote(ev.table(3), ev.table(4)).loc["deepseek-v3.2"]
    cols = ["margin_tef_without_entropy", "margin_tef_without_log_odds"]
    below = {m: int((ds.xs(m, level="metric")[cols] < 0).to_numpy().sum()) for m in paper.METRICS}
    acc = ds.xs("accuracy", level="metric")
    return Verdict(
        f"{below['accuracy']} of 4 below",
        all(n == 4 for n in below.values()),
        f"below Soft Vote in {below['macro_f1']} of 4 in macro-F1 too; Average accuracy of each ablation "
        "minus Soft Vote's (Table 3), zh / en: "
        + ", ".join(f"{c.removeprefix('margin_')} {_f(acc.loc['zh', c], 2)} / {_f(acc.loc['en', c], 2)}"
                    for c in cols),
    )


def _qwen_retains(ev: Evidence) -> Verdict:
    qw = paper.ablation_versus_soft_vote(ev.table(3), ev.table(4)).loc["qwen2.5-7b"]
    kept = qw[["retained_tef_without_entropy", "retained_tef_without_log_odds"]].to_numpy()
    return Verdict(
        f"{100 * kept.min():.0f}–{100 * kept.max():.0f} %",
        bool((kept > 0.5).all()),
        "share of TEF's Average margin over Soft Vote that each ablation keeps, per language and "
        "metric; read 'most' as more than half",
    )


def _ablations_below_tef(ev: Evidence) -> Verdict:
    drops = paper.ablation_drops(ev.table(4))[["drop_without_entropy", "drop_without_log_odds"]].to_numpy()
    ok = int((drops >= -_SLACK).sum())
    return Verdict(f"{ok} of {drops.size}", ok == drops.size, "cells where full TEF >= the ablation")


# --------------------------------------------------------------------------------------------------
# Table 1
# --------------------------------------------------------------------------------------------------
def _t1_from_t3(ev: Evidence) -> Verdict:
    rec = paper.table1_from_table3(ev.table(3))
    orig = ev.table(1)[ev.table(1)["prompt"] == "original"].pivot(index="model", columns="method", values="value")
    diff = pd.concat([
        (orig["strongest_baseline"] - rec["strongest_baseline"]).abs(),
        (orig["tef"] - rec["tef"]).abs(),
    ])
    return Verdict(
        f"10 numbers, max |Δ| {_f(float(diff.max()), 3)}",
        len(diff.dropna()) == 10 and float(diff.max()) <= paper.ROUNDING_TOLERANCE + _SLACK,
        "Table 3's accuracy averaged over dimensions and both languages, strongest baseline chosen "
        "after averaging: " + ", ".join(f"{paper.MODEL_LABELS[m]} {rec.loc[m, 'strongest_method']}"
                                        for m in rec.index),
    )


def _prompt_margins(ev: Evidence) -> pd.DataFrame:
    pr = paper.prompt_robustness_summary(ev.table(1))
    return pr[[f"margin_{p}" for p in ("original", "verbose", "minimal")]]


def _prompt_best(ev: Evidence) -> Verdict:
    m = _prompt_margins(ev).to_numpy()
    return Verdict(
        f"{int((m > 0).sum())} of {m.size}",
        bool((m > 0).all()) and m.size == 15,
        f"Ours − Strongest baseline per model and prompt: {_f(m.min())} to {_f(m.max())} points",
    )


def _prompt_least(ev: Evidence) -> Verdict:
    pr = paper.prompt_robustness_summary(ev.table(1))
    less = [pr[f"drop_tef_{p}"] <= pr[f"drop_strongest_baseline_{p}"] + _SLACK for p in ("verbose", "minimal")]
    n = int(sum(s.sum() for s in less))
    return Verdict(
        f"{n} of 10",
        n == 10,
        "loss from the original prompt, TEF against the strongest baseline (the only other column "
        "Table 1 prints), 5 models × 2 perturbed prompts",
    )


# --------------------------------------------------------------------------------------------------
# Table 2
# --------------------------------------------------------------------------------------------------
def _same_tokens(ev: Evidence) -> Verdict:
    eff = paper.efficiency_summary(ev.table(2))
    return Verdict(
        f"{int(eff['tokens_equal'].sum())} of {len(eff)} models",
        bool(eff["tokens_equal"].all()),
        "Tokens (M) of Ours against Voting in Table 2",
    )


def _ttft(ev: Evidence) -> Verdict:
    dt = paper.efficiency_summary(ev.table(2))["ttft_tef_minus_voting"]
    return Verdict(
        " / ".join(f"{_f(v)} ms" for v in dt),
        bool((dt.abs() <= 2.5).all()),
        "TTFT of Ours minus Voting (" + ", ".join(paper.MODEL_LABELS[m] for m in dt.index)
        + "); 'about two' read as at most 2.5 ms",
    )


def _cost(ev: Evidence) -> Verdict:
    eff = paper.efficiency_summary(ev.table(2))
    cr = eff[["cost_ratio_voting", "cost_ratio_tef"]].to_numpy()
    return Verdict(
        f"{_f(cr.min(), 2)}–{_f(cr.max(), 2)}×",
        bool(((cr >= 2.5) & (cr <= 3.5)).all()),
        "cost of Voting and Ours over Direct's; 'roughly three' read as 2.5-3.5×; their tokens are "
        f"{_f(eff['token_ratio'].min())}-{_f(eff['token_ratio'].max())}× Direct's",
    )


def _overhead_pays(ev: Evidence) -> Verdict:
    wide = paper.main_results_wide(ev.table(3))
    better = {m: int((wide[m] - wide["direct"] > _SLACK).sum()) for m in ("majority_vote", "soft_vote", "tef")}
    worse = {m: int((wide[m] - wide["direct"] < -_SLACK).sum()) for m in better}
    return Verdict(
        f"TEF {better['tef']}, SV {better['soft_vote']}, MV {better['majority_vote']} of 120",
        better["tef"] >= 90 and max(better["soft_vote"], better["majority_vote"]) <= 60,
        "cells of Table 3 where each sentence-level rule beats Direct (trails it: "
        + ", ".join(f"{m} {v}" for m, v in worse.items())
        + "); read 'consistently' as in at least 3 of 4 cells, and 'only' as the voting rules in at most half",
    )


# --------------------------------------------------------------------------------------------------
# the ledger
# --------------------------------------------------------------------------------------------------
def _reproduce(model: str, prompts: str = "original") -> str:
    """The ``tef reproduce`` line on the full release with the reference release's reading of the
    answer token, as the paper's numbers were made (generated by :mod:`tefcore.reproduce`)."""
    from tefcore.chapters.commands import reproduce_command

    return reproduce_command(model, tuple(prompts.split(",")), ("en", "zh"), data_dir=FULL_RELEASE_DIR,
                             reading="reference")


_M, _P, _D, _H = SECTIONS[0], SECTIONS[1], SECTIONS[2], SECTIONS[3]
_T3, _T4, _T1, _T2, _F4 = SECTIONS[4], SECTIONS[5], SECTIONS[6], SECTIONS[7], SECTIONS[8]
_CH1, _CH2, _CH3, _CH4 = "01_derivation", "02_propositions", "03_mind_statistics", "04_extraction"
_CH5, _CH6, _CH7, _CH8, _CH9 = (
    "05_main_results", "06_ablation", "07_prompt_robustness", "08_efficiency", "09_calibration")
_RELEASE = "MIND release (published counts)"

LEDGER: list[Claim] = [
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
    # --- data card ---------------------------------------------------------------------------------
    Claim("mind-posts-sum", _D, "Abstract, Sec. 4", "8,358 posts, including 5,474 Chinese posts and "
          "2,884 English posts", "8,358", _CH3, TABLES, _posts_sum),
    Claim("mind-posts", _D, "Sec. 4", "5,474 Chinese posts and 2,884 English posts", "5,474 / 2,884", _CH3,
          RUNS, _card_check("posts", None)),
    Claim("mind-dimensions", _D, "Abstract, Sec. 4", "six value dimensions", "6", _CH3, RUNS,
          _six_dimensions),
    Claim("mind-languages", _D, "Sec. 1, Sec. 4", "a cross-lingual benchmark of Chinese and English posts",
          "2", _CH3, RUNS, _two_languages),
    Claim("mind-events", _D, "Sec. 4 (Stage I)", "covering major public events such as the Russia–Ukraine "
          "war and the rise of generative AI", "—", _CH3, RUNS, _events),
    Claim("mind-subsets", _D, "Table 2 caption", "the twelve evaluation subsets (language × dimension)",
          "12", _CH3, RUNS, _twelve_subsets),
    Claim("mind-deduplicated", _D, "Sec. 4 (Stage I)", "raw posts are … anonymized, de-duplicated", "0",
          _CH3, RUNS, _deduplicated),
    Claim("mind-period", _D, "Abstract, Sec. 4", "posts from January 2020 to January 2025, five years of "
          "public events", "5 years", _CH3, CANNOT,
          _cannot("records carry an event code but no date")),
    Claim("mind-sources", _D, "Sec. 4 (Stage I)", "posts from X, Weibo, Reddit, Zhihu, discussion forums "
          "and news feeds", "6 sources", _CH3, CANNOT, _cannot("records carry no source")),
    Claim("mind-annotation", _D, "Sec. 4 (Stage II)", "three annotation rounds, three annotators each, a "
          "label accepted when at least two agree", "3 × 3, ≥ 2", _CH3, CANNOT,
          _cannot("the release has the accepted labels only, no annotator or round")),
    Claim("mind-agents", _D, "Sec. 4 (Stage III)", "a balancing agent generates synthetic samples; a "
          "semantic-edit agent revises ambiguous texts", "—", _CH3, CANNOT,
          _cannot("records do not mark synthetic or edited posts, so their share is unknown")),
    Claim("mind-figure", _D, "Fig. 3", "radial bars report the number of labels for each value "
          "orientation", "—", _CH3, CANNOT,
          _cannot("the figure prints no numbers; chapter 3 draws the counts of the data at hand")),
    Claim("release-labels", _D, _RELEASE, "labels of the full release", "11,762 / 4,919", _CH3, RUNS,
          _card_check("labels", None)),
    Claim("release-pairs", _D, _RELEASE, "evaluation pairs (post, dimension) of the full release",
          "10,330 / 4,621", _CH3, RUNS, _card_check("pairs", None)),
    Claim("release-excluded", _D, _RELEASE, "pairs whose labels fall on both sides (no target)",
          "208 / 40", _CH3, RUNS, _card_check("excluded_pairs", None)),
    Claim("release-pairs-by-dim", _D, _RELEASE, "change / stability pairs per language and dimension",
          "24 counts", _CH3, RUNS, _pairs_by_dimension),
    Claim("release-length", _D, _RELEASE, "mean post length, characters (zh) and words (en)",
          "138.2 / 86.8", _CH3, RUNS, _card_check("mean_length", 1)),
    Claim("release-sentences", _D, _RELEASE, "mean sentences per post under the reference segmentation",
          "4.35 / 5.84", _CH3, RUNS, _card_check("mean_sentences", 2)),
    # --- headline numbers -----------------------------------------------------------------------------
    Claim("gain-accuracy", _H, "Abstract, Sec. 1, Sec. 5", "TEF outperforms the strongest baseline among "
          "Direct, Majority Vote and Soft Vote by an average of 4.5 accuracy points", "4.5", _CH5, TABLES,
          _gain("accuracy", 4.5)),
    Claim("gain-macro-f1", _H, "Abstract, Sec. 1, Sec. 5", "… and 4.6 macro-F1 points across five LLMs and "
          "two languages", "4.6", _CH5, TABLES, _gain("macro_f1", 4.6)),
    Claim("gain-per-cell", _H, "Abstract, Sec. 5", "the same average gain with the strongest baseline "
          "chosen per dimension", "4.5 / 4.6", _CH5, TABLES, _gain_per_cell, expected=False),
    Claim("gain-table1", _H, "Abstract, Table 1", "the accuracy gain, from Table 1's Original column",
          "4.5", _CH7, TABLES, _gain_table1),
    Claim("best-every-model", _H, "Sec. 5 (Main Results), Sec. 6", "TEF has the highest accuracy and "
          "macro-F1 for every model in both languages", "20 of 20", _CH5, TABLES, _best_every_model),
    Claim("best-or-tied", _H, "Sec. 5 (Main Results)", "TEF is the best or tied for best in 116 of 120 "
          "comparisons", "116 of 120", _CH5, TABLES, _best_or_tied),
    Claim("max-shortfall", _H, "Sec. 5 (Main Results)", "never trails the strongest baseline by more than "
          "2.6 points", "2.6", _CH5, TABLES, _shortfall),
    Claim("voting-vs-direct", _H, "Sec. 5 (Main Results)", "equal-weight voting, whether hard or soft, does "
          "not consistently improve on Direct", "—", _CH5, TABLES, _voting_direct),
    Claim("gains-models", _H, "Sec. 5 (Main Results)", "the gains of TEF concentrate … on the smaller "
          "open-source models", "—", _CH5, TABLES, _gains_models),
    Claim("gains-dimensions", _H, "Sec. 5 (Main Results)", "… on culture and politics in Chinese, and on "
          "environment in English", "—", _CH5, TABLES, _gains_dimensions),
    Claim("direct-strong", _H, "Sec. 5 (Main Results)", "on dimensions where Direct is already strong TEF "
          "matches it", "—", _CH5, TABLES, _direct_strong),
    # --- Table 3 -------------------------------------------------------------------------------------
    Claim("table3-bold", _T3, "Table 3 caption", "the best method is in bold", "120 cells", _CH5, TABLES,
          _bold),
    Claim("table3-underline", _T3, "Table 3 caption", "the second best is underlined", "120 cells", _CH5,
          TABLES, _underline, expected=False),
    Claim("table3-open-models", _T3, "Table 3, Sec. 5", "accuracy and macro-F1 of Qwen2.5-7B, LLaMA3-8B "
          "and Qwen3-14B on MIND", "288 numbers", _CH5, GPU,
          _gpu(_reproduce("qwen2.5-7b") + " (then llama3-8b, qwen3-14b)", "the open models on a GPU")),
    Claim("table3-api-models", _T3, "Table 3, Sec. 5", "accuracy and macro-F1 of DeepSeek-V3.2 and "
          "GPT-4o-mini on MIND", "192 numbers", _CH5, CANNOT,
          _cannot("the API models may have changed since the paper; with DEEPSEEK_API_KEY / OPENAI_API_KEY "
                  "set: " + _reproduce("deepseek-v3.2"))),
    Claim("answer-logprobs", _T3, "Sec. 5 (Settings), Table 3", "we read the answer-token "
          "log-probabilities without sampling", "—", _CH4, GPU,
          _gpu(_reproduce("qwen2.5-7b"), "a paper model on a GPU (the CPU judges of chapter 4 read them "
               "the same way)")),
    # --- Table 4 -------------------------------------------------------------------------------------
    Claim("table4-averages", _T4, "Table 4 (Average columns)", "Average = the mean of the six dimensions",
          "24 averages", _CH6, TABLES, _t4_averages),
    Claim("table4-tef-rows", _T4, "Tables 3 and 4", "Ours in Table 4 is the full TEF of Table 3",
          "48 numbers", _CH6, TABLES, _t4_equals_t3),
    Claim("ablation-drop", _T4, "Sec. 5 (Ablation Study)", "the largest accuracy drop: DeepSeek-V3.2 "
          "English environment, 22.9 without entropy weighting or 23.8 without the log-odds transform",
          "22.9 / 23.8", _CH6, TABLES, _largest_drop),
    Claim("ablation-deepseek", _T4, "Sec. 5 (Ablation Study)", "on DeepSeek-V3.2 both variants fall below "
          "Soft Vote in both languages on average", "4 of 4", _CH6, TABLES, _deepseek_below_sv),
    Claim("ablation-qwen", _T4, "Sec. 5 (Ablation Study)", "on Qwen2.5-7B both variants retain most of "
          "TEF's average gain over Soft Vote", "most", _CH6, TABLES, _qwen_retains),
    Claim("ablation-below-tef", _T4, "Table 4 caption", "Ours is the full TEF (bold)", "96 cells", _CH6,
          TABLES, _ablations_below_tef),
    Claim("ablation-models", _T4, "Table 4", "the ablation numbers of Qwen2.5-7B and DeepSeek-V3.2",
          "168 numbers", _CH6, GPU, _gpu(_reproduce("qwen2.5-7b"), "Qwen2.5-7B on a GPU (DeepSeek-V3.2 "
                                          "through its API)")),
    # --- Table 1 -------------------------------------------------------------------------------------
    Claim("table1-original", _T1, "Tables 1 and 3", "Table 1's Original column is Table 3's accuracy "
          "averaged over dimensions and languages", "10 numbers", _CH7, TABLES, _t1_from_t3),
    Claim("prompt-best", _T1, "Sec. 5 (Robustness), Sec. 6", "TEF remains best under every prompt",
          "15 of 15", _CH7, TABLES, _prompt_best),
    Claim("prompt-least", _T1, "Sec. 5 (Robustness)", "TEF degrades the least under either perturbation",
          "10 of 10", _CH7, TABLES, _prompt_least),
    Claim("prompt-models", _T1, "Table 1", "verbose and minimal prompts on the five models", "30 numbers",
          _CH7, GPU, _gpu(_reproduce("qwen2.5-7b", "original,verbose,minimal"), "the models on a GPU")),
    # --- Table 2 -------------------------------------------------------------------------------------
    Claim("tokens-identical", _T2, "Sec. 5 (Efficiency)", "TEF uses the same single-token queries as the "
          "voting methods, so its token count is identical", "identical", _CH8, TABLES, _same_tokens),
    Claim("ttft-two-ms", _T2, "Sec. 5 (Efficiency)", "its time to first token differs by only about two "
          "milliseconds", "≈ 2 ms", _CH8, TABLES, _ttft),
    Claim("cost-three-times", _T2, "Sec. 5 (Efficiency)", "relative to Direct, sentence-level methods cost "
          "roughly three times as much", "≈ 3×", _CH8, TABLES, _cost),
    Claim("overhead-pays", _T2, "Sec. 5 (Efficiency)", "TEF is the only one that consistently turns this "
          "overhead into a performance gain", "—", _CH8, TABLES, _overhead_pays),
    Claim("efficiency-gpu", _T2, "Table 2", "tokens, TTFT and cost on RTX 3090 GPUs", "18 numbers", _CH8, GPU,
          _gpu(_reproduce("qwen2.5-7b"), "Qwen2.5-7B and LLaMA3-8B served by vLLM on a GPU")),
    # --- Fig. 4 --------------------------------------------------------------------------------------
    Claim("calibration-tef", _F4, "Fig. 4, Sec. 5 (Calibration)", "TEF achieves the lowest expected "
          "calibration error and overconfidence gap on Qwen2.5-7B in both languages", "—", _CH9, GPU,
          _gpu(_reproduce("qwen2.5-7b"), "Qwen2.5-7B on a GPU; the figure prints no numbers")),
    Claim("calibration-baselines", _F4, "Sec. 5 (Calibration)", "Direct and both voting rules are "
          "overconfident on Qwen2.5-7B", "—", _CH9, GPU,
          _gpu(_reproduce("qwen2.5-7b"), "Qwen2.5-7B on a GPU")),
    Claim("calibration-confidence", _F4, "Fig. 4", "a confidence per method (TEF's included)", "—", _CH9,
          CANNOT, _cannot(f"the paper defines no confidence for any rule; the companion uses the reference "
                          f"release's softmax of the two TEF scores at T = {TEMPERATURE:g}")),
]
"""Every checkable claim of the paper, in ledger order."""


# --------------------------------------------------------------------------------------------------
# evaluation and display
# --------------------------------------------------------------------------------------------------
def _verdict_label(holds: bool | None, expected: bool) -> str:
    if holds is None:
        return NOT_CHECKED
    if holds != expected:
        return FAILS
    return HOLDS if holds else NOT_HOLD


def _run(claim: Claim, ev: Evidence) -> Verdict:
    try:
        return claim.check(ev)
    except Exception as exc:  # a check that raises fails, with the reason in the ledger
        return Verdict("error", not claim.expected, f"{type(exc).__name__}: {exc}")


def evaluate_ledger(
    claims: Sequence[Claim] | None = None,
    *,
    tables: Mapping[str, pd.DataFrame] | None = None,
    paper_dir: str | Path | None = None,
    data_dir: str | Path | None = None,
) -> pd.DataFrame:
    """Run every check of the ledger.

    Parameters
    ----------
    claims : sequence of Claim, optional
        Default :data:`LEDGER`.
    tables, paper_dir, data_dir
        See :class:`Evidence`.

    Returns
    -------
    pandas.DataFrame
        One row per claim, in ledger order: ``id, section, where, words, number, chapter, how, value,
        holds, expected, verdict, note``. ``verdict`` is ``"holds"``, ``"does not hold"`` (recorded
        so), ``"not checked"`` or ``"FAILS"``. When a check read the MIND data,
        ``frame.attrs["dataset"]`` says which: ``"MIND sample"``, ``"full MIND release"`` or
        ``"custom data"``.
    """
    ev = Evidence(tables, paper_dir=paper_dir, data_dir=data_dir)
    rows = []
    for claim in LEDGER if claims is None else claims:
        v = _run(claim, ev)
        rows.append({
            "id": claim.id, "section": claim.section, "where": claim.where, "words": claim.words,
            "number": claim.number, "chapter": claim.chapter, "how": claim.how, "value": v.value,
            "holds": v.holds, "expected": claim.expected,
            "verdict": _verdict_label(v.holds, claim.expected), "note": v.note,
        })
    frame = pd.DataFrame(rows)
    if "posts" in ev.__dict__:  # the data were read: say which
        frame.attrs["dataset"] = ev.dataset
    return frame


def failures(ledger: pd.DataFrame) -> pd.DataFrame:
    """The rows of an evaluated ledger whose check does not give the recorded verdict."""
    return ledger[ledger["verdict"] == FAILS]


def assert_ledger(ledger: pd.DataFrame) -> None:
    """Raise :class:`LedgerError` naming every failing claim (nothing when all give their verdict)."""
    bad = failures(ledger)
    if len(bad):
        listed = "; ".join(f"{r.id}: ours {r.value} ({r.note})" for r in bad.itertuples())
        raise LedgerError(f"{len(bad)} claim(s) of the ledger fail: {listed}")


def summary_counts(ledger: pd.DataFrame) -> dict[str, int]:
    """Number of claims per verdict, plus ``"claims"`` (all rows)."""
    counts = ledger["verdict"].value_counts()
    return {"claims": len(ledger)} | {v: int(counts.get(v, 0)) for v in (HOLDS, NOT_HOLD, NOT_CHECKED, FAILS)}


def claim_anchor(claim_id: str) -> str:
    """HTML anchor of a claim's row on the ledger page: ``claims-<id>``."""
    return f"claims-{claim_id.replace('.', '-')}"


def claim_link(claim_id: str, text: str | None = None, page: str = "11_claims_ledger.html") -> str:
    """An HTML link to a claim's row of the ledger page, for a chapter's Markdown.

    Parameters
    ----------
    claim_id : str
        An id of :data:`LEDGER`.
    text : str, optional
        Link text; default the id.
    page : str
        The ledger page relative to the chapter (the chapters' pages sit beside each other).

    Examples
    --------
    >>> claim_link("best-or-tied", "116 of 120")
    '<a href="11_claims_ledger.html#claims-best-or-tied">116 of 120</a>'
    """
    if claim_id not in {c.id for c in LEDGER}:
        raise ValueError(f"no claim {claim_id!r} in the ledger")
    return f'<a href="{page}#{claim_anchor(claim_id)}">{html.escape(text or claim_id)}</a>'


_TEXT_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("id", "claim", 22), ("number", "paper", 15), ("value", "ours", 33), ("how", "how", 6),
    ("verdict", "verdict", 13),
)


def _cell(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _text(ledger: pd.DataFrame) -> str:
    header = " ".join(f"{title:<{w}}" for _, title, w in _TEXT_COLUMNS).rstrip()
    lines = [header]
    for section, rows in ledger.groupby("section", sort=False):
        lines.append(f"-- {section}")
        for row in rows.to_dict("records"):
            row["how"] = HOW_SHORT[row["how"]]
            lines.append(" ".join(f"{_cell(row[k], w):<{w}}" for k, _, w in _TEXT_COLUMNS).rstrip())
    counts = summary_counts(ledger)
    lines.append(f"{counts['claims']} claims: {counts[HOLDS]} hold, {counts[NOT_HOLD]} do not hold (as "
                 f"recorded), {counts[NOT_CHECKED]} not checked here, {counts[FAILS]} fail")
    return "\n".join(lines)


def format_ledger(ledger: pd.DataFrame, fmt: str = "text") -> str:
    """The evaluated ledger as text (compact, under 100 columns), csv, markdown or json.

    Parameters
    ----------
    ledger : pandas.DataFrame
        From :func:`evaluate_ledger`.
    fmt : {"text", "csv", "markdown", "json"}
        ``text`` shows id, the paper's number, ours, how and the verdict, grouped by section; the
        others hold every column.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "text":
        return _text(ledger)
    if fmt == "csv":
        return ledger.to_csv(index=False)
    if fmt == "json":
        return json.dumps(json.loads(ledger.to_json(orient="records")), ensure_ascii=False, indent=1)
    return ledger.astype({"holds": str, "expected": str}).to_markdown(index=False)


def _html_row(row: Mapping[str, object], chapter_href: Callable[[str], str]) -> str:
    e = {k: html.escape(str(v)) for k, v in row.items()}
    chapter = str(row["chapter"])
    cls = {HOLDS: "holds", NOT_HOLD: "differs", NOT_CHECKED: "unchecked", FAILS: "fails"}[str(row["verdict"])]
    return (
        f'<tr id="{claim_anchor(str(row["id"]))}" class="claim-{cls}">'
        f'<td><a href="#{claim_anchor(str(row["id"]))}"><code>{e["id"]}</code></a></td>'
        f'<td>{e["words"]}<br><small>{e["where"]}</small></td><td>{e["number"]}</td>'
        f'<td>{e["value"]}<br><small>{e["note"]}</small></td>'
        f'<td><b>{e["verdict"]}</b><br><small>{e["how"]}</small></td>'
        f'<td><a href="{html.escape(chapter_href(chapter))}">ch.&nbsp;{int(chapter[:2])}</a></td></tr>'
    )


def ledger_html(ledger: pd.DataFrame, chapter_href: Callable[[str], str] | None = None) -> str:
    """One HTML table of ledger rows, each row anchored at :func:`claim_anchor` of its id.

    Parameters
    ----------
    ledger : pandas.DataFrame
        Rows of :func:`evaluate_ledger` (usually one section).
    chapter_href : callable, optional
        Link of a chapter stem; default ``"<stem>.html"`` (the chapters' pages sit beside each other).
    """
    href = chapter_href or (lambda stem: f"{stem}.html")
    head = "".join(f"<th>{h}</th>" for h in ("id", "the paper says", "paper", "ours", "verdict", "chapter"))
    body = "".join(_html_row(r, href) for r in ledger.to_dict("records"))
    return f'<table class="claims-ledger"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
