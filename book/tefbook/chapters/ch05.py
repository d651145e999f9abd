"""Chapter 5 (main results): how the chapter lays out its tables and figures. The numbers are computed on the page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tefbook.companion.labels import LANG_LABELS
from tefbook.companion.results import METRIC_NAMES, REFERENCE_ROWS, reader_labels, side_by_side
from tefbook.companion.tables import bold_best, format_cell, glue_all, paired_test_columns, plain, round_half_up
from tefcore.fusion import RULE_LABELS
from tefcore.mind.schema import ABBREVIATIONS, TABLE_ORDER
from tefpaper.tables import MODEL_LABELS, MODELS

BELOW = " (below the floor)"
"""Appended to the name of a judge none of whose rules clears the majority-class floor in a language."""


def results_table(table: pd.DataFrame, table3: pd.DataFrame, rates: pd.DataFrame, names: Mapping[str, str],
                  order: Sequence[str], clears: pd.Series, lang: str, rules: Sequence[str]) -> Any:
    """Table 3 for one language: the pairs and the floor, our judges (those that clear the floor first, the
    others marked :data:`BELOW`), then the paper's models; the best rule of each column in bold per judge.

    Parameters
    ----------
    table : DataFrame
        :func:`tefcore.evaluate.score_table` output by ``model, lang, rule, dimension``.
    table3 : DataFrame
        The paper's Table 3 in tidy form.
    rates : DataFrame
        The pairs and the majority-class floor per language and dimension
        (:func:`tefbook.companion.results.majority_rate`).
    names : mapping
        Registry name -> short row name.
    order : sequence of str
        Our judges in the order of the rows.
    clears : Series
        Per ``(model, lang)``: whether a rule of the judge clears the floor.
    lang : str
    rules : sequence of str
    """
    labels = {m: names[m] + ("" if clears.get((m, lang), True) else BELOW) for m in order}
    ours = table[table["model"].isin(order) & (table["lang"] == lang)].copy()
    ours["_order"] = ours["model"].map({m: i for i, m in enumerate(order)})
    ours = ours.sort_values("_order", kind="stable").drop(columns="_order")
    wide = side_by_side(ours, table3, labels={m: f"ours: {v}" for m, v in labels.items()}, reference=rates,
                        rules=rules, langs=[lang])
    part = wide.xs(LANG_LABELS[lang], level="language")
    part = part.rename(index={"ours: the pairs scored": "pairs and floor"}, level="run")
    part.index = part.index.set_names(["judge", "rule"])
    return bold_best(part, by="judge", skip=REFERENCE_ROWS, digits={"Acc": 1, "F1": 1})


def rule_bars_figure(table: pd.DataFrame, floor: pd.Series, names: Mapping[str, str], order: Sequence[str],
                     rules: Sequence[str], langs: Sequence[str]) -> Any:
    """Per-dimension accuracy of each rule, one panel per judge and language (titled above the panel), the
    majority-class rate as black ticks, one legend for the rules' colours."""
    import plotly.express as px
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=len(order), cols=len(langs), shared_yaxes=True, vertical_spacing=0.09,
                        horizontal_spacing=0.05,
                        subplot_titles=[f"{names[m]} · {LANG_LABELS[lang]}" for m in order for lang in langs])
    colors = dict(zip(rules, px.colors.qualitative.Set2))
    dims = list(TABLE_ORDER)
    for i, model in enumerate(order, start=1):
        for j, lang in enumerate(langs, start=1):
            part = table[(table["model"] == model) & (table["lang"] == lang)].set_index(["rule", "dimension"])
            for rule in rules:
                fig.add_bar(x=[ABBREVIATIONS[d] for d in dims], y=part.loc[rule]["accuracy"].reindex(dims),
                            name=RULE_LABELS[rule], marker_color=colors[rule], legendgroup=rule,
                            showlegend=i == j == 1, row=i, col=j,
                            hovertemplate="%{x}: %{y:.1f}<extra>" + RULE_LABELS[rule] + "</extra>")
            fig.add_trace(go.Scatter(x=[ABBREVIATIONS[d] for d in dims], y=floor.loc[lang].reindex(dims),
                                     mode="markers", name="majority-class floor", showlegend=i == j == 1,
                                     legendgroup="floor", marker={"symbol": "line-ew-open", "size": 30,
                                                                  "color": "black", "line": {"width": 2.5}},
                                     hovertemplate="floor %{y:.1f}<extra></extra>"), row=i, col=j)
    fig.update_yaxes(range=[0, 100], title_text="accuracy (%)", col=1)
    fig.update_annotations(font_size=12)
    fig.update_layout(barmode="group", height=260 * len(order) + 120, margin={"t": 60},
                      legend={"orientation": "h", "y": -0.08, "x": 0.5, "xanchor": "center"},
                      title="Accuracy per dimension and rule; black ticks: majority-class floor")
    return fig


def versus_table(vs: pd.DataFrame, names: Mapping[str, str], n_boot: int | None = None) -> Any:
    """TEF against the strongest baseline, as text: index ``(judge, language, metric)``; the strongest
    baseline, both Averages, the paired difference with its 95 % interval, both p-values, McNemar's b and c
    and the ``verdict`` column the chapter computed."""
    out = pd.DataFrame({
        "judge": vs["model"].map(names), "language": vs["lang"].map(LANG_LABELS),
        "metric": vs["metric"].map(METRIC_NAMES), "baseline": vs["b"].map(RULE_LABELS),
        "its Average": vs["baseline"].map(format_cell), "TEF": vs["tef"].map(format_cell),
        **paired_test_columns(vs, "TEF − baseline", n_boot),
        "verdict": vs["verdict"]})
    return plain(out.set_index(["judge", "language", "metric"]))


def floor_heatmap(floors: pd.DataFrame) -> Any:
    """The paper's Table 3 accuracies against the floor of their cell: colour = accuracy − floor (points,
    red below the floor, blue above), each cell labelled with the printed accuracy."""
    import plotly.graph_objects as go

    f = floors.assign(gap=floors["value"] - floors["floor"])
    cols = [(lang, d) for lang in ("zh", "en") for d in TABLE_ORDER]
    rows = [(m, r) for m in MODELS for r in ("direct", "majority_vote", "soft_vote", "tef")]
    z = f.pivot_table(index=["model", "method"], columns=["lang", "dimension"], values="gap").reindex(
        index=rows, columns=cols)
    text = f.pivot_table(index=["model", "method"], columns=["lang", "dimension"], values="value").reindex(
        index=rows, columns=cols)
    limit = float(np.nanmax(np.abs(z.to_numpy())))
    x = [f"{'zh' if lang == 'zh' else 'en'} {ABBREVIATIONS[d]}" for lang, d in cols]
    y = [f"{MODEL_LABELS[m]} · {RULE_LABELS[r]}" for m, r in rows]
    fig = go.Figure(go.Heatmap(
        z=z.to_numpy(), x=x, y=y, text=text.map(lambda v: f"{v:.1f}").to_numpy(), texttemplate="%{text}",
        textfont={"size": 10}, colorscale="RdBu", zmid=0, zmin=-limit, zmax=limit, xgap=1, ygap=1,
        colorbar={"title": {"text": "accuracy −<br>floor (points)", "side": "top"}, "thickness": 12},
        hovertemplate="%{y}, %{x}: %{text} (%{z:+.1f} from the floor)<extra></extra>"))
    fig.update_yaxes(autorange="reversed", tickfont={"size": 11})
    fig.update_xaxes(side="top", tickfont={"size": 11})
    fig.update_layout(height=640, margin={"l": 170, "t": 110, "r": 20, "b": 20},
                      title={"text": "Paper, Table 3: each accuracy against the majority-class floor of its cell",
                             "y": 0.98})
    return fig


def sweep_figure(sweep: pd.DataFrame, names: Mapping[str, str], langs: Sequence[str],
                 factors: Sequence[float]) -> Any:
    """TEF minus the best baseline (Average accuracy) against the re-tempering factor t, one panel per
    language, one line per judge."""
    from tefbook.companion.figures import lines_per_language

    fig = lines_per_language(sweep, "t", "gain", langs, names, "t = %{x}: %{y:+.1f} points")
    fig.add_hline(y=0, line={"color": "grey", "width": 1}, row="all", col="all")
    fig.update_xaxes(tickvals=list(factors), ticktext=[f"{t:g}" for t in factors],
                     title_text="t (log scale): < 1 sharper, > 1 flatter")
    fig.update_yaxes(title_text="TEF − best baseline (points)", col=1)
    fig.update_layout(title="TEF's gain over the best baseline as the detector is made sharper or flatter")
    return fig


def cell_names(clears: pd.Series, names: Mapping[str, str], value: bool = True) -> str:
    """The judge-language cells whose ``clears`` is ``value``, as text (``"none"`` if there is none).

    Examples
    --------
    >>> clears = pd.Series({("e5", "en"): True, ("e5", "zh"): False})
    >>> cell_names(clears, {"e5": "e5 probe"}), cell_names(clears, {"e5": "e5 probe"}, value=False)
    ('e5 probe in English', 'e5 probe in Chinese')
    """
    return "; ".join(f"{names[m]} in {LANG_LABELS[lang]}" for (m, lang), ok in clears.items() if ok == value) or "none"


def glue_clears(clears: pd.Series, names: Mapping[str, str]) -> None:
    """Glue how many judge-language cells clear the floor, and which do and which do not."""
    from myst_nb import glue

    glue("n_clear", int(clears.sum()), display=False)
    glue("n_cells", len(clears), display=False)
    glue("clear_list", cell_names(clears, names), display=False)
    glue("below_list", cell_names(clears, names, value=False), display=False)


def glue_versus(vs: pd.DataFrame) -> None:
    """Glue the accuracy rows of TEF against the strongest baseline: cells, cells with the interval
    above and below zero, the smallest and largest difference (``vs_cells``, ``vs_above``, ...)."""
    from myst_nb import glue

    acc = vs[vs["metric"] == "accuracy"]
    glue("vs_cells", len(acc), display=False)
    glue("vs_above", int((acc["low"] > 0).sum()), display=False)
    glue("vs_below", int((acc["high"] < 0).sum()), display=False)
    glue("vs_min", round_half_up(acc["difference"].min()), display=False)  # as the table prints them
    glue("vs_max", round_half_up(acc["difference"].max()), display=False)


def glue_spreads(spread: pd.DataFrame, by_setting: pd.DataFrame, langs: Sequence[str]) -> None:
    """Glue, per language, the largest move of a rule's Average over the judge's settings
    (``judge_spread_<lang>``) and the largest TEF minus best baseline under one setting
    (``rule_spread_<lang>``); stop if the first is not the larger, as the prose says it is."""
    from myst_nb import glue

    for lang in langs:
        judge_spread = float(spread.loc[lang].max())
        rule_spread = float(by_setting.loc[lang, "TEF − best baseline"].abs().max())
        if not judge_spread > rule_spread:
            raise AssertionError(f"{lang}: the judge's setting moves {judge_spread:.1f}, the rule {rule_spread:.1f}")
        glue(f"judge_spread_{lang}", round_half_up(judge_spread), display=False)
        glue(f"rule_spread_{lang}", round_half_up(rule_spread), display=False)


def show(frame: pd.DataFrame, names: Mapping[str, str], signed: bool | Sequence[Any] = ()) -> Any:
    """A table as the book prints it: judges, languages and rules by name, numbers rounded half up.

    Parameters
    ----------
    frame : DataFrame
        Any of the chapter's tables, indexed or columned by registry names, language codes and rules.
    names : mapping
        Registry name -> short row name.
    signed : bool or sequence
        Print a sign in these columns, or everywhere for ``True``.
    """
    return plain(reader_labels(frame, names), signed=signed)


def floor_first(models: Sequence[str], clears: pd.Series) -> list[str]:
    """The judges in their order, those with a language in which a rule clears the floor first.

    Examples
    --------
    >>> clears = pd.Series({("a", "en"): False, ("b", "en"): True}).rename_axis(["model", "lang"])
    >>> floor_first(["a", "b"], clears)
    ['b', 'a']
    """
    ok = {m: bool(clears.xs(m, level="model").any()) for m in models}
    return [m for m in models if ok[m]] + [m for m in models if not ok[m]]


def glue_floor_counts(below_floor: pd.DataFrame) -> None:
    """Glue the paper's Table 3 cells below the floor, all rules and TEF's (``t3_below``, ``t3_cells``,
    ``t3_below_tef``), from the chapter's count by rule with its ``all`` row."""
    glue_all(t3_below=int(below_floor.loc["all", "cells below the floor"]),
             t3_cells=int(below_floor.loc["all", "cells"]),
             t3_below_tef=int(below_floor.loc[RULE_LABELS["tef"], "cells below the floor"]))


def sweep_cells(rows: pd.DataFrame, names: Mapping[str, str]) -> str:
    """Judge-language cells of the sweep's ``best`` table as text, each with its best gain and temperature
    (``"none"`` if there is none).

    Examples
    --------
    >>> best = pd.DataFrame({"best gain": [1.25], "at t": ["0.5"], "judge clears the floor": [False]},
    ...                     index=pd.MultiIndex.from_tuples([("e5", "en")]))
    >>> sweep_cells(best, {"e5": "e5 probe"})
    'e5 probe in English (+1.3 at t = 0.5, a judge below the floor)'
    """
    return "; ".join(f"{names[m]} in {LANG_LABELS[lang]} ({format_cell(r['best gain'], signed=True)} at t = "
                     f"{r['at t']}{'' if r['judge clears the floor'] else ', a judge below the floor'})"
                     for (m, lang), r in rows.iterrows()) or "none"


def glue_sweep(best: pd.DataFrame, gain: pd.DataFrame, narrowest: float, reach: int,
               names: Mapping[str, str]) -> None:
    """Glue the temperature sweep for the prose: the cells where TEF is ahead at some t, its largest gain
    (among all cells and among those whose judge clears the floor), how many best gains reach the
    narrowest paired half-width, and the cells that stay at zero (``sweep_*``).

    Parameters
    ----------
    best : DataFrame
        Per ``(model, lang)``: ``best gain``, ``at t``, ``TEF ahead at some t``, ``judge clears the floor``.
    gain : DataFrame
        TEF minus the best baseline per ``(model, lang)`` (rows) and temperature (columns).
    narrowest : float
        The narrowest half-width of the paired 95 % intervals at t = 1.
    reach : int
        How many cells' best gains are at least ``narrowest``.
    names : mapping
        Registry name -> short row name.
    """
    ahead, cleared = best[best["TEF ahead at some t"]], best[best["judge clears the floor"]]
    flat = best[(gain == 0).all(axis=1)]
    glue_all(sweep_reach={0: "none reaches", 1: "1 reaches"}.get(reach, f"{reach} reach"),
             sweep_cells=len(best), sweep_ahead=len(ahead), sweep_ahead_list=sweep_cells(ahead, names),
             sweep_max=round_half_up(best["best gain"].max()), sweep_half=round_half_up(narrowest),
             sweep_clear_gain=round_half_up(cleared["best gain"].max()),
             sweep_clear_cell="; ".join(f"{names[m]} in {LANG_LABELS[lang]} at t = {r['at t']}"
                                        for (m, lang), r in cleared.nlargest(1, "best gain").iterrows()) or "none",
             sweep_flat="; ".join(f"{names[m]} in {LANG_LABELS[lang]}" for m, lang in flat.index) or "none")
