r"""Fusion rules of the paper (Section 3, protocol §6), per document and over many documents at once.

Every rule turns the sentence posteriors of one document into a document-level decision. Inputs come
in two shapes:

* a sequence of :math:`p_i = P(\text{change} \mid D_i)` (the binary case, :math:`K = 2`), or
* an ``(n_sentences, K)`` array whose rows are distributions :math:`\mathbf p_i \in \Delta^{K-1}`.

For :math:`K = 2` the classes are ``("change", "stability")``; an array with two columns is read through
its first column, so both shapes give the same numbers.

Definitions (natural logarithms, :math:`\epsilon = 10^{-6}`, :math:`M = 10`, :math:`T = 5`):

.. math::

    \ell(p) = \operatorname{clip}\Big(\log\frac{\tilde p}{1-\tilde p}, -M, M\Big),\qquad
    \tilde p = \operatorname{clip}(p, \epsilon, 1-\epsilon),

    w(\mathbf p) = 1 - \frac{H(\mathbf p)}{\log K},\qquad H(\mathbf p) = -\sum_k p^{(k)}\log p^{(k)}
    \quad (0\log 0 = 0,\ \text{unclipped } \mathbf p),

    \operatorname{Score}(c) = \sum_i w(\mathbf p_i)\,\ell\big(p_i^{(c)}\big),\qquad
    \hat Y = \arg\max_c \operatorname{Score}(c).

Ties go to the first class (``change``), as in the reference release. For :math:`K = 2` the two TEF
scores are computed as :math:`s` and :math:`-s` from one sum :math:`s = \sum_i w_i \ell(p_i)`, because
:math:`\ell(1-p) = -\ell(p)` exactly. Summing the two sides separately (as the reference release does)
lets floating-point rounding decide posts whose evidence balances; here a post is a tie when
:math:`|s|` is within a relative ``tie_rtol`` (default :math:`10^{-12}`) of its total evidence
:math:`\sum_i |w_i \ell(p_i)|`, below which the sign of :math:`s` is rounding noise (for instance in
:math:`p` versus the floating-point complement :math:`1 - p`). A tie snaps both scores to zero.

The batch entry point :func:`fuse_many` works on a flat array of sentence probabilities and a
non-decreasing document index, with segment sums (:func:`numpy.add.reduceat`) and no Python loop over
documents. The per-document functions call the same code on a single segment, so both routes give
identical results.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import entr, expit, log_softmax

__all__ = [
    "CLASSES",
    "CLIP",
    "EPS",
    "ROW_SUM_ATOL",
    "RULES",
    "RULE_NAMES",
    "TEMPERATURE",
    "TIE_RTOL",
    "FusionBatch",
    "FusionResult",
    "clipped_log_odds",
    "direct",
    "fuse_many",
    "majority_vote",
    "soft_vote",
    "tef",
    "tef_without_entropy",
    "tef_without_log_odds",
    "weights",
]

CLASSES: tuple[str, str] = ("change", "stability")
"""The two sides, change first (ties go to it); the one definition of the class order."""
EPS: float = 1e-6
"""Probability clip :math:`\\epsilon` of the log-odds."""
CLIP: float = 10.0
"""Log-odds clip :math:`M`."""
TEMPERATURE: float = 5.0
"""Softmax temperature :math:`T` of TEF's confidence."""
TIE_RTOL: float = 1e-12
"""Relative size below which a K = 2 evidence sum is an exact tie (see the module notes)."""
ROW_SUM_ATOL: float = 1e-6
"""How far from 1 a row of a distribution may sum."""

ArrayLike = npt.ArrayLike
FloatArray = npt.NDArray[np.float64]


# --------------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FusionResult:
    """The decision of one fusion rule on one document.

    Attributes
    ----------
    prediction : str or int
        ``"change"`` or ``"stability"`` when :math:`K = 2`; the class index otherwise.
    confidence : float
        The confidence of the predicted class, as the protocol defines it for the rule.
    scores : tuple of float
        Per-class scores (order of the classes): the rule's own score (TEF evidence, vote shares or
        mean probabilities).
    index : int
        Index of the predicted class.
    """

    prediction: str | int
    confidence: float
    scores: tuple[float, ...]
    index: int


@dataclass(frozen=True)
class FusionBatch:
    """Decisions of one rule on many documents (arrays aligned with the documents).

    Attributes
    ----------
    prediction : ndarray, shape (n_docs,)
        Class names (``"change"``/``"stability"``) when :math:`K = 2`, class indices otherwise.
    confidence : ndarray of float, shape (n_docs,)
    scores : ndarray of float, shape (n_docs, K)
    index : ndarray of int, shape (n_docs,)
    doc_ids : ndarray, shape (n_docs,)
        The value of ``doc_index`` that identifies each document.
    """

    prediction: np.ndarray
    confidence: FloatArray
    scores: FloatArray
    index: npt.NDArray[np.int64]
    doc_ids: np.ndarray

    def __len__(self) -> int:
        return int(self.confidence.shape[0])

    def result(self, i: int) -> FusionResult:
        """The :class:`FusionResult` of document ``i``.

        Examples
        --------
        >>> fuse_many([0.9, 0.2], rule="soft_vote").result(1).prediction
        'stability'
        """
        pred = self.prediction[i]
        return FusionResult(
            prediction=str(pred) if self.scores.shape[1] == 2 else int(pred),
            confidence=float(self.confidence[i]),
            scores=tuple(float(s) for s in self.scores[i]),
            index=int(self.index[i]),
        )


# --------------------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------------------
def _as_probabilities(p: ArrayLike, name: str = "p") -> FloatArray:
    """Validate probabilities: 1-D P(change) or 2-D rows of distributions; returns float64."""
    try:
        arr = np.asarray(p, dtype=np.float64)  # may raise on strings or ragged input
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric probabilities: {exc}") from None
    if arr.ndim not in (1, 2):
        raise ValueError(
            f"{name} must be a 1-D array of P(change) or a 2-D (n_sentences, K) array, "
            f"got shape {arr.shape}"
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: a document needs at least one sentence probability")
    if arr.ndim == 2 and arr.shape[1] < 2:
        raise ValueError(f"{name} must have K >= 2 columns, got shape {arr.shape}")
    if not (arr.min() >= 0.0 and arr.max() <= 1.0):  # NaN propagates and fails too
        _raise_bad_values(arr, (arr >= 0.0) & (arr <= 1.0), name)
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


def _raise_bad_values(arr: FloatArray, inside: np.ndarray, name: str) -> None:
    """Raise a ValueError that says which kind of bad value occurs first."""
    bad = np.flatnonzero(~inside.reshape(-1))
    first = np.unravel_index(int(bad[0]), arr.shape)
    where = ", ".join(str(int(k)) for k in first)
    value = float(arr[first])
    if np.isnan(value):
        kind = "NaN"
    elif np.isinf(value):
        kind = "an infinite value"
    else:
        kind = "a value outside [0, 1]"
    raise ValueError(
        f"{name} must hold probabilities in [0, 1]: {bad.size} bad value(s), "
        f"first is {kind} at {name}[{where}] = {value!r}"
    )


def _segments(doc_index: ArrayLike | None, n: int) -> tuple[npt.NDArray[np.intp], np.ndarray]:
    """Start offsets of the documents and their ids, from a non-decreasing document index."""
    if doc_index is None:
        return np.arange(n, dtype=np.intp), np.arange(n)
    if doc_index is _SINGLE:
        return np.zeros(1, dtype=np.intp), np.zeros(1, dtype=np.int64)
    idx = np.asarray(doc_index)
    if idx.ndim != 1:
        raise ValueError(f"doc_index must be 1-D, got shape {idx.shape}")
    if idx.shape[0] != n:
        raise ValueError(
            f"doc_index does not match p: it has {idx.shape[0]} entries but p has {n} rows"
        )
    if idx.dtype.kind not in "iu":
        if idx.dtype.kind == "f" and np.all(np.isfinite(idx)) and np.all(idx == np.round(idx)):
            idx = idx.astype(np.int64)
        else:
            raise ValueError(f"doc_index must hold integers, got dtype {idx.dtype}")
    step = np.diff(idx)
    if (step < 0).any():
        j = int(np.flatnonzero(step < 0)[0]) + 1
        raise ValueError(
            "doc_index must be sorted (non-decreasing, each document's sentences contiguous): "
            f"doc_index[{j}] = {idx[j]} follows {idx[j - 1]}"
        )
    starts = np.concatenate(([0], np.flatnonzero(step) + 1)).astype(np.intp)
    return starts, idx[starts]


def _check_params(eps: float, M: float, T: float) -> None:
    if not (0.0 < eps < 0.5):
        raise ValueError(f"eps must lie in (0, 0.5), got {eps!r}")
    if not (M > 0.0) or math.isinf(M):
        raise ValueError(f"M must be a positive finite number, got {M!r}")
    if not (T > 0.0) or math.isinf(T):
        raise ValueError(f"T must be a positive finite temperature, got {T!r}")


# --------------------------------------------------------------------------------------------------
# elementwise building blocks
# --------------------------------------------------------------------------------------------------
def clipped_log_odds(p: ArrayLike, *, eps: float = EPS, M: float = CLIP) -> FloatArray:
    r"""Clipped log-odds :math:`\ell(p)` of probabilities.

    .. math::

        \ell(p) = \operatorname{clip}\big(\log\tilde p - \log(1-\tilde p), -M, M\big),
        \qquad \tilde p = \operatorname{clip}(p, \epsilon, 1-\epsilon)

    Written as a difference of logarithms so that :math:`\ell(1-p) = -\ell(p)` holds exactly whenever
    :math:`1-p` is exact in floating point.

    Parameters
    ----------
    p : array_like
        Probabilities in [0, 1] (any shape).
    eps, M : float
        Clipping of the probability and of the log-odds.

    Returns
    -------
    ndarray of float

    Examples
    --------
    >>> clipped_log_odds([0.0, 0.5, 0.9, 1.0]).round(3).tolist()
    [-10.0, 0.0, 2.197, 10.0]
    """
    pt = np.clip(np.asarray(p, dtype=np.float64), eps, 1.0 - eps)
    return np.clip(np.log(pt) - np.log(1.0 - pt), -M, M)


def weights(p: ArrayLike) -> FloatArray:
    r"""Normalised information gain :math:`w(\mathbf p) = 1 - H(\mathbf p)/\log K`.

    .. math::

        H(\mathbf p) = -\sum_{k=1}^{K} p^{(k)} \log p^{(k)}, \qquad 0 \log 0 = 0

    computed on the unclipped probabilities.

    Parameters
    ----------
    p : array_like
        Either P(change) values (shape ``(n,)``, :math:`K = 2`) or distributions (shape ``(n, K)``).

    Returns
    -------
    ndarray of float, shape (n,)
        Weights in [0, 1]: 0 for a uniform distribution, 1 for a one-hot one.

    Examples
    --------
    >>> weights([0.5, 0.9, 1.0]).round(3).tolist()
    [0.0, 0.531, 1.0]
    >>> weights([[1 / 3, 1 / 3, 1 / 3], [1.0, 0.0, 0.0]]).round(3).tolist()
    [0.0, 1.0]
    """
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] != 2:
        return 1.0 - entr(arr).sum(axis=1) / math.log(arr.shape[1])
    if arr.ndim == 2:
        arr = arr[:, 0]
    return 1.0 - (entr(arr) + entr(1.0 - arr)) / math.log(2.0)


_TINY = 5e-324  # log(_TINY) is finite, so 0 * log(max(0, _TINY)) = 0 gives 0 log 0 = 0


def _binary_evidence(p: FloatArray, eps: float, M: float, tempered: bool) -> FloatArray:
    """Per-sentence evidence :math:`w_i \\ell(p_i)` (or :math:`\\ell(p_i)` without tempering).

    One logarithm of :math:`p` and one of :math:`1-p` serve both the entropy and the log-odds. When
    :math:`\\ell(\\epsilon) \\le -M` (the defaults) the probability clip changes nothing that the
    log-odds clip does not already decide, so the logs of the unclipped values give identical bits.
    """
    q = 1.0 - p
    lp = np.log(np.maximum(p, _TINY))
    lq = np.log(np.maximum(q, _TINY))
    if math.log(eps) - math.log1p(-eps) <= -M:
        ell = lp - lq
        np.clip(ell, -M, M, out=ell)
    else:
        ell = clipped_log_odds(p, eps=eps, M=M)
    if not tempered:
        return ell
    h = p * lp
    h += q * lq  # -H(p)
    h *= 1.0 / math.log(2.0)
    h += 1.0  # w = 1 - H / log 2
    h *= ell
    return h


# --------------------------------------------------------------------------------------------------
# batch cores (K = 2 and general K); every public function ends here
# --------------------------------------------------------------------------------------------------
def _segment_sum(x: np.ndarray, starts: npt.NDArray[np.intp]) -> np.ndarray:
    return np.add.reduceat(x, starts, axis=0)


def _binary_labels(index: npt.NDArray[np.int64]) -> np.ndarray:
    return np.asarray(CLASSES, dtype=object)[index]


def _binary_batch(
    scores_change: FloatArray,
    confidence: FloatArray,
    doc_ids: np.ndarray,
    change: npt.NDArray[np.bool_],
    scores_stability: FloatArray | None = None,
) -> FusionBatch:
    index = np.where(change, 0, 1).astype(np.int64)
    other = 1.0 - scores_change if scores_stability is None else scores_stability
    return FusionBatch(
        prediction=_binary_labels(index),
        confidence=confidence,
        scores=np.column_stack([scores_change, other]),
        index=index,
        doc_ids=doc_ids,
    )


def _log_odds_sum_binary(
    p: FloatArray, starts: npt.NDArray[np.intp], doc_ids: np.ndarray, *,
    eps: float, M: float, T: float, tempered: bool, tie_rtol: float,
) -> FusionBatch:
    """TEF (tempered) or its w/o-Entropy ablation for K = 2."""
    c = _binary_evidence(p, eps, M, tempered)
    s = _segment_sum(c, starts)
    # balanced evidence is an exact tie: |s| <= tie_rtol * sum_i |c_i|. Since |c_i| <= M, only
    # documents with |s| <= tie_rtol * M * n_d can qualify; the exact test runs when one exists.
    counts = np.diff(np.append(starts, p.shape[0]))
    if np.any(np.abs(s) <= tie_rtol * M * counts):
        scale = _segment_sum(np.abs(c), starts)
        s = np.where(np.abs(s) <= tie_rtol * scale, 0.0, s)
    change = s >= 0.0
    # softmax of (s, -s)/T gives the winner expit(2|s|/T)
    confidence = expit(2.0 * np.abs(s) / T)
    return _binary_batch(s, confidence, doc_ids, change, scores_stability=-s + 0.0)


def _binary_rule(
    rule: str, p: FloatArray, starts: npt.NDArray[np.intp], doc_ids: np.ndarray, *,
    eps: float, M: float, T: float, tie_rtol: float,
) -> FusionBatch:
    if rule in ("tef", "tef_without_entropy"):
        return _log_odds_sum_binary(
            p, starts, doc_ids, eps=eps, M=M, T=T, tempered=rule == "tef", tie_rtol=tie_rtol
        )
    counts = np.diff(np.append(starts, p.shape[0])).astype(np.float64)
    if rule == "direct":
        if np.any(counts != 1):
            raise ValueError("rule 'direct' takes exactly one probability (the whole post) per document")
        m = p
    elif rule == "majority_vote":
        m = _segment_sum((p >= 0.5).astype(np.float64), starts) / counts
    elif rule == "soft_vote":
        m = _segment_sum(p, starts) / counts
    elif rule == "tef_without_log_odds":
        w = weights(p)
        total = _segment_sum(w, starts)
        num = _segment_sum(w * p, starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            m = np.where(total > 0.0, num / np.where(total > 0.0, total, 1.0), 0.5)
    else:  # pragma: no cover - guarded by fuse_many
        raise ValueError(f"unknown rule {rule!r}")
    change = m >= 0.5  # ties (a 50/50 vote, m = 0.5) go to change
    return _binary_batch(m, np.maximum(m, 1.0 - m), doc_ids, change)


def _first_argmax(scores: FloatArray, tol: FloatArray | float = 0.0) -> npt.NDArray[np.int64]:
    """Index of the first class whose score is within ``tol`` of the row maximum (ties → first)."""
    top = scores.max(axis=1, keepdims=True)
    tol_arr = np.asarray(tol, dtype=np.float64).reshape(-1, 1) if np.ndim(tol) else tol
    return np.argmax(scores >= top - tol_arr, axis=1).astype(np.int64)


def _multiclass_rule(
    rule: str, p: FloatArray, starts: npt.NDArray[np.intp], doc_ids: np.ndarray, *,
    eps: float, M: float, T: float, tie_rtol: float,
) -> FusionBatch:
    K = p.shape[1]
    counts = np.diff(np.append(starts, p.shape[0])).astype(np.float64)[:, None]
    if rule in ("tef", "tef_without_entropy"):
        ell = clipped_log_odds(p, eps=eps, M=M)
        c = ell * weights(p)[:, None] if rule == "tef" else ell
        scores = _segment_sum(c, starts)
        tol = tie_rtol * _segment_sum(np.abs(c), starts).max(axis=1)
        index = _first_argmax(scores, tol)
        conf = np.exp(np.take_along_axis(log_softmax(scores / T, axis=1), index[:, None], 1))[:, 0]
        return FusionBatch(index, conf, scores, index, doc_ids)
    if rule == "direct":
        if np.any(counts != 1):
            raise ValueError("rule 'direct' takes exactly one distribution (the whole post) per document")
        scores = p
    elif rule == "majority_vote":
        votes = _first_argmax(p)
        scores = _segment_sum(np.eye(K)[votes], starts) / counts
    elif rule == "soft_vote":
        scores = _segment_sum(p, starts) / counts
    elif rule == "tef_without_log_odds":
        w = weights(p)
        total = _segment_sum(w, starts)[:, None]
        num = _segment_sum(w[:, None] * p, starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = np.where(total > 0.0, num / np.where(total > 0.0, total, 1.0), 1.0 / K)
    else:  # pragma: no cover - guarded by fuse_many
        raise ValueError(f"unknown rule {rule!r}")
    index = _first_argmax(scores)
    conf = np.take_along_axis(scores, index[:, None], 1)[:, 0]
    return FusionBatch(index, conf, scores, index, doc_ids)


# --------------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------------
RULE_NAMES: tuple[str, ...] = (
    "direct", "majority_vote", "soft_vote", "tef", "tef_without_entropy", "tef_without_log_odds",
)


def fuse_many(
    p: ArrayLike,
    doc_index: ArrayLike | None = None,
    rule: str = "tef",
    *,
    eps: float = EPS,
    M: float = CLIP,
    T: float = TEMPERATURE,
    tie_rtol: float = TIE_RTOL,
) -> FusionBatch:
    r"""Fuse the sentence posteriors of many documents at once.

    Parameters
    ----------
    p : array_like, shape (n,) or (n, K)
        Flat sentence probabilities of all documents: P(change) per sentence, or one distribution per
        row.
    doc_index : array_like of int, shape (n,), optional
        Document of each row, non-decreasing (each document's sentences are contiguous). Each run of
        equal values is one document, in order. ``None`` makes every row its own document (the natural
        input of ``rule="direct"``).
    rule : str
        One of :data:`RULE_NAMES`.
    eps, M, T : float
        Probability clip :math:`\epsilon`, log-odds clip :math:`M` and the softmax temperature
        :math:`T` of TEF's confidence.
    tie_rtol : float
        Relative size below which a K = 2 evidence sum counts as an exact tie (see the module notes).

    Returns
    -------
    FusionBatch
        ``prediction``, ``confidence``, ``scores`` (n_docs, K), ``index`` and ``doc_ids``.

    Notes
    -----
    Segment sums use :func:`numpy.add.reduceat`; there is no Python loop over documents. With
    :math:`s_d = \sum_{i \in d} w_i \ell(p_i)` TEF's K = 2 confidence is the softmax of
    :math:`(s_d, -s_d)/T`, i.e. :math:`\sigma(2|s_d|/T)`.

    Examples
    --------
    >>> b = fuse_many([0.9, 0.45, 0.4, 0.3], doc_index=[0, 0, 1, 1])
    >>> list(b.prediction)
    ['change', 'stability']
    """
    if rule not in RULE_NAMES:
        raise ValueError(f"unknown fusion rule {rule!r}; choose one of {', '.join(RULE_NAMES)}")
    _check_params(eps, M, T)
    arr = _as_probabilities(np.reshape(p, 1) if np.ndim(p) == 0 else p)
    starts, doc_ids = _segments(doc_index, arr.shape[0])
    if arr.ndim == 2 and arr.shape[1] == 2:
        arr = arr[:, 0]
    core = _binary_rule if arr.ndim == 1 else _multiclass_rule
    return core(rule, arr, starts, doc_ids, eps=eps, M=M, T=T, tie_rtol=tie_rtol)


_SINGLE = object()  # doc_index marker: all rows form one document


def _one(p: ArrayLike, rule: str, **kwargs: Any) -> FusionResult:
    return fuse_many(p, _SINGLE, rule, **kwargs).result(0)  # type: ignore[arg-type]


def direct(p: float | ArrayLike, **kwargs: Any) -> FusionResult:
    r"""Direct prediction from one query on the whole post.

    .. math:: \hat Y = \text{change} \iff p \ge 0.5, \qquad \text{confidence} = \max(p, 1-p)

    Parameters
    ----------
    p : float or array_like
        P(change) of the whole post (a scalar or a one-element sequence), or its distribution over
        K classes (a sequence of K >= 2 values summing to 1, or an array of shape (1, K)).

    Examples
    --------
    >>> r = direct(0.3)
    >>> r.prediction, r.confidence
    ('stability', 0.7)
    """
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim == 1 and arr.size > 1:
        arr = arr[None, :]  # one distribution over K classes
    return _one(arr, "direct", **kwargs)


def majority_vote(p: ArrayLike, **kwargs: Any) -> FusionResult:
    r"""Majority vote of the sentences' hard labels.

    .. math::

        v_i = \mathbb 1[p_i \ge 0.5],\qquad \hat Y = \text{change} \iff \sum_i v_i \ge N - \sum_i v_i,

    confidence = the winning share of votes (ties go to change).

    Examples
    --------
    >>> r = majority_vote([0.9, 0.2, 0.6, 0.4])
    >>> r.prediction, r.confidence
    ('change', 0.5)
    """
    return _one(p, "majority_vote", **kwargs)


def soft_vote(p: ArrayLike, **kwargs: Any) -> FusionResult:
    r"""Soft vote: the mean sentence probability.

    .. math:: m = \frac1N \sum_i p_i,\qquad \hat Y = \text{change} \iff m \ge 0.5,\qquad
              \text{confidence} = \max(m, 1-m)

    Examples
    --------
    >>> r = soft_vote([0.9, 0.2, 0.6, 0.1])
    >>> r.prediction, round(r.confidence, 3)
    ('stability', 0.55)
    """
    return _one(p, "soft_vote", **kwargs)


def tef(p: ArrayLike, **kwargs: Any) -> FusionResult:
    r"""Tempered Evidence Fusion.

    .. math::

        \operatorname{Score}(c) = \sum_i w(\mathbf p_i)\,\ell\big(p_i^{(c)}\big),\qquad
        \hat Y = \arg\max_c \operatorname{Score}(c),\qquad
        \text{confidence} = \operatorname{softmax}\big(\operatorname{Score}/T\big)_{\hat Y}

    Parameters
    ----------
    p : array_like, shape (n,) or (n, K)
        Sentence posteriors of one document.
    eps, M, T, tie_rtol : float, optional
        See :func:`fuse_many` (defaults :math:`10^{-6}`, 10, 5, :math:`10^{-12}`).

    Examples
    --------
    >>> r = tef([0.99, 0.45, 0.45, 0.45])
    >>> r.prediction, round(r.confidence, 3)
    ('change', 0.844)
    """
    return _one(p, "tef", **kwargs)


def tef_without_entropy(p: ArrayLike, **kwargs: Any) -> FusionResult:
    r"""Ablation "w/o Entropy": TEF with every :math:`w_i = 1`.

    .. math:: \operatorname{Score}(c) = \sum_i \ell\big(p_i^{(c)}\big)

    Examples
    --------
    >>> tef_without_entropy([0.99, 0.45, 0.45, 0.45]).prediction  # the uncertain sentences are not tempered
    'change'
    """
    return _one(p, "tef_without_entropy", **kwargs)


def tef_without_log_odds(p: ArrayLike, **kwargs: Any) -> FusionResult:
    r"""Ablation "w/o Log-Odds": the entropy-weighted mean probability.

    .. math::

        m_w = \frac{\sum_i w_i p_i}{\sum_i w_i} \ (0.5 \text{ when } \textstyle\sum_i w_i = 0),\qquad
        \hat Y = \text{change} \iff m_w \ge 0.5,\qquad \text{confidence} = \max(m_w, 1-m_w)

    Examples
    --------
    >>> r = tef_without_log_odds([0.99, 0.45, 0.45, 0.45])
    >>> r.prediction, round(r.confidence, 3)
    ('change', 0.978)
    """
    return _one(p, "tef_without_log_odds", **kwargs)


RULES: dict[str, Callable[..., FusionResult]] = {
    "direct": direct,
    "majority_vote": majority_vote,
    "soft_vote": soft_vote,
    "tef": tef,
    "tef_without_entropy": tef_without_entropy,
    "tef_without_log_odds": tef_without_log_odds,
}
"""Per-document rules by name."""

