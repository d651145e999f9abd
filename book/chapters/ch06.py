"""Chapter 6 (ablation): how the chapter lays out its paired comparisons. The numbers are computed on the page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from companion.labels import LANG_LABELS
from companion.tables import paired_test_columns, plain
from tefcore.fusion import RULE_LABELS


ABLATED: tuple[tuple[str, str], ...] = (("entropy", "tef_without_entropy"), ("log_odds", "tef_without_log_odds"))
"""The two ablations as the prose's glue names them: (key, rule)."""


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


def flip_names(flips: pd.DataFrame) -> dict[str, int]:
    """The glue names of the chapter's flip counts (``flips``: rows per removed component, as the chapter
    sums them; columns ``differ``, ``tef_right``, ``ablation_right``): ``dis_entropy``, ``dis_entropy_tef``,
    ``dis_entropy_ablation`` and the same for ``log_odds``. Names only; the counts are the page's.

    Examples
    --------
    >>> f = pd.DataFrame({"differ": [4, 2], "tef_right": [3, 0], "ablation_right": [1, 2]},
    ...                  index=["w/o Entropy", "w/o Log-Odds"])
    >>> flip_names(f)["dis_log_odds_ablation"]
    2
    """
    return {f"dis_{key}{part}": int(flips.loc[RULE_LABELS[rule], column]) for key, rule in ABLATED
            for part, column in (("", "differ"), ("_tef", "tef_right"), ("_ablation", "ablation_right"))}


def table4_numbers(floors: pd.DataFrame, asked: pd.DataFrame) -> dict[str, Any]:
    """Table 4 against its floors: cells below, cells asking the consistency question, and DeepSeek-V3.2's
    English Environment cell (pairs, floor, TEF's accuracy)."""
    env = floors[(floors["model"] == "deepseek-v3.2") & (floors["lang"] == "en")
                 & (floors["dimension"] == "Environment") & (floors["method"] == "tef")].iloc[0]
    return {"t4_below": int(floors["below"].sum()), "t4_cells": len(floors), "t4_questions": len(asked),
            "env_n": int(env["n"]), "env_floor": float(env["floor"]), "env_tef": float(env["value"])}


def margin_numbers(margins: pd.DataFrame) -> dict[str, Any]:
    """The range of full TEF's Average margin over Soft Vote on our caches, and Qwen2.5-7B's smallest
    in the paper (points; ``margins`` is the chapter's table of margins, ``ours`` and ``paper`` rows)."""
    margins = margins.sort_index()  # a lookup past the sorted levels of a MultiIndex is slow and warns
    ours, theirs = margins.loc["ours", "tef"], margins.loc["paper"]
    return {"ours_tef_min": float(ours.min()), "ours_tef_max": float(ours.max()),
            "qwen_tef_min": float(theirs.xs("Qwen2.5-7B", level="model")["tef"].min())}
