r"""Fusion rules of the paper (Section 3, Eq. 3, Algorithm 1; protocol §6), per document and over many
documents at once.

Every rule gives each class of a document a score and predicts the class with the highest score. Each
rule's score is one private function written as its formula (``_tef`` is Eq. 3, built from
:func:`clipped_log_odds` and :func:`entropy_weight`; ``_soft_vote``, ``_majority_vote``, ``_direct`` and
the two ablations beside it), and :func:`fuse_many` looks the rule up by name. The input is a sequence
of :math:`p_i = P(\text{change} \mid D_i)` (:math:`K = 2`, classes :data:`CLASSES`) or an
``(n_sentences, K)`` array of distributions (two columns are read through the first); Direct's document
is one row, a number or a ``(1, K)`` distribution. For :math:`K = 2` a formula runs on the change column
and the stability column follows (:math:`\ell(1-p) = -\ell(p)`; shares and means complement to one). The
confidence is the winner's score, or :math:`\operatorname{softmax}(\operatorname{Score}/T)` for the two
log-odds rules.

**Ties.** Probability rules tie exactly. Log-odds scores within :math:`2\tau E` of the best tie and get
the mean of the tied (:func:`_gaps`), :math:`E = \max_c \sum_i |w_i \ell(p_i^{(c)})|` being the
document's evidence and :math:`\tau` = ``tie_rtol``: closer scores cannot be told apart from rounding,
so a balanced :math:`K = 2` post scores exactly :math:`(0, 0)`, confidence :math:`1/2`. One step
(:func:`_winners`) then picks the winner among the tied classes: for Majority Vote with
``ties="first_vote"`` (the default) the tied class voted first in sentence order, as the reference
release's ``collections.Counter.most_common`` does; with ``ties="first_class"`` and for every other
rule the first tied class in class order (so Direct, Soft Vote and w/o Log-Odds predict change iff the
probability or mean is :math:`\ge 0.5`, as the protocol fixes).

:func:`fuse_many` works on a flat array and a non-decreasing document index with segment sums
(:func:`numpy.add.reduceat`); the per-document functions call it on one document.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from scipy.special import entr

from tefcore.errors import UnknownName

__all__ = [
    "CLASSES", "CLIP", "EPS", "RULES", "RULE_LABELS", "RULE_NAMES", "TEMPERATURE", "TIE_RTOL",
    "FusionBatch", "FusionResult", "clipped_log_odds", "direct", "entropy_weight", "fuse_many",
    "majority_vote", "soft_vote", "tef", "tef_without_entropy", "tef_without_log_odds",
]

CLASSES: tuple[str, str] = ("change", "stability")
"""The two sides, change first: the one definition of the class order of :math:`K = 2`."""
EPS: float = 1e-6
"""Probability clip :math:`\\epsilon` of the log-odds."""
CLIP: float = 10.0
"""Log-odds clip :math:`M`."""
TEMPERATURE: float = 5.0
"""Softmax temperature :math:`T` of TEF's confidence."""
TIE_RTOL: float = 1e-12
"""Relative size :math:`\\tau` below which log-odds scores tie (see the module notes)."""
_TIE_RULES: tuple[str, str] = ("first_vote", "first_class")
"""How Majority Vote breaks a tie: the class voted first (the reference release), or class order."""
_ROW_SUM_ATOL: float = 1e-6
"""How far from 1 a row of a distribution may sum."""

_ArrayLike = npt.ArrayLike
_FloatArray = npt.NDArray[np.float64]
_IndexArray = npt.NDArray[np.intp]


# ---- results -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FusionResult:
    """The decision of one fusion rule on one document: ``prediction`` (the class), ``confidence`` (as the
    protocol defines it for the rule) and ``scores`` (the rule's score of every class, in class order).

    Examples
    --------
    >>> tef([0.9, 0.2, 0.6]).scores  # doctest: +ELLIPSIS
    {'change': 0.7..., 'stability': -0.7...}
    """

    prediction: str
    confidence: float
    scores: dict[str, float]


@dataclass(frozen=True)
class FusionBatch:
    """Decisions of one rule on many documents: the fields of :class:`FusionResult` as arrays over the
    documents (``prediction`` of dtype object, ``scores`` of shape (n_docs, K) in the order of ``classes``),
    ``index`` (position of the predicted class in ``classes``) and ``doc_ids`` (each document's value of
    ``doc_index``)."""

    prediction: np.ndarray
    confidence: _FloatArray
    scores: _FloatArray
    index: _IndexArray
    doc_ids: np.ndarray
    classes: tuple[str, ...]

    def __len__(self) -> int:
        return int(self.confidence.shape[0])

    def result(self, i: int) -> FusionResult:
        """The :class:`FusionResult` of document ``i``.

        Examples
        --------
        >>> fuse_many([0.9, 0.2], rule="soft_vote").result(1)
        FusionResult(prediction='stability', confidence=0.8, scores={'change': 0.2, 'stability': 0.8})
        """
        return FusionResult(
            prediction=str(self.prediction[i]),
            confidence=float(self.confidence[i]),
            scores={c: float(s) for c, s in zip(self.classes, self.scores[i])},
        )


# ---- input checks --------------------------------------------------------------------------------
def _as_probabilities(p: _ArrayLike, name: str = "p") -> _FloatArray:
    """Validate probabilities: 1-D P(change) or 2-D rows of distributions; returns float64."""
    try:
        arr = np.asarray(p, dtype=np.float64)  # may raise on strings or ragged input
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric probabilities: {exc}") from None
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be a 1-D array of P(change) or a 2-D (n_sentences, K) array, "
                         f"got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: a document needs at least one sentence probability")
    if arr.ndim == 2 and arr.shape[1] < 2:
        raise ValueError(f"{name} must have K >= 2 columns, got shape {arr.shape}")
    if not (arr.min() >= 0.0 and arr.max() <= 1.0):  # NaN propagates and fails too
        bad = np.flatnonzero(~((arr >= 0.0) & (arr <= 1.0)).reshape(-1))
        first = np.unravel_index(int(bad[0]), arr.shape)
        value = float(arr[first])
        kind = "NaN" if np.isnan(value) else "an infinite value" if np.isinf(value) else "a value outside [0, 1]"
        raise ValueError(f"{name} must hold probabilities in [0, 1]: {bad.size} bad value(s), first is {kind} at "
                         f"{name}[{', '.join(str(int(k)) for k in first)}] = {value!r}")
    if arr.ndim == 2:
        sums = arr.sum(axis=1)
        off = np.abs(sums - 1.0) > _ROW_SUM_ATOL
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise ValueError(
                f"rows of {name} must be distributions summing to 1 (within {_ROW_SUM_ATOL:g}); "
                f"{int(off.sum())} row(s) do not, first row {i} sums to {float(sums[i])!r}"
            )
    return arr


_ONE_DOCUMENT = object()  # doc_index marker of the per-document functions: all rows form one document


def _segments(doc_index: _ArrayLike | object | None, n: int) -> tuple[_IndexArray, np.ndarray]:
    """Start offsets of the documents and their ids, from a non-decreasing document index."""
    if doc_index is None:
        return np.arange(n, dtype=np.intp), np.arange(n)
    if doc_index is _ONE_DOCUMENT:
        return np.zeros(1, dtype=np.intp), np.zeros(1, dtype=np.int64)
    idx = np.asarray(doc_index)
    if idx.ndim != 1:
        raise ValueError(f"doc_index must be 1-D, got shape {idx.shape}")
    if idx.shape[0] != n:
        raise ValueError(f"doc_index does not match p: it has {idx.shape[0]} entries but p has {n} rows")
    if idx.dtype.kind not in "iu":
        if idx.dtype.kind == "f" and np.all(np.isfinite(idx)) and np.all(idx == np.round(idx)):
            idx = idx.astype(np.int64)
        else:
            raise ValueError(f"doc_index must hold integers, got dtype {idx.dtype}")
    starts = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])  # where each run of equal values begins
    ids = idx[starts]
    if (ids[1:] < ids[:-1]).any():  # the runs must come in increasing order
        j = int(starts[np.flatnonzero(ids[1:] < ids[:-1])[0] + 1])
        raise ValueError(
            "doc_index must be sorted (non-decreasing, each document's sentences contiguous): "
            f"doc_index[{j}] = {idx[j]} follows {idx[j - 1]}"
        )
    return starts, ids


def _class_names(classes: Sequence[str] | None, K: int) -> tuple[str, ...]:
    """The names of the K classes: given, :data:`CLASSES` for K = 2, else ``class_0, class_1, ...``."""
    if classes is None:
        return CLASSES if K == 2 else tuple(f"class_{k}" for k in range(K))
    names = tuple(classes)
    if len(names) != K or len(set(names)) != K or not all(isinstance(c, str) for c in names):
        raise ValueError(f"classes must be {K} distinct names (one per class), got {classes!r}")
    return names


def _check_params(eps: float, M: float, T: float, ties: str, tie_rtol: float) -> None:
    """One-line errors for parameters out of their range (a NaN is in none)."""
    if ties not in _TIE_RULES:
        raise UnknownName(f"ties must be one of {', '.join(_TIE_RULES)}, got {ties!r}")
    for ok, error in ((0.0 < eps < 0.5, f"eps must lie in (0, 0.5), got {eps!r}"),
                      (0.0 < M < math.inf, f"M must be a positive finite number, got {M!r}"),
                      (0.0 < T < math.inf, f"T must be a positive finite temperature, got {T!r}"),
                      (0.0 <= tie_rtol < 1.0, f"tie_rtol must lie in [0, 1), got {tie_rtol!r}")):
        if not ok:
            raise ValueError(error)


# ---- the paper's two building blocks -------------------------------------------------------------
def clipped_log_odds(p: _ArrayLike, *, eps: float = EPS, M: float = CLIP) -> _FloatArray:
    r"""Clipped log-odds :math:`\ell(p) = \operatorname{clip}(\log\frac{\tilde p}{1-\tilde p}, -M, M)`,
    :math:`\tilde p = \operatorname{clip}(p, \epsilon, 1-\epsilon)` (Algorithm 1, the inner loop).

    Parameters
    ----------
    p : array_like
        Probabilities in [0, 1], any shape.
    eps, M : float
        Probability clip :data:`EPS` and log-odds clip :data:`CLIP`.

    Returns
    -------
    ndarray of float, the shape of ``p``

    Examples
    --------
    >>> clipped_log_odds([0.0, 0.5, 0.9, 1.0]).round(3).tolist()
    [-10.0, 0.0, 2.197, 10.0]
    >>> clipped_log_odds([0.0], M=100.0).round(3).tolist()  # now eps decides
    [-13.816]
    """
    arr = np.asarray(p, dtype=np.float64)
    odds = np.clip(arr, eps, 1.0 - eps, out=np.empty_like(arr))  # p~, then each step in the same array
    odds /= 1.0 - odds
    np.log(odds, out=odds)
    return np.clip(odds, -M, M, out=odds)[()]  # [()]: a scalar for a scalar p


def entropy_weight(p: _ArrayLike) -> _FloatArray:
    r"""Entropy weight :math:`w(\mathbf p) = 1 - H(\mathbf p)/\log K`, the normalised information gain, with
    :math:`H(\mathbf p) = -\sum_k p^{(k)} \log p^{(k)}` (:math:`0 \log 0 = 0`) of the unclipped probabilities.

    Parameters
    ----------
    p : array_like, shape (n,) or (n, K)
        P(change) values (:math:`K = 2`) or distributions (two columns are read through the first).

    Returns
    -------
    ndarray of float, shape (n,)
        0 for a uniform distribution, 1 for a one-hot one.

    Examples
    --------
    >>> entropy_weight([0.5, 0.9, 1.0]).round(3).tolist()
    [0.0, 0.531, 1.0]
    >>> entropy_weight([[1 / 3, 1 / 3, 1 / 3], [1.0, 0.0, 0.0]]).round(3).tolist()
    [0.0, 1.0]
    """
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] > 2:
        K, H = arr.shape[1], entr(arr).sum(axis=1)
    else:  # K = 2: H = entr(p) + entr(1 - p)
        q = arr[:, 0] if arr.ndim == 2 else arr
        K, H = 2, entr(q) + entr(1.0 - q)
    w = H  # w = 1 - H / log K, in H's array (a large p would otherwise cost two more of its size)
    w /= -math.log(K)
    w += 1.0
    return w


# ---- the rules: each one's Score(c) of every class, as the paper writes it -----------------------
@dataclass(frozen=True)
class _Documents:
    """The documents of a flat input: the first row of each (``starts``), its number of sentences
    (``sizes``), the number of classes ``K``, and whether the rows hold P(first class) alone (``binary``)."""

    starts: _IndexArray
    sizes: _IndexArray
    K: int
    binary: bool

    def columns(self, p: _FloatArray) -> _FloatArray:
        """The (n, K) columns a formula runs on; for K = 2 the first column alone (see the module notes)."""
        return p[:, None] if self.binary else p

    def sum(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\sum_i x_i` over each document's rows (segment sums)."""
        return np.add.reduceat(x, self.starts, axis=0)

    def mean(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\frac1N \sum_i x_i` over each document's rows."""
        return self.sum(x) / self.sizes[:, None]

    def all_classes(self, scores: _FloatArray, *, log_odds: bool) -> _FloatArray:
        """The (n_docs, K) scores; for K = 2 the second class's column from the first, :math:`-s` for
        log-odds and :math:`1 - s` for probabilities and shares, written column by column (the steps that
        follow work across the K columns, which numpy does fastest in that layout)."""
        if not self.binary:
            return scores
        both = np.empty((2, scores.shape[0]))
        both[0] = scores[:, 0]
        if log_odds:
            np.negative(scores[:, 0], out=both[1])
        else:
            np.subtract(1.0, scores[:, 0], out=both[1])
        return both.T


class _Scores(NamedTuple):
    """A rule's ``scores`` (n_docs, K), with what its ties need: the sentences' ``evidence`` (n, 1 or K) of
    a log-odds rule (:func:`_gaps`) and the sentences' ``votes`` of Majority Vote (:func:`_first_votes`)."""

    scores: _FloatArray
    evidence: _FloatArray | None = None
    votes: _IndexArray | None = None


def _direct(p: _FloatArray, docs: _Documents, eps: float, M: float) -> _Scores:
    r"""Direct: :math:`\operatorname{Score}(c) = p^{(c)}`, the whole post's probability (one row a document)."""
    if np.any(docs.sizes != 1):
        raise ValueError("rule 'direct' takes exactly one probability (the whole post) per document")
    return _Scores(docs.all_classes(docs.columns(p), log_odds=False))


def _majority_vote(p: _FloatArray, docs: _Documents, eps: float, M: float) -> _Scores:
    r"""Majority Vote: :math:`\operatorname{Score}(c) = \frac1N \sum_i \mathbb 1[v_i = c]`, :math:`v_i = \arg\max_k
    p_i^{(k)}` (the first of equal maxima; change iff :math:`p_i \ge 0.5`)."""
    votes = np.where(p >= 0.5, 0, 1) if docs.binary else np.argmax(p, axis=1)
    ballots = (votes[:, None] == np.arange(docs.K)).astype(np.float64)
    return _Scores(docs.mean(ballots), votes=votes)


def _soft_vote(p: _FloatArray, docs: _Documents, eps: float, M: float) -> _Scores:
    r"""Soft Vote: :math:`\operatorname{Score}(c) = \frac1N \sum_i p_i^{(c)}`."""
    return _Scores(docs.all_classes(docs.mean(docs.columns(p)), log_odds=False))


def _tef(p: _FloatArray, docs: _Documents, eps: float, M: float) -> _Scores:
    r"""TEF (Eq. 3): :math:`\operatorname{Score}(c) = \sum_i w(\mathbf p_i)\,\ell\big(p_i^{(c)}\big)`."""
    evidence = clipped_log_odds(docs.columns(p), eps=eps, M=M)
    evidence *= entropy_weight(p)[:, None]  # w_i * l(p_i), in the array of l
    return _Scores(docs.all_classes(docs.sum(evidence), log_odds=True), evidence=evidence)


def _tef_without_entropy(p: _FloatArray, docs: _Documents, eps: float, M: float) -> _Scores:
    r"""w/o Entropy: :math:`\operatorname{Score}(c) = \sum_i \ell\big(p_i^{(c)}\big)`."""
    evidence = clipped_log_odds(docs.columns(p), eps=eps, M=M)
    return _Scores(docs.all_classes(docs.sum(evidence), log_odds=True), evidence=evidence)


def _tef_without_log_odds(p: _FloatArray, docs: _Documents, eps: float, M: float) -> _Scores:
    r"""w/o Log-Odds: :math:`\operatorname{Score}(c) = \sum_i w_i p_i^{(c)} / \sum_i w_i` (:math:`1/K` when
    every :math:`w_i = 0`)."""
    w = entropy_weight(p)
    total = docs.sum(w)[:, None]
    weighted = docs.sum(w[:, None] * docs.columns(p))
    mean = np.divide(weighted, total, out=np.full_like(weighted, 1.0 / docs.K), where=total > 0.0)
    return _Scores(docs.all_classes(mean, log_odds=False))


_CLASS_SCORES: dict[str, Callable[[_FloatArray, _Documents, float, float], _Scores]] = {
    "direct": _direct, "majority_vote": _majority_vote, "soft_vote": _soft_vote, "tef": _tef,
    "tef_without_entropy": _tef_without_entropy, "tef_without_log_odds": _tef_without_log_odds,
}
"""Each rule's scores by name, in the order of the paper's tables (:data:`RULE_NAMES`)."""

RULE_NAMES: tuple[str, ...] = tuple(_CLASS_SCORES)
"""The rules, in the order of the paper's tables."""
RULE_LABELS: dict[str, str] = {
    "direct": "Direct", "majority_vote": "MV", "soft_vote": "SV", "tef": "TEF", "tef_without_entropy": "w/o Entropy",
    "tef_without_log_odds": "w/o Log-Odds",
}
"""The short name of each rule as the paper's tables print it (its Tables 1 and 4 call TEF "Ours")."""


# ---- ties and the winner -------------------------------------------------------------------------
def _gaps(scores: _FloatArray, evidence: _FloatArray | None, docs: _Documents, *, M: float,
          tie_rtol: float) -> tuple[_FloatArray, _FloatArray, _FloatArray]:
    r"""The scores (tied log-odds scores averaged, see the module notes), each document's best score and
    each score's gap to it (0 for the classes that tie for the best). :math:`E \le M n_d`, so :math:`E` is
    summed only for the documents within :math:`2\tau M \max_d n_d` of a tie (few, if any)."""
    best = scores.max(axis=1)
    gap = scores - best[:, None]
    if evidence is None:
        return scores, best, gap
    near = gap >= -2.0 * tie_rtol * M * docs.sizes.max()
    if np.count_nonzero(near) == near.shape[0]:
        return scores, best, gap  # every best class stands alone, far beyond rounding
    rows = np.flatnonzero(np.count_nonzero(near, axis=1) > 1)
    lengths = docs.sizes[rows]  # gather the sentences of those documents, then sum their evidence
    first = np.cumsum(lengths) - lengths
    gathered = np.arange(lengths.sum()) + np.repeat(docs.starts[rows] - first, lengths)
    E = np.add.reduceat(np.abs(evidence[gathered]), first, axis=0).max(axis=1)
    tied = gap[rows] >= -2.0 * tie_rtol * E[:, None]
    mean = (scores[rows] * tied).sum(axis=1) / tied.sum(axis=1)
    scores[rows] = np.where(tied, mean[:, None], scores[rows])  # all three are this call's own arrays
    best[rows] = mean
    gap[rows] = scores[rows] - mean[:, None]
    return scores, best, gap


def _first_votes(votes: _IndexArray, docs: _Documents) -> _IndexArray:
    """Position of each class's first vote in each document (``len(votes)`` for a class never voted)."""
    n = votes.shape[0]
    at = np.where(votes[:, None] == np.arange(docs.K), np.arange(n)[:, None], n)
    return np.minimum.reduceat(at, docs.starts, axis=0)


def _winners(tied: npt.NDArray[np.bool_], first_vote: _IndexArray | None) -> _IndexArray:
    """The one tie step: of each document's best classes (``tied``, one or more), the class voted first
    when ``first_vote`` is given (Majority Vote, ``ties="first_vote"``), else the first in class order."""
    if first_vote is not None:
        return np.argmin(np.where(tied, first_vote, np.iinfo(first_vote.dtype).max), axis=1)
    index = np.full(tied.shape[0], tied.shape[1] - 1)
    for k in range(tied.shape[1] - 2, -1, -1):  # last class to first, so that the first tied class stays
        index -= tied[:, k] * (index - k)  # index = k where class k ties (np.argmax(tied, axis=1) is slower)
    return index


# ---- public API ----------------------------------------------------------------------------------
def fuse_many(
    p: _ArrayLike,
    doc_index: _ArrayLike | None = None,
    rule: str = "tef",
    *,
    classes: Sequence[str] | None = None,
    eps: float = EPS,
    M: float = CLIP,
    T: float = TEMPERATURE,
    ties: str = "first_vote",
    tie_rtol: float = TIE_RTOL,
) -> FusionBatch:
    r"""Fuse the sentence posteriors of many documents at once (rules and ties as the module notes say).

    Parameters
    ----------
    p : array_like, shape (n,) or (n, K)
        Sentence probabilities of all documents: P(change), or one distribution per row.
    doc_index : array_like of int, shape (n,), optional
        Document of each row, non-decreasing (a run of equal values is one document); ``None`` makes every
        row its own document (the natural input of ``rule="direct"``).
    rule : str
        One of :data:`RULE_NAMES`.
    classes : sequence of str, optional
        Names of the K classes in column order (default :data:`CLASSES` for K = 2, else ``class_0, ...``).
    eps, M, T, tie_rtol : float
        :data:`EPS`, :data:`CLIP`, :data:`TEMPERATURE` and :data:`TIE_RTOL` of the log-odds rules.
    ties : {"first_vote", "first_class"}
        Majority Vote's tie rule (:data:`_TIE_RULES`).

    Returns
    -------
    FusionBatch

    Notes
    -----
    TEF with K = 2 is ``np.add.reduceat(entropy_weight(p) * clipped_log_odds(p), starts)``; the winner's
    :math:`\operatorname{softmax}((s, -s)/T)` is :math:`\sigma(2|s|/T)`.

    Examples
    --------
    >>> b = fuse_many([0.9, 0.45, 0.4, 0.3], doc_index=[0, 0, 1, 1])
    >>> b.prediction.tolist(), b.classes
    (['change', 'stability'], ('change', 'stability'))
    >>> fuse_many([0.4826, 0.8299, 0.8195, 0.2447], [0, 0, 0, 0], "majority_vote").prediction.tolist()  # 2-2
    ['stability']
    >>> fuse_many([0.4826, 0.8299, 0.8195, 0.2447], [0, 0, 0, 0], "majority_vote",
    ...           ties="first_class").prediction.tolist()
    ['change']
    """
    if rule not in _CLASS_SCORES:
        raise UnknownName(f"unknown fusion rule {rule!r}; choose one of {', '.join(RULE_NAMES)}")
    _check_params(eps, M, T, ties, tie_rtol)
    arr = _as_probabilities(np.reshape(p, 1) if np.ndim(p) == 0 else p)
    starts, doc_ids = _segments(doc_index, arr.shape[0])
    K = 2 if arr.ndim == 1 else arr.shape[1]
    names = _class_names(classes, K)
    if K == 2 and arr.ndim == 2:
        arr = arr[:, 0]
    docs = _Documents(starts, np.diff(np.r_[starts, arr.shape[0]]), K, binary=arr.ndim == 1)
    scores, evidence, votes = _CLASS_SCORES[rule](arr, docs, eps, M)
    scores, best, gap = _gaps(scores, evidence, docs, M=M, tie_rtol=tie_rtol)
    log_odds_rule, evidence = evidence is not None, None  # the sentences' evidence is no longer needed
    first_vote = _first_votes(votes, docs) if votes is not None and ties == "first_vote" else None
    index = _winners(gap == 0.0, first_vote)
    if log_odds_rule:  # softmax(Score / T) of the best score, 1 / sum_c exp(gap_c / T), in place in gap
        if K == 2:  # the best class's term is exp(0) = 1: 1 / (1 + exp(gap of the other / T)), the same number
            other = np.divide(gap.min(axis=1), T)
            best = np.reciprocal(np.add(1.0, np.exp(other, out=other), out=other), out=other)
        else:
            best = np.reciprocal(np.exp(np.divide(gap, T, out=gap), out=gap).sum(axis=1))
    return FusionBatch(
        prediction=np.asarray(names, dtype=object)[index],
        confidence=best,
        scores=scores,
        index=index,
        doc_ids=doc_ids,
        classes=names,
    )


def _one(p: _ArrayLike, rule: str, **options: Any) -> FusionResult:
    """One document through :func:`fuse_many` with its keyword options, so that both routes agree."""
    return fuse_many(p, _ONE_DOCUMENT, rule, **options).result(0)  # type: ignore[arg-type]


def direct(p: float | _ArrayLike, *, classes: Sequence[str] | None = None) -> FusionResult:
    r"""Direct prediction from one query on the whole post: change iff :math:`p \ge 0.5`, confidence
    :math:`\max(p, 1-p)`; for K classes the most probable one, :math:`\arg\max_c p^{(c)}`.

    Parameters
    ----------
    p : float or array_like, shape (1,) or (1, K)
        The whole post's P(first class): a number, or a sequence of one. Its distribution over K classes
        is one row, shape (1, K) (``[[0.2, 0.5, 0.3]]``), as the other rules take one row per sentence.
    classes : sequence of str, optional
        Class names, as in :func:`fuse_many`.

    Returns
    -------
    FusionResult

    Raises
    ------
    ValueError
        For a flat sequence of more than one value: it reads as several texts' P(first class) as much as
        one distribution, so it is refused (one text per call; :func:`fuse_many` with ``rule="direct"``
        fuses many).

    Examples
    --------
    >>> direct(0.3)
    FusionResult(prediction='stability', confidence=0.7, scores={'change': 0.3, 'stability': 0.7})
    >>> direct([[0.2, 0.5, 0.3]], classes=["left", "centre", "right"]).prediction
    'centre'
    >>> direct([0.4, 0.6])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: direct takes one P(first class) per text, got 2 values: ... direct([[0.4, 0.6]]), or many ...
    """
    arr = _as_probabilities(np.reshape(p, 1) if np.ndim(p) == 0 else p)
    if arr.ndim == 1 and arr.size > 1:
        row = ", ".join(f"{x:g}" for x in arr[:4]) + (", ..." if arr.size > 4 else "")
        raise ValueError(f"direct takes one P(first class) per text, got {arr.size} values: pass a distribution "
                         f"as one row, direct([[{row}]]), or many texts to fuse_many(p, rule='direct')")
    return _one(arr, "direct", classes=classes)


def majority_vote(
    p: _ArrayLike, *, classes: Sequence[str] | None = None, ties: str = "first_vote"
) -> FusionResult:
    r"""Majority vote of the sentences' hard labels, :math:`\hat Y = \operatorname{mode}(v_1, \dots, v_N)` with
    :math:`v_i = \arg\max_k p_i^{(k)}` (change iff :math:`p_i \ge 0.5`); the confidence is the winning
    share of votes, ties as the module notes say.

    Parameters
    ----------
    p : array_like, shape (n,) or (n, K)
        Sentence posteriors of one document, in sentence order.
    classes, ties
        As in :func:`fuse_many`.

    Returns
    -------
    FusionResult

    Examples
    --------
    >>> r = majority_vote([0.9, 0.2, 0.6, 0.4])
    >>> r.prediction, r.confidence
    ('change', 0.5)
    >>> majority_vote([0.4826, 0.8299, 0.8195, 0.2447]).prediction  # 2-2, stability voted first
    'stability'
    >>> majority_vote([0.4826, 0.8299, 0.8195, 0.2447], ties="first_class").prediction
    'change'
    """
    return _one(p, "majority_vote", classes=classes, ties=ties)


def soft_vote(p: _ArrayLike, *, classes: Sequence[str] | None = None) -> FusionResult:
    r"""Soft vote, the mean sentence probability :math:`m = \frac1N \sum_i p_i`: change iff :math:`m \ge 0.5`,
    confidence :math:`\max(m, 1-m)`.

    Parameters
    ----------
    p : array_like, shape (n,) or (n, K)
        Sentence posteriors of one document.
    classes : sequence of str, optional
        As in :func:`fuse_many`.

    Returns
    -------
    FusionResult

    Examples
    --------
    >>> r = soft_vote([0.9, 0.2, 0.6, 0.1])
    >>> r.prediction, round(r.confidence, 3)
    ('stability', 0.55)
    """
    return _one(p, "soft_vote", classes=classes)


def tef(
    p: _ArrayLike, *, classes: Sequence[str] | None = None, eps: float = EPS, M: float = CLIP,
    T: float = TEMPERATURE, tie_rtol: float = TIE_RTOL,
) -> FusionResult:
    r"""Tempered Evidence Fusion (Eq. 3, Algorithm 1), with the confidence of the module notes:

    .. math::

        \operatorname{Score}(c) = \sum_i w(\mathbf p_i)\,\ell\big(p_i^{(c)}\big),\qquad
        \hat Y = \arg\max_c \operatorname{Score}(c),\qquad
        \text{confidence} = \operatorname{softmax}\big(\operatorname{Score}/T\big)_{\hat Y}

    Parameters
    ----------
    p : array_like, shape (n,) or (n, K)
        Sentence posteriors of one document.
    classes, eps, M, T, tie_rtol
        As in :func:`fuse_many`.

    Returns
    -------
    FusionResult

    Examples
    --------
    >>> r = tef([0.99, 0.45, 0.45, 0.45])
    >>> r.prediction, round(r.confidence, 3)
    ('change', 0.844)
    >>> tef([0.3, 0.7]).scores  # balanced evidence is an exact tie
    {'change': 0.0, 'stability': 0.0}
    >>> tef([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], classes=["a", "b", "c"]).prediction
    'c'
    """
    return _one(p, "tef", classes=classes, eps=eps, M=M, T=T, tie_rtol=tie_rtol)


def tef_without_entropy(
    p: _ArrayLike, *, classes: Sequence[str] | None = None, eps: float = EPS, M: float = CLIP,
    T: float = TEMPERATURE, tie_rtol: float = TIE_RTOL,
) -> FusionResult:
    r"""Ablation "w/o Entropy": TEF with every :math:`w_i = 1`, :math:`\operatorname{Score}(c) = \sum_i
    \ell(p_i^{(c)})`. Parameters and Returns are those of :func:`tef`.

    Examples
    --------
    >>> tef_without_entropy([0.99, 0.45, 0.45, 0.45]).prediction  # the uncertain sentences are not tempered
    'change'
    """
    return _one(p, "tef_without_entropy", classes=classes, eps=eps, M=M, T=T, tie_rtol=tie_rtol)


def tef_without_log_odds(p: _ArrayLike, *, classes: Sequence[str] | None = None) -> FusionResult:
    r"""Ablation "w/o Log-Odds": the entropy-weighted mean probability :math:`m_w = \sum_i w_i p_i / \sum_i w_i`
    (:math:`1/K` when every :math:`w_i = 0`): change iff :math:`m_w \ge 0.5`, confidence
    :math:`\max(m_w, 1-m_w)`. Parameters and Returns are those of :func:`soft_vote`.

    Examples
    --------
    >>> r = tef_without_log_odds([0.99, 0.45, 0.45, 0.45])
    >>> r.prediction, round(r.confidence, 3)
    ('change', 0.978)
    """
    return _one(p, "tef_without_log_odds", classes=classes)


RULES: dict[str, Callable[..., FusionResult]] = {
    f.__name__: f for f in (direct, majority_vote, soft_vote, tef, tef_without_entropy, tef_without_log_odds)
}
"""Per-document rules by name (the names of :data:`RULE_NAMES`)."""
