"""The probes of the cross-fitted e5 judge (:mod:`tefcore.judges.e5_crossfit`): an L2 logistic regression on
embeddings, standardized first, its ``C`` fixed or chosen by an inner cross-validation on the probe's own
training posts; two sides give one weight vector, K > 2 sides a multinomial one. Each fitted probe is kept
as one linear model on raw embeddings (:class:`ProbeFit`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

__all__ = ["DEFAULT_C_GRID", "INNER_SCORING", "SOLVER", "TOL", "TUNED", "ProbeChoice", "ProbeFit", "ProbeSettings",
           "check_folds", "fit_multinomial_probe", "fit_probe", "laplace_prior", "linear_form", "make_probe"]

TUNED = "inner-cv"
"""The value of ``C`` that has each probe choose its own by inner cross-validation (the default)."""

DEFAULT_C_GRID: tuple[float, ...] = tuple(float(f"{c:.4g}") for c in np.logspace(-4, 1, 11))
"""Candidate values of ``C`` for the inner search: half-decade steps from :math:`10^{-4}` (a probe
shrunk to the prior) to :math:`10` (barely penalised), for standardized 384-d features."""

INNER_SCORING = "neg_log_loss"
"""What the inner search maximises: the log-likelihood of held-out labels. The judge's output is a
probability that the fusion rules weigh (Soft Vote, TEF), so ``C`` is chosen by a proper scoring rule
of that probability, not by accuracy."""

SOLVER = "newton-cholesky"
"""The logistic regression's solver. Newton steps on the exact Hessian reach the one optimum of an L2-penalised
logistic regression to :data:`TOL` in a few iterations; a quasi-Newton solver stopped at scikit-learn's
default tolerance ends up to 0.16 in P(change) away from it (measured on MIND posts), at a point that
depends on its path, and so on the last bits of the embeddings and of the BLAS kernel."""

TOL = 1e-10
"""The solver's stopping tolerance: probabilities within about 1e-12 of the optimum's, the same on every BLAS
kernel (measured: at most 2e-15 apart across OpenBLAS's Haswell, Sandybridge and Prescott kernels)."""
_PROBE_STEPS = ("scale", "logreg")
_SPAN_STEP = "span"

def check_folds(k: int, what: str) -> int:
    """``k`` as an int, checked to be a whole number of folds >= 2."""
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise ValueError(f"{what} must be an integer >= 2, got {k!r}")
    return int(k)


@dataclass(frozen=True)
class ProbeSettings:
    """How every probe of a judge is fitted, checked on construction.

    The attributes are the parameters of the same names of
    :class:`~tefcore.judges.e5_crossfit.E5CrossFitBackend` (``scoring`` is its ``inner_scoring``); ``C`` is
    kept as a float (or :data:`TUNED`), ``C_grid`` sorted.

    Raises
    ------
    ValueError
        On a ``C`` that is neither positive nor :data:`TUNED`, a grid without distinct positive values,
        fewer than two inner folds, or an unknown scorer.
    """

    standardize: bool = True
    C: float | str = TUNED
    C_grid: tuple[float, ...] = DEFAULT_C_GRID
    inner_folds: int = 5
    scoring: str = INNER_SCORING
    max_iter: int = 1000

    def __post_init__(self) -> None:
        """Check every value; keep ``C`` as a float and ``C_grid`` sorted."""
        from sklearn.metrics import get_scorer_names

        C = self.C
        if not (isinstance(C, str) and C == TUNED):
            if isinstance(C, bool) or not isinstance(C, (int, float)) or not (math.isfinite(C) and C > 0):
                raise ValueError(f"C must be a positive number or {TUNED!r}, got {C!r}")
            object.__setattr__(self, "C", float(C))
        grid = tuple(float(c) for c in self.C_grid)
        if not grid or not all(math.isfinite(c) and c > 0 for c in grid) or len(set(grid)) != len(grid):
            raise ValueError(f"C_grid must hold distinct positive numbers, got {grid}")
        object.__setattr__(self, "C_grid", tuple(sorted(grid)))
        object.__setattr__(self, "inner_folds", check_folds(self.inner_folds, "inner_folds"))
        if self.scoring not in get_scorer_names():
            raise ValueError(f"inner_scoring must be a scikit-learn scorer name (e.g. {INNER_SCORING!r}), "
                             f"got {self.scoring!r}")

    @property
    def tuned(self) -> bool:
        """True when ``C`` is chosen by the inner search."""
        return self.C == TUNED


@dataclass(frozen=True)
class ProbeChoice:
    """How one probe was obtained (recorded in the provenance).

    Attributes
    ----------
    C : float or None
        The ``C`` of the fitted regression; None for the prior fallback.
    inner_folds : int
        Folds of the inner search; 0 when none ran.
    inner_scores : tuple of float
        Mean inner-CV score of each grid value (grid order); empty when no search ran.
    fallback : str
        Why no regression was fitted; empty when one was.
    """

    C: float | None = None
    inner_folds: int = 0
    inner_scores: tuple[float, ...] = ()
    fallback: str = ""


@dataclass(frozen=True)
class ProbeFit:
    """A fitted probe as one linear model on raw embeddings: :math:`P = \\sigma(w^\\top e + b)` for two sides
    (``coef`` of shape ``(d,)``, ``intercept`` a float), :math:`P = \\operatorname{softmax}(W e + b)` for K > 2
    (shapes ``(K, d)`` and ``(K,)``)."""

    coef: np.ndarray
    intercept: float | np.ndarray
    choice: ProbeChoice

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """P(first side) of each row of ``x`` (two sides), or the distribution over the K sides."""
        z = x @ self.coef.T + self.intercept
        return expit(z) if self.coef.ndim == 1 else softmax(z, axis=-1)


def laplace_prior(n_change: int, n: int) -> float:
    """Add-one estimate of P(change) from a training fold: :math:`(n_c + 1) / (n + 2)`.

    The fallback of a fold with a single class (or no post at all): its own class prior, smoothed so
    that it never reaches 0 or 1 (a 0/1 would claim certainty the fold cannot carry).

    Examples
    --------
    >>> laplace_prior(3, 4)
    0.6666666666666666
    """
    if n < 0 or not 0 <= n_change <= n:
        raise ValueError(f"need 0 <= n_change <= n, got n_change={n_change}, n={n}")
    return (n_change + 1.0) / (n + 2.0)


class _RowSpan(TransformerMixin, BaseEstimator):
    """Coordinates of each row on an orthonormal basis of the row span of the training part (its right
    singular vectors, those of singular value above the rank threshold of :func:`numpy.linalg.matrix_rank`).

    The multinomial probe is fitted on these ``r <= n`` coordinates instead of the ``d`` features. It is
    the same problem: at the optimum of an L2-penalised logistic regression the gradient condition reads
    :math:`W = C\\,R^\\top X` (:math:`R` the residuals of the training part :math:`X`), so the weights lie
    in the row span :math:`W = \\hat W V^\\top`, where :math:`X W^\\top = (X V)\\hat W^\\top` and
    :math:`\\lVert W \\rVert = \\lVert \\hat W \\rVert`; the solution is mapped back by :func:`linear_form`.
    With ``n`` much smaller than ``d`` (a task's few labelled texts against 384 dimensions) each Newton step
    factorises a matrix of side :math:`K(r + 1)` instead of :math:`K(d + 1)`.

    Examples
    --------
    >>> x = np.array([[1.0, 0.0, 0.0, 2.0], [0.0, 1.0, 0.0, 2.0]])
    >>> span = _RowSpan().fit(x)
    >>> span.components_.shape, bool(np.allclose(span.transform(x) @ span.components_, x))
    ((2, 4), True)
    """

    def fit(self, x: np.ndarray, y: Any = None) -> _RowSpan:
        """Keep the right singular vectors of ``x`` (at least one)."""
        _, s, vt = np.linalg.svd(np.asarray(x, dtype=np.float64), full_matrices=False)
        keep = s > s[0] * max(np.shape(x)) * np.finfo(np.float64).eps
        keep[0] = True
        self.components_ = vt[keep]
        return self

    def transform(self, x: np.ndarray) -> np.ndarray:
        """The coordinates ``x @ components_.T``."""
        return np.asarray(x, dtype=np.float64) @ self.components_.T


def make_probe(standardize: bool = True, C: float = 1.0, max_iter: int = 1000, row_span: bool = False) -> Pipeline:
    """The probe: ``Pipeline(StandardScaler, LogisticRegression)`` (:data:`SOLVER` to :data:`TOL`), the scaler
    ``"passthrough"`` when off; with ``row_span`` (the multinomial probe) a :class:`_RowSpan` step between them.

    Examples
    --------
    >>> make_probe(C=0.1).named_steps["logreg"].C
    0.1
    >>> make_probe(standardize=False).named_steps["scale"]
    'passthrough'
    >>> [name for name, _ in make_probe(row_span=True).steps]
    ['scale', 'span', 'logreg']
    """
    scaler: Any = StandardScaler() if standardize else "passthrough"
    logreg = LogisticRegression(C=C, solver=SOLVER, tol=TOL, max_iter=max_iter)
    span = [(_SPAN_STEP, _RowSpan())] if row_span else []
    return Pipeline([(_PROBE_STEPS[0], scaler), *span, (_PROBE_STEPS[1], logreg)])


def linear_form(probe: Pipeline) -> tuple[np.ndarray, float]:
    """A fitted probe as one linear model on raw embeddings (the scaler, and a :class:`_RowSpan` basis,
    folded into the weights).

    .. math:: w^\\top \\frac{x - m}{s} + b = \\Big(\\frac{w}{s}\\Big)^\\top x + \\Big(b - w^\\top \\frac{m}{s}\\Big)

    Returns
    -------
    coef : numpy.ndarray
        Shape ``(n_features,)``; ``(K, n_features)`` for a multinomial probe.
    intercept : float or numpy.ndarray
        A float; shape ``(K,)`` for a multinomial probe.

    Examples
    --------
    >>> x = np.array([[0.0, 1.0], [1.0, 3.0], [2.0, 2.0], [3.0, 5.0]])
    >>> probe = make_probe().fit(x, [0, 0, 1, 1])
    >>> w, b = linear_form(probe)
    >>> bool(np.allclose(probe.decision_function(x), x @ w + b))
    True
    """
    scaler, logreg = (probe.named_steps[s] for s in _PROBE_STEPS)
    if logreg.coef_.shape[0] > 1:  # multinomial: one row per side
        W, c = logreg.coef_.astype(np.float64), logreg.intercept_.astype(np.float64)
        if _SPAN_STEP in probe.named_steps:
            W = W @ probe.named_steps[_SPAN_STEP].components_
        return (W, c) if scaler == "passthrough" else (W / scaler.scale_, c - W @ (scaler.mean_ / scaler.scale_))
    w, b = logreg.coef_[0].astype(np.float64), float(logreg.intercept_[0])
    if scaler == "passthrough":
        return w, b
    return w / scaler.scale_, b - float(w @ (scaler.mean_ / scaler.scale_))


def _prior_fit(y: np.ndarray, n_features: int, reason: str) -> ProbeFit:
    """The constant :func:`laplace_prior` of the training labels, as a linear model with zero weights."""
    prior = laplace_prior(int(y.sum()), len(y))
    return ProbeFit(np.zeros(n_features), math.log(prior) - math.log1p(-prior), ProbeChoice(fallback=reason))


def _prior_fit_k(y: np.ndarray, k: int, n_features: int, reason: str) -> ProbeFit:
    """K sides: the add-one prior :math:`(n_k + 1) / (n + K)` of the training labels, zero weights."""
    prior = (np.bincount(y, minlength=k) + 1.0) / (len(y) + k)
    return ProbeFit(np.zeros((k, n_features)), np.log(prior), ProbeChoice(fallback=reason))


def fit_multinomial_probe(x: np.ndarray, y: np.ndarray, k: int, seed: int, settings: ProbeSettings) -> ProbeFit:
    """:func:`fit_probe` for a dimension of ``k > 2`` sides: a multinomial logistic regression (:data:`SOLVER`
    to :data:`TOL`, on the :class:`_RowSpan` coordinates of the training part), ``C`` chosen alike; the add-one prior over the ``k`` sides when a side is absent from
    the training part or has a single post under ``"inner-cv"``.

    Parameters
    ----------
    x : numpy.ndarray
        Embeddings, shape ``(n, d)``.
    y : numpy.ndarray
        Each post's side as its index in the dimension's sides, shape ``(n,)``.
    k : int
        Number of sides.
    seed : int
    settings : ProbeSettings

    Returns
    -------
    ProbeFit
        ``coef`` of shape ``(k, d)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1, 2], 12)
    >>> x = rng.normal(size=(36, 3)) + 2.0 * np.eye(3)[y]
    >>> fit = fit_multinomial_probe(x, y, 3, seed=0, settings=ProbeSettings(C_grid=(0.1, 1.0)))
    >>> fit.coef.shape, fit.choice.inner_folds, float((fit.probabilities(x).argmax(axis=1) == y).mean()) > 0.8
    ((3, 3), 5, True)
    """
    counts = np.bincount(y, minlength=k)
    if (counts == 0).any():
        return _prior_fit_k(y, k, x.shape[1], "one side only" if (counts > 0).sum() < 2 else "a side absent")
    if not settings.tuned:
        probe = make_probe(settings.standardize, float(settings.C), settings.max_iter, row_span=True).fit(x, y)
        return ProbeFit(*linear_form(probe), ProbeChoice(C=float(settings.C)))
    folds = min(settings.inner_folds, int(counts.min()))
    if folds < 2:
        return _prior_fit_k(y, k, x.shape[1], "one post of a side: C cannot be chosen")
    return _searched(x, y, folds, seed, settings, row_span=True)


def _searched(x: np.ndarray, y: np.ndarray, folds: int, seed: int, settings: ProbeSettings,
              row_span: bool = False) -> ProbeFit:
    """The inner search over ``C_grid`` on ``folds`` stratified folds, the best refitted on all of ``x``."""
    search = GridSearchCV(make_probe(settings.standardize, 1.0, settings.max_iter, row_span),
                          {f"{_PROBE_STEPS[1]}__C": list(settings.C_grid)}, scoring=settings.scoring,
                          cv=StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed), error_score="raise")
    search.fit(x, y)
    scores = tuple(round(float(v), 6) for v in search.cv_results_["mean_test_score"])
    choice = ProbeChoice(float(search.best_params_[f"{_PROBE_STEPS[1]}__C"]), folds, scores)
    return ProbeFit(*linear_form(search.best_estimator_), choice)


def fit_probe(x: np.ndarray, y: np.ndarray, seed: int, settings: ProbeSettings) -> ProbeFit:
    """Fit one probe on the posts it is given, and on nothing else (the choice of ``C`` included).

    With a fixed ``C`` the probe is fitted once. With ``C = "inner-cv"`` the data are split into
    :math:`k = \\min(\\text{inner\\_folds}, n_{\\min})` stratified folds (:math:`n_{\\min}`: posts of the
    smaller side), shuffled with ``seed``; each ``C`` of the grid is scored on them by
    :class:`~sklearn.model_selection.GridSearchCV` (the scaler refitted on every inner training part),
    and the best (ties to the smaller ``C``) is refitted on all of ``x``. Too little to learn from gives
    the constant :func:`laplace_prior`: a single side (either setting), or a smaller side of one post
    under ``"inner-cv"``.

    Parameters
    ----------
    x : numpy.ndarray
        Embeddings, shape ``(n, d)``.
    y : numpy.ndarray
        1 for change, 0 for stability, shape ``(n,)``.
    seed : int
        Seed of the inner split.
    settings : ProbeSettings

    Returns
    -------
    ProbeFit

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)
    >>> x = rng.normal(size=(40, 3)) + y[:, None]
    >>> fit = fit_probe(x, y, seed=0, settings=ProbeSettings(C_grid=(0.01, 1.0)))
    >>> fit.choice.inner_folds, len(fit.choice.inner_scores), fit.choice.C in (0.01, 1.0)
    (5, 2, True)
    """
    n_minor = int(min(y.sum(), len(y) - y.sum()))
    if n_minor == 0:
        return _prior_fit(y, x.shape[1], "one side only")
    if not settings.tuned:
        probe = make_probe(settings.standardize, float(settings.C), settings.max_iter).fit(x, y)
        return ProbeFit(*linear_form(probe), ProbeChoice(C=float(settings.C)))
    k = min(settings.inner_folds, n_minor)
    if k < 2:
        return _prior_fit(y, x.shape[1], "one post of a side: C cannot be chosen")
    return _searched(x, y, k, seed, settings)
