r"""Simulated posts for numerical checks of the method, for which the right answer is known: the claims
ledger's checks (:mod:`tefpaper.checks`) and the theory chapters draw the same posts from the same seeds,
and ask of the same constructed posts how many hedging sentences overturn a decisive one
(:func:`first_flips`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.stats import norm

from tefcore.fusion import fuse_many
from tefcore.information import CONTRIBUTION_RULES

__all__ = ["first_flips", "gaussian_shift_posts", "random_posts"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def random_posts(k: int, n: int = 300, seed: int = 0) -> tuple[FloatArray, IntArray]:
    """``n`` random posts of 1 to 8 sentences, for checks that must hold on any input: for ``k = 2``
    P(change) ~ Beta(0.7, 0.7), 5 % of them set to 0, 0.5 or 1; for ``k > 2`` rows ~ Dirichlet(0.8).

    Parameters
    ----------
    k, n, seed : int
        Classes, posts, and the seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    p : ndarray, shape (n_sentences,) or (n_sentences, k)
    doc_index : ndarray of int, shape (n_sentences,)
        Post of each sentence, non-decreasing.

    Examples
    --------
    >>> p, doc = random_posts(3, n=4, seed=1)
    >>> p.shape[1], int(doc.max()), bool(np.allclose(p.sum(axis=1), 1.0))
    (3, 3, True)
    """
    rng = np.random.default_rng(seed)
    doc = np.repeat(np.arange(n), rng.integers(1, 9, n))
    if k == 2:
        p = rng.beta(0.7, 0.7, doc.size)
        edge = rng.random(doc.size) < 0.05
        p[edge] = rng.choice([0.0, 0.5, 1.0], size=int(edge.sum()))
        return p, doc
    return rng.dirichlet(np.full(k, 0.8), doc.size), doc


def gaussian_shift_posts(prior: float, n: int = 3000, seed: int = 5) -> tuple[FloatArray, IntArray, FloatArray]:
    r"""Posts of calibrated, independent sentences with known likelihoods, and their exact log-odds. Post
    :math:`d` is change with probability :math:`\pi` (``prior``); each of its 1 to 8 sentences has
    :math:`\mu_i \sim U(0.2, 3)` and :math:`x_i \sim N(\pm\mu_i/2, 1)`, so :math:`p_i = \pi\phi(x_i-\mu_i/2)
    / (\pi\phi(x_i-\mu_i/2) + (1-\pi)\phi(x_i+\mu_i/2))`; the exact log-odds come from the joint
    likelihood, a route that never forms a sentence posterior,
    :math:`\ell(\pi) + \sum_i [\log\phi(x_i - \mu_i/2) - \log\phi(x_i + \mu_i/2)]`.

    Returns
    -------
    p : ndarray, shape (n_sentences,)
    doc_index : ndarray of int, shape (n_sentences,)
    exact : ndarray, shape (n,)

    Examples
    --------
    >>> from tefcore.information import additive_log_odds
    >>> p, doc, exact = gaussian_shift_posts(0.3, n=50, seed=0)
    >>> bool(np.allclose(additive_log_odds(p, doc, prior=0.3), exact))
    True
    """
    rng = np.random.default_rng(seed)
    doc = np.repeat(np.arange(n), rng.integers(1, 9, n))
    mu = rng.uniform(0.2, 3.0, doc.size)
    change = rng.random(n) < prior
    x = np.where(change[doc], mu / 2, -mu / 2) + rng.standard_normal(doc.size)
    a, b = prior * norm.pdf(x, mu / 2), (1 - prior) * norm.pdf(x, -mu / 2)
    exact = (math.log(prior) + np.bincount(doc, norm.logpdf(x, mu / 2))) - (
        math.log(1 - prior) + np.bincount(doc, norm.logpdf(x, -mu / 2)))
    return a / (a + b), doc, exact


def first_flips(strong: float, weak: float, counts: Sequence[int] | npt.ArrayLike,
                rules: Sequence[str] = CONTRIBUTION_RULES) -> pd.Series:
    """The smallest number of ``weak`` sentences that turns a post with one ``strong`` sentence around.

    Post ``n`` holds one sentence at ``strong`` followed by ``n`` at ``weak``; every post of ``counts`` is
    decided by :func:`tefcore.fusion.fuse_many` (one call per rule), and the first ``n`` whose
    prediction differs from that of the post without weak sentences is reported.

    Parameters
    ----------
    strong, weak : float
        The probabilities of the decisive sentence and of the hedging ones.
    counts : sequence of int
        The numbers of weak sentences tried, increasing (e.g. ``range(41)``).
    rules : sequence of str
        Rule names of :mod:`tefcore.fusion` (default: MV, SV, the log-odds sum and TEF).

    Returns
    -------
    pandas.Series
        Indexed by rule (nullable integers): the first ``n`` that flips, missing when none of ``counts``
        does.

    Examples
    --------
    >>> first_flips(0.95, 0.45, range(41)).to_dict()
    {'majority_vote': 2, 'soft_vote': 10, 'tef_without_entropy': 15, 'tef': None}
    """
    n = np.asarray(list(counts), dtype=np.int64)
    if n.ndim != 1 or n.size == 0 or (n < 0).any() or (np.diff(n) <= 0).any():
        raise ValueError("counts must be non-empty, non-negative and increasing")
    flat = np.concatenate([np.r_[strong, np.full(k, weak)] for k in n])
    doc = np.repeat(np.arange(n.size), n + 1)
    out: dict[str, object] = {}
    for rule in rules:
        pred = fuse_many(flat, doc, rule=rule).prediction
        alone = fuse_many([strong], [0], rule=rule).prediction[0]
        flipped = np.flatnonzero(pred != alone)
        out[rule] = int(n[flipped[0]]) if flipped.size else pd.NA
    return pd.Series(out, dtype="Int64", name="first n that flips")
