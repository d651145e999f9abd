"""Figure types that several chapters draw: estimates with intervals, and one line per judge and language."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from companion.labels import LANG_LABELS, judge_label, short_label


def dot_interval_figure(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    low: str,
    high: str,
    color: str,
    row: str,
    col: str,
    x_order: Sequence[str],
    color_order: Sequence[str] | None = None,
    title: str = "",
    y_title: str = "",
    zero_line: bool = False,
    row_height: int = 230,
) -> Any:
    """Point estimates with interval bars, side by side per ``color``, in a grid of panels.

    Parameters
    ----------
    frame : DataFrame
        One row per point.
    x, y, low, high, color, row, col : str
        Columns: category on the x axis, estimate, interval ends, series, panel row and column.
    x_order, color_order : sequence of str
        Order of the categories and of the series (default: order of appearance).
    title, y_title : str
    zero_line : bool
        Draw a horizontal line at 0 in every panel.
    row_height : int
        Height of one panel row in pixels.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    import plotly.express as px
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    rows, cols = list(pd.unique(frame[row])), list(pd.unique(frame[col]))
    series = list(color_order) if color_order is not None else list(pd.unique(frame[color]))
    series = [c for c in series if c in set(frame[color])]
    fig = make_subplots(rows=len(rows), cols=len(cols), shared_xaxes=True, horizontal_spacing=0.08,
                        vertical_spacing=0.12 / max(1, len(rows)),
                        column_titles=[str(c) for c in cols], row_titles=[str(r) for r in rows])
    palette = px.colors.qualitative.Plotly
    pos = {v: i for i, v in enumerate(x_order)}
    width = 0.5 / max(1, len(series))
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            panel = frame[(frame[row] == r) & (frame[col] == c)]
            for k, name in enumerate(series):
                d = panel[panel[color] == name]
                xs = d[x].map(pos).to_numpy(dtype=float) + (k - (len(series) - 1) / 2) * width
                fig.add_trace(go.Scatter(
                    x=xs, y=d[y], mode="markers", name=str(name), legendgroup=str(name),
                    showlegend=i == 0 and j == 0, marker={"color": palette[k % len(palette)], "size": 8},
                    error_y={"type": "data", "array": (d[high] - d[y]).to_numpy(),
                                 "arrayminus": (d[y] - d[low]).to_numpy()},
                    customdata=np.column_stack([d[x].to_numpy(), d[low].to_numpy(), d[high].to_numpy()]),
                    hovertemplate="%{customdata[0]}: %{y:.2f} [%{customdata[1]:.2f}, %{customdata[2]:.2f}]"),
                    row=i + 1, col=j + 1)
            if zero_line:
                fig.add_hline(y=0, line={"color": "grey", "width": 1}, row=i + 1, col=j + 1)
    fig.update_xaxes(tickvals=list(range(len(x_order))), ticktext=list(x_order), range=[-0.6, len(x_order) - 0.4])
    fig.update_yaxes(title_text=y_title, col=1)
    fig.update_layout(height=row_height * len(rows) + 110, title=title, legend_title_text=color)
    return fig


def judge_language_lines(frame: pd.DataFrame, x: str, langs: Sequence[str], labels: Mapping[str, str],
                          panels: Sequence[tuple[str, str, Any]], **grid: Any) -> Any:
    """Line plots against ``x``: one row of panels per ``(field, title, style)``, one column per language,
    one colour per judge (``style`` is trace options, or a function of the judge's rows giving them)."""
    import plotly.express as px
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=len(panels), cols=len(langs), shared_xaxes=True,
                        subplot_titles=[f"{LANG_LABELS.get(lang, lang)}: {title}" for _, title, _ in panels
                                        for lang in langs], **grid)
    palette = px.colors.qualitative.Set1
    for j, model in enumerate(pd.unique(frame["model"])):
        name, color = short_label(labels.get(model, judge_label(model))), palette[j % len(palette)]
        for i, lang in enumerate(langs):
            s = frame[(frame["model"] == model) & (frame["lang"] == lang)]
            for row, (field, _, style) in enumerate(panels, start=1):
                extra = dict(style(s) if callable(style) else style or {})
                fig.add_trace(go.Scatter(x=s[x], y=s[field], mode="lines+markers", name=name, legendgroup=name,
                                         showlegend=i == 0 and row == 1,
                                         line={"color": color, **extra.pop("line", {})}, **extra),
                              row=row, col=i + 1)
    return fig
