"""From a probability cache to predictions of every fusion rule and to the paper's tables.

The cache (:func:`tefcore.judges.cache.read_cache`) holds one row per evaluation pair with the whole post's
P(change) (``direct``) and the per-sentence P(change) (``sentences``); unreadable answers are NaN
there. This module flattens the sentences of all pairs into one array with a document index, fuses
them with :func:`tefcore.fusion.fuse_many` (no loop over pairs) and scores the predictions per
language, dimension and rule.

Invalid answers: ``invalid="drop"`` (the default) leaves unreadable sentences out of the fusion and
counts them; a pair with no readable sentence (or an unreadable Direct answer) is an *abstention*,
scored as wrong. ``invalid="reference"`` reproduces the reference release, which turns every unreadable
answer into P(change) = 0.5 (a change vote under Majority Vote and Direct, since ties go to change).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tefcore import metrics
from tefcore.fusion import RULE_LABELS, RULE_NAMES, fuse_many
from tefcore.mind.schema import ABBREVIATIONS, TABLE_ORDER

ABSTAIN = "abstain"
INVALID_POLICIES: tuple[str, ...] = ("drop", "reference")
SENTENCE_RULES: tuple[str, ...] = tuple(r for r in RULE_NAMES if r != "direct")
PAIR_KEYS: list[str] = ["post_id", "lang", "dimension", "side"]


def _flatten(sentences: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate per-pair sentence lists into a flat array and its pair index."""
    lengths = sentences.map(len).to_numpy()
    if np.any(lengths == 0):
        bad = sentences.index[lengths == 0][0]
        raise ValueError(f"pair at row {bad} has no sentence probabilities")
    flat = np.concatenate([np.asarray(s, dtype=np.float64) for s in sentences]) if len(sentences) \
        else np.empty(0)
    return flat, np.repeat(np.arange(len(sentences)), lengths)


def _apply_policy(p: np.ndarray, invalid: str) -> np.ndarray:
    if invalid not in INVALID_POLICIES:
        raise ValueError(f"invalid must be one of {INVALID_POLICIES}, got {invalid!r}")
    return np.where(np.isnan(p), 0.5, p) if invalid == "reference" else p


def _fused(rule: str, p: np.ndarray, doc: np.ndarray, n_pairs: int) -> pd.DataFrame:
    """Fuse the readable rows; pairs with none are abstentions."""
    ok = ~np.isnan(p)
    pred = np.full(n_pairs, ABSTAIN, dtype=object)
    conf = np.full(n_pairs, np.nan)
    if ok.any():
        batch = fuse_many(p[ok], doc[ok], rule)
        pred[batch.doc_ids] = batch.prediction
        conf[batch.doc_ids] = batch.confidence
    return pd.DataFrame({"prediction": pred, "confidence": conf})


def predict_pairs(
    df: pd.DataFrame, rules: Sequence[str] | None = None, invalid: str = "drop"
) -> pd.DataFrame:
    """Predictions of every rule for every pair of a cache.

    Parameters
    ----------
    df : DataFrame
        A cache as :func:`tefcore.judges.cache.read_cache` returns it (columns ``post_id, lang, dimension,
        side, direct, sentences``).
    rules : sequence of str, optional
        Rule names (default: all of :data:`tefcore.fusion.RULE_NAMES`).
    invalid : {"drop", "reference"}
        Handling of unreadable answers (see the module notes).

    Returns
    -------
    DataFrame
        Long format, one row per (pair, rule): ``post_id, lang, dimension, side, rule, prediction,
        confidence, correct, n_sentences, n_invalid``. ``prediction`` is ``"abstain"`` where no
        readable answer was left.
    """
    rules = list(RULE_NAMES if rules is None else rules)
    unknown = [r for r in rules if r not in RULE_NAMES]
    if unknown:
        raise ValueError(f"unknown rule(s) {unknown}; choose from {', '.join(RULE_NAMES)}")
    missing = [c for c in PAIR_KEYS + ["direct", "sentences"] if c not in df.columns]
    if missing:
        raise ValueError(f"cache frame lacks column(s) {missing}")
    base = df[PAIR_KEYS].reset_index(drop=True)
    flat, doc = _flatten(df["sentences"].reset_index(drop=True))
    base["n_sentences"] = np.bincount(doc, minlength=len(base))
    base["n_invalid"] = np.bincount(doc, weights=np.isnan(flat), minlength=len(base)).astype(int)
    frames = []
    for rule in rules:
        if rule == "direct":
            p = _apply_policy(df["direct"].to_numpy(dtype=np.float64), invalid)
            fused = _fused(rule, p, np.arange(len(base)), len(base))
        else:
            fused = _fused(rule, _apply_policy(flat, invalid), doc, len(base))
        frames.append(base.assign(rule=rule, **fused))
    out = pd.concat(frames, ignore_index=True)
    out["correct"] = out["prediction"].to_numpy() == out["side"].to_numpy()
    return out


def _group_counts(pred: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per-group counts: ``n``, abstentions, hits and TP/FP/FN of each side (one groupby pass)."""
    side, guess = pred["side"].to_numpy(), pred["prediction"].to_numpy()
    counts = pred[by].copy()
    counts["n"] = 1
    counts["n_abstain"] = (guess == ABSTAIN).astype(int)
    counts["hit"] = (side == guess).astype(int)
    for c in metrics.CLASSES:
        counts[f"tp_{c}"] = ((side == c) & (guess == c)).astype(int)
        counts[f"fp_{c}"] = ((side != c) & (guess == c)).astype(int)
        counts[f"fn_{c}"] = ((side == c) & (guess != c)).astype(int)
    return counts.groupby(by, sort=False).sum().reset_index()


def _in_table_order(table: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Sort rules and dimensions in the paper's order, other keys in order of appearance."""
    ranks = {"rule": {r: i for i, r in enumerate(RULE_NAMES)},
             "dimension": {d: i for i, d in enumerate([*TABLE_ORDER, "Average"])}}
    keys = []
    out = table.copy()
    for col in by:
        rank = ranks.get(col) or {v: i for i, v in enumerate(pd.unique(out[col]))}
        out[f"_{col}"] = out[col].map(rank)
        keys.append(f"_{col}")
    return out.sort_values(keys, kind="stable").drop(columns=keys).reset_index(drop=True)


def score_table(pred: pd.DataFrame, by: Sequence[str] = ("lang", "rule", "dimension")) -> pd.DataFrame:
    r"""Accuracy and macro-F1 (percent) per group, with the unweighted "Average" over dimensions.

    Computed from per-group counts in one pass (no per-group metric calls); the tests check it
    against :func:`tefcore.metrics.accuracy` and :func:`tefcore.metrics.macro_f1` (scikit-learn):

    .. math::

        \text{acc} = \frac{100}{n}\sum_j \mathbb 1[\hat y_j = y_j], \qquad
        \text{F1}_c = \frac{2\,TP_c}{2\,TP_c + FP_c + FN_c}\ (0 \text{ when the denominator is } 0),

    macro-F1 being the mean of :math:`\text{F1}_c` over both sides. An abstention is a miss of the
    true side.

    Parameters
    ----------
    pred : DataFrame
        Output of :func:`predict_pairs` (several caches may be concatenated with extra key columns
        such as ``model``; pass them in ``by``).
    by : sequence of str
        Grouping columns; when it ends with ``"dimension"`` the Average rows are added.

    Returns
    -------
    DataFrame
        Columns ``*by, n, n_abstain, accuracy, macro_f1``; dimensions in the paper's table order,
        then ``"Average"`` (mean over the dimensions present, as the paper's tables do).
    """
    by = list(by)
    g = _group_counts(pred, by)
    f1 = []
    for c in metrics.CLASSES:
        den = 2 * g[f"tp_{c}"] + g[f"fp_{c}"] + g[f"fn_{c}"]
        f1.append(np.where(den > 0, 2 * g[f"tp_{c}"] / den.clip(lower=1), 0.0))
    table = g[[*by, "n", "n_abstain"]].assign(accuracy=100.0 * g["hit"] / g["n"],
                                              macro_f1=100.0 * np.mean(f1, axis=0))
    if by[-1] != "dimension":
        return _in_table_order(table, by)
    outer = by[:-1]
    avg = table.groupby(outer, sort=False)[["accuracy", "macro_f1"]].mean().reset_index()
    sums = table.groupby(outer, sort=False)[["n", "n_abstain"]].sum().reset_index()
    avg = avg.merge(sums, on=outer).assign(dimension="Average")
    return _in_table_order(pd.concat([table, avg[table.columns]], ignore_index=True), by)


def wide_table(table: pd.DataFrame, metric_names: Sequence[str] = ("accuracy", "macro_f1")) -> pd.DataFrame:
    """Paper-style wide layout: one row per (lang, rule), columns (dimension abbreviation, metric)."""
    t = table.copy()
    t["dim"] = t["dimension"].map(lambda d: ABBREVIATIONS.get(d, d))
    t["method"] = t["rule"].map(RULE_LABELS)
    index = [c for c in t.columns if c not in ("dimension", "dim", "rule", "method", "n", "n_abstain",
                                               *metric_names)]
    w = t.pivot_table(index=[*index, "method"], columns="dim", values=list(metric_names), sort=False)
    w = w.swaplevel(0, 1, axis=1)
    dims = [ABBREVIATIONS[d] for d in TABLE_ORDER if ABBREVIATIONS[d] in w.columns.get_level_values(0)]
    cols = [(d, m) for d in [*dims, "Average"] for m in metric_names if (d, m) in w.columns]
    return w[cols].round(1)


def strongest_baseline(table: pd.DataFrame, metric: str = "accuracy",
                       baselines: Sequence[str] = ("direct", "majority_vote", "soft_vote")) -> pd.DataFrame:
    """Per (lang, dimension) the best baseline score and TEF's gain over it."""
    keys = [c for c in table.columns if c not in ("rule", "n", "n_abstain", "accuracy", "macro_f1")]
    base = table[table["rule"].isin(baselines)]
    best = base.loc[base.groupby(keys, sort=False)[metric].idxmax(), [*keys, "rule", metric]]
    best = best.rename(columns={"rule": "best_baseline", metric: "baseline"})
    tef = table[table["rule"] == "tef"][[*keys, metric]].rename(columns={metric: "tef"})
    out = best.merge(tef, on=keys)
    out["gain"] = out["tef"] - out["baseline"]
    return out.reset_index(drop=True)


def compare_rules(pred: pd.DataFrame, a: str, b: str, metric: str = "accuracy",
                  n_boot: int = 2000, random_state: int = 0) -> pd.DataFrame:
    """Paired comparison of rule ``a`` against rule ``b`` per language on the dimension Average.

    Returns the difference with a stratified paired-bootstrap interval (strata = dimensions, averaged
    unweighted as in the tables) and McNemar's test on pooled correctness.
    """
    fn = metrics.accuracy if metric == "accuracy" else metrics.macro_f1
    rows = []
    for lang, g in pred.groupby("lang", sort=False):
        ga = g[g["rule"] == a].set_index(["post_id", "dimension"]).sort_index()
        gb = g[g["rule"] == b].set_index(["post_id", "dimension"]).sort_index()
        if len(ga) == 0 or len(gb) == 0:
            raise ValueError(f"rules {a!r} and {b!r} must both be present for {lang}")
        dims = ga.index.get_level_values("dimension").to_numpy()
        cmp = metrics.paired_bootstrap(fn, ga["side"].to_numpy(), ga["prediction"].to_numpy(),
                                       gb["prediction"].to_numpy(), n_boot=n_boot, strata=dims,
                                       average_over_strata=True, random_state=random_state)
        mc = metrics.mcnemar_test(ga["correct"].to_numpy(), gb["correct"].to_numpy())
        rows.append({"lang": lang, "a": a, "b": b, "metric": metric, "difference": cmp.difference,
                     "low": cmp.low, "high": cmp.high, "p_bootstrap": cmp.p_value,
                     "mcnemar_b": mc.b, "mcnemar_c": mc.c, "p_mcnemar": mc.p_value})
    return pd.DataFrame(rows)
