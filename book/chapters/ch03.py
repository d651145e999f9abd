"""Chapter 3 (the MIND data card): the chapter's figures. The counts are computed on the page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from companion.labels import LANG_LABELS
from tefcore.mind.schema import SIDES, TABLE_ORDER

DIMENSION_COLORS: dict[str, str] = dict(zip(
    TABLE_ORDER, ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#b07aa1"]))
"""One colour per dimension, shared by the chapter's figures."""

_UNITS = {"zh": "characters", "en": "words"}


def length_figure(table: pd.DataFrame, langs: Sequence[str]) -> Any:
    """Histograms of post lengths (``post_table`` rows), one panel per language, the mean dashed."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(langs), horizontal_spacing=0.1,
                        subplot_titles=[f"{LANG_LABELS[lang]} ({_UNITS[lang]})" for lang in langs])
    for col, lang in enumerate(langs, start=1):
        x = table.loc[table["lang"] == lang, "length"]
        fig.add_histogram(x=x, nbinsx=40, marker_color="#4e79a7", name="posts", showlegend=col == 1, row=1, col=col,
                          hovertemplate="%{x}: %{y} posts<extra></extra>")
        fig.add_vline(x=float(x.mean()), line_dash="dash", line_color="#e15759", row=1, col=col)
        fig.update_xaxes(title_text=f"post length ({_UNITS[lang]})", row=1, col=col)
    fig.add_scatter(x=[None], y=[None], mode="lines", line={"dash": "dash", "color": "#e15759"}, name="mean")
    fig.update_yaxes(title_text="posts", row=1, col=1)
    fig.update_layout(title="Post lengths", height=400, bargap=0.05, legend={"orientation": "h", "y": -0.25})
    return fig


def sentences_figure(by_rule: pd.DataFrame, langs: Sequence[str]) -> Any:
    """Posts per number of sentences (rows ``lang, rule, sentences``), the two rules side by side."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(langs), shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=[LANG_LABELS[lang] for lang in langs])
    for col, lang in enumerate(langs, start=1):
        for rule, color in (("sentences_reference", "#4e79a7"), ("sentences_improved", "#f28e2b")):
            name = rule.removeprefix("sentences_") + " rule"
            counts = by_rule[(by_rule["lang"] == lang) & (by_rule["rule"] == rule)]["sentences"].value_counts()
            counts = counts.sort_index()
            fig.add_bar(x=counts.index, y=counts.to_numpy(), name=name, marker_color=color, legendgroup=rule,
                        showlegend=col == 1, row=1, col=col,
                        hovertemplate="%{x} sentences: %{y} posts<extra>" + name + "</extra>")
        fig.update_xaxes(title_text="sentences per post", dtick=1, row=1, col=col)
    fig.update_yaxes(title_text="posts", row=1, col=1)
    fig.update_layout(title="Sentences per post", barmode="group", height=400,
                      legend={"orientation": "h", "y": -0.25})
    return fig


def share_figure(dims: pd.DataFrame, langs: Sequence[str]) -> Any:
    """Each dimension's share of a language's pairs, the data at hand (solid) beside the full release
    (hatched), colour by dimension; ``dims`` is the chapter's table indexed ``(lang, what, dimension)``."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(langs), shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=[LANG_LABELS[lang] for lang in langs])
    for col, lang in enumerate(langs, start=1):
        for what, pattern in (("data at hand", ""), ("full release, counted", "/")):
            part = dims.loc[(lang, what)]
            fig.add_bar(x=list(part.index), y=part["share %"], name=what, legendgroup=what, showlegend=col == 1,
                        offsetgroup=what, marker_pattern_shape=pattern, marker_line_color="#333",
                        marker_line_width=0.5, marker_color=[DIMENSION_COLORS[d] for d in part.index],
                        customdata=part["majority %"],
                        hovertemplate="%{x}<br>%{y:.1f} % of the pairs<br>majority side %{customdata:.1f} %"
                                      "<extra>" + what + "</extra>", row=1, col=col)
    fig.update_yaxes(title_text="share of the language's pairs (%)", row=1, col=1)
    fig.update_layout(title="Where the evaluation pairs fall<br><sup>colour: dimension · solid: data at hand · hatched: full release</sup>",
                      barmode="group", height=430, legend={"orientation": "h", "y": -0.2})
    return fig


def orientation_figure(labels: pd.DataFrame, langs: Sequence[str]) -> Any:
    """The paper's Fig. 3 for the data at hand: one radial bar per orientation, one panel per language.

    Colour marks the dimension (one legend entry each, the colour key); the change-oriented bar of a
    subcategory is solid and the stability-oriented one hatched (two grey legend entries say so).
    ``labels`` holds :func:`tefcore.mind.release.label_counts` rows with a ``lang`` column.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=len(langs), cols=1, specs=[[{"type": "polar"}]] * len(langs), vertical_spacing=0.07,
                        subplot_titles=[f"({c}) {LANG_LABELS[lang]}" for c, lang in zip("ab", langs)])
    for row, lang in enumerate(langs, start=1):
        d = labels[labels["lang"] == lang].reset_index(drop=True)
        theta = d["orientation"] + " "
        for dim in TABLE_ORDER:
            for side, pattern in zip(SIDES, ("", "/")):
                m = (d["dimension"] == dim) & (d["side"] == side)
                fig.add_trace(go.Barpolar(
                    r=d.loc[m, "count"], theta=theta[m], name=dim, legendgroup=dim,
                    showlegend=row == 1 and side == SIDES[0], marker_color=DIMENSION_COLORS[dim],
                    marker_pattern_shape=pattern, marker_line_color="#333", marker_line_width=0.5,
                    customdata=np.stack([d.loc[m, "subcategory"], np.full(int(m.sum()), side)], axis=1),
                    hovertemplate="%{theta}<br>" + dim + " / %{customdata[0]} (%{customdata[1]})<br>%{r} labels"
                                  "<extra></extra>"), row=row, col=1)
        fig.update_polars(angularaxis={"categoryorder": "array", "categoryarray": list(theta), "tickfont": {"size": 9},
                                       "direction": "clockwise"}, radialaxis={"tickfont": {"size": 8}, "angle": 90})
    for side, pattern in zip(SIDES, ("", "/")):  # the key of the two patterns
        fig.add_trace(go.Barpolar(r=[0], theta=[theta.iloc[0]], name=f"{side} (pattern)", marker_color="#bbbbbb",
                                  marker_pattern_shape=pattern, marker_line_color="#333", legendgroup=f"side {side}",
                                  hoverinfo="skip"), row=1, col=1)
    fig.update_layout(title="Labels per value orientation<br><sup>colour: dimension · solid: change · hatched: stability</sup>",
                      height=600 * len(langs) + 40, margin={"l": 110, "r": 110, "t": 150},
                      legend={"orientation": "h", "y": -0.03, "x": 0.5, "xanchor": "center"})
    fig.update_annotations(yshift=24)
    return fig
