r"""Metrics of the protocol (§7): accuracy, macro-F1, calibration, intervals and paired tests.

Accuracy and macro-F1 are in **percent** (scikit-learn computes them), calibration errors are fractions.
The labels are the sides: MIND's ``"change"`` and ``"stability"``, or a task's own (:func:`side_labels`
reads them from the gold labels when ``labels=`` is not given); a prediction that is none of them (an
abstention) is simply wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats
from sklearn.metrics import accuracy_score, f1_score

from tefcore.errors import UnknownName
from tefcore.fusion import CLASSES

__all__ = ["Interval", "McNemarResult", "PairedComparison", "accuracy", "bin_index", "bootstrap_ci",
           "bootstrap_indices", "expected_calibration_error", "f1_from_counts", "is_change", "macro_f1", "mcnemar_test",
           "overconfidence_gap", "paired_bootstrap", "reliability_table", "side_labels"]

_ArrayLike = npt.ArrayLike
_Labels = Sequence[str] | Mapping[object, Sequence[str]] | None
"""The sides :func:`macro_f1` averages over in a bootstrap: one list, one per stratum (a mapping from the
stratum's value, each dimension its own sides), or None to read each stratum's from its gold labels."""


def _paired(a: _ArrayLike, b: _ArrayLike, names: str) -> tuple[np.ndarray, np.ndarray]:
    """Two aligned, non-empty 1-D arrays."""
    x, y = np.asarray(a), np.asarray(b)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"{names} must be 1-D arrays of the same length, got {x.shape} and {y.shape}")
    if x.size == 0:
        raise ValueError(f"{names} are empty")
    return x, y


def accuracy(y_true: _ArrayLike, y_pred: _ArrayLike) -> float:
    r"""Accuracy in percent, :math:`100 \cdot \frac1n \sum_j \mathbb 1[\hat y_j = y_j]`.

    Parameters
    ----------
    y_true, y_pred : array_like of str, shape (n,)

    Returns
    -------
    float

    Examples
    --------
    >>> accuracy(["change", "stability", "change", "change"], ["change", "change", "change", "abstain"])
    50.0
    """
    t, p = _paired(y_true, y_pred, "y_true and y_pred")
    return 100.0 * float(accuracy_score(t, p))


def side_labels(y_true: _ArrayLike, labels: Sequence[str] | None = None) -> tuple[str, ...]:
    """The sides a macro average runs over: ``labels`` when given, else read from the gold labels:
    :data:`~tefcore.fusion.CLASSES` when every gold label is one of them (protocol §7: both sides always,
    a side absent from truth and prediction scoring 0), else the distinct gold labels, sorted.

    A predicted label that is not a side (an abstention, or a side the gold never takes; pass ``labels=``
    to count such a side) is a miss of the true side.

    Parameters
    ----------
    y_true : array_like of str, shape (n,)
        Gold labels.
    labels : sequence of str, optional
        The sides, in order.

    Returns
    -------
    tuple of str

    Raises
    ------
    ValueError
        When a gold label is missing (None or NaN) or the gold labels cannot be sorted (mixed types), or
        when ``labels`` is given and leaves out a gold label (its side would score nothing, the average 0).

    Examples
    --------
    >>> side_labels(["stability", "change"]), side_labels(["transit", "car", "transit"])
    (('change', 'stability'), ('car', 'transit'))
    >>> side_labels(["left", "right"], labels=["change", "stability"])
    Traceback (most recent call last):
    ValueError: labels ('change', 'stability') lack the gold label 'left': pass the sides of y_true
    """
    gold = pd.unique(np.asarray(y_true, dtype=object).ravel())
    if labels is not None:
        sides = tuple(labels)
        missing = [g for g in gold if g not in sides]
        if missing:
            raise ValueError(f"labels {sides} lack the gold label {missing[0]!r}: pass the sides of y_true")
        return sides
    if all(g in CLASSES for g in gold):
        return CLASSES
    if any(g is None or g != g for g in gold):  # None or NaN
        raise ValueError("y_true holds a missing label (None or NaN): score the pairs with a gold label only")
    try:
        return tuple(sorted(gold))
    except TypeError:
        raise ValueError(f"cannot order the gold labels {list(gold)[:5]} to infer the sides: pass labels=") from None


def macro_f1(y_true: _ArrayLike, y_pred: _ArrayLike, labels: Sequence[str] | None = None) -> float:
    r"""Macro-F1 in percent over every side, :math:`\frac{100}{|C|}\sum_{c \in C} \text{F1}_c`
    (:func:`f1_from_counts`); a prediction outside the sides :math:`C` is a miss of the true side.

    Parameters
    ----------
    y_true, y_pred : array_like of str, shape (n,)
    labels : sequence of str, optional
        The sides :math:`C` averaged over; by default read from ``y_true`` (:func:`side_labels`: MIND's
        two sides always, when the gold labels are theirs).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        As :func:`side_labels` does, and for arrays that are not aligned and 1-D.

    Examples
    --------
    >>> macro_f1(["change", "change"], ["change", "change"])  # stability scores 0
    50.0
    >>> macro_f1(["car", "transit", "car"], ["car", "transit", "transit"])  # a task's own sides, read from y_true
    66.66666666666666
    """
    t, p = _paired(y_true, y_pred, "y_true and y_pred")
    sides = side_labels(t, labels)
    return 100.0 * float(f1_score(t, p, labels=list(sides), average="macro", zero_division=0))


def f1_from_counts(tp: _ArrayLike, fp: _ArrayLike, fn: _ArrayLike) -> np.ndarray:
    r"""F1 of a class from its counts, :math:`2\,TP_c / (2\,TP_c + FP_c + FN_c)`, and 0 for a class absent
    from both truth and prediction (protocol §7).

    Parameters
    ----------
    tp, fp, fn : array_like of int
        True positives, false positives and false negatives, aligned.

    Returns
    -------
    ndarray of float

    Examples
    --------
    >>> f1_from_counts([1, 0], [1, 0], [0, 0]).tolist()
    [0.6666666666666666, 0.0]
    """
    tp = np.asarray(tp)
    den = 2 * tp + np.asarray(fp) + np.asarray(fn)
    return np.where(den > 0, 2 * tp / np.maximum(den, 1), 0.0)


def is_change(labels: _ArrayLike) -> npt.NDArray[np.bool_]:
    """Whether each label is the change side.

    Parameters
    ----------
    labels : array_like, shape (n,)
        ``"change"``/``"stability"``, booleans (True = change) or 0/1 (also as floats).

    Returns
    -------
    ndarray of bool

    Raises
    ------
    ValueError
        For any other label.

    Examples
    --------
    >>> is_change(["change", "stability"]).tolist(), is_change([1, 0]).tolist()
    ([True, False], [True, False])
    """
    arr = np.asarray(labels)
    if arr.dtype.kind in "US" or (arr.dtype.kind == "O" and arr.size and isinstance(arr.flat[0], str)):
        bad = ~np.isin(arr, CLASSES)
        if bad.any():
            raise ValueError(f"labels must be 'change' or 'stability', got {arr[bad][0]!r}")
        return arr == CLASSES[0]
    try:
        num = arr.astype(np.float64)
    except (TypeError, ValueError):
        num = np.full(arr.shape, np.nan)
    if not np.isin(num, (0.0, 1.0)).all():
        raise ValueError("labels must be booleans, 0/1 or the strings 'change'/'stability'")
    return num == 1.0


# --- calibration ----------------------------------------------------------------------------------
def _confidence_and_correct(confidence: _ArrayLike, correct: _ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validated forecasts in [0, 1] and outcomes as 0.0/1.0."""
    conf, corr = _paired(confidence, correct, "confidence and correct")
    conf = conf.astype(np.float64)
    if not (np.all(np.isfinite(conf)) and conf.min() >= 0.0 and conf.max() <= 1.0):
        raise ValueError("confidence must hold finite values in [0, 1]")
    return conf, is_change(corr).astype(np.float64)


def bin_index(values: _ArrayLike, n_bins: int = 10, strategy: str = "uniform") -> npt.NDArray[np.int64]:
    r"""Bin of each value in [0, 1]: :math:`\min(\lfloor B v\rfloor, B - 1)` for equal-width bins
    (``"uniform"``, the last closed at 1.0, protocol §7), :math:`\lfloor k B / n \rfloor` for the
    :math:`k`-th smallest of :math:`n` values with equal-mass bins (``"quantile"``).

    Parameters
    ----------
    values : array_like of float, shape (n,)
    n_bins : int
        :math:`B \ge 1`.
    strategy : {"uniform", "quantile"}

    Returns
    -------
    ndarray of int, shape (n,)

    Examples
    --------
    >>> bin_index([0.0, 0.05, 0.1, 0.99, 1.0]).tolist()
    [0, 0, 1, 9, 9]
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    v = np.asarray(values, dtype=np.float64)
    if strategy == "uniform":
        return np.minimum((v * n_bins).astype(np.int64), n_bins - 1)
    if strategy == "quantile":
        ranks = np.argsort(np.argsort(v, kind="stable"), kind="stable")
        return (ranks * n_bins) // v.size
    raise UnknownName(f"strategy must be 'uniform' or 'quantile', got {strategy!r}")


def reliability_table(
    prob: _ArrayLike, outcome: _ArrayLike, n_bins: int = 10, strategy: str = "uniform"
) -> pd.DataFrame:
    r"""Binned reliability of forecast probabilities (a reliability diagram as a table): a decision's
    confidence and whether it was right, or a P(change) and whether the side is change; calibrated means
    ``observed`` :math:`\approx` ``mean_predicted``.

    Parameters
    ----------
    prob : array_like of float, shape (n,)
        Forecast probabilities in [0, 1].
    outcome : array_like, shape (n,)
        Whether the event happened (as :func:`is_change` reads it).
    n_bins, strategy
        As in :func:`bin_index`.

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin: ``bin``, ``bin_lower``, ``bin_upper`` (edges; for equal-mass bins the
        smallest and largest member), ``count``, ``mean_predicted``, ``observed``, ``gap`` (observed -
        mean_predicted) and ``stderr``, :math:`\sqrt{\bar q (1 - \bar q) / n_b}` at ``mean_predicted``.

    Examples
    --------
    >>> reliability_table([0.05, 0.15, 0.15, 1.0], [False, True, False, True])[["bin", "count", "observed"]]
       bin  count  observed
    0    0      1       0.0
    1    1      2       0.5
    2    9      1       1.0
    """
    conf, corr = _confidence_and_correct(prob, outcome)
    ids = bin_index(conf, n_bins, strategy)
    count = np.bincount(ids, minlength=n_bins).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):  # NaN in the empty bins, left out below
        mean_pred = np.bincount(ids, weights=conf, minlength=n_bins) / count
        observed = np.bincount(ids, weights=corr, minlength=n_bins) / count
    if strategy == "uniform":
        edges = np.arange(n_bins + 1) / n_bins
    else:  # the smallest member of each bin, and the largest value
        order = np.sort(conf)
        cuts = np.searchsorted(np.sort(ids), np.arange(n_bins + 1))
        edges = np.append(order[np.minimum(cuts[:-1], conf.size - 1)], order[-1])
    full = np.flatnonzero(count > 0)
    table = pd.DataFrame({"bin": full, "bin_lower": edges[full], "bin_upper": edges[full + 1],
                          "count": count[full].astype(np.int64), "mean_predicted": mean_pred[full],
                          "observed": observed[full]})
    table["gap"] = table["observed"] - table["mean_predicted"]
    mp = table["mean_predicted"].to_numpy()
    table["stderr"] = np.sqrt(mp * (1.0 - mp) / table["count"].to_numpy())
    return table


def expected_calibration_error(
    confidence: _ArrayLike, correct: _ArrayLike, n_bins: int = 10, strategy: str = "uniform"
) -> float:
    r"""Expected calibration error (a fraction) over the bins of :func:`bin_index` (ten equal-width bins by
    default, protocol §7),
    :math:`\text{ECE} = \sum_{b=1}^{B} \frac{n_b}{n}\,\big|\operatorname{acc}(b) - \operatorname{conf}(b)\big|`.

    Examples
    --------
    >>> round(expected_calibration_error([0.9, 0.9, 0.6, 0.6], [True, False, True, True]), 3)
    0.4
    """
    table = reliability_table(confidence, correct, n_bins, strategy)  # the non-empty bins
    count = table["count"].to_numpy()
    return float(np.sum(count / count.sum() * np.abs(table["gap"].to_numpy())))


def overconfidence_gap(confidence: _ArrayLike, correct: _ArrayLike) -> float:
    r"""Mean confidence minus accuracy (a fraction; positive means overconfident),
    :math:`\frac1n\sum_j \text{conf}_j - \frac1n \sum_j \mathbb 1[\hat y_j = y_j]`.

    Examples
    --------
    >>> round(overconfidence_gap([0.9, 0.7], [True, False]), 3)
    0.3
    """
    conf, corr = _confidence_and_correct(confidence, correct)
    return float(conf.mean() - corr.mean())


# --- uncertainty: bootstrap intervals and paired tests over evaluation pairs ----------------------
@dataclass(frozen=True)
class Interval:
    """A point estimate with a percentile bootstrap interval."""

    estimate: float
    low: float
    high: float
    level: float
    n_boot: int


def bootstrap_indices(
    n: int, n_boot: int, strata: _ArrayLike | None = None,
    random_state: int | np.random.Generator | None = 0,
) -> npt.NDArray[np.int64]:
    """Bootstrap index matrix: ``n_boot`` resamples with replacement of ``n`` items.

    Parameters
    ----------
    n, n_boot : int
        Numbers of items and of resamples.
    strata : array_like, shape (n,), optional
        Stratum of each item (a dimension, say): each resample draws within each stratum as many items as
        it holds, in the same columns.
    random_state : int or Generator, optional

    Returns
    -------
    ndarray of int, shape (n_boot, n)
        Row ``r`` lists the items of resample ``r``.

    Examples
    --------
    >>> idx = bootstrap_indices(5, 3, strata=["a", "a", "b", "b", "b"])
    >>> idx.shape, bool((idx[:, :2] < 2).all() and (idx[:, 2:] >= 2).all())
    ((3, 5), True)
    """
    rng = np.random.default_rng(random_state)
    if strata is None:
        return rng.integers(0, n, size=(n_boot, n))
    codes = np.unique(np.asarray(strata), return_inverse=True)[1]
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    out = np.empty((n_boot, n), dtype=np.int64)
    for start, size in zip(starts, sizes):  # a handful of strata, not a loop over items
        draws = rng.integers(0, size, size=(n_boot, size))
        out[:, start:start + size] = order[start + draws]
    return out


def _row_statistic(
    statistic: Callable[..., float], cols: list[np.ndarray], idx: np.ndarray, sides: Sequence[str] | None = None
) -> np.ndarray:
    """The statistic on every bootstrap row; vectorised for :func:`accuracy` and :func:`macro_f1` (over ``sides``,
    by default read from the whole sample's gold: CLASSES for MIND's, the same on every resample)."""
    if statistic is accuracy and len(cols) == 2:
        return 100.0 * (cols[0] == cols[1])[idx].mean(axis=1)
    if statistic is macro_f1 and len(cols) == 2:
        t, p = cols
        sides = side_labels(t) if sides is None else sides
        return 100.0 * np.mean([f1_from_counts(((t == c) & (p == c))[idx].sum(axis=1),
                                               ((t != c) & (p == c))[idx].sum(axis=1),
                                               ((t == c) & (p != c))[idx].sum(axis=1)) for c in sides],
                               axis=0)
    return np.array([statistic(*(c[row] for c in cols)) for row in idx])


def _stratum_sides(labels: _Labels, gold: np.ndarray, value: object) -> tuple[str, ...] | None:
    """The sides of one stratum (its ``value``): from ``labels`` (one list, or the stratum's in a mapping),
    checked against the stratum's gold labels (:func:`side_labels`); None when ``labels`` is None."""
    if labels is None:
        return None
    if isinstance(labels, Mapping):
        if value not in labels:
            raise ValueError(f"labels name no sides for stratum {value!r}")
        return side_labels(gold, labels[value])
    return side_labels(gold, labels)


def _bootstrap(
    statistic: Callable[..., float], samples: list[list[_ArrayLike]], strata: _ArrayLike | None,
    average_over_strata: bool, n_boot: int, random_state: int | np.random.Generator | None, labels: _Labels = None,
) -> list[tuple[np.ndarray, float]]:
    """The statistic on every resample and on the whole sample, for each of ``samples`` (aligned columns, all
    resampled alike); with ``average_over_strata``, its unweighted mean over the strata (:func:`bootstrap_indices`
    draws each stratum into the columns of its members in stratum order), :func:`macro_f1` over each stratum's
    own sides (``labels``, else its gold's)."""
    cols = [[np.asarray(c) for c in sample] for sample in samples]
    n = cols[0][0].shape[0] if cols[0] else 0
    if n == 0 or any(c.ndim != 1 or c.shape[0] != n for sample in cols for c in sample):
        raise ValueError("the bootstrap needs non-empty 1-D arrays of equal length")
    st = None if strata is None else np.asarray(strata)
    if st is not None and st.shape != (n,):
        raise ValueError(f"strata must have shape ({n},), got {st.shape}")
    if average_over_strata and st is None:
        raise ValueError("average_over_strata=True needs strata")
    idx, whole, groups, values = bootstrap_indices(n, n_boot, st, random_state), np.arange(n), [np.arange(n)], [None]
    if average_over_strata:
        values, codes = np.unique(st, return_inverse=True)
        whole = np.argsort(codes, kind="stable")  # the members of each stratum, stratum after stratum
        groups = np.split(np.arange(n), np.cumsum(np.bincount(codes))[:-1])
    elif isinstance(labels, Mapping):
        raise ValueError("labels per stratum need average_over_strata=True; pass one list of sides")
    gold = cols[0][0] if statistic is macro_f1 else None
    sides = [None if gold is None else (_stratum_sides(labels, gold[whole[g]], v) or side_labels(gold[whole[g]]))
             for g, v in zip(groups, values)]

    def over(sample: list[np.ndarray], rows: np.ndarray) -> np.ndarray:
        return np.mean([_row_statistic(statistic, sample, rows[:, g], s) for g, s in zip(groups, sides)], axis=0)

    return [(over(sample, idx), float(over(sample, whole[None, :])[0])) for sample in cols]


def bootstrap_ci(
    statistic: Callable[..., float],
    *arrays: _ArrayLike,
    n_boot: int = 2000,
    level: float = 0.95,
    strata: _ArrayLike | None = None,
    average_over_strata: bool = False,
    random_state: int | np.random.Generator | None = 0,
    labels: _Labels = None,
) -> Interval:
    r"""Percentile bootstrap interval of a statistic over evaluation pairs: the
    :math:`(\tfrac{1-\text{level}}2, \tfrac{1+\text{level}}2)` quantiles of the statistic over resamples.
    With ``average_over_strata=True`` the statistic is the unweighted mean over strata of the per-stratum
    statistic, the "Average" of the paper's tables, :math:`\bar s = \frac1{|D|}\sum_{d \in D} s(\text{pairs
    of } d)`.

    Parameters
    ----------
    statistic : callable
        ``statistic(*arrays_resampled) -> float``; :func:`accuracy` and :func:`macro_f1` are vectorised.
    *arrays : array_like, each shape (n,)
        Aligned per-pair arrays, resampled with the same indices.
    n_boot, strata, random_state
        As in :func:`bootstrap_indices`.
    level : float
    average_over_strata : bool
    labels : sequence of str, or mapping of a stratum to its sides, optional
        The sides :func:`macro_f1` averages over (:data:`_Labels`; other statistics ignore them): a task's,
        so that a side no gold label takes still counts, as :func:`tefcore.evaluate.score_table` does.

    Returns
    -------
    Interval

    Raises
    ------
    ValueError
        When ``labels`` leave out a gold label (:func:`side_labels`), or name no sides for a stratum.

    Examples
    --------
    >>> bootstrap_ci(accuracy, ["change"] * 8 + ["stability"] * 2, ["change"] * 10).estimate
    80.0
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    [(boots, estimate)] = _bootstrap(statistic, [list(arrays)], strata, average_over_strata, n_boot, random_state,
                                     labels)
    lo, hi = np.nanquantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return Interval(estimate, float(lo), float(hi), level, n_boot)


@dataclass(frozen=True)
class PairedComparison:
    """Difference of a metric between two methods on the same pairs: ``difference`` (``metric(a) -
    metric(b)`` on all pairs), its percentile bootstrap interval ``low``, ``high``, and the two-sided
    bootstrap ``p_value`` (twice the smaller share of resampled differences on either side of zero, at
    most 1).
    """

    difference: float
    low: float
    high: float
    p_value: float
    level: float
    n_boot: int


def paired_bootstrap(
    metric: Callable[[np.ndarray, np.ndarray], float],
    y_true: _ArrayLike,
    pred_a: _ArrayLike,
    pred_b: _ArrayLike,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    strata: _ArrayLike | None = None,
    average_over_strata: bool = False,
    random_state: int | np.random.Generator | None = 0,
    labels: _Labels = None,
) -> PairedComparison:
    r"""Paired bootstrap of :math:`\Delta = \text{metric}(y, \hat y_a) - \text{metric}(y, \hat y_b)`: both
    methods are scored on the same resampled pairs (options as in :func:`bootstrap_ci`).

    Examples
    --------
    >>> y = ["change"] * 10
    >>> cmp = paired_bootstrap(accuracy, y, ["change"] * 9 + ["stability"], ["change"] * 5 + ["stability"] * 5)
    >>> round(cmp.difference, 1), cmp.low <= cmp.difference <= cmp.high
    (40.0, True)
    """
    (boots_a, estimate_a), (boots_b, estimate_b) = _bootstrap(
        metric, [[y_true, pred_a], [y_true, pred_b]], strata, average_over_strata, n_boot, random_state, labels)
    diffs, diff = boots_a - boots_b, estimate_a - estimate_b
    lo, hi = np.quantile(diffs, [(1 - level) / 2, (1 + level) / 2])
    p = min(1.0, 2.0 * min(np.mean(diffs <= 0.0), np.mean(diffs >= 0.0)))
    return PairedComparison(diff, float(lo), float(hi), float(p), level, n_boot)


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test on two methods' correctness over the same pairs.

    ``b`` counts pairs only method A got right, ``c`` pairs only method B got right.
    """

    b: int
    c: int
    statistic: float
    p_value: float
    exact: bool


def mcnemar_test(correct_a: _ArrayLike, correct_b: _ArrayLike, exact: bool | None = None) -> McNemarResult:
    r"""McNemar's test of equal error rates for paired predictions. With :math:`b` and :math:`c` the
    discordant counts, the exact test is the two-sided binomial test of :math:`b \sim \text{Bin}(b + c,
    1/2)`, the asymptotic one :math:`\chi^2 = (|b - c| - 1)^2 / (b + c) \sim \chi^2_1`.

    Parameters
    ----------
    correct_a, correct_b : array_like of bool, shape (n,)
    exact : bool, optional
        Default: exact when :math:`b + c < 25`.

    Examples
    --------
    >>> r = mcnemar_test([True, True, True, False], [False, False, True, False])
    >>> r.b, r.c, r.p_value
    (2, 0, 0.5)
    """
    a, bb = _paired(correct_a, correct_b, "correct_a and correct_b")
    a, bb = a.astype(bool), bb.astype(bool)
    b = int(np.sum(a & ~bb))
    c = int(np.sum(~a & bb))
    n = b + c
    use_exact = n < 25 if exact is None else exact
    if n == 0:
        return McNemarResult(b, c, 0.0, 1.0, use_exact)
    if use_exact:
        p = stats.binomtest(b, n, 0.5, alternative="two-sided").pvalue
        return McNemarResult(b, c, float(min(b, c)), float(min(1.0, p)), True)
    chi2 = (abs(b - c) - 1.0) ** 2 / n
    return McNemarResult(b, c, float(chi2), float(stats.chi2.sf(chi2, df=1)), False)

