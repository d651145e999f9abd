"""Tests of tefbook.companion.tables and tefbook.companion.labels: numbers as the paper prints them, the bold best value,
a plain table, and the short names of the judges."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from tefbook.companion import tables as tab


# ---------------------------------------------------------------------------------------------------
# numbers as the paper prints them, and the bold best value
# ---------------------------------------------------------------------------------------------------
def _bold(styler) -> set[tuple[int, int]]:
    css = styler.to_html().split("</style>")[0]
    return {(int(r), int(c)) for r, c in re.findall(r"_row(\d+)_col(\d+)", css)}


@pytest.mark.parametrize(("value", "digits", "want"), [
    (71.25, 1, 71.3), (66.44999999999999, 1, 66.5), (60.266666, 1, 60.3), (-0.25, 1, -0.3), (0.0125, 3, 0.013),
    (2.0, 0, 2.0)])
def test_round_half_up_as_the_paper_prints(value, digits, want):
    assert tab.round_half_up(value, digits) == want
    assert np.isnan(tab.round_half_up(float("nan")))


def test_format_cell_and_interval_round_half_up():
    assert tab.format_cell(71.25) == "71.3" and tab.format_cell(np.float64(0.0125), 3) == "0.013"
    assert tab.format_cell(np.int64(1215)) == "1,215" and tab.format_cell(None) == ""
    assert tab.format_cell("not run") == "not run" and tab.format_cell(1.05, signed=True) == "+1.1"
    assert tab.format_interval(71.25, 70.05, 72.45) == "71.3 [70.1, 72.5]"


def test_bold_best_skips_reference_rows_single_values_and_ranks_gaps_by_size():
    index = pd.MultiIndex.from_tuples([("r", "pairs (n)"), ("r", "majority class"), ("a", "MV"), ("a", "TEF"),
                                       ("b", "TEF")], names=["run", "method"])
    frame = pd.DataFrame({"Acc": pd.Series([300, 90.0, 60.0, 70.0, 50.0], dtype=object),
                          "gap": [np.nan, np.nan, -0.01, 0.2, 0.3]}).set_index(index)  # counts stay integers
    styler = tab.bold_best(frame, by="run", skip=("pairs (n)", "majority class"), closest_to_zero={"gap"})
    assert _bold(styler) == {(3, 0), (2, 1)}  # TEF's Acc in run a; MV's gap (closest to 0); run b alone: none
    html = styler.to_html()
    assert ">300<" in html and ">70.0<" in html
    per = tab.bold_best(pd.DataFrame({"ece": [0.1234, 0.0456], "acc": [61.25, 58.0]}), lower={"ece"},
                         digits={"ece": 3})
    assert ">0.046<" in per.to_html() and ">61.3<" in per.to_html()


def test_show_by_displays_one_table_per_language(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda *objs: shown.extend(objs))
    index = pd.MultiIndex.from_tuples([("Chinese", "a", "TEF"), ("Chinese", "a", "SV"), ("English", "a", "TEF")],
                                      names=["language", "run", "method"])
    tab.show_by(pd.DataFrame({"Acc": [1.0, 2.0, 3.0]}, index=index), by="run")
    assert [o.data for o in shown[::2]] == ["**Chinese**", "**English**"]
    assert list(shown[1].data.index) == [("a", "TEF"), ("a", "SV")]
    assert _bold(shown[1]) == {(1, 0)} and _bold(shown[3]) == set()


def test_nothing_is_bold_where_every_value_ties():
    index = pd.MultiIndex.from_tuples([("a", "MV"), ("a", "SV"), ("a", "TEF"), ("b", "MV"), ("b", "TEF")],
                                      names=["run", "method"])
    frame = pd.DataFrame({"Acc": [61.8, 61.8, 61.8, 50.0, 52.0], "F1": [37.4, 37.4, 37.4, 40.0, 40.0]}, index=index)
    assert _bold(tab.bold_best(frame, by="run")) == {(4, 0)}  # run a ties everywhere, run b ties on F1


def test_plain_formats_without_ranking():
    styler = tab.plain(pd.DataFrame({"a": [1.25, 3.0], "n": [1215, 7]}))
    assert _bold(styler) == set() and ">1.3<" in styler.to_html() and ">1,215<" in styler.to_html()


