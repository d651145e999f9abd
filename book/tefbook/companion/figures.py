"""Figure renderers for the book's notebooks: interactive in HTML, static in print.

Every chapter calls :func:`setup_notebook` once, in its first code cell. It registers

* a plotly renderer (named ``"tef"``) whose bundle holds plotly's own JSON
  (``application/vnd.plotly.v1+json``, for JupyterLab) **and** ``text/html`` made by
  :func:`plotly.io.to_html` without the plotly.js library. plotly 7 alone emits only the
  JSON, which the book (myst-nb) cannot render; the library itself is served by the book's
  ``tef_offline`` extension;
* an altair renderer (also ``"tef"``) that emits altair's ``html`` output, whose script finds
  the book's local vega bundle through the ``VEGA_DEBUG`` global.

When the environment variable ``TEF_STATIC_FIGURES`` is ``1`` (``python -m tefbook
--pdf`` sets it for the kernels), both renderers also store a static SVG of the figure
inside the same HTML output (plotly through kaleido, which needs Chromium and takes about
3.5 s per figure; altair through vl-convert). The book's CSS shows the interactive figure on
screen and the static one in print.

Div ids are derived from the figure itself (plotly) so that re-executions give the same HTML;
altair's ids are random and are sanitised for nbval (``tests/nbval_sanitize.cfg``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "RENDERER_NAME",
    "STATIC_ENV",
    "altair_renderer",
    "figure_html",
    "lines_per_language",
    "plotly_renderer",
    "setup_notebook",
    "static_figures_enabled",
]

#: Name under which both renderers are registered.
RENDERER_NAME = "tef"
#: Environment variable that switches the static (print) renditions on.
STATIC_ENV = "TEF_STATIC_FIGURES"
#: plotly.js configuration of every interactive figure (no link to plotly's cloud).
PLOTLY_CONFIG: dict[str, Any] = {
    "responsive": True,
    "displaylogo": False,
    "toImageButtonOptions": {"format": "svg"},
}

_counter = itertools.count(1)


def static_figures_enabled(static: bool | None = None) -> bool:
    """Whether static renditions are wanted.

    Parameters
    ----------
    static : bool or None
        An explicit choice; ``None`` reads ``TEF_STATIC_FIGURES`` (``"1"``, ``"true"``,
        ``"yes"`` switch it on).
    """
    if static is not None:
        return bool(static)
    return os.environ.get(STATIC_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def figure_html(interactive: str, static_svg: str | None = None, *, alt: str = "") -> str:
    """Wrap a figure's interactive HTML and, optionally, its static SVG rendition.

    Parameters
    ----------
    interactive : str
        HTML of the interactive figure (a div and its script).
    static_svg : str or None
        SVG markup of the same figure, embedded as a ``data:`` image for print.
    alt : str
        Alternative text of the static image.

    Returns
    -------
    str
        ``<div class="tef-figure">`` holding the interactive part and, when given, an
        ``<img class="tef-figure-static">`` that only print shows.
    """
    parts = ['<div class="tef-figure">', f'<div class="tef-figure-interactive">{interactive}</div>']
    if static_svg is not None:
        encoded = base64.b64encode(static_svg.encode("utf-8")).decode("ascii")
        parts.append(
            f'<img class="tef-figure-static" alt="{html.escape(alt or "figure", quote=True)}" '
            f'src="data:image/svg+xml;base64,{encoded}">'
        )
    parts.append("</div>")
    return "".join(parts)


def _figure_title(fig_dict: dict[str, Any]) -> str:
    """Best-effort title text of a plotly figure dictionary, for alt texts."""
    title = fig_dict.get("layout", {}).get("title", "")
    if isinstance(title, dict):
        title = title.get("text", "")
    return str(title or "")


def plotly_renderer(static: bool | None = None) -> Any:
    """Build the book's plotly renderer.

    Parameters
    ----------
    static : bool or None
        Store a static SVG through kaleido too; ``None`` reads ``TEF_STATIC_FIGURES``.

    Returns
    -------
    plotly.io.base_renderers.MimetypeRenderer
        A renderer whose bundle holds ``application/vnd.plotly.v1+json`` and ``text/html``.
    """
    import plotly.io as pio
    from plotly.io._base_renderers import MimetypeRenderer

    want_static = static_figures_enabled(static)

    class BookPlotlyRenderer(MimetypeRenderer):
        """plotly JSON plus HTML without the library (which the book serves)."""

        def __init__(self) -> None:
            self.static = want_static

        def to_mimebundle(self, fig_dict: dict[str, Any]) -> dict[str, Any]:
            as_json = pio.to_json(fig_dict, validate=False, remove_uids=True)
            digest = hashlib.sha256(as_json.encode("utf-8")).hexdigest()[:12]
            div_id = f"tef-plotly-{digest}-{next(_counter)}"
            layout = fig_dict.get("layout", {})
            height = layout.get("height")
            interactive = pio.to_html(
                fig_dict,
                include_plotlyjs=False,
                include_mathjax=False,
                full_html=False,
                div_id=div_id,
                config=PLOTLY_CONFIG,
                validate=False,
                default_width="100%",
                default_height=f"{int(height)}px" if height else "450px",
            )
            static_svg = None
            if self.static:
                static_svg = pio.to_image(fig_dict, format="svg", validate=False).decode("utf-8")
            return {
                "application/vnd.plotly.v1+json": json.loads(as_json),
                "text/html": figure_html(interactive, static_svg, alt=_figure_title(fig_dict)),
            }

    return BookPlotlyRenderer()


def altair_renderer(static: bool | None = None) -> Any:
    """Build the book's altair renderer.

    Parameters
    ----------
    static : bool or None
        Store a static SVG through vl-convert too; ``None`` reads ``TEF_STATIC_FIGURES``.

    Returns
    -------
    callable
        ``renderer(spec, **metadata) -> dict`` with a ``text/html`` entry.
    """
    from altair.vegalite.v6 import display

    want_static = static_figures_enabled(static)

    def render(spec: dict[str, Any], **metadata: Any) -> dict[str, str]:
        bundle = display.html_renderer(spec, **metadata)
        static_svg = None
        if want_static:
            static_svg = display.svg_renderer(spec, **metadata)["image/svg+xml"]
        description = spec.get("description") or spec.get("title") or "chart"
        if isinstance(description, dict):
            description = description.get("text", "chart")
        return {"text/html": figure_html(bundle["text/html"], static_svg, alt=str(description))}

    return render


def setup_notebook(static: bool | None = None) -> None:
    """Register and enable the book's plotly and altair renderers.

    Call it once in a chapter's first code cell::

        from tefbook.companion.figures import setup_notebook
        setup_notebook()

    Parameters
    ----------
    static : bool or None
        Also store static SVG renditions for print; ``None`` reads ``TEF_STATIC_FIGURES``.

    Nothing is returned, so that the call prints nothing in the book. It also silences tqdm's notice
    that the kernel has no widgets (progress bars then print as text), which would otherwise print in
    the first cell that imports tqdm.
    """
    import altair as alt
    import plotly.io as pio

    warnings.filterwarnings("ignore", message="IProgress not found")

    want_static = static_figures_enabled(static)
    pio.renderers[RENDERER_NAME] = plotly_renderer(want_static)
    pio.renderers.default = RENDERER_NAME
    alt.renderers.register(RENDERER_NAME, altair_renderer(want_static))
    alt.renderers.enable(RENDERER_NAME)


def lines_per_language(frame: Any, x: str, y: str, langs: Sequence[str], names: Mapping[str, str], hover: str) -> Any:
    """One panel per language (a shared y axis), one line per judge: ``y`` against ``x`` on a log axis
    ticked at the values of ``x``; one colour per judge, named once in the legend below the panels.

    Parameters
    ----------
    frame : DataFrame
        Columns ``model``, ``lang``, ``x`` and ``y``.
    langs : sequence of str
        The panels, left to right.
    names : mapping of str to str
        The judge's name in the legend, per ``model``.
    hover : str
        Plotly hover text of a point, before the judge's name (e.g. ``"t = %{x}: %{y:+.1f} points"``).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"model": ["a", "a", "b", "b"], "lang": ["en"] * 4, "t": [1, 2, 1, 2],
    ...                       "gain": [0.0, 1.0, 2.0, 3.0]})
    >>> fig = lines_per_language(frame, "t", "gain", ["en"], {"a": "A", "b": "B"}, "%{y}")
    >>> [trace.name for trace in fig.data], fig.layout.xaxis.type
    (['A', 'B'], 'log')
    """
    import pandas as pd
    import plotly.express as px
    from plotly.subplots import make_subplots

    from tefbook.companion.labels import LANG_LABELS

    fig = make_subplots(rows=1, cols=len(langs), shared_yaxes=True, horizontal_spacing=0.05,
                        subplot_titles=[LANG_LABELS.get(lang, lang) for lang in langs])
    palette = px.colors.qualitative.Set1
    for k, model in enumerate(pd.unique(frame["model"])):
        for j, lang in enumerate(langs, start=1):
            s = frame[(frame["model"] == model) & (frame["lang"] == lang)]
            fig.add_scatter(x=s[x], y=s[y], mode="lines+markers", name=names[model], legendgroup=model,
                            showlegend=j == 1, line={"color": palette[k % len(palette)]}, row=1, col=j,
                            hovertemplate=f"{hover}<extra>{names[model]}</extra>")
    grid = sorted(pd.unique(frame[x]))
    fig.update_xaxes(type="log", tickvals=grid, ticktext=[f"{v:g}" for v in grid])
    fig.update_layout(height=420, legend={"orientation": "h", "y": -0.3, "x": 0.5, "xanchor": "center"})
    return fig
