"""Tests of tefcore.chapters.presentation: the figure the result chapters share."""

from __future__ import annotations

import pandas as pd

from tefcore.chapters import presentation as pres


# ---------------------------------------------------------------------------------------------------
def test_dot_interval_figure_places_series_side_by_side():
    frame = pd.DataFrame({"m": ["A", "B", "A", "B"], "v": [1.0, 2.0, 3.0, 4.0], "lo": [0.5, 1.5, 2.5, 3.5],
                          "hi": [1.5, 2.5, 3.5, 4.5], "lang": ["zh", "zh", "en", "en"], "judge": "J",
                          "metric": "accuracy"})
    fig = pres.dot_interval_figure(frame, x="m", y="v", low="lo", high="hi", color="lang", row="judge", col="metric",
                                   x_order=["A", "B"], color_order=["zh", "en"], zero_line=True)
    zh, en = fig.data
    assert list(zh.x) == [-0.125, 0.875] and list(en.x) == [0.125, 1.125]
    assert list(zh.error_y.array) == [0.5, 0.5] and zh.name == "zh"

