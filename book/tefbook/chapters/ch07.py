"""Chapter 7 (prompt robustness): how the chapter lays out Table 1. The numbers are computed on the page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from tefbook.companion.labels import of_count
from tefbook.companion.results import NOT_RUN
from tefbook.companion.tables import bold_best, format_cell, format_columns, format_p, paired_test_columns
from tefpaper.tables import MODEL_LABELS, MODELS

MARGIN_ROW = "TEF − baseline"
"""Row of the Table 1 layout with TEF's margin over the strongest baseline (shown, never ranked)."""


def table1_layout(table1: pd.DataFrame, paper_table1: pd.DataFrame, names: Mapping[str, str], models: Sequence[str],
                  llms: Sequence[str], prompts: Sequence[str]) -> Any:
    """Table 1 in the paper's layout, ours above the paper's: per judge the strongest baseline, TEF and the
    margin under each prompt (with its sign), the better of baseline and TEF in bold.

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
    shown = cells.astype(object)
    margin = shown.index.get_level_values("rule") == MARGIN_ROW
    shown.loc[margin] = shown.loc[margin].map(lambda v: format_cell(v, signed=True))  # a margin prints its sign
    return bold_best(shown, values=numbers, by="judge", skip=(MARGIN_ROW,))


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


def comparison_table(tested: pd.DataFrame, names: Mapping[str, str], n_boot: int | None = None) -> pd.DataFrame:
    """The paired comparisons as shown: one row per judge and prompt, the columns the chapter explains
    (the margin with its interval in points, the p-values with three decimals, b and c as counts).

    Examples
    --------
    >>> tested = pd.DataFrame({"model": ["e5"], "prompt": ["original"], "b": ["soft_vote"], "difference": [-0.658],
    ...                        "low": [-1.659], "high": [0.266], "p_bootstrap": [0.174], "mcnemar_b": [30],
    ...                        "mcnemar_c": [37], "p_mcnemar": [0.4641]})
    >>> comparison_table(tested, {"e5": "e5 probe"}, n_boot=1000).iloc[0].astype(str).tolist()
    ['SV', '-0.7 [-1.7, +0.3]', '0.174', '30', '37', '0.464']
    """
    from tefcore.fusion import RULE_LABELS

    index = pd.MultiIndex.from_arrays([tested["model"].map(names), tested["prompt"]], names=["judge", "prompt"])
    columns = {"vs": tested["b"].map(RULE_LABELS).tolist(), **paired_test_columns(tested, "TEF − baseline", n_boot)}
    return pd.DataFrame(columns, index=index)


def split_numbers(row: pd.Series, cells: pd.DataFrame, names: Mapping[str, str], average_margin: float,
                  pooled_margin: float, n_boot: int | None = None) -> dict[str, Any]:
    """What the prose cites of the row whose bootstrap and McNemar p-values lie furthest apart (the two
    p-values as ``"= 0.174"`` or ``"< 0.001"``, the bootstrap's bounded by ``1 / n_boot``; the smallest and
    largest pair counts of the cells where TEF is behind)."""
    from tefcore.fusion import RULE_LABELS

    def p_text(p: float, n: int | None = None) -> str:
        shown = format_p(p, n) if n else ("<0.001" if p < 0.001 else format_p(p))
        return f"< {shown[1:]}" if shown.startswith("<") else f"= {shown}"

    behind = cells.loc[cells["TEF − baseline (points)"] < 0, "pairs"]
    return {"split_judge": names[row["model"]], "split_prompt": row["prompt"], "split_base": RULE_LABELS[row["b"]],
            "split_avg": float(average_margin), "split_pooled": float(pooled_margin), "split_low": float(row["low"]),
            "split_high": float(row["high"]), "split_pb": p_text(float(row["p_bootstrap"]), n_boot),
            "split_pm": p_text(float(row["p_mcnemar"])),
            "split_b": int(row["mcnemar_b"]), "split_c": int(row["mcnemar_c"]), "split_cells": len(cells),
            "split_neg": len(behind), "split_small": int(behind.min()) if len(behind) else 0,
            "split_large": int(behind.max()) if len(behind) else 0}


def floor_numbers(table1: pd.DataFrame, above: pd.Series, floor: pd.Series, llms: Sequence[str],
                  names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The LLM judges' prompt variants against the floor of the pairs each was scored on (``floor``, by
    ``(model, prompt)`` like ``table1``): how many, how many clear it (also in words), the LLM judges (how many,
    by their ``names``), the best rule and that row's floor.

    Examples
    --------
    >>> index = pd.MultiIndex.from_tuples([("local", "original"), ("local", "minimal"), ("e5", "original")])
    >>> table1 = pd.DataFrame({"baseline": [54.6, 41.7, 74.7], "tef": [54.6, 42.5, 74.0]}, index=index)
    >>> floor = pd.Series([72.9, 72.9, 63.6], index=index)
    >>> numbers = floor_numbers(table1, table1.max(axis=1) > floor, floor, ["local"], {"local": "SmolLM2"})
    >>> numbers["llm_clear"], numbers["llm_clear_of"], numbers["llm_judges"], numbers["llm_best"]
    (0, 'neither of the 2 prompt variants', 'one LLM judge (SmolLM2)', 54.6)
    """
    rows = table1.loc[[k for k in table1.index if k[0] in llms]]
    best = rows[["baseline", "tef"]].max(axis=1)
    judges = list(dict.fromkeys(k[0] for k in rows.index))
    listed = " and ".join(names.get(j, j) for j in judges) if names else ", ".join(judges)
    clear = int(above.loc[rows.index].sum())
    return {"llm_clear": clear, "llm_rows": len(rows), "llm_clear_of": of_count(clear, len(rows), "prompt variant"),
            "llm_judges": f"{'one LLM judge' if len(judges) == 1 else f'{len(judges)} LLM judges'} ({listed})",
            "llm_best": float(best.max()), "llm_best_floor": float(floor.loc[best.idxmax()])}


def summary_table(summary: pd.DataFrame, names: Mapping[str, str]) -> pd.DataFrame:
    """The LLM judges' sentence answers per prompt as shown (``posterior_summary`` rows): judge, prompt and
    language in words, the probabilities and weights with three decimals, the decisive share with one."""
    from tefbook.companion.labels import LANG_LABELS

    shown = summary[["model", "prompt", "lang", "sentences", "p_mean", "p_std", "mean_weight", "decisive_share"]]
    shown = shown.assign(model=shown["model"].map(names), lang=shown["lang"].map(LANG_LABELS).fillna(shown["lang"]))
    shown = shown.set_index(["model", "prompt", "lang"]).rename_axis(["judge", "prompt", "language"]).set_axis(
        ["sentences", "mean p", "sd p", "mean w", "decisive %"], axis=1)
    return format_columns(shown.astype({"sentences": int}), 3, **{"decisive %": 1})


def paper_numbers(paper_table1: pd.DataFrame, wide: pd.DataFrame, floor: float) -> dict[str, Any]:
    """The paper's Table 1 against the floor of its quantity (``wide``: models x (method, prompt)): the
    numbers below it, by method; the range of TEF's margin; for how many models the margin grows from the
    original to the verbose to the minimal prompt (also in words, as :func:`of_count` says them)."""
    from tefpaper import tables as paper

    margins = paper.prompt_robustness_summary(paper_table1)[[f"margin_{p}" for p in ("original", "verbose", "minimal")]]
    grows = (margins["margin_verbose"] > margins["margin_original"]) & (
        margins["margin_minimal"] > margins["margin_verbose"])
    return {"paper_floor": float(floor), "paper_below": int((wide < floor).to_numpy().sum()),
            "paper_below_base": int((wide["strongest_baseline"] < floor).to_numpy().sum()),
            "paper_below_tef": int((wide["tef"] < floor).to_numpy().sum()),
            "paper_base_cells": int(wide["strongest_baseline"].size), "paper_cells": int(wide.size),
            "margin_min": float(margins.to_numpy().min()), "margin_max": float(margins.to_numpy().max()),
            "n_grows": int(grows.sum()), "n_models": len(margins),
            "grows_of": of_count(int(grows.sum()), len(margins), "model"),
            "below_tef_of": of_count(int((wide["tef"] < floor).to_numpy().sum()), int(wide["tef"].size), "TEF number")}
