r"""Fusion rules of the paper (Section 3, Eq. 3, Algorithm 1; protocol §6), per document and over many
documents at once.

Every rule gives each class of a document a score (its formula in the rule's docstring; TEF's, Eq. 3, is
built from :func:`clipped_log_odds` and :func:`entropy_weight`) and predicts the class with the highest
score. The input is a sequence of :math:`p_i = P(\text{change} \mid D_i)` (:math:`K = 2`, classes
:data:`CLASSES`) or an ``(n_sentences, K)`` array of distributions (two columns are read through the
first). For :math:`K = 2` a formula runs on the change column and the stability column follows
(:math:`\ell(1-p) = -\ell(p)`; shares and means complement to one). The confidence is the winner's
score, or :math:`\operatorname{softmax}(\operatorname{Score}/T)` for the two log-odds rules.

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
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import entr

__all__ = [
    "CLASSES", "CLIP", "EPS", "ROW_SUM_ATOL", "RULES", "RULE_LABELS", "RULE_NAMES", "TEMPERATURE", "TIE_RTOL",
    "TIE_RULES", "FusionBatch", "FusionResult", "clipped_log_odds", "direct", "entropy_weight", "fuse_many",
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
TIE_RULES: tuple[str, str] = ("first_vote", "first_class")
"""How Majority Vote breaks a tie: the class voted first (the reference release), or class order."""
ROW_SUM_ATOL: float = 1e-6
"""How far from 1 a row of a distribution may sum."""

RULE_NAMES: tuple[str, ...] = (
    "direct", "majority_vote", "soft_vote", "tef", "tef_without_entropy", "tef_without_log_odds",
)
"""The rules, in the order of the paper's tables."""
RULE_LABELS: dict[str, str] = {
    "direct": "Direct", "majority_vote": "MV", "soft_vote": "SV", "tef": "TEF", "tef_without_entropy": "w/o Entropy",
    "tef_without_log_odds": "w/o Log-Odds",
}
"""The short name of each rule as the paper's tables print it (its Tables 1 and 4 call TEF "Ours")."""

_LOG_ODDS_RULES = ("tef", "tef_without_entropy")

ArrayLike = npt.ArrayLike
FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.intp]


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
    confidence: FloatArray
    scores: FloatArray
    index: IndexArray
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
def _as_probabilities(p: ArrayLike, name: str = "p") -> FloatArray:
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
        off = np.abs(sums - 1.0) > ROW_SUM_ATOL
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise ValueError(
                f"rows of {name} must be distributions summing to 1 (within {ROW_SUM_ATOL:g}); "
                f"{int(off.sum())} row(s) do not, first row {i} sums to {float(sums[i])!r}"
            )
    return arr


_ONE_DOCUMENT = object()  # doc_index marker of the per-document functions: all rows form one document


def _segments(doc_index: ArrayLike | object | None, n: int) -> tuple[IndexArray, np.ndarray]:
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
    for ok, error in ((0.0 < eps < 0.5, f"eps must lie in (0, 0.5), got {eps!r}"),
                      (0.0 < M < math.inf, f"M must be a positive finite number, got {M!r}"),
                      (0.0 < T < math.inf, f"T must be a positive finite temperature, got {T!r}"),
                      (ties in TIE_RULES, f"ties must be one of {', '.join(TIE_RULES)}, got {ties!r}"),
                      (0.0 <= tie_rtol < 1.0, f"tie_rtol must lie in [0, 1), got {tie_rtol!r}")):
        if not ok:
            raise ValueError(error)


# ---- the paper's two building blocks -------------------------------------------------------------
def clipped_log_odds(p: ArrayLike, *, eps: float = EPS, M: float = CLIP) -> FloatArray:
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


def entropy_weight(p: ArrayLike) -> FloatArray:
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


# ---- the one batch core: scores of every class, then the winner ----------------------------------
def _segment_sum(x: np.ndarray, starts: IndexArray) -> np.ndarray:
    """Sum of the rows of ``x`` over each document (rows ``starts[d]`` to ``starts[d + 1] - 1``)."""
    return np.add.reduceat(x, starts, axis=0)


def _with_stability(change: FloatArray, *, log_odds: bool) -> FloatArray:
    """The (n_docs, 2) scores of K = 2 from the change column (see the module notes), written column by
    column: the steps that follow work across the K columns, which numpy does fastest in that layout."""
    scores = np.empty((2, change.shape[0]))
    scores[0] = change[:, 0]
    if log_odds:
        np.negative(change[:, 0], out=scores[1])
    else:
        np.subtract(1.0, change[:, 0], out=scores[1])
    return scores.T


def _class_scores(rule: str, p: FloatArray, starts: IndexArray, n_sentences: IndexArray, K: int, *, eps: float,
                  M: float) -> tuple[FloatArray, FloatArray | None, IndexArray | None]:
    """Score(c) of every class and document (n_docs, K), each rule's formula written once; also the
    sentences' evidence of a log-odds rule ((n, 1) when K = 2) and the sentences' votes of Majority Vote."""
    binary = p.ndim == 1
    cols = p[:, None] if binary else p  # the columns a formula is evaluated on: change alone when K = 2
    if rule in _LOG_ODDS_RULES:
        evidence = clipped_log_odds(cols, eps=eps, M=M)
        if rule == "tef":
            evidence *= entropy_weight(p)[:, None]
        score = _segment_sum(evidence, starts)
        return _with_stability(score, log_odds=True) if binary else score, evidence, None
    if rule == "majority_vote":
        votes = np.where(p >= 0.5, 0, 1) if binary else np.argmax(p, axis=1)  # the most probable class, ties first
        ballots = (votes[:, None] == np.arange(K)).astype(np.float64)
        return _segment_sum(ballots, starts) / n_sentences[:, None], None, votes
    if rule == "direct":
        if np.any(n_sentences != 1):
            raise ValueError("rule 'direct' takes exactly one probability (the whole post) per document")
        mean = cols
    elif rule == "soft_vote":
        mean = _segment_sum(cols, starts) / n_sentences[:, None]
    else:  # tef_without_log_odds
        w = entropy_weight(p)
        total = _segment_sum(w, starts)[:, None]
        weighted = _segment_sum(w[:, None] * cols, starts)
        mean = np.divide(weighted, total, out=np.full_like(weighted, 1.0 / K), where=total > 0.0)
    return _with_stability(mean, log_odds=False) if binary else mean, None, None


def _gaps(scores: FloatArray, evidence: FloatArray | None, starts: IndexArray, n_sentences: IndexArray, *,
          M: float, tie_rtol: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    r"""The scores (tied log-odds scores averaged, see the module notes), each document's best score and
    each score's gap to it (0 for the classes that tie for the best). :math:`E \le M n_d`, so :math:`E` is
    summed only for the documents within :math:`2\tau M \max_d n_d` of a tie (few, if any)."""
    best = scores.max(axis=1)
    gap = scores - best[:, None]
    if evidence is None:
        return scores, best, gap
    near = gap >= -2.0 * tie_rtol * M * n_sentences.max()
    if np.count_nonzero(near) == near.shape[0]:
        return scores, best, gap  # every best class stands alone, far beyond rounding
    rows = np.flatnonzero(np.count_nonzero(near, axis=1) > 1)
    lengths = n_sentences[rows]  # gather the sentences of those documents, then sum their evidence
    first = np.cumsum(lengths) - lengths
    gathered = np.arange(lengths.sum()) + np.repeat(starts[rows] - first, lengths)
    E = _segment_sum(np.abs(evidence[gathered]), first).max(axis=1)
    tied = gap[rows] >= -2.0 * tie_rtol * E[:, None]
    mean = (scores[rows] * tied).sum(axis=1) / tied.sum(axis=1)
    scores[rows] = np.where(tied, mean[:, None], scores[rows])  # all three are this call's own arrays
    best[rows] = mean
    gap[rows] = scores[rows] - mean[:, None]
    return scores, best, gap


def _first_votes(votes: IndexArray, starts: IndexArray, K: int) -> IndexArray:
    """Position of each class's first vote in each document (``len(votes)`` for a class never voted)."""
    n = votes.shape[0]
    at = np.where(votes[:, None] == np.arange(K), np.arange(n)[:, None], n)
    return np.minimum.reduceat(at, starts, axis=0)


def _winners(tied: npt.NDArray[np.bool_], first_vote: IndexArray | None) -> IndexArray:
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
    p: ArrayLike,
    doc_index: ArrayLike | None = None,
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
        Majority Vote's tie rule (:data:`TIE_RULES`).

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
    if rule not in RULE_NAMES:
        raise ValueError(f"unknown fusion rule {rule!r}; choose one of {', '.join(RULE_NAMES)}")
    _check_params(eps, M, T, ties, tie_rtol)
    arr = _as_probabilities(np.reshape(p, 1) if np.ndim(p) == 0 else p)
    starts, doc_ids = _segments(doc_index, arr.shape[0])
    K = 2 if arr.ndim == 1 else arr.shape[1]
    names = _class_names(classes, K)
    if K == 2 and arr.ndim == 2:
        arr = arr[:, 0]
    n_sentences = np.diff(np.r_[starts, arr.shape[0]])
    scores, evidence, votes = _class_scores(rule, arr, starts, n_sentences, K, eps=eps, M=M)
    scores, best, gap = _gaps(scores, evidence, starts, n_sentences, M=M, tie_rtol=tie_rtol)
    log_odds_rule, evidence = evidence is not None, None  # the sentences' evidence is no longer needed
    first_vote = _first_votes(votes, starts, K) if votes is not None and ties == "first_vote" else None
    index = _winners(gap == 0.0, first_vote)
    if log_odds_rule:  # softmax(Score / T) of the best score, 1 / sum_c exp(gap_c / T), in place in gap
        best = np.reciprocal(np.exp(np.divide(gap, T, out=gap), out=gap).sum(axis=1))
    return FusionBatch(
        prediction=np.asarray(names, dtype=object)[index],
        confidence=best,
        scores=scores,
        index=index,
        doc_ids=doc_ids,
        classes=names,
    )


def _one(p: ArrayLike, rule: str, **options: Any) -> FusionResult:
    """One document through :func:`fuse_many` with its keyword options, so that both routes agree."""
    return fuse_many(p, _ONE_DOCUMENT, rule, **options).result(0)  # type: ignore[arg-type]


def direct(p: float | ArrayLike, *, classes: Sequence[str] | None = None) -> FusionResult:
    r"""Direct prediction from one query on the whole post: change iff :math:`p \ge 0.5`, confidence
    :math:`\max(p, 1-p)`.

    Parameters
    ----------
    p : float or array_like
        P(change) of the whole post (a scalar or one value), or its distribution, shape (K,) or (1, K).
    classes : sequence of str, optional
        Class names, as in :func:`fuse_many`.

    Returns
    -------
    FusionResult

    Examples
    --------
    >>> direct(0.3)
    FusionResult(prediction='stability', confidence=0.7, scores={'change': 0.3, 'stability': 0.7})
    >>> direct([0.2, 0.5, 0.3], classes=["left", "centre", "right"]).prediction
    'centre'
    """
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim == 1 and arr.size > 1:
        arr = arr[None, :]  # one distribution over K classes
    return _one(arr, "direct", classes=classes)


def majority_vote(
    p: ArrayLike, *, classes: Sequence[str] | None = None, ties: str = "first_vote"
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


def soft_vote(p: ArrayLike, *, classes: Sequence[str] | None = None) -> FusionResult:
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
    p: ArrayLike, *, classes: Sequence[str] | None = None, eps: float = EPS, M: float = CLIP,
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
    p: ArrayLike, *, classes: Sequence[str] | None = None, eps: float = EPS, M: float = CLIP,
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


def tef_without_log_odds(p: ArrayLike, *, classes: Sequence[str] | None = None) -> FusionResult:
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
