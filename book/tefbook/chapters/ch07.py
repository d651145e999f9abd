"""Chapter 7 (prompt robustness): how the chapter lays out Table 1. The numbers are computed on the page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from tefbook.companion.results import NOT_RUN
from tefbook.companion.tables import bold_best
from tefpaper.tables import MODEL_LABELS, MODELS

MARGIN_ROW = "TEF − baseline"
"""Row of the Table 1 layout with TEF's margin over the strongest baseline (shown, never ranked)."""


def table1_layout(table1: pd.DataFrame, paper_table1: pd.DataFrame, names: Mapping[str, str], models: Sequence[str],
                  llms: Sequence[str], prompts: Sequence[str]) -> Any:
    """Table 1 in the paper's layout, ours above the paper's: per judge the strongest baseline, TEF and the
    margin under each prompt, the better of baseline and TEF in bold.

    Parameters
    ----------
    table1 : DataFrame
        :func:`tefcore.evaluate.strongest_baseline` by ``(model, prompt)`` of the chapter's Averages.
    paper_table1 : DataFrame
        The paper's Table 1 in tidy form.
    names : mapping
        Registry name -> short row name.
    models : sequence of str
        Our judges, in row order.
    llms : sequence of str
        The judges that read the prompt (a prompt-free judge has a value under the original prompt only,
        ``"—"`` elsewhere); a variant without a row reads :data:`NOT_RUN`.
    prompts : sequence of str
    """
    rows: list[tuple[tuple[str, str], dict[str, Any]]] = []
    for model in models:
        own = prompts if model in llms else ["original"]
        for method, field in (("strongest baseline", "baseline"), ("TEF", "tef"), (MARGIN_ROW, "gain")):
            rows.append(((f"ours: {names[model]}", method), {
                p: float(table1.loc[(model, p), field]) if (model, p) in table1.index
                else NOT_RUN if p in own else "—" for p in prompts}))
    wide = paper_table1.pivot_table(index="model", columns=["method", "prompt"], values="value", aggfunc="first")
    for model in [m for m in MODELS if m in wide.index]:
        base, tef = wide.loc[model, "strongest_baseline"], wide.loc[model, "tef"]
        for method, values in (("strongest baseline", base), ("TEF", tef), (MARGIN_ROW, tef - base)):
            rows.append(((f"paper: {MODEL_LABELS[model]}", method), {p: float(values[p]) for p in prompts}))
    cells = pd.DataFrame([r for _, r in rows], index=pd.MultiIndex.from_tuples([k for k, _ in rows],
                                                                             names=["judge", "rule"]))
    numbers = cells.apply(lambda c: pd.to_numeric(c, errors="coerce"))
    return bold_best(cells.astype(object), values=numbers, by="judge", skip=(MARGIN_ROW,))


def prompt_figure(table1: pd.DataFrame, paper_table1: pd.DataFrame, names: Mapping[str, str],
                  prompts: Sequence[str]) -> Any:
    """The strongest baseline (dotted) and TEF (solid) under each prompt: ours on the left, the paper's
    Table 1 on the right, one colour per judge (legend)."""
    import plotly.express as px
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=["ours (CPU judges, MIND sample)", "paper (Table 1)"])
    curves = []
    for model, g in table1.reset_index().groupby("model", sort=False):
        curves.append((names[model], 1, g.set_index("prompt").reindex(list(prompts))))
    wide = paper_table1.pivot_table(index=["model", "prompt"], columns="method", values="value")
    for model in [m for m in MODELS if m in wide.index.get_level_values(0)]:
        g = wide.loc[model].reindex(list(prompts)).rename(columns={"strongest_baseline": "baseline"})
        curves.append((f"paper: {MODEL_LABELS[model]}", 2, g))
    palette = px.colors.qualitative.Dark24
    for k, (name, col, g) in enumerate(curves):
        for field, dash in (("baseline", "dot"), ("tef", "solid")):
            fig.add_trace(go.Scatter(x=list(g.index), y=g[field], mode="lines+markers", name=name, legendgroup=name,
                                     showlegend=field == "tef", line={"dash": dash, "color": palette[k % len(palette)]},
                                     hovertemplate=f"{name}, {'TEF' if field == 'tef' else 'strongest baseline'}"
                                                   ": %{y:.1f}<extra></extra>"), row=1, col=col)
    for field, dash in (("TEF", "solid"), ("strongest baseline", "dot")):  # the key of the two line styles
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line={"dash": dash, "color": "#555"},
                                 name=field, legendgroup=f"style {field}"), row=1, col=1)
    fig.update_yaxes(title_text="mean Average accuracy over languages (%)", row=1, col=1)
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=list(prompts))
    fig.update_layout(height=520, legend={"orientation": "h", "y": -0.2, "x": 0.5, "xanchor": "center"},
                      title="Strongest baseline (dotted) and TEF (solid) under three prompts")
    return fig


def comparison_table(tested: pd.DataFrame, names: Mapping[str, str]) -> pd.DataFrame:
    """The paired comparisons as shown: one row per judge and prompt, the columns the chapter explains."""
    from tefcore.fusion import RULE_LABELS

    return tested.assign(judge=tested["model"].map(names)).set_index(["judge", "prompt"])[
        ["b", "difference", "low", "high", "p_bootstrap", "mcnemar_b", "mcnemar_c", "p_mcnemar"]].replace(
        RULE_LABELS).round(3).set_axis(["vs", "Δ", "low", "high", "p boot", "b", "c", "p McNemar"], axis=1)


def split_numbers(row: pd.Series, cells: pd.DataFrame, names: Mapping[str, str], average_margin: float,
                  pooled_margin: float) -> dict[str, Any]:
    """What the prose cites of the row whose bootstrap and McNemar p-values lie furthest apart."""
    from tefcore.fusion import RULE_LABELS

    return {"split_judge": names[row["model"]], "split_prompt": row["prompt"], "split_base": RULE_LABELS[row["b"]],
            "split_avg": float(average_margin), "split_pooled": float(pooled_margin), "split_low": float(row["low"]),
            "split_high": float(row["high"]), "split_pb": float(row["p_bootstrap"]),
            "split_pm": "< 0.001" if row["p_mcnemar"] < 0.001 else f"= {row['p_mcnemar']:.3f}",
            "split_b": int(row["mcnemar_b"]), "split_c": int(row["mcnemar_c"]), "split_cells": len(cells),
            "split_neg": int((cells["TEF − baseline (points)"] < 0).sum()), "split_small": int(cells["pairs"].min()),
            "split_large": int(cells["pairs"].max())}


def floor_numbers(table1: pd.DataFrame, above: pd.Series, floor: float, llms: Sequence[str]) -> dict[str, Any]:
    """The LLM judges' prompt variants against Table 1's floor: how many, how many clear it, the best rule."""
    rows = table1.loc[[k for k in table1.index if k[0] in llms]]
    return {"floor_t1": float(floor), "llm_clear": int(above.loc[rows.index].sum()), "llm_rows": len(rows),
            "llm_best": float(rows[["baseline", "tef"]].max(axis=1).max())}


def summary_table(summary: pd.DataFrame, names: Mapping[str, str]) -> pd.DataFrame:
    """The LLM judges' sentence answers per prompt as shown (``posterior_summary`` rows)."""
    return summary[["model", "prompt", "lang", "sentences", "p_mean", "p_std", "mean_weight", "decisive_share"]].replace(
        {"model": names}).set_index(["model", "prompt", "lang"]).set_axis(
        ["sentences", "mean p", "sd p", "mean w", "decisive %"], axis=1).round(3)


def paper_numbers(paper_table1: pd.DataFrame, wide: pd.DataFrame, floor: float) -> dict[str, Any]:
    """The paper's Table 1 against the floor of its quantity (``wide``: models x (method, prompt)): the
    numbers below it, by method; the range of TEF's margin; for how many models the margin grows from the
    original to the verbose to the minimal prompt."""
    from tefpaper import tables as paper

    margins = paper.prompt_robustness_summary(paper_table1)[[f"margin_{p}" for p in ("original", "verbose", "minimal")]]
    grows = (margins["margin_verbose"] > margins["margin_original"]) & (
        margins["margin_minimal"] > margins["margin_verbose"])
    return {"paper_floor": float(floor), "paper_below": int((wide < floor).to_numpy().sum()),
            "paper_below_base": int((wide["strongest_baseline"] < floor).to_numpy().sum()),
            "paper_below_tef": int((wide["tef"] < floor).to_numpy().sum()),
            "paper_base_cells": int(wide["strongest_baseline"].size), "paper_cells": int(wide.size),
            "margin_min": float(margins.to_numpy().min()), "margin_max": float(margins.to_numpy().max()),
            "n_grows": int(grows.sum()), "n_models": len(margins)}
