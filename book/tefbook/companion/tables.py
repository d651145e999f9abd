"""Numbers as the book prints them, and tables laid out as the paper lays them out.

Numbers become text with a fixed number of decimals, rounded half up as the paper prints them
(:func:`round_half_up`, :func:`format_cell`, :func:`format_p`, :func:`format_interval`,
:func:`format_columns`), so that executed notebooks are stable; tables follow the paper's column
order (:func:`paper_columns`) with the best value per column in bold (:func:`bold_best`, one
function for every table of the chapters, shown one block per language by :func:`show_by`), and
:func:`plain` for a table without ranking; :func:`glue_all` hands a chapter's computed numbers to its prose.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import pandas as pd

from tefcore.mind.schema import ABBREVIATIONS, TABLE_ORDER


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

    Rows whose last index level is in ``skip`` are not ranked; a group with a single ranked value, or whose
    ranked values all tie, has no best.
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
            if hits.all():  # every value ties: nothing is best
                continue
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
        each language). A group with a single ranked value, or whose values all tie, has no best.
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


def plain(frame: pd.DataFrame, digits: int = 1, signed: bool | Collection[Any] = ()) -> Any:
    """A table in the book's style without ranking: numbers as :func:`format_cell` prints them, one line per
    row (cells do not wrap), a stable id.

    Parameters
    ----------
    frame : DataFrame
    digits : int
        Decimals of every number.
    signed : bool or collection
        Print a sign on every number (``True``), or on the numbers of these columns (names, or the last
        level of a tuple name): differences, gains, margins.

    Examples
    --------
    >>> "white-space: nowrap" in plain(pd.DataFrame({"a": [1.25]})).to_html()
    True
    >>> "+0.9" in plain(pd.DataFrame({"gain": [0.9], "n": [3]}), signed={"gain"}).to_html()
    True
    """
    digest = hashlib.sha256(frame.to_csv().encode("utf-8")).hexdigest()[:10]
    styler = frame.style.set_uuid(f"tef-{digest}").set_table_attributes('class="dataframe"')
    styler = styler.set_table_styles(_TABLE_STYLES).format(lambda v: format_cell(v, digits, signed=signed is True))
    for j, col in enumerate(frame.columns):
        if signed is not True and (col in signed or (isinstance(col, tuple) and col[-1] in signed)):
            styler = styler.format(lambda v: format_cell(v, digits, signed=True), subset=frame.columns[[j]])
    return styler


def show_by(frame: pd.DataFrame, level: str = "language", **options: Any) -> None:
    """Display one :func:`bold_best` table per value of an index level, each under its name in bold.

    Parameters
    ----------
    frame : DataFrame
        A wide table with ``level`` in its index (e.g. :func:`tefbook.companion.results.side_by_side`).
    level : str
        The index level that splits the table (dropped from each part).
    **options
        Options of :func:`bold_best` (``by``, ``skip``, ``lower``, ...).
    """
    from IPython.display import Markdown, display

    for name in pd.unique(frame.index.get_level_values(level)):
        part = frame.xs(name, level=level).dropna(how="all")
        display(Markdown(f"**{name}**"), bold_best(part, **options))


def glue_all(values: Mapping[str, Any] | None = None, /, **named: Any) -> None:
    """Glue every ``name: value`` of a mapping, and every keyword, for the chapter's prose (myst-nb ``glue``,
    not displayed).

    numpy scalars become Python numbers, so that ``{glue:text}`name:.1f``` formats them as numbers.

    Examples
    --------
    >>> glue_all({"n_pairs": np.int64(605)}, share=np.float64(0.25))  # outside a notebook: stored, not shown
    """
    from myst_nb import glue

    for name, value in {**(values or {}), **named}.items():
        glue(name, value.item() if isinstance(value, np.generic) else value, display=False)


def paired_test_columns(rows: pd.DataFrame, difference: str, n_boot: int | None = None) -> dict[str, list[Any]]:
    """The columns of a paired comparison as the book prints them (rows of
    :func:`tefbook.companion.results.compare_runs`): the difference with its 95 % interval (headed ``difference``),
    the bootstrap p-value, McNemar's discordant counts b and c and its p-value.

    Examples
    --------
    >>> rows = pd.DataFrame({"difference": [2.5], "low": [0.5], "high": [4.0], "p_bootstrap": [0.0],
    ...                      "mcnemar_b": [3], "mcnemar_c": [9], "p_mcnemar": [0.146]})
    >>> paired_test_columns(rows, "TEF − SV", n_boot=1000)["TEF − SV [95 % CI]"]
    ['+2.5 [+0.5, +4.0]']
    """
    return {f"{difference} [95 % CI]": [format_interval(d, lo, hi, signed=True)
                                        for d, lo, hi in zip(rows["difference"], rows["low"], rows["high"])],
            "p (bootstrap)": [format_p(p, n_boot) for p in rows["p_bootstrap"]],
            "b": list(rows["mcnemar_b"]), "c": list(rows["mcnemar_c"]),
            "p (McNemar)": [format_p(p) for p in rows["p_mcnemar"]]}
