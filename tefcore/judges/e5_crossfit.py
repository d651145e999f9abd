"""The cross-fitted e5 judge (:class:`E5CrossFitBackend`): a logistic probe on multilingual-e5-small post
embeddings (:mod:`tefcore.judges.e5_engine`), cross-fitted over posts or fitted on another labelled set.

It learns from the labels there are: on a task, the texts with a gold side are scored out of fold and
those without one by a probe fitted on all the labelled texts of their dimension; a dimension with K > 2
sides gets a multinomial probe, and one with fewer than :data:`_MIN_SIDE_LABELS` labelled texts on a side is
skipped (one warning; its answers are recorded as invalid).
"""

from __future__ import annotations

import hashlib
import logging
import os
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import sklearn
from scipy.special import expit
from sklearn.model_selection import KFold, StratifiedKFold
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from tefcore.judges.base import INVALID, Score, ScoreRequest
from tefcore.judges.e5 import check_lang_dimension, embedding_score
from tefcore.judges.e5_engine import E5Embedder, model_provenance, shared_embedder
from tefcore.judges.probes import (DEFAULT_C_GRID, INNER_SCORING, SOLVER, TOL, TUNED, ProbeFit, ProbeSettings,
                                   check_folds, fit_multinomial_probe, fit_probe)
from tefcore.mind.load import evaluation_pairs, load_posts, mind_filename, resolve_data_dir
from tefcore.mind.schema import SIDES
from tefcore.tasks.schema import EvaluationPair
from tefcore.hashing import file_sha256

__all__ = ["ALL_LABELLED", "E5CrossFitBackend", "group_posts", "labelled_sha256",
           "training_sha256", "warn_if_small"]

log = logging.getLogger(__name__)

_MIN_FIT_PAIRS = 300
"""Below this many labelled pairs in a language, :meth:`E5CrossFitBackend.prepare` warns."""

_MIN_SIDE_LABELS = 2
"""A dimension is fitted when each of its sides has at least this many labelled texts: with one, the probe
that scores that text out of fold has never seen its side. With fewer the dimension is skipped."""

ALL_LABELLED = -1
"""The fold number of the probe fitted on all the labelled texts of a dimension, which scores its texts
without a gold side (:meth:`E5CrossFitBackend.assignments`)."""

_Posts = dict[str, tuple[str, str | None]]
"""``post id -> (text, side)`` of one (language, dimension); a task's text without gold has side None."""


def group_posts(pairs: Iterable["EvaluationPair"]) -> dict[tuple[str, str], _Posts]:
    """The unique posts of each (language, dimension), keyed by post id.

    Raises
    ------
    ValueError
        If a post appears twice in a (language, dimension) with different texts or sides.
    """
    groups: dict[tuple[str, str], _Posts] = defaultdict(dict)
    for pair in pairs:
        if pair.choices.letters == ("C", "S"):  # MIND's sides: check its language and dimension
            check_lang_dimension(pair.lang, pair.dimension)
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


def _splits(y: np.ndarray, k: int, seed: int, n_sides: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The outer folds over the labelled posts: :func:`_outer_splits` for two sides; for K > 2 stratified by
    side (``k`` at most the largest side's posts), so that every training part holds every side that has
    two labelled posts or more."""
    if n_sides == 2 or k < 2:
        return _outer_splits(len(y), k, seed)
    with warnings.catch_warnings():  # a side with fewer posts than folds: allowed, _MIN_SIDE_LABELS is the floor
        warnings.simplefilter("ignore", UserWarning)
        return list(StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))


def warn_if_small(groups: Mapping[tuple[str, str], _Posts], minimum: int = _MIN_FIT_PAIRS) -> list[str]:
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
                "(MIND: --fit-data DIR; a task: more texts with a gold side)")
            log.warning(messages[-1])
    return messages


def training_sha256(groups: Mapping[tuple[str, str], _Posts]) -> str:
    """sha256 of the labelled pairs a judge is fitted on: sorted ``lang, dimension, post id, side, text hash``."""
    from tefcore.hashing import text_sha256

    lines = sorted(f"{lang}\t{dim}\t{pid}\t{side}\t{text_sha256(text)}"
                   for (lang, dim), posts in groups.items() for pid, (text, side) in posts.items())
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def labelled_sha256(ids: Iterable[str]) -> str:
    """sha256 of the ids of the labelled texts, sorted, one per line (UTF-8): which texts a probe learnt from.

    Examples
    --------
    >>> labelled_sha256(["b", "a"]) == hashlib.sha256(b"a\\nb").hexdigest()
    True
    """
    return hashlib.sha256("\n".join(sorted(ids)).encode("utf-8")).hexdigest()


@dataclass
class _Subset:
    """The probes of one (language, dimension): which probe scores which post, and how each was chosen."""

    n_posts: int
    n_change: int
    n_folds: int
    fold_of: dict[str, list[int]]  # post id -> the fold that holds it out, seed by seed
    fits: dict[tuple[int, int], ProbeFit] = field(default_factory=dict)  # (seed, fold) -> probe
    n_fit: tuple[int, int] = (0, 0)  # external fit: (posts, change posts) of the fit data
    labelled: tuple[str, ...] | None = None  # ids of the labelled posts, when some post has no gold side
    side_counts: dict[str, int] | None = None  # labelled posts per side (K > 2, or some post without gold)
    skipped: str = ""  # why the dimension was not fitted

    def provenance(self, seeds: Sequence[int], tuned: bool) -> dict[str, Any]:
        """Counts, fallbacks and (when tuned) the chosen ``C`` and inner-CV scores, seed by fold; which posts
        were labelled, when some were not; why the dimension was skipped."""
        extra: dict[str, Any] = {}
        if self.side_counts is not None:
            extra["side_counts"] = self.side_counts
        if self.labelled is not None:
            extra.update(n_labelled=len(self.labelled), labelled_sha256=labelled_sha256(self.labelled))
        if self.skipped:
            return {"n_posts": self.n_posts, "n_change": self.n_change, "n_folds": 0, **extra,
                    "skipped": self.skipped}
        out = self._fold_provenance(seeds, tuned)
        if (seeds[0], ALL_LABELLED) in self.fits:
            full = [self.fits[(seed, ALL_LABELLED)].choice for seed in seeds]
            extra["all_labelled_fit"] = {"C_chosen": [c.C for c in full], "fallback_reasons": [c.fallback for c in full]}
        return {**out, **extra}

    def _fold_provenance(self, seeds: Sequence[int], tuned: bool) -> dict[str, Any]:
        """The out-of-fold probes' counts, fallbacks and choices of ``C``."""
        table = [[self.fits[(seed, f)].choice for f in range(self.n_folds)] for seed in seeds]
        fallback = [(sf, fit.choice.fallback) for sf, fit in sorted(self.fits.items())
                    if fit.choice.fallback and sf[1] != ALL_LABELLED]
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


class E5CrossFitBackend:
    """Supervised judge: a logistic-regression probe on post embeddings, cross-fitted over posts.

    For each (language, dimension) of the pairs given to :meth:`prepare` and each seed, the subset's
    unique posts (sorted ids) are split by :class:`~sklearn.model_selection.KFold` (shuffled with that
    seed) into ``n_folds`` folds. A probe (:func:`~tefcore.judges.probes.make_probe`: standardization, then an L2 logistic
    regression, label ``side == "change"``) is fitted by :func:`~tefcore.judges.probes.fit_probe` on the ``query:``
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
        min_fit_pairs: int = _MIN_FIT_PAIRS,
        name: str = "e5-crossfit",
        embedder: E5Embedder | None = None,
    ) -> None:
        self.n_folds = check_folds(n_folds, "n_folds")
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
        self._sides = {(p.lang, p.dimension): p.choices.sides for p in pairs  # a task's: MIND's answer C or S
                       if p.choices is not None and p.choices.letters != ("C", "S")}
        self._first = {key: sides[0] for key, sides in self._sides.items()}
        skipped = {} if self.fit_data is not None else self._too_few(groups)
        fitted = {key: posts for key, posts in groups.items() if key not in skipped}
        labelled = {key: {i: post for i, post in posts.items() if post[1] is not None} for key, posts in fitted.items()}
        fit_groups = labelled if self.fit_data is None else self._fit_groups(groups, self.fit_data)
        self.embedder.embed([t for posts in fit_groups.values() for t, _ in posts.values()], side=self.embedding_side,
                            progress=progress)
        warn_if_small(fit_groups, self.min_fit_pairs)
        n_probes = len(self.seeds) * sum(
            1 if self.fit_data is not None else
            min(self.n_folds, len(labelled[key])) + (len(labelled[key]) < len(posts)) for key, posts in fitted.items())
        # one BLAS thread: on these small problems more threads only wait on each other (7x slower
        # measured on a busy 2-core machine); the results do not change
        with threadpool_limits(limits=1, user_api="blas"), \
                tqdm(total=n_probes, unit="probe", desc=f"{self.name} fit", leave=False, dynamic_ncols=True,
                     disable=not progress) as bar:
            for key, posts in groups.items():
                self._subsets[key] = (self._skipped_subset(key, posts, skipped[key]) if key in skipped else
                                      self._fit_subset(key, posts, None if self.fit_data is None else fit_groups[key],
                                                       bar))

    def _side_names(self, key: tuple[str, str]) -> tuple[str, ...]:
        """The sides of a (language, dimension): a task's, or MIND's change and stability."""
        return self._sides.get(key, SIDES)

    def _too_few(self, groups: Mapping[tuple[str, str], _Posts]) -> dict[tuple[str, str], str]:
        """The (language, dimension)s with fewer than :data:`_MIN_SIDE_LABELS` labelled posts on a side, each
        with its one-line reason (also logged)."""
        out = {}
        for (lang, dim), posts in sorted(groups.items()):
            counts = Counter(side for _, side in posts.values() if side is not None)
            short = [f"{side!r} {counts[side]}" for side in self._side_names((lang, dim)) if counts[side] < _MIN_SIDE_LABELS]
            if short:
                out[(lang, dim)] = (f"{self.name} skips {lang}/{dim}: labelled texts per side {', '.join(short)}, "
                                    f"fewer than the {_MIN_SIDE_LABELS} a probe needs (give more texts a gold side, or "
                                    "use e5-zeroshot or an LLM judge); its answers are recorded as invalid")
                log.warning(out[(lang, dim)])
        return out

    def _skipped_subset(self, key: tuple[str, str], posts: _Posts, reason: str) -> _Subset:
        """A dimension that is not fitted: its posts known (scored invalid), the reason kept."""
        counts = Counter(side for _, side in posts.values() if side is not None)
        sides = self._side_names(key)
        labelled = tuple(sorted(i for i, (_, side) in posts.items() if side is not None))
        return _Subset(len(posts), counts[sides[0]], 0, {pid: [] for pid in posts},
                       labelled=labelled if len(labelled) < len(posts) else None,
                       side_counts={side: counts[side] for side in sides}, skipped=reason)

    def _fit_subset(self, key: tuple[str, str], posts: _Posts, fit_posts: _Posts | None, bar: tqdm) -> _Subset:
        """The probes of one (language, dimension), every seed: the labelled posts out of fold and the others
        by a probe fitted on all the labelled ones (fold :data:`ALL_LABELLED`); or fitted on ``fit_posts``
        (the fit data's posts), which then score every post as fold 0."""
        first = "change" if fit_posts is not None else self._first.get(key, "change")  # a task's first side
        sides = SIDES if fit_posts is not None else self._side_names(key)
        ids = tuple(sorted(posts))
        scored = ids if fit_posts is not None else tuple(i for i in ids if posts[i][1] is not None)
        train_posts = {i: posts[i] for i in scored} if fit_posts is None else fit_posts
        train_ids = tuple(sorted(train_posts))
        x = self.embedder.embed([train_posts[i][0] for i in train_ids], side=self.embedding_side).astype(np.float64)
        y = (np.array([sides.index(str(train_posts[i][1])) for i in train_ids], dtype=int) if len(sides) > 2
             else np.array([train_posts[i][1] == first for i in train_ids], dtype=int))
        k = min(self.n_folds, len(scored)) if fit_posts is None else 1
        if fit_posts is None and len(sides) > 2:  # stratified: no more folds than the largest side has posts
            k = min(k, int(np.bincount(y).max()))
        partial = fit_posts is None and len(scored) < len(ids)
        counts = Counter(posts[i][1] for i in scored)
        subset = _Subset(len(ids), sum(posts[i][1] == first for i in ids), k, {pid: [0] * len(self.seeds) for pid in ids},
                         labelled=scored if partial else None,
                         side_counts={side: counts[side] for side in sides} if partial or len(sides) > 2 else None)
        if fit_posts is not None:
            subset.n_fit = (len(train_ids), int(y.sum()))
        for s, seed in enumerate(self.seeds):
            splits = (_splits(y, k, seed, len(sides)) if fit_posts is None
                      else [(np.arange(len(train_ids)), np.arange(len(ids)))])
            if partial:
                splits.append((np.arange(len(train_ids)), np.array([], dtype=int)))
            for f, (train, held_out) in enumerate(splits):
                f = ALL_LABELLED if partial and f == len(splits) - 1 else f
                for j in held_out:
                    subset.fold_of[scored[j]][s] = f
                self.training_posts[(*key, seed, f)] = frozenset(train_ids[j] for j in train)
                subset.fits[(seed, f)] = self._fit(x[train], y[train], seed, len(sides))
                bar.update()
            for pid in ids if partial else ():
                if posts[pid][1] is None:
                    subset.fold_of[pid][s] = ALL_LABELLED
        return subset

    def _fit(self, x: np.ndarray, y: np.ndarray, seed: int, n_sides: int) -> ProbeFit:
        """One probe: :func:`fit_probe` for two sides, :func:`fit_multinomial_probe` for more."""
        if n_sides == 2:
            return fit_probe(x, y, seed, self.settings)
        return fit_multinomial_probe(x, y, n_sides, seed, self.settings)

    def _fit_groups(self, groups: Mapping[tuple[str, str], _Posts], folder: Path) -> dict[tuple[str, str], _Posts]:
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
        """``(seed, fold)`` of the probes that score ``post_id`` (one per seed): the fold that held it out, or
        :data:`ALL_LABELLED` for a post without a gold side; none in a skipped dimension.

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
        """Mean over seeds of the assigned probe's P(change) (K > 2: of its distribution over the sides), one
        :class:`Score` per request; an invalid one, saying why, in a skipped dimension."""
        probes = [self.assignments(r.lang, r.dimension, r.post_id) for r in requests]
        live = [i for i, assigned in enumerate(probes) if assigned]
        x = self.embedder.embed([requests[i].text for i in live], side=self.embedding_side).astype(np.float64)
        out = [self._skipped_score(r) for r in requests]
        for row, i in enumerate(live):
            r = requests[i]
            fits = [self._subsets[(r.lang, r.dimension)].fits[sf] for sf in probes[i]]
            if fits[0].coef.ndim == 2:  # K > 2 sides
                out[i] = embedding_score(np.mean([fit.probabilities(x[row]) for fit in fits], axis=0))
                continue
            w, b = np.stack([fit.coef for fit in fits]), np.array([fit.intercept for fit in fits])
            out[i] = embedding_score(float(np.mean(expit(w @ x[row] + b))))
        return out

    def _task_labels(self) -> str:
        """The provenance's ``labels`` of a task: what each dimension's probe learns, which posts it scores how."""
        learnt = ", ".join(f"{d}: side == {sides[0]!r}" if len(sides) == 2 else f"{d}: multinomial over {list(sides)}"
                           for (_, d), sides in sorted(self._sides.items()))
        partial = any(sub.labelled is not None for sub in self._subsets.values())
        return (f"{learnt} of the labelled pairs given to prepare(); every labelled post scored out of fold"
                + (" (K > 2: folds stratified by side)" if any(len(v) > 2 for v in self._sides.values()) else "")
                + ("; a post without a gold side by the probe fitted on all the labelled posts of its dimension"
                   if partial else "")
                + f"; a dimension with fewer than {_MIN_SIDE_LABELS} labelled posts on a side is skipped")

    def _skipped_score(self, request: ScoreRequest) -> Score:
        """The invalid answer of a text in a skipped dimension, the detail saying so (replaced when scored)."""
        reason = self._subsets[(request.lang, request.dimension)].skipped.split(":")[0]
        return replace(INVALID, detail=f"{reason} (too few labelled texts per side)")

    def provenance(self) -> dict[str, Any]:
        """Model file and hash, the probe and its choice of ``C``, folds, seeds, fit data, and every subset."""
        s = self.settings
        return {
            **model_provenance(self.name, self.embedder),
            "embedding_side": self.embedding_side,
            "classifier": (f"sklearn Pipeline(StandardScaler, LogisticRegression(L2, {SOLVER}, tol={TOL:g}))"
                           if s.standardize else f"sklearn LogisticRegression(L2, {SOLVER}, tol={TOL:g}) on raw embeddings"),
            **({"multinomial_fit": "K > 2 sides: the regression fitted on the coordinates of the training part's row span "
                                   "(RowSpan, its right singular vectors; the L2 optimum lies in that span) and mapped back "
                                   "to the embedding's dimensions"}
               if any(len(sides) > 2 for sides in self._sides.values()) else {}),
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
            else self._task_labels(),
            "subsets": {f"{lang}/{dim}": sub.provenance(self.seeds, s.tuned)
                        for (lang, dim), sub in sorted(self._subsets.items())},
        }

