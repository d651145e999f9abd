"""The cross-fitted e5 judge (:class:`E5CrossFitBackend`): a logistic probe on multilingual-e5-small post
embeddings (:mod:`tefcore.judges.e5`), cross-fitted over posts or fitted on another labelled set.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sklearn
from scipy.special import expit
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from tefcore.judges.base import Score, ScoreRequest
from tefcore.judges.e5 import E5Embedder, check_lang_dimension, embedding_score, model_provenance, shared_embedder
from tefcore.mind.load import evaluation_pairs, load_posts, mind_filename, resolve_data_dir
from tefcore.hashing import file_sha256
from tefcore.tasks.schema import EvaluationPair

__all__ = ["DEFAULT_C_GRID", "INNER_SCORING", "MIN_FIT_PAIRS", "SOLVER", "TOL", "TUNED", "E5CrossFitBackend", "ProbeChoice", "ProbeFit",
           "ProbeSettings", "fit_probe", "group_posts", "laplace_prior", "linear_form", "make_probe",
           "training_sha256", "warn_if_small"]

log = logging.getLogger(__name__)

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

MIN_FIT_PAIRS = 300
"""Below this many labelled pairs in a language, :meth:`E5CrossFitBackend.prepare` warns."""

_PROBE_STEPS = ("scale", "logreg")


@dataclass(frozen=True)
class ProbeSettings:
    """How every probe of a judge is fitted, checked on construction.

    The attributes are the parameters of the same names of :class:`E5CrossFitBackend` (``scoring`` is its
    ``inner_scoring``); ``C`` is kept as a float (or :data:`TUNED`), ``C_grid`` sorted.

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
        object.__setattr__(self, "inner_folds", _check_folds(self.inner_folds, "inner_folds"))
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
    """A fitted probe as one linear model on raw embeddings: :math:`P = \\sigma(w^\\top e + b)`."""

    coef: np.ndarray
    intercept: float
    choice: ProbeChoice


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


def make_probe(standardize: bool = True, C: float = 1.0, max_iter: int = 1000) -> Pipeline:
    """The probe: ``Pipeline(StandardScaler, LogisticRegression)`` (:data:`SOLVER` to :data:`TOL`), the scaler
    ``"passthrough"`` when off.

    Examples
    --------
    >>> make_probe(C=0.1).named_steps["logreg"].C
    0.1
    >>> make_probe(standardize=False).named_steps["scale"]
    'passthrough'
    """
    scaler: Any = StandardScaler() if standardize else "passthrough"
    logreg = LogisticRegression(C=C, solver=SOLVER, tol=TOL, max_iter=max_iter)
    return Pipeline([(_PROBE_STEPS[0], scaler), (_PROBE_STEPS[1], logreg)])


def linear_form(probe: Pipeline) -> tuple[np.ndarray, float]:
    """A fitted probe as one linear model on raw embeddings (the scaler folded into the weights).

    .. math:: w^\\top \\frac{x - m}{s} + b = \\Big(\\frac{w}{s}\\Big)^\\top x + \\Big(b - w^\\top \\frac{m}{s}\\Big)

    Returns
    -------
    coef : numpy.ndarray
        Shape ``(n_features,)``.
    intercept : float

    Examples
    --------
    >>> x = np.array([[0.0, 1.0], [1.0, 3.0], [2.0, 2.0], [3.0, 5.0]])
    >>> probe = make_probe().fit(x, [0, 0, 1, 1])
    >>> w, b = linear_form(probe)
    >>> bool(np.allclose(probe.decision_function(x), x @ w + b))
    True
    """
    scaler, logreg = (probe.named_steps[s] for s in _PROBE_STEPS)
    w, b = logreg.coef_[0].astype(np.float64), float(logreg.intercept_[0])
    if scaler == "passthrough":
        return w, b
    return w / scaler.scale_, b - float(w @ (scaler.mean_ / scaler.scale_))


def _prior_fit(y: np.ndarray, n_features: int, reason: str) -> ProbeFit:
    """The constant :func:`laplace_prior` of the training labels, as a linear model with zero weights."""
    prior = laplace_prior(int(y.sum()), len(y))
    return ProbeFit(np.zeros(n_features), math.log(prior) - math.log1p(-prior), ProbeChoice(fallback=reason))


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
    search = GridSearchCV(make_probe(settings.standardize, 1.0, settings.max_iter),
                          {f"{_PROBE_STEPS[1]}__C": list(settings.C_grid)}, scoring=settings.scoring,
                          cv=StratifiedKFold(n_splits=k, shuffle=True, random_state=seed), error_score="raise")
    search.fit(x, y)
    scores = tuple(round(float(v), 6) for v in search.cv_results_["mean_test_score"])
    choice = ProbeChoice(float(search.best_params_[f"{_PROBE_STEPS[1]}__C"]), k, scores)
    return ProbeFit(*linear_form(search.best_estimator_), choice)


Posts = dict[str, tuple[str, str]]
"""``post id -> (text, side)`` of one (language, dimension)."""


def group_posts(pairs: Iterable["EvaluationPair"]) -> dict[tuple[str, str], Posts]:
    """The unique posts of each (language, dimension), keyed by post id.

    Raises
    ------
    ValueError
        If a post appears twice in a (language, dimension) with different texts or sides; if a task's
        pair has no gold side, or its dimension more than two sides (a probe learns the first side).
    """
    groups: dict[tuple[str, str], Posts] = defaultdict(dict)
    for pair in pairs:
        if pair.choices.letters == ("C", "S"):  # MIND's sides: check its language and dimension
            check_lang_dimension(pair.lang, pair.dimension)
        elif pair.choices.K != 2:
            raise ValueError(f"e5-crossfit fits a probe of two sides and {pair.dimension!r} has {pair.choices.K}; "
                             "use e5-zeroshot or an LLM judge")
        elif pair.side is None:
            raise ValueError(f"e5-crossfit learns from gold sides and text {pair.post_id!r} has none for "
                             f"{pair.dimension!r}; give every text a gold side, or use e5-zeroshot or an LLM judge")
        seen = groups[(pair.lang, pair.dimension)]
        entry = (pair.text, pair.side)
        if seen.setdefault(pair.post_id, entry) != entry:
            raise ValueError(f"post {pair.post_id!r} appears twice in ({pair.lang}, {pair.dimension}) "
                             "with a different text or side")
    return dict(groups)


def _outer_splits(n: int, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(train, held_out)`` index arrays: shuffled K-fold, or one empty training part for one post."""
    if k < 2:
        return [(np.array([], dtype=int), np.arange(n))]
    return list(KFold(n_splits=k, shuffle=True, random_state=seed).split(np.arange(n)))


def warn_if_small(groups: Mapping[tuple[str, str], Posts], minimum: int = MIN_FIT_PAIRS) -> list[str]:
    """Log a warning for each language whose labelled pairs number fewer than ``minimum``.

    Returns
    -------
    list of str
        The messages (one per language concerned), also logged.
    """
    messages = []
    for lang in sorted({lang for lang, _ in groups}):
        counts = {dim: len(posts) for (l, dim), posts in sorted(groups.items()) if l == lang}
        total = sum(counts.values())
        if total < minimum:
            messages.append(
                f"e5-crossfit fits its {lang} probes on {total} labelled pairs only "
                f"({', '.join(f'{dim} {n}' for dim, n in counts.items())}); with fewer than about {minimum} "
                "per language a probe learns little beyond the majority side: fit on a larger labelled set "
                "(--fit-data DIR)")
            log.warning(messages[-1])
    return messages


def training_sha256(groups: Mapping[tuple[str, str], Posts]) -> str:
    """sha256 of the labelled pairs a judge is fitted on: sorted ``lang, dimension, post id, side, text hash``."""
    from tefcore.hashing import text_sha256

    lines = sorted(f"{lang}\t{dim}\t{pid}\t{side}\t{text_sha256(text)}"
                   for (lang, dim), posts in groups.items() for pid, (text, side) in posts.items())
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


@dataclass
class _Subset:
    """The probes of one (language, dimension): which probe scores which post, and how each was chosen."""

    n_posts: int
    n_change: int
    n_folds: int
    fold_of: dict[str, list[int]]  # post id -> the fold that holds it out, seed by seed
    fits: dict[tuple[int, int], ProbeFit] = field(default_factory=dict)  # (seed, fold) -> probe
    n_fit: tuple[int, int] = (0, 0)  # external fit: (posts, change posts) of the fit data

    def provenance(self, seeds: Sequence[int], tuned: bool) -> dict[str, Any]:
        """Counts, fallbacks and (when tuned) the chosen ``C`` and inner-CV scores, seed by fold."""
        table = [[self.fits[(seed, f)].choice for f in range(self.n_folds)] for seed in seeds]
        fallback = [(sf, fit.choice.fallback) for sf, fit in sorted(self.fits.items()) if fit.choice.fallback]
        out: dict[str, Any] = {"n_posts": self.n_posts, "n_change": self.n_change, "n_folds": self.n_folds,
                               "fallback_folds": [list(sf) for sf, _ in fallback],
                               "fallback_reasons": [reason for _, reason in fallback]}
        if self.n_fit[0]:
            out.update(n_fit_posts=self.n_fit[0], n_fit_change=self.n_fit[1])
        if tuned:
            chosen = [c.C for row in table for c in row if c.C is not None]
            out.update(C_chosen=[[c.C for c in row] for row in table],
                       C_median=float(np.median(chosen)) if chosen else None,
                       inner_folds=[[c.inner_folds for c in row] for row in table],
                       inner_cv_score=[[list(c.inner_scores) for c in row] for row in table])
        return out


def _check_folds(k: int, what: str) -> int:
    """``k`` as an int, checked to be a whole number of folds >= 2."""
    if isinstance(k, bool) or int(k) != k or k < 2:
        raise ValueError(f"{what} must be an integer >= 2, got {k!r}")
    return int(k)


class E5CrossFitBackend:
    """Supervised judge: a logistic-regression probe on post embeddings, cross-fitted over posts.

    For each (language, dimension) of the pairs given to :meth:`prepare` and each seed, the subset's
    unique posts (sorted ids) are split by :class:`~sklearn.model_selection.KFold` (shuffled with that
    seed) into ``n_folds`` folds. A probe (:func:`make_probe`: standardization, then an L2 logistic
    regression, label ``side == "change"``) is fitted by :func:`fit_probe` on the ``query:``
    embeddings of the other folds' whole posts, and a post is scored, for each seed, only by the
    probe of the fold that held it out:

    .. math:: P(\\text{change} \\mid x) = \\frac{1}{S} \\sum_{s=1}^{S}
        \\sigma\\big(w_{s, f_s(\\text{post})}^\\top e(x) + b_{s, f_s(\\text{post})}\\big)

    where :math:`x` is the whole post (Direct) or one of its sentences: the mean of P over the seeds
    (not of the log-odds). By default each probe chooses its ``C`` inside its training part (nested:
    the held-out fold never enters the choice); the grid, the chosen values and the inner-CV scores go
    to the provenance. A subset with fewer posts than ``n_folds`` uses leave-one-out.

    With ``fit_data``, nothing is cross-fitted: the probes of each (language, dimension) are fitted
    on the labelled pairs of that folder (one per seed, ``C`` chosen there) and score every post
    given to :meth:`prepare`. Fit pairs whose text is also one of those posts are left out of the
    fit, so no scored text ever reaches it; the provenance records the folder's file checksums, the
    number of pairs used and left out, and a checksum of the training pairs.

    Parameters
    ----------
    n_folds : int
        Folds of the cross-fitting (>= 2).
    seeds : sequence of int
        Seeds of the fold splits (outer and inner).
    C : float or "inner-cv"
        Inverse L2 strength, or :data:`TUNED` to choose it per probe from ``C_grid``.
    C_grid : sequence of float
        Candidates of the inner search (default :data:`DEFAULT_C_GRID`).
    inner_folds : int
        Folds of the inner search (at most the number of posts of the smaller side).
    inner_scoring : str
        scikit-learn scorer maximised by the inner search (default :data:`INNER_SCORING`).
    max_iter : int
        Iterations of the solver (:data:`SOLVER`; it converges in far fewer).
    standardize : bool
        Standardize the features (mean and scale of the training part) before the regression. e5
        vectors are anisotropic (pairwise cosines around 0.84, per-coordinate spread around 0.02 on
        MIND posts): on raw vectors the L2 penalty at ``C = 1`` shrinks the probe to the prior.
    fit_data : path-like, optional
        A folder of labelled MIND files to fit on instead of cross-fitting (see above).
    min_fit_pairs : int
        Warn when a language has fewer labelled pairs to fit on (:func:`warn_if_small`).
    name : str
        The judge's name in the provenance (the registry name, e.g. ``"e5-crossfit-raw"``).
    embedder : E5Embedder, optional
        Defaults to the process-wide :func:`shared_embedder`.
    """

    name = "e5-crossfit"
    embedding_side = "query"

    def __init__(
        self,
        n_folds: int = 5,
        seeds: Iterable[int] = (0, 1, 2, 3, 4),
        C: float | str = TUNED,
        C_grid: Iterable[float] = DEFAULT_C_GRID,
        inner_folds: int = 5,
        inner_scoring: str = INNER_SCORING,
        max_iter: int = 1000,
        standardize: bool = True,
        fit_data: str | os.PathLike[str] | None = None,
        min_fit_pairs: int = MIN_FIT_PAIRS,
        name: str = "e5-crossfit",
        embedder: E5Embedder | None = None,
    ) -> None:
        self.n_folds = _check_folds(n_folds, "n_folds")
        self.seeds = tuple(int(s) for s in seeds)
        if not self.seeds:
            raise ValueError("seeds must hold at least one seed")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be distinct, got {self.seeds}")
        self.settings = ProbeSettings(bool(standardize), C, tuple(C_grid), inner_folds, inner_scoring, int(max_iter))
        # an absolute path (relative to the working directory), checked to exist
        self.fit_data = None if fit_data is None else resolve_data_dir(fit_data)
        if self.fit_data is not None and not self.fit_data.is_dir():
            raise FileNotFoundError(f"fit data folder {self.fit_data} not found (it should hold mind_<lang>.jsonl)")
        self.min_fit_pairs = int(min_fit_pairs)
        self.name = name
        self.embedder = embedder if embedder is not None else shared_embedder()
        self._subsets: dict[tuple[str, str], _Subset] = {}
        self._first: dict[tuple[str, str], str] = {}
        self._fit_record: dict[str, Any] | None = None
        self.training_posts: dict[tuple[str, str, int, int], frozenset[str]] = {}
        """``(lang, dimension, seed, fold) -> ids of the posts that probe was fitted on`` (with
        ``fit_data``: ids of the fit folder's posts, fold 0)."""

    @property
    def C(self) -> float | str:
        """The fixed ``C``, or ``"inner-cv"``."""
        return self.settings.C

    @property
    def standardize(self) -> bool:
        """Whether the probes standardize their features."""
        return self.settings.standardize

    # ----------------------------------------------------------------------------------------------
    def prepare(self, pairs: Sequence["EvaluationPair"], *, progress: bool = False,
                recorded: Mapping[str, Any] | None = None) -> None:
        """Fit the probes of every (language, dimension) present in ``pairs``.

        Each call replaces the probes of the previous one (like ``fit``): the provenance and the posts
        that can be scored are exactly those of this call's pairs. A resume (``recorded`` given) fits
        again on every pair, as the first run did: the probe that scores a missing post is fitted on the
        other folds, which hold the posts already scored (only the missing pairs' sentences are
        embedded later, when they are scored).

        Raises
        ------
        ValueError
            If one post appears twice in a (language, dimension) with different texts or sides, or
            the fit data lack a (language, dimension) of ``pairs``.
        """
        self._subsets, self.training_posts, self._fit_record = {}, {}, None
        if recorded is not None:
            log.warning("%s: a resume fits the probes again on all %d pairs (a cross-fitted probe needs every "
                        "fold); only the missing pairs' sentences are embedded", self.name, len(pairs))
        groups = group_posts(pairs)
        self._first = {(p.lang, p.dimension): p.choices.sides[0] for p in pairs if p.choices is not None}
        fit_groups = groups if self.fit_data is None else self._fit_groups(groups, self.fit_data)
        self.embedder.embed([t for posts in fit_groups.values() for t, _ in posts.values()], side=self.embedding_side,
                            progress=progress)
        warn_if_small(fit_groups, self.min_fit_pairs)
        n_probes = len(self.seeds) * sum(min(self.n_folds, len(p)) if self.fit_data is None else 1
                                         for p in groups.values())
        # one BLAS thread: on these small problems more threads only wait on each other (7x slower
        # measured on a busy 2-core machine); the results do not change
        with threadpool_limits(limits=1, user_api="blas"), \
                tqdm(total=n_probes, unit="probe", desc=f"{self.name} fit", leave=False, dynamic_ncols=True,
                     disable=not progress) as bar:
            for key, posts in groups.items():
                self._subsets[key] = self._fit_subset(key, posts, None if self.fit_data is None else fit_groups[key],
                                                      bar)

    def _fit_subset(self, key: tuple[str, str], posts: Posts, fit_posts: Posts | None, bar: tqdm) -> _Subset:
        """The probes of one (language, dimension), every seed: out of fold, or fitted on ``fit_posts``
        (the fit data's posts), which then score every post as fold 0."""
        first = "change" if fit_posts is not None else self._first.get(key, "change")  # a task's first side
        ids = tuple(sorted(posts))
        train_posts = posts if fit_posts is None else fit_posts
        train_ids = tuple(sorted(train_posts))
        x = self.embedder.embed([train_posts[i][0] for i in train_ids], side=self.embedding_side).astype(np.float64)
        y = np.array([train_posts[i][1] == first for i in train_ids], dtype=int)
        k = min(self.n_folds, len(ids)) if fit_posts is None else 1
        subset = _Subset(len(ids), sum(posts[i][1] == first for i in ids), k,
                         {pid: [0] * len(self.seeds) for pid in ids})
        if fit_posts is not None:
            subset.n_fit = (len(train_ids), int(y.sum()))
        for s, seed in enumerate(self.seeds):
            splits = (_outer_splits(len(ids), k, seed) if fit_posts is None
                      else [(np.arange(len(train_ids)), np.arange(len(ids)))])
            for f, (train, held_out) in enumerate(splits):
                for j in held_out:
                    subset.fold_of[ids[j]][s] = f
                self.training_posts[(*key, seed, f)] = frozenset(train_ids[j] for j in train)
                subset.fits[(seed, f)] = fit_probe(x[train], y[train], seed, self.settings)
                bar.update()
        return subset

    def _fit_groups(self, groups: Mapping[tuple[str, str], Posts], folder: Path) -> dict[tuple[str, str], Posts]:
        """The posts of ``folder`` in each (language, dimension) of ``groups``, the scored texts left out."""
        langs = sorted({lang for lang, _ in groups})
        scored = {text for posts in groups.values() for text, _ in posts.values()}
        fit_pairs = [p for lang in langs for p in evaluation_pairs(load_posts(lang, folder))]
        kept = group_posts(p for p in fit_pairs if p.text not in scored)
        missing = [f"{lang}/{dim}" for lang, dim in sorted(groups) if (lang, dim) not in kept]
        if missing:
            raise ValueError(f"the fit data {folder} hold no labelled pairs for {', '.join(missing)} "
                             "(after leaving out the texts that are to be scored)")
        used = {key: kept[key] for key in groups}
        self._fit_record = {
            "folder": folder.name,
            "files": {lang: {"file": mind_filename(lang),
                             "sha256": file_sha256(folder / mind_filename(lang))} for lang in langs},
            "pairs": len(fit_pairs),
            "pairs_left_out": sum(p.text in scored for p in fit_pairs),
            "pairs_used": sum(len(posts) for posts in used.values()),
            "training_sha256": training_sha256(used),
            "left_out_rule": "a fit pair whose text equals the text of a scored post is not fitted on",
        }
        return used

    def assignments(self, lang: str, dimension: str, post_id: str) -> list[tuple[int, int]]:
        """``(seed, fold)`` of the probes that score ``post_id`` (one per seed).

        Raises
        ------
        ValueError
            If (``lang``, ``dimension``) was not prepared or the post was not in it.
        """
        subset = self._subsets.get((lang, dimension))
        if subset is None:
            raise ValueError(f"{self.name} has no models for ({lang}, {dimension}): call prepare(pairs) first")
        folds = subset.fold_of.get(post_id)
        if folds is None:
            raise ValueError(
                f"post {post_id!r} was not among the pairs given to prepare() for ({lang}, {dimension}); "
                "the cross-fitted judge only scores posts it has held out"
            )
        return [(seed, int(f)) for seed, f in zip(self.seeds, folds)]

    def score(self, requests: Sequence[ScoreRequest]) -> list[Score]:
        """Mean over seeds of the out-of-fold probe's P(change), one :class:`Score` per request."""
        probes = [self.assignments(r.lang, r.dimension, r.post_id) for r in requests]
        x = self.embedder.embed([r.text for r in requests], side=self.embedding_side).astype(np.float64)
        p = np.empty(len(requests))
        for i, (r, assigned) in enumerate(zip(requests, probes)):
            fits = [self._subsets[(r.lang, r.dimension)].fits[sf] for sf in assigned]
            w, b = np.stack([fit.coef for fit in fits]), np.array([fit.intercept for fit in fits])
            p[i] = float(np.mean(expit(w @ x[i] + b)))
        return [embedding_score(float(pi)) for pi in p]

    def provenance(self) -> dict[str, Any]:
        """Model file and hash, the probe and its choice of ``C``, folds, seeds, fit data, and every subset."""
        s = self.settings
        return {
            **model_provenance(self.name, self.embedder),
            "embedding_side": self.embedding_side,
            "classifier": (f"sklearn Pipeline(StandardScaler, LogisticRegression(L2, {SOLVER}, tol={TOL:g}))"
                           if s.standardize else f"sklearn LogisticRegression(L2, {SOLVER}, tol={TOL:g}) on raw embeddings"),
            "sklearn": str(sklearn.__version__),
            "standardize": s.standardize,
            "C": s.C,
            "C_grid": list(s.C_grid) if s.tuned else None,
            "inner_folds": s.inner_folds if s.tuned else None,
            "inner_scoring": s.scoring if s.tuned else None,
            "inner_cv": (
                "per probe, GridSearchCV over C_grid on the probe's own training posts only: "
                "StratifiedKFold(min(inner_folds, posts of the smaller side), shuffle=True, random_state=seed), "
                "scaler refitted in every inner part, best mean score (ties to the smaller C) refitted on "
                "all the training posts" if s.tuned else None),
            "max_iter": s.max_iter,
            "n_folds": self.n_folds if self.fit_data is None else None,
            "seeds": list(self.seeds),
            "fit": "cross-fitted within the scored pairs" if self.fit_data is None else "fitted on fit_data",
            "fit_data": self._fit_record,
            "fold_split": ("KFold(shuffle=True, random_state=seed) over the subset's sorted unique post ids"
                           if self.fit_data is None else None),
            "seed_average": "mean of P(change) over seeds",
            "single_class_fallback": "constant (n_change + 1) / (n + 2) of the training posts",
            "labels": ("side == 'change' of the pairs given to prepare(); every post scored out of fold"
                       if self.fit_data is None else "side == 'change' of the fit data's pairs") if not self._first
            else ("side == the first side of each dimension ("
                  + ", ".join(f"{d}: {side!r}" for (_, d), side in sorted(self._first.items()))
                  + ") of the pairs given to prepare(); every post scored out of fold"),
            "subsets": {f"{lang}/{dim}": sub.provenance(self.seeds, s.tuned)
                        for (lang, dim), sub in sorted(self._subsets.items())},
        }

