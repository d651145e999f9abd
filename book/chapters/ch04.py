"""Chapter 4 (extraction): the provenance comparison of the reproducibility check, and the chapter's figures."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from companion.labels import LANG_LABELS

TIME_FIELDS: frozenset[str] = frozenset({"started_at", "finished_at", "provenance_id"})
"""Provenance fields that say when a run happened, not how."""

CELL_FIELDS: frozenset[str] = frozenset({"temperature", "median_abs_margin", "n_temperature_sentences", "subsets"})
"""Fields kept per language and dimension (``"en/Culture"``): only the entry of the cell re-extracted is compared."""

PAIR_SET_FIELDS: frozenset[str] = frozenset({"temperature_pairs_sha256", "training_sha256", "fit_pairs_sha256"})
"""Fields that describe the whole set of pairs a judge was fitted on (a cell is a part of it)."""

FEATURE_FIELDS: frozenset[str] = frozenset({"llama_cpp_cpu"})
"""Fields that list CPU features, separated by spaces: a difference shows the features only one side has."""

UNRECORDED = "unrecorded"
"""How :func:`setting_differences` shows a field the older header did not record."""


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in d.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0) or (math.isnan(a) and math.isnan(b))
    return a == b


def _short(value: Any, width: int = 40) -> str:
    text = UNRECORDED if value is None else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def setting_differences(recorded: Mapping[str, Any], now: Mapping[str, Any], cell: str) -> tuple[str, ...]:
    """The provenance fields on which a new run differs from a committed cache's header, as ``"name: old → new"``.

    The time stamps (:data:`TIME_FIELDS`) and the fields of the whole fitted pair set (:data:`PAIR_SET_FIELDS`)
    are left out; a per-cell field (:data:`CELL_FIELDS`) is compared on the entries of ``cell`` only; floats
    are equal within a relative 1e-9 (round-off). A field the older header lacks shows as :data:`UNRECORDED`;
    a list of CPU features (:data:`FEATURE_FIELDS`) shows the features only one side has (``–``: none).

    Examples
    --------
    >>> setting_differences({"llama_cpp_cpu": "AVX2 AVX512", "started_at": "x", "temperature": {"en/A": 0.1, "en/B": 0.2}},
    ...                     {"llama_cpp_cpu": "AVX2", "started_at": "y", "temperature": {"en/A": 0.1}}, "en/A")
    ('llama_cpp_cpu: AVX512 → –',)
    >>> setting_differences({}, {"tefcore_version": "0.2.0"}, "en/A")
    ('tefcore_version: unrecorded → 0.2.0',)
    """
    def kept(flat: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for name, value in flat.items():
            head = name.split(".", 1)[0]
            if head in TIME_FIELDS or head in PAIR_SET_FIELDS:
                continue
            if head in CELL_FIELDS and not name.startswith(f"{head}.{cell}"):
                continue
            out[name] = value
        return out

    def shown(name: str, a: Any, b: Any) -> str:
        if name in FEATURE_FIELDS and isinstance(a, str) and isinstance(b, str):
            only_a = [f for f in a.split() if f not in b.split()]
            only_b = [f for f in b.split() if f not in a.split()]
            return f"{name}: {' '.join(only_a) or '–'} → {' '.join(only_b) or '–'}"
        return f"{name}: {_short(a)} → {_short(b)}"

    old, new = kept(_flatten(recorded)), kept(_flatten(now))
    return tuple(shown(name, old.get(name), new.get(name))
                 for name in sorted(old.keys() | new.keys()) if not _same(old.get(name), new.get(name)))


def causes(fields: Sequence[str]) -> list[str]:
    """The differences of :func:`setting_differences` that can change a judge's numbers: all but the library's
    version (which must not) and fields the older header did not record (nothing to compare).

    Examples
    --------
    >>> causes(("tefcore_version: 0.1.0 → 0.2.0", "llama_cpp_cpu: unrecorded → AVX2", "system_prompt: none → default"))
    ['system_prompt: none → default']
    """
    return [f for f in fields if not f.startswith("tefcore_version:") and f": {UNRECORDED} → " not in f]


def mass_figure(answers: pd.DataFrame, names: Mapping[str, str]) -> Any:
    """Overlaid histograms of the C+S mass of every answer (rows ``model, lang, mass``), one per judge and language."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for (model, lang), g in answers.groupby(["model", "lang"], sort=False):
        fig.add_histogram(x=g["mass"], name=f"{names.get(model, model)} · {LANG_LABELS.get(lang, lang)}",
                          xbins={"start": 0, "end": 1.0001, "size": 0.02}, opacity=0.7)
    fig.update_layout(title="C+S mass of every answer (Direct and sentences)", barmode="overlay",
                      xaxis_title="P(C) + P(S)", yaxis_title="answers", height=380,
                      legend={"orientation": "h", "y": -0.25, "x": 0.5, "xanchor": "center"})
    return fig


def probability_figure(sentences: pd.DataFrame, names: Mapping[str, str], langs: Sequence[str]) -> Any:
    """Per judge (a row of panels, titled above), histograms of every sentence's P(change) (left) and TEF weight
    (right), one colour per language (legend); rows ``model, lang, p, weight``."""
    from plotly.subplots import make_subplots

    judges = list(pd.unique(sentences["model"]))
    fig = make_subplots(rows=max(1, len(judges)), cols=2, vertical_spacing=0.1, horizontal_spacing=0.08,
                        subplot_titles=[f"{names.get(m, m)}: {what}" for m in judges
                                        for what in ("sentence P(change)", "TEF weight w(p)")])
    colors = {"en": "#4e79a7", "zh": "#e15759"}
    for row, model in enumerate(judges, start=1):
        for lang in langs:
            g = sentences[(sentences["model"] == model) & (sentences["lang"] == lang)]
            for col, column in ((1, "p"), (2, "weight")):
                fig.add_histogram(x=g[column], name=LANG_LABELS.get(lang, lang), legendgroup=lang,
                                  showlegend=row == 1 and col == 1, marker_color=colors.get(lang), opacity=0.6,
                                  histnorm="percent", xbins={"start": 0, "end": 1.0001, "size": 0.025},
                                  row=row, col=col)
    fig.update_yaxes(title_text="% of sentences", col=1)
    fig.update_xaxes(range=[0, 1])
    fig.update_annotations(font_size=12)
    fig.update_layout(barmode="overlay", height=270 * max(1, len(judges)) + 130,
                      title="What the judges said about each sentence",
                      legend={"orientation": "h", "y": -0.08, "x": 0.5, "xanchor": "center"})
    return fig
