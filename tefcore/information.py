r"""What a sentence's posterior carries, model-free (:mod:`tefcore.simulate` draws posteriors with known
answers): Proposition 1, a hard label throws information away (:func:`binary_entropy`,
:func:`mutual_information`, :class:`Information`); Proposition 2, calibrated and conditionally independent
sentences add their log-odds (:func:`additive_log_odds`, :func:`calibration_slope`); and the rules on one
scale (:func:`contributions`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import entr, logit
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import mutual_info_score

from tefcore.fusion import clipped_log_odds, entropy_weight
from tefcore.metrics import is_change

__all__ = ["CONTRIBUTION_RULES", "Information", "additive_log_odds", "binary_entropy", "calibration_slope",
           "contributions", "mutual_information"]

_FloatArray = npt.NDArray[np.float64]


# --- Proposition 1: information -------------------------------------------------------------------
def binary_entropy(p: npt.ArrayLike) -> _FloatArray:
    r"""Entropy of a Bernoulli(:math:`p`) variable in nats, :math:`h(p) = -p\log p - (1-p)\log(1-p)`,
    :math:`0 \log 0 = 0`.

    Parameters
    ----------
    p : array_like of float in [0, 1]

    Returns
    -------
    ndarray of float, the shape of ``p``

    Examples
    --------
    >>> binary_entropy([0.0, 0.5, 1.0]).round(4).tolist()  # log 2 at 1/2
    [0.0, 0.6931, 0.0]
    """
    arr = np.asarray(p, dtype=np.float64)
    return entr(arr) + entr(1.0 - arr)


@dataclass(frozen=True)
class Information:
    r"""Mutual information (nats) of the true side with a sentence's posterior, ``soft`` :math:`= I(Y; p_i)`,
    and with its hard label, ``hard`` :math:`= I(Y; \hat y_i)`, :math:`\hat y_i = \mathbb 1[p_i \ge 1/2]`.
    """

    soft: float | _FloatArray
    hard: float | _FloatArray

    @property
    def lost(self) -> float | _FloatArray:
        """Information the hard label throws away, :math:`I(Y; p_i) - I(Y; \\hat y_i) \\ge 0`."""
        return self.soft - self.hard


def mutual_information(y: npt.ArrayLike, p: npt.ArrayLike, *, bins: int | None = 32) -> float:
    r"""Plug-in estimate of :math:`I(Y; X)` in nats (:func:`sklearn.metrics.mutual_info_score`), ``p`` cut into
    ``bins`` quantile bins with :math:`1/2` as an extra edge: the hard label :math:`\mathbb 1[p \ge 1/2]` is
    then a function of the bin, so the estimate for ``p`` is never below the one for its hard labels.

    Parameters
    ----------
    y : array_like, shape (n,)
        True sides (as :func:`tefcore.metrics.is_change` reads them).
    p : array_like, shape (n,)
        Posteriors in [0, 1], or discrete labels with ``bins=None``.
    bins : int or None
        Number of quantile bins (>= 2), or None for a ``p`` already discrete.

    Returns
    -------
    float
        Biased upwards by about :math:`(\text{bins}-1)/(2n)` nats, downwards by the binning.

    Examples
    --------
    >>> y = ["change", "change", "stability", "stability"]
    >>> round(mutual_information(y, [1, 1, 0, 0], bins=None), 4)  # the label tells Y: log 2
    0.6931
    """
    target = is_change(y)
    x = np.asarray(p)
    if x.shape != target.shape:
        raise ValueError(f"y and p must have the same shape, got {target.shape} and {x.shape}")
    if bins is None:
        return float(mutual_info_score(target, x))
    if bins < 2:
        raise ValueError(f"bins must be >= 2, got {bins!r}")
    xf = x.astype(np.float64)
    if not (xf.min() >= 0.0 and xf.max() <= 1.0):
        raise ValueError("p must hold probabilities in [0, 1] when binned")
    edges = np.unique(np.concatenate([np.quantile(xf, np.linspace(0, 1, bins + 1)[1:-1]), [0.5]]))
    codes = np.searchsorted(edges, xf, side="right")  # bin k holds edges[k-1] <= p < edges[k]
    return float(mutual_info_score(target, codes))


# --- Proposition 2: the additive identity ---------------------------------------------------------
def additive_log_odds(
    p: npt.ArrayLike, doc_index: npt.ArrayLike, *, prior: float = 0.5
) -> _FloatArray:
    r"""Document log-odds as the sum of sentence log-odds, unclipped (Proposition 2): for conditionally
    independent sentences with calibrated posteriors :math:`p_i`,
    :math:`\log\frac{P(c \mid D_{1:N})}{P(\bar c \mid D_{1:N})} = \sum_{i=1}^{N} \operatorname{logit} p_i -
    (N - 1)\operatorname{logit}\pi`.

    Parameters
    ----------
    p : array_like of float, shape (n_sentences,)
        Sentence posteriors in (0, 1).
    doc_index : array_like of int, shape (n_sentences,)
        Document of each sentence, ``0 .. n_docs - 1``.
    prior : float
        :math:`\pi = P(c)`.

    Returns
    -------
    ndarray of float, shape (n_docs,)

    Examples
    --------
    >>> additive_log_odds([0.8, 0.5, 0.2, 0.9], [0, 0, 1, 1]).round(3).tolist()  # logit 0.8 + logit 0.5, ...
    [1.386, 0.811]
    """
    if not 0.0 < prior < 1.0:
        raise ValueError(f"prior must lie in (0, 1), got {prior!r}")
    arr = np.asarray(p, dtype=np.float64)
    idx = np.asarray(doc_index)
    if arr.shape != idx.shape or arr.ndim != 1:
        raise ValueError(
            f"p and doc_index must be 1-D and aligned, got shapes {arr.shape} and {idx.shape}"
        )
    if not (arr.size and arr.min() > 0.0 and arr.max() < 1.0):
        raise ValueError("p must be non-empty and hold probabilities strictly inside (0, 1)")
    if idx.dtype.kind not in "iu" or idx.min() < 0:
        raise ValueError("doc_index must hold non-negative integers")
    n = np.bincount(idx)
    return np.bincount(idx, weights=logit(arr)) - (n - 1) * float(logit(prior))


def calibration_slope(score: npt.ArrayLike, y: npt.ArrayLike) -> float:
    r"""Slope :math:`\beta` of the logistic recalibration :math:`P(\text{change}) = \sigma(\alpha + \beta s)`,
    fitted by unpenalised maximum likelihood (:class:`sklearn.linear_model.LogisticRegression`): 1 for a
    calibrated log-odds score, below 1 for an overconfident one.

    Parameters
    ----------
    score : array_like of float, shape (n_docs,)
        Log-odds in favour of change.
    y : array_like, shape (n_docs,)
        True sides (as :func:`tefcore.metrics.is_change` reads them).

    Returns
    -------
    float

    Examples
    --------
    >>> s = np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0])
    >>> round(calibration_slope(s, [False, False, True, False, True, True]), 2)
    1.35
    """
    s = np.asarray(score, dtype=np.float64).reshape(-1, 1)
    target = is_change(y)
    if s.shape[0] != target.shape[0]:
        raise ValueError(
            f"score and y must have the same length, got {s.shape[0]} and {target.shape[0]}"
        )
    if not np.isfinite(s).all():
        raise ValueError("score must be finite")
    if target.all() or not target.any():
        raise ValueError("y must contain both classes to fit a calibration slope")
    model = LogisticRegression(C=np.inf, max_iter=1000).fit(s, target)
    return float(model.coef_[0, 0])


# --- the rules on one scale -----------------------------------------------------------------------
CONTRIBUTION_RULES: tuple[str, ...] = ("majority_vote", "soft_vote", "tef_without_entropy", "tef")


def contributions(p: npt.ArrayLike) -> pd.DataFrame:
    r"""What one sentence adds to each rule's decision: a binary rule predicts change when the sum of
    :math:`\varphi(p_i)` is non-negative (ties as in :mod:`tefcore.fusion`), with

    .. math::

        \varphi_{\mathrm{MV}}(p) = \operatorname{sign}(p - \tfrac12)\ (+1 \text{ at } \tfrac12),\quad
        \varphi_{\mathrm{SV}}(p) = p - \tfrac12,\quad
        \varphi_{\text{w/o Entropy}}(p) = \ell(p),\quad
        \varphi_{\mathrm{TEF}}(p) = w(p)\,\ell(p).

    Only ratios within a rule ("how many sentences at :math:`p'` outweigh one at :math:`p`") compare
    across rules.

    Parameters
    ----------
    p : array_like of float, shape (n,)
        Sentence posteriors P(change) in [0, 1].

    Returns
    -------
    pandas.DataFrame
        One column per rule of :data:`CONTRIBUTION_RULES`, one row per probability.

    Examples
    --------
    >>> contributions([0.55, 0.99]).round(3)
       majority_vote  soft_vote  tef_without_entropy    tef
    0            1.0       0.05                0.201  0.001
    1            1.0       0.49                4.595  4.224
    """
    arr = np.atleast_1d(np.asarray(p, dtype=np.float64))
    if arr.ndim != 1 or not (arr.size and arr.min() >= 0.0 and arr.max() <= 1.0):
        raise ValueError("p must be a non-empty 1-D array of probabilities in [0, 1] (no NaN)")
    ell = clipped_log_odds(arr)
    return pd.DataFrame(
        {
            "majority_vote": np.where(arr >= 0.5, 1.0, -1.0),
            "soft_vote": arr - 0.5,
            "tef_without_entropy": ell,
            "tef": entropy_weight(arr) * ell,
        }
    )
