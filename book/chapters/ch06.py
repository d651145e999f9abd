"""Chapter 6 (ablation): what only that chapter uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from companion.labels import LANG_LABELS, judge_label, paper_label, row_label
from companion.results import METRIC_NAMES, compare_runs, in_run_order
from companion.runs import run_keys
from companion.tables import format_cell, format_interval, format_p
from tefcore import evaluate
from tefcore.evaluate import (
    iter_groups,
    sort_table,
)
from tefcore.fusion import RULE_LABELS

ABLATION_NAMES: dict[str, str] = {"tef_without_entropy": "entropy weighting",
                                  "tef_without_log_odds": "log-odds transform"}
"""What each ablation removes from TEF."""


def ablation_comparisons(
    pred: pd.DataFrame,
    ablations: Sequence[str] = tuple(ABLATION_NAMES),
    *,
    metrics_: Sequence[str] = ("accuracy", "macro_f1"),
    n_boot: int = 1000,
    random_state: int = 0,
) -> pd.DataFrame:
    """Full TEF against each ablation, per run, language and metric (:func:`compare_runs`).

    A positive difference means that the component the ablation removes helped on these pairs.
    """
    parts = [compare_runs(pred, "tef", ablation, metric=metric, n_boot=n_boot, random_state=random_state)
             for ablation in ablations for metric in metrics_]
    return pd.concat(parts, ignore_index=True)


def comparison_table(cmp: pd.DataFrame, labels: Mapping[str, str] | None = None, n_boot: int | None = None,
                     names: Mapping[str, str] = ABLATION_NAMES) -> pd.DataFrame:
    """:func:`ablation_comparisons` as a chapter shows it: index ``(run, lang, removed, metric)``, numbers as text."""
    cmp = in_run_order(cmp, ["b", "metric"])
    out = pd.DataFrame({
        "run": cmp["model"].map(lambda m: row_label(m, labels)), "lang": cmp["lang"],
        "removed": cmp["b"].map(lambda b: names.get(b, b)),
        "metric": cmp["metric"].map(lambda m: METRIC_NAMES.get(m, m)),
        "TEF - ablation": [format_interval(d, lo, hi, signed=True)
                           for d, lo, hi in zip(cmp["difference"], cmp["low"], cmp["high"])],
        "p (bootstrap)": [format_p(p, n_boot) for p in cmp["p_bootstrap"]],
        "b": cmp["mcnemar_b"], "c": cmp["mcnemar_c"], "p (McNemar)": [format_p(p) for p in cmp["p_mcnemar"]],
    })
    return out.set_index(["run", "lang", "removed", "metric"])


def soft_vote_margins(table: pd.DataFrame, table3: pd.DataFrame, table4: pd.DataFrame,
                      labels: Mapping[str, str] | None = None,
                      variants: Sequence[str] = ("tef", *ABLATION_NAMES)) -> pd.DataFrame:
    """The Average accuracy margin over Soft Vote of TEF and of each ablation, ours and the paper's.

    Ours from :func:`score_runs` output; the paper's from its Tables 3 (Soft Vote) and 4 (the ablated
    models), both Averages being the mean of six dimensions
    (:func:`tefcore.paper.tables.ablation_versus_soft_vote`).

    Returns
    -------
    DataFrame
        Index ``(run, lang)``; one column per variant (the paper's names), in points.
    """
    from tefcore.paper import tables as paper

    avg = table[table["dimension"] == evaluate.AVERAGE].pivot_table(
        index=["model", "lang"], columns="rule", values="accuracy", sort=False).reset_index()
    ours = pd.DataFrame({"run": avg["model"].map(lambda m: row_label(m, labels)), "lang": avg["lang"],
                         **{RULE_LABELS[v]: avg[v] - avg["soft_vote"] for v in variants}})
    pv = paper.ablation_versus_soft_vote(table3, table4).xs("accuracy", level="metric").reset_index()
    pv = sort_table(pv, ["model", "lang"], {"model": paper.MODELS, "lang": ["zh", "en"]})
    theirs = pd.DataFrame({"run": pv["model"].map(paper_label), "lang": pv["lang"],
                           **{RULE_LABELS[v]: pv[f"margin_{v}"] for v in variants}})
    return pd.concat([ours, theirs], ignore_index=True).set_index(["run", "lang"])


def ablation_markdown(cmp: pd.DataFrame, labels: Mapping[str, str] | None = None, metric: str = "accuracy",
                      names: Mapping[str, str] = ABLATION_NAMES) -> str:
    """Per run and language, what removing each component did to TEF's Average, in words (Markdown bullets).

    A component *helped* when full TEF minus the ablation has an interval above zero, *hurt* when below,
    and had no effect the interval can tell otherwise.
    """
    lines = []
    m = cmp[cmp["metric"] == metric]
    for key, g in iter_groups(m, [*run_keys(m), "lang"]):
        parts = []
        for _, r in g.iterrows():
            effect = "helped" if r["low"] > 0 else "hurt" if r["high"] < 0 else "no effect the interval can tell"
            parts.append(f"removing the {names.get(r['b'], r['b'])}: TEF − ablation "
                         f"{format_interval(r['difference'], r['low'], r['high'], signed=True)} ({effect})")
        lines.append(f"* {row_label(key['model'], labels)}, {LANG_LABELS.get(key['lang'], key['lang'])}: "
                     + "; ".join(parts) + ".")
    return "\n".join(lines)


def paper_ablation_facts(table3: pd.DataFrame, table4: pd.DataFrame) -> dict[str, str]:
    """The numbers behind the paper's ablation text, recomputed from its Tables 3 and 4, as text.

    Returns
    -------
    dict of str to str
        ``drop_entropy`` and ``drop_log_odds`` (TEF minus each ablation, DeepSeek-V3.2, English,
        Environment, accuracy: the largest drops of Table 4), ``largest_at`` (where the largest drop of
        each ablation is), ``qwen_kept`` (the range of the share of TEF's margin over Soft Vote that
        Qwen2.5-7B's ablations keep, per language and metric) and ``deepseek_below`` (how many of
        DeepSeek-V3.2's ablation Averages, two ablations x two languages in accuracy, fall below Soft
        Vote's).
    """
    from tefcore.paper import tables as paper

    drops = paper.ablation_drops(table4).xs("accuracy", level="metric")
    at = ("deepseek-v3.2", "en", "Environment")
    largest = drops[["drop_without_entropy", "drop_without_log_odds"]].idxmax()
    versus = paper.ablation_versus_soft_vote(table3, table4)
    kept = versus.loc["qwen2.5-7b"][["retained_tef_without_entropy", "retained_tef_without_log_odds"]].to_numpy()
    ds = versus.loc["deepseek-v3.2"].xs("accuracy", level="metric")
    below = int((ds[["margin_tef_without_entropy", "margin_tef_without_log_odds"]] < 0).to_numpy().sum())
    return {"drop_entropy": format_cell(drops.loc[at, "drop_without_entropy"]),
            "drop_log_odds": format_cell(drops.loc[at, "drop_without_log_odds"]),
            "largest_at": "; ".join(f"{ABLATION_NAMES[k.removeprefix('drop_').replace('without', 'tef_without')]}: "
                                    f"{judge_label(v[0])} {LANG_LABELS[v[1]]} {v[2]}" for k, v in largest.items()),
            "qwen_kept": f"{format_cell(100 * kept.min(), 0)}–{format_cell(100 * kept.max(), 0)} %",
            "deepseek_below": f"{below} of 4"}
