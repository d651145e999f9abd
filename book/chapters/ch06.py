"""Chapter 6 (ablation): how the chapter lays out its paired comparisons. The numbers are computed on the page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from companion.labels import LANG_LABELS
from companion.tables import paired_test_columns, plain
from tefcore.fusion import RULE_LABELS


def comparison_table(cmp: pd.DataFrame, names: Mapping[str, str], n_boot: int | None = None) -> Any:
    """Full TEF against each ablation (:func:`companion.results.compare_runs` rows with the chapter's
    ``effect`` column), as text: index ``(judge, language, removed)``."""
    out = pd.DataFrame({
        "judge": cmp["model"].map(names), "language": cmp["lang"].map(LANG_LABELS),
        "ablation": cmp["b"].map(RULE_LABELS),
        **paired_test_columns(cmp, "TEF − ablation", n_boot),
        "the component": cmp["effect"]})
    return plain(out.set_index(["judge", "language", "ablation"]))


def paper_statements(kept: pd.DataFrame, below: pd.DataFrame, drops: pd.DataFrame) -> dict[str, Any]:
    """The three statements of the paper's text as numbers: the range of TEF's margin over Soft Vote that
    Qwen2.5-7B's ablations keep (%), how many of DeepSeek-V3.2's ablation Averages fall below Soft Vote,
    and the drops of its English Environment cell."""
    at = ("deepseek-v3.2", "en", "Environment")
    return {"qwen_kept_min": float(kept.to_numpy().min()), "qwen_kept_max": float(kept.to_numpy().max()),
            "deepseek_below": int(below.to_numpy().sum()),
            "drop_entropy": float(drops.loc[at, "drop_without_entropy"]),
            "drop_log_odds": float(drops.loc[at, "drop_without_log_odds"])}


def one_post_numbers(p: np.ndarray, w: np.ndarray, ell: np.ndarray, decided: Mapping[str, str]) -> dict[str, Any]:
    """What the prose cites of the one-post example: each variant's decision, the range of the lukewarm
    (``p > 0.5``) sentences' log-odds with and without weights, and the decisive sentences' weighted sum.

    Examples
    --------
    >>> p = np.array([0.1, 0.8, 0.7]); ell = np.log(p / (1 - p)); w = np.ones(3)
    >>> n = one_post_numbers(p, w, ell, {"tef": "change"})
    >>> n["one_tef"], round(n["lukewarm_min"], 2), round(n["decisive_weighted"], 2)
    ('change', 0.85, -2.2)
    """
    lukewarm, weighted = p > 0.5, w * ell
    return {**{f"one_{rule}": decision for rule, decision in decided.items()},
            "lukewarm_min": float(ell[lukewarm].min()), "lukewarm_max": float(ell[lukewarm].max()),
            "weighted_min": float(weighted[lukewarm].min()), "weighted_max": float(weighted[lukewarm].max()),
            "decisive_weighted": float(weighted[~lukewarm].sum())}


def disagreement_numbers(disagreements: pd.DataFrame) -> dict[str, Any]:
    """Per ablation, summed over judges and languages: the pairs on which it and full TEF differ and how
    many of those each gets right (``dis_entropy``, ``dis_entropy_tef``, ``dis_entropy_ablation``, and
    the same for ``log_odds``).

    Examples
    --------
    >>> d = pd.DataFrame({"removed": ["w/o Entropy", "w/o Log-Odds"], "differ": [4, 2], "tef_right": [3, 0],
    ...                   "ablation_right": [1, 2]}).set_index("removed")
    >>> disagreement_numbers(d)["dis_log_odds_ablation"]
    2
    """
    total = disagreements.groupby(level="removed").sum()
    out: dict[str, Any] = {}
    for key, rule in (("entropy", "tef_without_entropy"), ("log_odds", "tef_without_log_odds")):
        row = total.loc[RULE_LABELS[rule]] if RULE_LABELS[rule] in total.index else pd.Series(0, total.columns)
        out.update({f"dis_{key}": int(row["differ"]), f"dis_{key}_tef": int(row["tef_right"]),
                    f"dis_{key}_ablation": int(row["ablation_right"])})
    return out


def table4_numbers(floors: pd.DataFrame, asked: pd.DataFrame) -> dict[str, Any]:
    """Table 4 against its floors: cells below, cells asking the consistency question, and DeepSeek-V3.2's
    English Environment cell (pairs, floor, TEF's accuracy)."""
    env = floors[(floors["model"] == "deepseek-v3.2") & (floors["lang"] == "en")
                 & (floors["dimension"] == "Environment") & (floors["method"] == "tef")].iloc[0]
    return {"t4_below": int(floors["below"].sum()), "t4_cells": len(floors), "t4_questions": len(asked),
            "env_n": int(env["n"]), "env_floor": float(env["floor"]), "env_tef": float(env["value"])}


def first_numbers(accuracy: pd.DataFrame) -> dict[str, Any]:
    """Of a rules x dimensions accuracy table: the largest spread between the rules in a dimension, that
    dimension, and in how many dimensions full TEF is (jointly) the best.

    Examples
    --------
    >>> acc = pd.DataFrame({"A": [70.0, 75.0], "B": [60.0, 60.0]}, index=["TEF", "SV"])
    >>> first_numbers(acc)
    {'first_gap': 5.0, 'first_gap_dim': 'A', 'first_tef_best': 1, 'first_dims': 2}
    """
    spread = accuracy.max() - accuracy.min()
    return {"first_gap": float(spread.max()), "first_gap_dim": str(spread.idxmax()),
            "first_tef_best": int((accuracy.loc["TEF"] >= accuracy.max()).sum()), "first_dims": accuracy.shape[1]}


def margin_numbers(margins: pd.DataFrame) -> dict[str, Any]:
    """The range of full TEF's Average margin over Soft Vote on our caches, and Qwen2.5-7B's smallest
    in the paper (points; ``margins`` is the chapter's table of margins, ``ours`` and ``paper`` rows)."""
    margins = margins.sort_index()  # a lookup past the sorted levels of a MultiIndex is slow and warns
    ours, theirs = margins.loc["ours", "tef"], margins.loc["paper"]
    return {"ours_tef_min": float(ours.min()), "ours_tef_max": float(ours.max()),
            "qwen_tef_min": float(theirs.xs("Qwen2.5-7B", level="model")["tef"].min())}


def best_variant_numbers(table: pd.DataFrame) -> dict[str, Any]:
    """Over our judge-language cells (``score_table`` rows by ``model, lang, rule, dimension``): how many
    there are, in how many all rules tie on the Average accuracy, and in how many of the others full TEF
    has the best (or jointly best) Average accuracy.

    Examples
    --------
    >>> t = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "lang": "en", "dimension": "Average",
    ...                   "rule": ["soft_vote", "tef"] * 4, "accuracy": [60, 62, 60, 62, 50, 50, 50, 50]})
    >>> best_variant_numbers(t)
    {'t4_ours_cells': 2, 't4_ours_ties': 1, 't4_ours_tef_best': 1}
    """
    average = table[table["dimension"] == "Average"].pivot_table(
        index=["model", "lang"], columns="rule", values="accuracy")
    tied = average.max(axis=1) - average.min(axis=1) < 1e-9
    tef_best = ~tied & (average["tef"] >= average.max(axis=1) - 1e-9)
    return {"t4_ours_cells": len(average), "t4_ours_ties": int(tied.sum()), "t4_ours_tef_best": int(tef_best.sum())}
