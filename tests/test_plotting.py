"""Tests of tefbook.companion.figures: the book's plotly and altair renderers."""

from __future__ import annotations

import base64
import re

import altair as alt
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from tefbook.companion import figures as plotting
from tefbook.companion.figures import (
    RENDERER_NAME,
    altair_renderer,
    figure_html,
    plotly_renderer,
    setup_notebook,
    static_figures_enabled,
)


@pytest.fixture(autouse=True)
def _restore_renderers():
    """Leave plotly's and altair's global renderer choice as it was."""
    plotly_default, altair_active = pio.renderers.default, alt.renderers.active
    yield
    pio.renderers.default = plotly_default
    alt.renderers.enable(altair_active)


def _figure() -> go.Figure:
    fig = go.Figure(go.Scatter(x=[0.1, 0.5, 0.9], y=[2.2, 0.0, 2.2], name="w"))
    fig.update_layout(title="weights", height=320)
    return fig


def _chart() -> alt.Chart:
    data = pd.DataFrame({"p": [0.1, 0.5, 0.9], "w": [0.53, 0.0, 0.53]})
    return alt.Chart(data, title="weights").mark_line().encode(x="p", y="w")


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("true", True), ("", False), ("0", False)])
def test_static_switch_reads_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv(plotting.STATIC_ENV, value)
    assert static_figures_enabled() is expected
    assert static_figures_enabled(True) is True and static_figures_enabled(False) is False


def test_plotly_bundle_has_json_and_html_without_the_library() -> None:
    bundle = plotly_renderer(static=False).to_mimebundle(_figure().to_dict())
    assert set(bundle) == {"application/vnd.plotly.v1+json", "text/html"}
    assert bundle["application/vnd.plotly.v1+json"]["layout"]["title"]["text"] == "weights"
    html = bundle["text/html"]
    assert html.startswith('<div class="tef-figure"><div class="tef-figure-interactive">')
    assert 'class="plotly-graph-div"' in html and "Plotly.newPlot" in html
    assert "height:320px" in html
    assert "cdn" not in html.lower() and "<script src" not in html  # the book serves plotly.js
    assert "tef-figure-static" not in html


def test_plotly_div_ids_are_reproducible() -> None:
    first = plotly_renderer(static=False).to_mimebundle(_figure().to_dict())["text/html"]
    again = plotly_renderer(static=False).to_mimebundle(_figure().to_dict())["text/html"]
    ids = [re.search(r'id="(tef-plotly-[0-9a-f]{12})-(\d+)"', h) for h in (first, again)]
    assert ids[0].group(1) == ids[1].group(1)  # same figure, same digest
    assert int(ids[1].group(2)) == int(ids[0].group(2)) + 1  # unique within a kernel


def test_altair_html_uses_the_vega_debug_template() -> None:
    bundle = altair_renderer(static=False)(_chart().to_dict())
    html = bundle["text/html"]
    assert re.search(r'<div id="altair-viz-[0-9a-f]{32}">', html)
    assert 'var VEGA_DEBUG = (typeof VEGA_DEBUG == "undefined") ? {} : VEGA_DEBUG;' in html
    assert "tef-figure-static" not in html


def test_altair_static_rendition_is_an_svg() -> None:
    html = altair_renderer(static=True)(_chart().to_dict())["text/html"]
    encoded = re.search(
        r'class="tef-figure-static" alt="weights" src="data:image/svg\+xml;base64,([^"]+)"', html
    )
    assert encoded, html[-400:]
    svg = base64.b64decode(encoded.group(1)).decode()
    assert svg.lstrip().startswith("<svg") and "weights" in svg


def test_figure_html_escapes_alt_text() -> None:
    html = figure_html("<div>x</div>", "<svg/>", alt='a "quoted" <title>')
    assert 'alt="a &quot;quoted&quot; &lt;title&gt;"' in html
    assert base64.b64encode(b"<svg/>").decode() in html


def test_setup_notebook_enables_both_and_prints_nothing() -> None:
    assert setup_notebook(static=False) is None
    assert (pio.renderers.default, alt.renderers.active) == (RENDERER_NAME, RENDERER_NAME)
    bundle = _figure()._repr_mimebundle_()
    assert "text/html" in bundle and "application/vnd.plotly.v1+json" in bundle
    assert "text/html" in _chart()._repr_mimebundle_()


@pytest.mark.slow
def test_plotly_static_rendition_through_kaleido() -> None:
    """kaleido needs Chromium; about 3.5 s per figure."""
    from tefbook.chromium import find_chromium
    from tefbook.errors import BookError

    try:
        find_chromium()
    except BookError as exc:
        pytest.skip(str(exc))
    html = plotly_renderer(static=True).to_mimebundle(_figure().to_dict())["text/html"]
    encoded = re.search(
        r'class="tef-figure-static" alt="weights" src="data:image/svg\+xml;base64,([^"]+)"', html
    )
    assert encoded
    assert base64.b64decode(encoded.group(1)).decode().lstrip().startswith("<svg")
