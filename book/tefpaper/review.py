r"""The paper's own tables read as a reviewer reads them: the majority-class floor of each cell
(:func:`floors`), the sampling noise of TEF's wins (:func:`noise`), whether a printed accuracy and
macro-F1 can come from one confusion matrix (:func:`confusion_check`), what the sentence rules' spread
requires of the posts (:func:`sentence_rules`) and a tokenizer-free lower bound on a prompt's tokens
(:func:`prompt_words`, Table 2).

They read the paper's printed numbers (:mod:`tefpaper.tables`) and the evaluation pairs per
language, dimension and side counted from the release's files (:func:`cell_counts`), which the paper
does not print.

Examples
--------
>>> from tefpaper.tables import load_table
>>> f = floors(load_table("table3"))
>>> int(f["below"].sum()), len(f)
(103, 240)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.stats import norm

from tefcore.evaluate import BASELINES, SENTENCE_RULES
from tefcore.mind.release import FULL_RELEASE_PAIRS
from tefcore.mind.schema import SIDES
from tefpaper.tables import ROUNDING_TOLERANCE, SLACK, strongest_baseline_gain

__all__ = ["SENTENCE_RULES", "cell_counts", "confusion_check", "floors", "majority_class", "noise", "prompt_words",
           "reachable_f1", "sentence_rules", "wilson_interval"]

_CELL = ["model", "lang", "dimension"]
_WORD = re.compile(r"[^\W\d_]+")


def majority_class(counts: pd.DataFrame) -> pd.DataFrame:
    r"""The majority-class floor of pairs counted per side: what always answering the larger side scores.

    Its accuracy is the larger side's share, :math:`s = \max(n_c, n_s) / n`; its macro-F1 is
    :math:`s / (1 + s)`, since the larger side's F1 is :math:`2s / (1 + s)` and the other side's is 0.
    The one definition of the floor: the paper's cells (:func:`cell_counts`) and the book's pairs
    (:func:`tefbook.companion.results.majority_rate`) both read it here.

    Parameters
    ----------
    counts : pandas.DataFrame
        One row per cell, with the pairs of each side in columns ``change`` and ``stability``.

    Returns
    -------
    pandas.DataFrame
        The same index; columns ``n``, ``majority`` (the larger side, ``change`` on a tie), ``floor`` and
        ``floor_f1`` (accuracy and macro-F1, percent).

    Examples
    --------
    >>> majority_class(pd.DataFrame({"change": [3, 5], "stability": [1, 5]})).round(1)
        n   majority  floor  floor_f1
    0   4     change   75.0      42.9
    1  10     change   50.0      33.3
    """
    change, stability = counts["change"], counts["stability"]
    n = change + stability
    share = np.maximum(change, stability) / n
    return pd.DataFrame({"n": n, "majority": np.where(change >= stability, "change", "stability"),
                         "floor": 100 * share, "floor_f1": 100 * share / (1 + share)}, index=counts.index)


def cell_counts() -> pd.DataFrame:
    """Evaluation pairs of the full release per language and dimension, and their majority-class floor
    (:func:`majority_class`).

    Returns
    -------
    pandas.DataFrame
        Index ``(lang, dimension)``; columns ``change``, ``stability``, ``n``, ``majority`` (the larger
        side) and ``floor`` (its share, in percent).

    Examples
    --------
    >>> cell_counts().loc[("zh", "Culture")].to_dict()
    {'change': 669, 'stability': 1330, 'n': 1999, 'majority': 'stability', 'floor': 66.53326663331666}
    """
    rows = [(lang, dim, *counts) for lang, dims in FULL_RELEASE_PAIRS.items() for dim, counts in dims.items()]
    out = pd.DataFrame(rows, columns=["lang", "dimension", *SIDES]).set_index(["lang", "dimension"])
    return out.join(majority_class(out)[["n", "majority", "floor"]])


def wilson_interval(accuracy: npt.ArrayLike, n: npt.ArrayLike, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    r"""The Wilson score interval of an accuracy (in percent) measured on ``n`` pairs.

    .. math::

        \frac{\hat p + z^2/2n \pm z\sqrt{\hat p(1-\hat p)/n + z^2/4n^2}}{1 + z^2/n},
        \qquad z = \Phi^{-1}\!\left(\tfrac{1 + \text{level}}{2}\right).

    Examples
    --------
    >>> low, high = wilson_interval([72.1, 50.0], [1999, 137])
    >>> low.round(1).tolist(), high.round(1).tolist()
    ([70.1, 41.7], [74.0, 58.3])
    """
    p, m = np.asarray(accuracy, dtype=float) / 100, np.asarray(n, dtype=float)
    z = norm.ppf((1 + level) / 2)
    centre = (p + z**2 / (2 * m)) / (1 + z**2 / m)
    half = z * np.sqrt(p * (1 - p) / m + z**2 / (4 * m**2)) / (1 + z**2 / m)
    return 100 * (centre - half), 100 * (centre + half)


def floors(table: pd.DataFrame) -> pd.DataFrame:
    """Every printed accuracy of a paper table (Table 3 or 4) beside the majority-class floor of its cell.

    Returns
    -------
    pandas.DataFrame
        The accuracy rows (dimensions only) with ``n``, ``floor``, ``low`` and ``high`` (the accuracy's
        Wilson interval) and ``below``: the printed accuracy, even rounded up, lies under the floor.
    """
    acc = table[(table["metric"] == "accuracy") & (table["dimension"] != "Average")]
    out = acc.join(cell_counts()[["n", "floor"]], on=["lang", "dimension"])
    out["low"], out["high"] = wilson_interval(out["value"], out["n"])
    out["below"] = out["value"] + ROUNDING_TOLERANCE < out["floor"]
    return out.reset_index(drop=True)


def noise(table3: pd.DataFrame, baselines: Sequence[str] = BASELINES) -> pd.DataFrame:
    """TEF against the strongest baseline of each accuracy cell, with TEF's sampling noise.

    A win lies *inside the noise* when the strongest baseline's accuracy lies inside the 95 % Wilson
    interval of TEF's accuracy on the cell's ``n`` pairs: the two could be the same accuracy measured
    on another sample of posts. (Both rules read the same posts, so a paired test would be sharper; it
    needs per-post predictions, which the paper does not release.)

    Returns
    -------
    pandas.DataFrame
        One row per (model, lang, dimension): ``strongest_baseline``, ``baseline``, ``tef``, ``gain``,
        ``n``, ``low``, ``high``, ``win`` and ``inside``.

    Examples
    --------
    >>> from tefpaper.tables import load_table
    >>> nz = noise(load_table("table3"))
    >>> int(nz["win"].sum()), int(nz["inside"].sum())
    (50, 26)
    """
    gains = strongest_baseline_gain(table3, level="cell", baselines=baselines).xs("accuracy", level="metric")
    out = gains.reset_index().join(cell_counts()["n"], on=["lang", "dimension"])
    out["low"], out["high"] = wilson_interval(out["tef"], out["n"])
    out["win"] = out["gain"] > 0
    out["inside"] = out["win"] & (out["baseline"] >= out["low"])
    return out


def reachable_f1(accuracy: float, macro_f1: float, n_change: int, n_stability: int) -> float:
    """The macro-F1 (percent) closest to ``macro_f1`` that a confusion matrix on these pairs can give
    while its accuracy rounds to ``accuracy`` (both printed with one decimal).

    Every split of the correct answers between the two sides is tried: with :math:`n` pairs, an
    accuracy printed as :math:`a` allows :math:`k` correct answers for
    :math:`|100k/n - a| \\le 0.05`, and :math:`k = TP + TN`.

    Examples
    --------
    >>> reachable_f1(50.0, 50.0, 50, 50), reachable_f1(90.0, 40.0, 50, 50)
    (50.0, 89.89...)
    """
    n = n_change + n_stability
    k = np.arange(np.ceil((accuracy - ROUNDING_TOLERANCE) * n / 100 - SLACK),
                  np.floor((accuracy + ROUNDING_TOLERANCE) * n / 100 + SLACK) + 1)
    tp = np.arange(n_change + 1)[:, None]
    tn = k[None, :] - tp
    fp, fn = n_stability - tn, n_change - tp
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = 50 * (np.where(tp > 0, 2 * tp / (2 * tp + fp + fn), 0) + np.where(tn > 0, 2 * tn / (2 * tn + fp + fn), 0))
    f1 = np.where((tn >= 0) & (tn <= n_stability), f1, np.nan)
    return float(f1.flat[np.nanargmin(np.abs(f1 - macro_f1))]) if np.isfinite(f1).any() else float("nan")


def confusion_check(table: pd.DataFrame) -> pd.DataFrame:
    """Whether each printed (accuracy, macro-F1) pair of a table can come from one confusion matrix on the
    release's pairs of its cell (:func:`reachable_f1`).

    Returns
    -------
    pandas.DataFrame
        One row per (model, lang, dimension, method): ``accuracy``, ``macro_f1``, ``reachable`` (the
        closest macro-F1 a confusion matrix gives at that accuracy), ``gap`` and ``consistent`` (within
        the rounding of a printed number).
    """
    wide = table[table["dimension"] != "Average"].pivot_table(
        index=[*_CELL, "method"], columns="metric", values="value").reset_index()
    counts = cell_counts()
    wide["reachable"] = [reachable_f1(r.accuracy, r.macro_f1, *counts.loc[(r.lang, r.dimension), list(SIDES)])
                         for r in wide.itertuples()]
    wide["gap"] = (wide["macro_f1"] - wide["reachable"]).abs()
    wide["consistent"] = wide["gap"] <= ROUNDING_TOLERANCE + SLACK
    wide.columns.name = None
    return wide


def sentence_rules(table3: pd.DataFrame, table4: pd.DataFrame | None = None) -> pd.DataFrame:
    r"""What the spread of the sentence-level rules of a cell requires of its posts.

    All sentence-level rules fuse the same sentence posteriors, and on a post whose sentences all lie on
    one side (every :math:`p_i > 1/2`, or every :math:`p_i < 1/2`) they all decide for that side:
    each rule's score is a sum, or a (weighted) mean, of terms with that side's sign. Two rules can
    therefore decide differently only on posts whose sentences disagree, and the accuracies of the
    sentence rules of a cell differ by at most the share of such posts:
    ``required`` = max - min of their accuracies is a lower bound on it, in points.

    A cell is a *question* when one sentence rule lies below the majority-class floor and another above
    it, each beyond its sampling noise (95 % Wilson interval): the same posteriors then make one rule
    worse than a constant answer and another better than it, on at least ``required`` % of the posts.

    Returns
    -------
    pandas.DataFrame
        One row per (model, lang, dimension): the sentence rules' accuracies (Table 4's ablations where
        it has them), ``floor``, ``n``, ``lowest``, ``highest``, ``required`` and ``question``.
    """
    tables = [table3] if table4 is None else [table3, table4[table4["method"] != "tef"]]
    acc = pd.concat(tables)
    acc = acc[(acc["metric"] == "accuracy") & acc["method"].isin(SENTENCE_RULES) & (acc["dimension"] != "Average")]
    wide = acc.pivot_table(index=_CELL, columns="method", values="value")
    wide = wide[[r for r in SENTENCE_RULES if r in wide.columns]]
    out = wide.join(cell_counts()[["n", "floor"]], on=["lang", "dimension"])
    low, high = wilson_interval(wide.to_numpy(), out[["n"]].to_numpy())
    floor = out[["floor"]].to_numpy()
    out["lowest"], out["highest"] = wide.min(axis=1), wide.max(axis=1)
    out["required"] = out["highest"] - out["lowest"]
    out["question"] = np.nanmax(np.where(high < floor, 1, 0), axis=1).astype(bool) & \
        np.nanmax(np.where(low > floor, 1, 0), axis=1).astype(bool)
    out.columns.name = None
    return out.reset_index()


def prompt_words(text: str) -> int:
    """Words (maximal runs of letters) of a prompt: a lower bound on its tokens under a tokenizer that never
    puts two words in one token, as the byte-level BPE tokenizers of Qwen2.5 and LLaMA 3 do (their
    pre-tokenizer splits at every letter run; chat-template tokens come on top).

    Examples
    --------
    >>> prompt_words("Answer with a single letter, C or S.\\nAnswer:")
    9
    """
    return len(_WORD.findall(text))
