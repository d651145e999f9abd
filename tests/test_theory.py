"""Tests of tefcore.chapters.theory (chapters 1, 2 and 10) and of presentation.bold_best."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from tefcore.chapters import presentation as pres


# ---------------------------------------------------------------------------------------------------
# presentation.bold_best: the best value per column in bold
# ---------------------------------------------------------------------------------------------------
def _bold_cells(styler) -> set[tuple[int, int]]:
    """(row, column) positions that the Styler's CSS makes bold."""
    css = styler.to_html().split("</style>")[0]
    return {(int(r), int(c)) for r, c in re.findall(r"_row(\d+)_col(\d+)", css)}


def test_bold_best_marks_every_tie_and_honours_lower_is_better():
    table = pd.DataFrame({"Acc": [61.2, 64.0, 64.0], "ECE": [0.10, 0.05, 0.07]}, index=["MV", "SV", "TEF"])
    assert _bold_cells(pres.bold_best(table, lower={"ECE"})) == {(1, 0), (2, 0), (1, 1)}
    assert _bold_cells(pres.bold_best(table)) == {(1, 0), (2, 0), (0, 1)}


def test_bold_best_within_groups_and_from_separate_values():
    index = pd.MultiIndex.from_tuples([("en", "SV"), ("en", "TEF"), ("zh", "SV"), ("zh", "TEF")],
                                      names=["lang", "rule"])
    numbers = pd.DataFrame({"Acc": [60.0, 58.0, 70.0, 75.0]}, index=index)
    shown = pd.DataFrame({"Acc": ["60.0 [55, 65]", "58.0 [53, 63]", "70.0 [66, 74]", "75.0 [71, 79]"]},
                         index=index)
    assert _bold_cells(pres.bold_best(shown, values=numbers, by="lang")) == {(0, 0), (3, 0)}
    assert _bold_cells(pres.bold_best(numbers)) == {(3, 0)}


def test_bold_best_is_stable_and_checks_alignment():
    table = pd.DataFrame({"a": [1.0, np.nan, 3.0]})
    first, second = pres.bold_best(table).to_html(), pres.bold_best(table.copy()).to_html()
    assert first == second and "3.0" in first and "1.0" in first
    with pytest.raises(ValueError, match="index and columns"):
        pres.bold_best(table, values=table.iloc[:2])
