"""The one evaluation layer: from a probability cache to predictions, score tables, the "Average", the
strongest baseline and paired comparisons (each aggregate of the paper defined here, once). A cache
(:func:`tefcore.extraction.cache.read_cache`) holds one row per evaluation pair with the whole post's
P(change) (``direct``) and the per-sentence P(change) (``sentences``), NaN for an unreadable answer.

Invalid answers: ``invalid="drop"`` (the default) leaves unreadable sentences out of the fusion and
counts them; a pair with no readable sentence (or an unreadable Direct answer) is an *abstention*,
scored as wrong. ``invalid="reference"`` reproduces the reference release, which turns every unreadable
answer into P(change) = 0.5 (a change vote under Majority Vote and a change prediction under Direct).

A task of one's own (:mod:`tefcore.tasks`) names its sides per dimension (``classes``; K may differ
between dimensions): a dimension with K > 2 sides is fused from the distributions (``direct_probs``,
``sentence_probs``) with the general-K rules. An order of dimensions is always an argument.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tefcore import metrics
from tefcore.errors import UnknownName
from tefcore.fusion import CLASSES, RULE_NAMES, fuse_many

__all__ = ["ABSTAIN", "AVERAGE", "BASELINES", "METRICS", "METRIC_LABELS",
           "SENTENCE_RULES", "check_metric", "decisions", "dimension_average", "flatten_sentences", "iter_groups",
           "paired_comparisons", "predict_pairs", "score_table", "sort_table", "strongest_baseline"]

ABSTAIN = "abstain"
"""The prediction of a pair with no readable answer left (scored as a miss)."""
AVERAGE = "Average"
"""The ``dimension`` value of a table's Average rows."""
BASELINES: tuple[str, ...] = ("direct", "majority_vote", "soft_vote")
"""The rules whose best is "the strongest baseline" (protocol §7)."""
_INVALID_POLICIES: tuple[str, ...] = ("drop", "reference")
"""Ways to treat unreadable answers (see the module notes)."""
SENTENCE_RULES: tuple[str, ...] = tuple(r for r in RULE_NAMES if r != "direct")
"""The rules that fuse sentence posteriors."""
_PAIR_KEYS: list[str] = ["post_id", "lang", "dimension", "side"]
"""The columns that identify an evaluation pair and its gold side."""

_METRIC_FNS: dict[str, Callable[..., float]] = {"accuracy": metrics.accuracy, "macro_f1": metrics.macro_f1}
METRICS: tuple[str, ...] = tuple(_METRIC_FNS)
"""The metrics of the paper's tables, in percent."""
METRIC_LABELS: dict[str, str] = {"accuracy": "Acc", "macro_f1": "F1"}
"""Short names of the metrics in the paper's table headers."""
def check_metric(metric: str) -> Callable[..., float]:
    """The scoring function of a metric name of :data:`METRICS`; :class:`~tefcore.errors.UnknownName` (a
    KeyError and a ValueError) for any other name.

    Examples
    --------
    >>> check_metric("accuracy")(["change", "stability"], ["change", "change"])
    50.0
    """
    if metric not in _METRIC_FNS:
        raise UnknownName(f"metric must be one of {METRICS}, got {metric!r}")
    return _METRIC_FNS[metric]


def iter_groups(frame: pd.DataFrame, keys: Sequence[str]) -> Iterator[tuple[dict[str, Any], pd.DataFrame]]:
    """``groupby(keys, sort=False)`` that also works with no keys and yields each key as a dict.

    Examples
    --------
    >>> frame = pd.DataFrame({"lang": ["en", "zh", "en"], "x": [1, 2, 3]})
    >>> [(key, len(g)) for key, g in iter_groups(frame, ["lang"])]
    [({'lang': 'en'}, 2), ({'lang': 'zh'}, 1)]
    """
    keys = list(keys)
    if not keys:
        yield {}, frame
        return
    for key, g in frame.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        yield dict(zip(keys, key)), g


# --- predictions ----------------------------------------------------------------------------------
def flatten_sentences(
    sentences: Sequence[Sequence[Any]] | pd.Series, dtype: Any = np.float64
) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate per-pair sentence lists into one flat array and its pair index.

    Parameters
    ----------
    sentences : sequence of sequences
        One list per pair: a cache's ``sentences`` column, or its ``sentence_sources`` with ``dtype=object``.
    dtype : numpy dtype

    Returns
    -------
    flat : ndarray, shape (n_sentences,)
    doc_index : ndarray of int, shape (n_sentences,)
        Each sentence's pair, non-decreasing (the ``doc_index`` of :func:`tefcore.fusion.fuse_many`).

    Examples
    --------
    >>> flat, doc = flatten_sentences([[0.9, 0.2], [0.4]])
    >>> flat.tolist(), doc.tolist()
    ([0.9, 0.2, 0.4], [0, 0, 1])
    """
    lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
    flat = np.concatenate([np.asarray(s, dtype=dtype) for s in sentences]) if len(sentences) \
        else np.empty(0, dtype=dtype)
    return flat, np.repeat(np.arange(len(sentences)), lengths)


def _unreadable(p: np.ndarray) -> np.ndarray:
    """Rows without a readable answer: a NaN P(change), or a distribution with a NaN."""
    return np.isnan(p) if p.ndim == 1 else np.isnan(p).any(axis=1)


def _apply_policy(p: np.ndarray, invalid: str) -> np.ndarray:
    """``reference``: an unreadable answer becomes 0.5 (K > 2: the uniform distribution)."""
    if invalid not in _INVALID_POLICIES:
        raise UnknownName(f"invalid must be one of {_INVALID_POLICIES}, got {invalid!r}")
    if invalid == "drop":
        return p
    bad = _unreadable(p)
    return np.where(bad, 0.5, p) if p.ndim == 1 else np.where(bad[:, None], 1.0 / p.shape[1], p)


def _fused(rule: str, p: np.ndarray, doc: np.ndarray, n_pairs: int, classes: Sequence[str],
           with_scores: bool) -> pd.DataFrame:
    """Fuse the readable rows; pairs with none are abstentions."""
    ok = ~_unreadable(p)
    pred = np.full(n_pairs, ABSTAIN, dtype=object)
    conf = np.full(n_pairs, np.nan)
    scores = np.full((n_pairs, len(classes)), np.nan)
    if ok.any():
        batch = fuse_many(p[ok], doc[ok], rule, classes=classes)
        pred[batch.doc_ids] = batch.prediction
        conf[batch.doc_ids] = batch.confidence
        scores[batch.doc_ids] = batch.scores
    out = pd.DataFrame({"prediction": pred, "confidence": conf})
    if with_scores:
        out["scores"] = [dict(zip(classes, row)) for row in scores.tolist()]
    return out


def _probabilities(df: pd.DataFrame, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Direct answers, flat sentence answers and their pair index: P(first side), or K columns when K > 2."""
    if k == 2:
        return (df["direct"].to_numpy(dtype=np.float64), *flatten_sentences(df["sentences"]))
    if "sentence_probs" not in df.columns:
        raise ValueError(f"a dimension with {k} sides needs the distributions of a K-side cache (sentence_probs)")
    flat, doc = flatten_sentences([np.reshape(np.asarray(s, dtype=np.float64), (-1, k))
                                   for s in df["sentence_probs"]])
    return np.asarray(df["direct_probs"].tolist(), dtype=np.float64).reshape(-1, k), flat.reshape(-1, k), doc


def predict_pairs(
    df: pd.DataFrame, rules: Sequence[str] | None = None, invalid: str = "drop", *,
    classes: Mapping[str, Sequence[str]] | None = None, scores: bool = False,
) -> pd.DataFrame:
    """Predictions of every rule for every pair of a cache.

    Parameters
    ----------
    df : DataFrame
        A cache (columns ``post_id, lang, dimension, side, direct, sentences``).
    rules : sequence of str, optional
        Rule names (default: all of :data:`tefcore.fusion.RULE_NAMES`).
    invalid : {"drop", "reference"}
        Handling of unreadable answers (see the module notes).
    classes : mapping of str to sequence of str, optional
        A task's sides per dimension (default: :data:`tefcore.fusion.CLASSES` everywhere).
    scores : bool
        Add ``scores``, the rule's score of every side (a dict per row).

    Returns
    -------
    DataFrame
        One row per (pair, rule): ``post_id, lang, dimension, side, n_sentences, n_invalid, rule,
        prediction`` (:data:`ABSTAIN` where no readable answer was left), ``confidence, correct``.

    Examples
    --------
    >>> cache = pd.DataFrame({"post_id": ["a"], "lang": ["en"], "dimension": ["Economy"],
    ...                       "side": ["stability"], "direct": [0.6],
    ...                       "sentences": [[0.02, 0.55, 0.55, 0.55, 0.55]]})
    >>> predict_pairs(cache, rules=["majority_vote", "tef"])[["rule", "prediction", "correct"]]
                rule prediction  correct
    0  majority_vote     change    False
    1            tef  stability     True
    """
    rules = list(RULE_NAMES if rules is None else rules)
    unknown = [r for r in rules if r not in RULE_NAMES]
    if unknown:
        raise UnknownName(f"unknown rule(s) {unknown}; choose from {', '.join(RULE_NAMES)}")
    missing = [c for c in _PAIR_KEYS + ["direct", "sentences"] if c not in df.columns]
    if missing:
        raise ValueError(f"cache frame lacks column(s) {missing}")
    df = df.reset_index(drop=True)
    if classes is None:
        return _predict(df, rules, invalid, CLASSES, scores)
    absent = sorted(set(df["dimension"]) - set(classes))
    if absent:
        raise UnknownName(f"no sides given for dimension(s) {absent}")
    # each dimension with its own sides, then back to the order of one call: rule, then pair
    out = pd.concat([_predict(g, rules, invalid, tuple(classes[dim]), scores)
                     .assign(_row=np.tile(g.index.to_numpy(), len(rules)))
                     for dim, g in df.groupby("dimension", sort=False)], ignore_index=True)
    out["_rule"] = out["rule"].map({r: i for i, r in enumerate(rules)})
    return out.sort_values(["_rule", "_row"], kind="stable").drop(columns=["_rule", "_row"]).reset_index(drop=True)


def _predict(df: pd.DataFrame, rules: Sequence[str], invalid: str, classes: Sequence[str],
             with_scores: bool) -> pd.DataFrame:
    """:func:`predict_pairs` of pairs that share their sides ``classes``."""
    base = df[_PAIR_KEYS].reset_index(drop=True)
    direct, flat, doc = _probabilities(df.reset_index(drop=True), len(classes))
    base["n_sentences"] = np.bincount(doc, minlength=len(base))
    if np.any(base["n_sentences"].to_numpy() == 0):
        bad = int(np.flatnonzero(base["n_sentences"].to_numpy() == 0)[0])
        raise ValueError(f"pair at row {bad} has no sentence probabilities")
    base["n_invalid"] = np.bincount(doc, weights=_unreadable(flat), minlength=len(base)).astype(int)
    frames = []
    for rule in rules:  # Direct scores the whole post, each pair its own document
        p, d = (direct, np.arange(len(base))) if rule == "direct" else (flat, doc)
        frames.append(base.assign(rule=rule, **_fused(rule, _apply_policy(p, invalid), d, len(base), classes,
                                                      with_scores)))
    out = pd.concat(frames, ignore_index=True)
    out["correct"] = out["prediction"].to_numpy() == out["side"].to_numpy()
    return out


def decisions(df: pd.DataFrame, rules: Sequence[str] = ("tef",), invalid: str = "drop", *,
              classes: Mapping[str, Sequence[str]] | None = None, flat: bool = True) -> pd.DataFrame:
    """Per pair and rule: the decision, its confidence and the rule's score of every side; no gold needed.

    Parameters
    ----------
    df, invalid, classes
        As in :func:`predict_pairs`.
    rules : sequence of str
        Rule names (default TEF alone).
    flat : bool
        One ``score_<side>`` column per side (default), or one ``scores`` column of ``{side: score}``.

    Returns
    -------
    DataFrame
        ``lang, id, dimension, rule, decision, confidence, gold, n_sentences, n_invalid`` and the scores
        (empty where the side is not one of the pair's dimension).

    Examples
    --------
    >>> cache = pd.DataFrame({"post_id": ["a"], "lang": ["en"], "dimension": ["Tone"], "side": [None],
    ...                       "direct": [0.6], "sentences": [[0.9, 0.2, 0.6]]})
    >>> decisions(cache, classes={"Tone": ["calm", "angry"]})[["id", "decision", "score_calm", "score_angry"]]
      id decision  score_calm  score_angry
    0  a     calm    0.793025    -0.793025
    """
    pred = predict_pairs(df, rules, invalid, classes=classes, scores=True)
    sides = list(dict.fromkeys(c for row in pred["scores"] for c in row))
    out = pred[["lang", "post_id", "dimension", "rule", "prediction", "confidence", "side", "n_sentences",
                "n_invalid"]].rename(columns={"post_id": "id", "prediction": "decision", "side": "gold"})
    if not flat:
        return out.assign(scores=pred["scores"])
    scores = pd.DataFrame(pred["scores"].tolist(), index=out.index).reindex(columns=sides)
    return pd.concat([out, scores.add_prefix("score_")], axis=1)


# --- tables: order, Average, scores ---------------------------------------------------------------
def sort_table(
    table: pd.DataFrame, by: Sequence[str], orders: Mapping[str, Sequence[Any]] | None = None
) -> pd.DataFrame:
    """Rows sorted by the columns ``by`` (most significant first), each in its stated order: ``orders`` maps a
    column to its values in order (``rule`` follows :data:`tefcore.fusion.RULE_NAMES` unless it says
    otherwise); values it does not list follow as they come, and the :data:`AVERAGE` dimension last.

    Parameters
    ----------
    table : DataFrame
    by : sequence of str
    orders : mapping, optional
        E.g. ``{"dimension": TABLE_ORDER}`` (:data:`tefcore.mind.schema.TABLE_ORDER`).

    Returns
    -------
    DataFrame
        A sorted copy (stable sort) with a fresh index.

    Examples
    --------
    >>> t = pd.DataFrame({"rule": ["tef", "direct", "tef"], "dimension": ["Average", "Culture", "Culture"]})
    >>> sort_table(t, ["rule", "dimension"]).values.tolist()
    [['direct', 'Culture'], ['tef', 'Culture'], ['tef', 'Average']]
    """
    orders = {"rule": RULE_NAMES, **(orders or {})}
    keys = [f"_{col}" for col in by]
    out = table.copy()
    for col, key in zip(by, keys):  # the listed values, then the others as they come, the Average last
        order, last = orders.get(col, ()), (AVERAGE,) if col == "dimension" else ()
        ranked = [*order, *(v for v in pd.unique(out[col]) if v not in {*order, *last}), *last]
        out[key] = out[col].map({v: i for i, v in enumerate(ranked)})
    return out.sort_values(keys, kind="stable").drop(columns=keys).reset_index(drop=True)


def dimension_average(
    table: pd.DataFrame,
    by: Sequence[str],
    values: Sequence[str] = ("accuracy", "macro_f1"),
    counts: Sequence[str] = (),
    dimension: str = "dimension",
) -> pd.DataFrame:
    r"""The "Average" of a table: per group of ``by``, the unweighted mean over its dimensions of ``values``
    (protocol §7), :math:`\bar s = \frac{1}{|D|} \sum_{d \in D} s_d`, and the sum of ``counts`` (numbers of
    pairs), leaving out rows already :data:`AVERAGE`.

    Parameters
    ----------
    table : DataFrame
        One row per (group, dimension).
    by, values, counts : sequence of str
    dimension : str
        The dimension column.

    Returns
    -------
    DataFrame
        One row per group (order of first appearance): ``*by, *values, *counts``, ``dimension`` = ``"Average"``.

    Examples
    --------
    >>> t = pd.DataFrame({"lang": "en", "dimension": ["Culture", "Economy"], "accuracy": [60.0, 90.0],
    ...                   "n": [3, 9]})
    >>> dimension_average(t, ["lang"], ["accuracy"], counts=["n"])
      lang  accuracy   n dimension
    0   en      75.0  12   Average
    """
    by, values, counts = list(by), list(values), list(counts)
    rows = table[table[dimension] != AVERAGE]
    avg = rows.groupby(by, sort=False)[values].mean().reset_index()
    if counts:
        avg = avg.merge(rows.groupby(by, sort=False)[counts].sum().reset_index(), on=by)
    return avg.assign(**{dimension: AVERAGE})


def score_table(
    pred: pd.DataFrame,
    by: Sequence[str] = ("lang", "rule", "dimension"),
    orders: Mapping[str, Sequence[Any]] | None = None,
    classes: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Accuracy and macro-F1 (percent) per group, with the unweighted "Average" over dimensions: the metrics
    of :func:`tefcore.metrics.accuracy` and :func:`tefcore.metrics.macro_f1` (a task's dimension: over its
    K sides), from per-group counts in one pass; an abstention is a miss of the true side.

    Parameters
    ----------
    pred : DataFrame
        Output of :func:`predict_pairs` (several may be concatenated with key columns such as ``model``).
    by : sequence of str
        Grouping columns; when it ends with ``"dimension"`` the :func:`dimension_average` rows are added.
    orders : mapping, optional
        Orders of the rows (:func:`sort_table`).
    classes : mapping of str to sequence of str, optional
        A task's sides per dimension (``by`` must then hold ``"dimension"``); by default
        :data:`~tefcore.fusion.CLASSES` when every gold side is one of them, else each dimension's gold
        sides (:func:`tefcore.metrics.side_labels`).

    Returns
    -------
    DataFrame
        Columns ``*by, n, n_abstain, accuracy, macro_f1``, sorted by ``by``, the Average last in its group.

    Examples
    --------
    >>> pred = pd.DataFrame({"lang": "en", "rule": "tef", "dimension": ["Culture", "Culture", "Economy"],
    ...                      "side": ["change", "stability", "change"],
    ...                      "prediction": ["change", "change", "change"]})
    >>> score_table(pred)[["dimension", "n", "accuracy", "macro_f1"]]
      dimension  n  accuracy   macro_f1
    0   Culture  2      50.0  33.333333
    1   Economy  1     100.0  50.000000
    2   Average  3      75.0  41.666667
    """
    by = list(by)
    if classes is None and not set(pred["side"]) <= set(CLASSES):  # a task's sides, read from its gold
        classes = {dim: metrics.side_labels(g) for dim, g in pred.groupby("dimension", sort=False)["side"]}
    if classes is not None and "dimension" not in by:
        raise ValueError("macro-F1 over a task's sides is per dimension: put 'dimension' in by")
    if classes is not None:  # a gold side outside its dimension's sides would score nothing, silently
        for dim, gold in pred.groupby("dimension", sort=False)["side"]:
            metrics.side_labels(gold.to_numpy(), classes.get(dim, ()))
    names = CLASSES if classes is None else tuple(dict.fromkeys(c for sides in classes.values() for c in sides))
    side, guess = pred["side"].to_numpy(), pred["prediction"].to_numpy()
    counts = pred[by].assign(n=1, n_abstain=(guess == ABSTAIN).astype(int), hit=(side == guess).astype(int))
    for c in names:  # every group's counts in one groupby pass
        counts[f"tp_{c}"] = ((side == c) & (guess == c)).astype(int)
        counts[f"fp_{c}"] = ((side != c) & (guess == c)).astype(int)
        counts[f"fn_{c}"] = ((side == c) & (guess != c)).astype(int)
    g = counts.groupby(by, sort=False).sum().reset_index()
    f1 = np.array([metrics.f1_from_counts(g[f"tp_{c}"], g[f"fp_{c}"], g[f"fn_{c}"]) for c in names])
    member = np.ones_like(f1) if classes is None else np.array([g["dimension"].map(lambda d: c in classes[d])
                                                                for c in names], dtype=np.float64)
    macro = (f1 * member).sum(axis=0) / member.sum(axis=0)
    table = g[[*by, "n", "n_abstain"]].assign(accuracy=100.0 * g["hit"] / g["n"], macro_f1=100.0 * macro)
    if by[-1] == "dimension":
        avg = dimension_average(table, by[:-1], counts=["n", "n_abstain"])
        table = pd.concat([table, avg[table.columns]], ignore_index=True)
    return sort_table(table, by, orders)


# --- the strongest baseline and paired comparisons ------------------------------------------------
def strongest_baseline(
    scores: pd.DataFrame,
    by: Sequence[str],
    *,
    value: str = "accuracy",
    rule: str = "rule",
    baselines: Sequence[str] = BASELINES,
    challenger: str | None = "tef",
) -> pd.DataFrame:
    r"""The best of the baselines per group, and the challenger's gain over it. ``by`` states the level: the
    rows of each (group, rule) are averaged (unweighted) first, then the best baseline is picked (ties to
    the first of ``baselines``), :math:`g = \overline{\text{TEF}} - \max_b \overline{b}`; on the paper's
    tidy Table 3, ``by=["model", "lang", "metric"]`` is per (model, language) on the Average and
    ``by=["model", "metric"]`` per model (as Table 1 does). Pass a :func:`score_table` without its Average
    rows (they are recomputed alike) or with those rows only.

    Parameters
    ----------
    scores : DataFrame
        Long scores: the ``by`` columns, a rule column and a value column.
    by, baselines : sequence of str
    value, rule : str
        The value column and the rule column (``"method"`` in the paper's tables).
    challenger : str or None
        The rule whose gain is reported (``None``: only the best baseline).

    Returns
    -------
    DataFrame
        Indexed by ``by`` (sorted): ``strongest_baseline`` (its rule name), ``baseline`` (its value) and,
        with a challenger, a column named after it and ``gain``.

    Raises
    ------
    ValueError
        When a baseline or the challenger is absent from ``scores``.

    Examples
    --------
    >>> t = pd.DataFrame({"lang": "en", "rule": ["direct", "majority_vote", "soft_vote", "tef"],
    ...                   "accuracy": [61.0, 63.5, 63.5, 66.0]})
    >>> strongest_baseline(t, ["lang"])
         strongest_baseline  baseline   tef  gain
    lang
    en        majority_vote      63.5  66.0   2.5
    """
    by = list(by)
    wide = scores.groupby([*by, rule])[value].mean().unstack(rule)
    missing = [r for r in [*baselines, challenger] if r is not None and r not in wide.columns]
    if missing:
        raise ValueError(f"the scores lack rule(s) {missing}")
    base = wide[list(baselines)]
    out = pd.DataFrame({"strongest_baseline": base.idxmax(axis=1), "baseline": base.max(axis=1)})
    if challenger is not None:
        out[challenger] = wide[challenger]
        out["gain"] = out[challenger] - out["baseline"]
    return out


def paired_comparisons(
    pred: pd.DataFrame,
    a: str,
    b: str | Mapping[tuple[Any, ...], str],
    *,
    by: Sequence[str] = ("lang",),
    metric: str = "accuracy",
    n_boot: int = 1000,
    level: float = 0.95,
    random_state: int = 0,
    strata: Sequence[str] = ("dimension",),
) -> pd.DataFrame:
    r"""Rule ``a`` against rule ``b`` on the same pairs, per group of ``by``: :math:`\Delta = \bar s(a) - \bar
    s(b)`, the difference of the Averages over ``strata`` in points, with its paired bootstrap
    (:func:`tefcore.metrics.paired_bootstrap`, the same seed for every group), and McNemar's test on the
    pooled correctness (:func:`tefcore.metrics.mcnemar_test`).

    Parameters
    ----------
    pred : DataFrame
        :func:`predict_pairs` output (several runs may be stacked with key columns such as ``model``).
    a, b : str
        The rule under test and the rule compared with; ``b`` may map a group's key tuple to its rule (the
        strongest baseline of each group, say), groups it leaves out being skipped.
    by, strata : sequence of str
        Columns of a group, and those whose combinations are the strata (``("lang", "dimension")`` as
        Table 1 does).
    metric, n_boot, level, random_state
        ``"accuracy"`` or ``"macro_f1"``, and the bootstrap's settings.

    Returns
    -------
    DataFrame
        ``*by, a, b, metric, difference, low, high, p_bootstrap, mcnemar_b, mcnemar_c, p_mcnemar, n``.

    Raises
    ------
    ValueError
        When a rule is missing from a group or the two rules are not scored on the same pairs.

    Examples
    --------
    >>> pred = pd.DataFrame({"post_id": ["p1", "p2", "p1", "p2"], "lang": "en", "dimension": "Economy",
    ...                      "side": "change", "rule": ["tef", "tef", "soft_vote", "soft_vote"],
    ...                      "prediction": ["change", "change", "change", "stability"]})
    >>> pred["correct"] = pred["prediction"] == pred["side"]
    >>> paired_comparisons(pred, "tef", "soft_vote", n_boot=200)[["lang", "difference", "mcnemar_b"]]
      lang  difference  mcnemar_b
    0   en        50.0          1
    """
    fn = check_metric(metric)
    rows = []
    for key, g in iter_groups(pred, by):
        other = b if isinstance(b, str) else b.get(tuple(key.values()))
        if other is None:
            continue
        pair_cols = ["post_id", "lang", "dimension"]
        ga = g[g["rule"] == a].set_index(pair_cols).sort_index()
        gb = g[g["rule"] == other].set_index(pair_cols).sort_index()
        if len(ga) == 0 or len(gb) == 0:
            raise ValueError(f"rules {a!r} and {other!r} must both be present in group {key}")
        if not ga.index.equals(gb.index):
            raise ValueError(f"rules {a!r} and {other!r} are not scored on the same pairs in group {key}")
        st = ga.reset_index().groupby(list(strata), sort=False).ngroup().to_numpy()
        cmp = metrics.paired_bootstrap(fn, ga["side"].to_numpy(), ga["prediction"].to_numpy(),
                                       gb["prediction"].to_numpy(), n_boot=n_boot, level=level, strata=st,
                                       average_over_strata=True, random_state=random_state)
        mc = metrics.mcnemar_test(ga["correct"].to_numpy(), gb["correct"].to_numpy())
        rows.append({**key, "a": a, "b": other, "metric": metric, "difference": cmp.difference,
                     "low": cmp.low, "high": cmp.high, "p_bootstrap": cmp.p_value,
                     "mcnemar_b": mc.b, "mcnemar_c": mc.c, "p_mcnemar": mc.p_value, "n": len(ga)})
    return pd.DataFrame(rows)
