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


def card_table(card: pd.DataFrame, counted: pd.DataFrame, langs: Sequence[str]) -> pd.DataFrame:
    """The data card as printed: per language the data at hand, the full release's counts and what the
    paper prints (the number of posts only), counts with thousands separators, means with decimals.

    Examples
    --------
    >>> card = pd.DataFrame({"en": {"posts": 1200.0, "mean length": 98.25}})
    >>> card_table(card, card, ["en"])[("English", "paper prints")].tolist()
    ['2,884', '']
    """
    printed = pd.DataFrame({"zh": {"posts": 5474}, "en": {"posts": 2884}}).reindex(card.index)
    shown = pd.concat({(LANG_LABELS[lang], what): frame[lang] for lang in langs
                       for what, frame in (("data at hand", card), ("full release, counted", counted),
                                           ("paper prints", printed))}, axis=1)
    digits = {"mean length": 1, "sentences per post (reference rule)": 2, "sentences per post (improved rule)": 2}
    return shown.apply(lambda row: row.map(lambda v: "" if pd.isna(v) else f"{v:,.{digits.get(row.name, 0)}f}"),
                       axis=1)


def glue_lengths(lengths: pd.DataFrame, sentences: pd.DataFrame, langs: Sequence[str]) -> None:
    """Glue the length and sentence statistics the prose cites (``len_median_en``, ``sent_few_zh``, ...)."""
    from myst_nb import glue

    for lang in langs:
        for name, frame, column in (("len_median", lengths, "50%"), ("len_min", lengths, "min"),
                                    ("len_max", lengths, "max"), ("len_cv", lengths, "coefficient of variation"),
                                    ("sent_median", sentences, "50%"), ("sent_max", sentences, "max"),
                                    ("sent_few", sentences, "posts with at most 3 sentences %")):
            glue(f"{name}_{lang}", float(frame.loc[lang, column]), display=False)


def length_tables(lengths: pd.DataFrame, sentences: pd.DataFrame) -> tuple[Any, Any]:
    """The two distribution tables as shown: lengths with their units, sentences per post, no counts."""
    from companion.tables import format_columns

    return (format_columns(lengths.rename(index={"zh": "Chinese (characters)", "en": "English (words)"})
                           .drop(columns="count"), 1, **{"coefficient of variation": 2}),
            format_columns(sentences.rename(index=LANG_LABELS).drop(columns=["count", "std"]), 1))


def glue_floors(dims: pd.DataFrame, langs: Sequence[str]) -> None:
    """Glue the majority-class floor per language on the data at hand (mean, lowest and highest
    dimension) and its smallest non-empty dimension (``floor_en``, ``small_dim_zh``, ...)."""
    from myst_nb import glue

    for lang in langs:
        at_hand = dims.loc[(lang, "data at hand")]
        floor = at_hand["majority %"].dropna()  # dimensions with pairs
        smallest = at_hand["pairs"][at_hand["pairs"] > 0].sort_values(kind="stable")
        for name, value in (("floor", float(floor.mean())), ("floor_min", float(floor.min())),
                            ("floor_max", float(floor.max())), ("floor_min_dim", floor.idxmin()),
                            ("floor_max_dim", floor.idxmax()), ("small_dim", smallest.index[0]),
                            ("small_n", int(smallest.iloc[0]))):
            glue(f"{name}_{lang}", value, display=False)


def dimension_table(dims: pd.DataFrame) -> Any:
    """The pairs per dimension as shown: the data at hand beside the full release for each count,
    without each dimension's share (which the figure shows)."""
    from companion.tables import format_columns

    wide = dims.drop(columns="share %").unstack("what").swaplevel(axis=1).sort_index(
        axis=1, level=0, sort_remaining=False)
    return format_columns(wide.rename(index=LANG_LABELS, level=0), 1)


def event_table(events: pd.DataFrame, langs: Sequence[str]) -> Any:
    """Pairs and change share per event (columns ``(size|<lambda>, lang)`` of the chapter's pivot), as
    shown: one block per language, the first language's largest event first.

    Examples
    --------
    >>> raw = pd.DataFrame({("size", "en"): [3, 5], ("<lambda>", "en"): [50.0, 20.0]}, index=["RU", "GPT"])
    >>> event_table(raw, ["en"]).index.tolist()
    ['GPT', 'RU']
    """
    from companion.tables import format_columns

    shown = pd.DataFrame({(LANG_LABELS[lang], what): events[(how, lang)] for lang in langs
                          for what, how in (("pairs", "size"), ("change %", "<lambda>"))})
    return format_columns(shown.sort_values((LANG_LABELS[langs[0]], "pairs"), ascending=False), 1)


def glue_lopsided(lopsided: pd.DataFrame) -> None:
    """Glue the most lopsided dimension of each language with its two sides (``lop_dim_en``, ...)."""
    from myst_nb import glue

    for (lang, dimension), row in lopsided.iterrows():
        glue(f"lop_dim_{lang}", dimension, display=False)
        glue(f"lop_change_{lang}", int(row["change"]), display=False)
        glue(f"lop_stability_{lang}", int(row["stability"]), display=False)
