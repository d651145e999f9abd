"""Chapter 10 (the teaching lab): the plumbing of its explorable figure.

The figure of exercise 3 lets the reader drag two probabilities and read, for each rule, how many hedging
sentences turn a post decided by one decisive sentence. The browser computes it: this module writes each
rule's per-sentence contribution (chapter 1) in the expression language of Vega, and lays out the chart.
The lab's exercises stay in the chapter and their checks are :mod:`tefbook.chapters.ch10_checks`, which the
student edition writes out so that it runs where only ``tefcore`` is installed; this figure is drawn on the
book's page only, and so is exercise 7's shading of real sentences by the judge's
probabilities (the student edition prints the same numbers as a table).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tefcore.explain import SIDE_COLOURS as EVIDENCE_COLOURS
from tefcore.fusion import CLASSES, CLIP, EPS, TIE_RTOL

__all__ = ["RULE_NAMES", "exchange_figure", "probability_shading", "shade_by_probability", "vega_contributions",
           "vega_first_flip"]

#: The rules of the figure, in its rows' order.
RULE_NAMES: tuple[str, ...] = ("Majority Vote", "Soft Vote", "log-odds sum", "TEF")
#: The chart's menu saves images and opens nothing online.
EMBED: dict[str, Any] = {"renderer": "svg",
                         "actions": {"export": True, "source": False, "compiled": False, "editor": False}}
#: Colours of the two sides a post can be decided.
SIDE_COLOURS: tuple[str, str] = ("#1b9e77", "#d95f02")


def vega_contributions(p: str) -> dict[str, str]:
    """What one sentence at ``p`` adds to each rule's sum (chapter 1), as Vega expressions.

    Parameters
    ----------
    p : str
        A Vega expression for the sentence's probability of change (a signal name, ``datum.p``, ...).

    Returns
    -------
    dict
        Rule name (:data:`RULE_NAMES`) -> expression; ``0 log 0`` is taken as 0, and the log-odds are
        clipped at ``±M`` after clamping ``p`` to ``[ε, 1 - ε]``, as ``tefcore.fusion`` does.

    Examples
    --------
    >>> exprs = vega_contributions("pd")
    >>> list(exprs) == list(RULE_NAMES)
    True
    >>> exprs["Majority Vote"], exprs["Soft Vote"]
    ('((pd) >= 0.5 ? 1 : -1)', '((pd) - 0.5)')
    """
    entropy = (f"-(({p}) > 0 ? ({p}) * log({p}) : 0)"
               f" - (({p}) < 1 ? (1 - ({p})) * log(1 - ({p})) : 0)")
    q = f"clamp({p}, {EPS}, {1 - EPS})"
    ell = f"clamp(log({q}) - log(1 - {q}), {-CLIP}, {CLIP})"
    return dict(zip(RULE_NAMES, (f"(({p}) >= 0.5 ? 1 : -1)", f"(({p}) - 0.5)", ell,
                                 f"(1 - ({entropy}) / LN2) * {ell}")))


def vega_first_flip(rule: str, decisive: str, hedging: str) -> str:
    """The first ``n`` at which ``n`` hedging sentences after the decisive one turn the post, in Vega.

    A tie of Majority Vote goes to the first vote cast (the decisive sentence's), so its posts turn at
    ``n = 2``; the other rules turn one past their exchange rate, which is itself a tie (the tolerance is
    ``tefcore.fusion``'s). Hedging sentences that do not point the other way never turn it (``1 / 0``).

    Examples
    --------
    >>> vega_first_flip("Majority Vote", "1", "-1")
    '(-1) < 0 ? 2 : 1 / 0'
    >>> vega_first_flip("TEF", "a", "b").startswith("(b) < 0 ? floor((a) / -(b) * (1 + 2 * ")
    True
    """
    if rule == "Majority Vote":
        return f"({hedging}) < 0 ? 2 : 1 / 0"
    rate = f"({decisive}) / -({hedging})"
    return f"({hedging}) < 0 ? floor({rate} * (1 + 2 * {TIE_RTOL})) + 1 : 1 / 0"


def _pick(exprs: dict[str, str]) -> str:
    """The expression of the row's rule (``datum.rule``)."""
    return "{" + ", ".join(f"'{r}': {x}" for r, x in exprs.items()) + "}[datum.rule]"


def exchange_figure(decisive0: float, hedging0: float, n_max: int = 30) -> Any:
    """Sliders for the decisive and the hedging sentences' probabilities; each rule's decision for
    ``n = 0 .. n_max`` hedging sentences, its exchange rate and its first flip, all computed by Vega.

    Examples
    --------
    >>> spec = exchange_figure(0.9, 0.4).to_dict()
    >>> sorted(p["name"] for p in spec["params"])
    ['pd', 'ph']
    """
    import altair as alt

    sliders = [alt.param(name=name, value=v, bind=alt.binding_range(min=lo, max=hi, step=0.005, name=label))
               for name, v, lo, hi, label in (("pd", decisive0, 0.5, 1, "decisive sentence: p "),
                                             ("ph", hedging0, 0, 0.5, "each hedging sentence: p "))]
    c_d, c_h = vega_contributions("pd"), vega_contributions("ph")
    first = _pick({r: vega_first_flip(r, c_d[r], c_h[r]) for r in RULE_NAMES})
    rate = _pick({r: f"({c_h[r]}) < 0 ? ({c_d[r]}) / -({c_h[r]}) : 1 / 0" for r in RULE_NAMES})
    y = alt.Y("rule:N", sort=list(RULE_NAMES), title=None, axis=alt.Axis(labelFontSize=13, labelFontWeight="bold"))
    sides = alt.Scale(domain=list(CLASSES), range=list(SIDE_COLOURS))
    strip = alt.Chart(alt.Data(values=[{"rule": r, "n": n} for r in RULE_NAMES for n in range(n_max + 1)]))
    strip = strip.transform_calculate(first=first).transform_calculate(
        decision="datum.n < datum.first ? 'change' : 'stability'").mark_rect(stroke="white").encode(
        x=alt.X("n:O", title="n, the hedging sentences after the decisive one"), y=y,
        color=alt.Color("decision:N", title="the post is decided", scale=sides, legend=alt.Legend(orient="top")))
    words = alt.Chart(alt.Data(values=[{"rule": r} for r in RULE_NAMES])).transform_calculate(
        first=first, rate=rate).transform_calculate(
        text="isFinite(datum.rate) ? 'one decisive sentence is worth '"
             " + format(datum.rate, ',.1f') + ' hedging ones; the post turns at n = '"
             " + format(datum.first, ',d') : 'the hedging sentences never turn the post'")
    words = words.mark_text(align="left", fontSize=13).encode(y=y, x=alt.value(4), text="text:N")
    size = {"width": 520, "height": 26 * len(RULE_NAMES)}
    chart = alt.vconcat(strip.properties(**size), words.properties(**size), spacing=15)
    return chart.add_params(*sliders).configure_view(stroke=None).properties(usermeta={"embedOptions": EMBED})


def probability_shading(p: Any) -> list[str]:
    """The CSS background of each sentence: the colour of the side the judge leans to (as the evidence view
    of :mod:`tefcore.explain` colours it), its strength :math:`2|p - 1/2|`; no weight and no decision.

    Parameters
    ----------
    p : array_like
        Each sentence's probability of the first side (change).

    Examples
    --------
    >>> probability_shading([0.5, 0.9, 0.25])
    ['rgba(217,95,2,0.00)', 'rgba(217,95,2,0.80)', 'rgba(27,120,178,0.50)']
    """
    p = np.asarray(p, dtype=float)
    side = np.where(p >= 0.5, 0, 1)
    strength = 2.0 * np.abs(p - 0.5)
    return [f"rgba({','.join(map(str, EVIDENCE_COLOURS[k]))},{a:.2f})" for k, a in zip(side, strength)]


def shade_by_probability(views: Mapping[tuple[str, str], pd.DataFrame]) -> Any:
    """Each post's sentences shaded by the judge's probabilities (:func:`probability_shading`), with the
    probabilities beside them and no rule's decision, as HTML for the page.

    Parameters
    ----------
    views : mapping
        ``(post id, dimension) ->`` the post's evidence view (:func:`tefcore.explain.explain`).

    Examples
    --------
    >>> from tefcore.explain import explain
    >>> page = shade_by_probability({("p1", "Culture"): explain([0.2, 0.6], ["Keep it.", "Change it?"])})
    >>> "Keep it." in page.data and "tef" not in page.data
    True
    """
    from IPython.display import HTML

    e = html.escape
    keys = "".join(f'<span style="background:rgba({",".join(map(str, EVIDENCE_COLOURS[k]))},0.5);padding:0 .4em;'
                   f'border-radius:3px;margin-right:.5em">leans {e(side)}</span>' for k, side in enumerate(CLASSES))
    blocks = [f"<p>{keys}</p>"]
    for (post, dimension), view in views.items():
        p = view["p_change"].to_numpy()
        rows = "".join(
            f'<div style="background:{colour};padding:.2em .4em;margin:.15em 0;border-radius:3px">'
            f'{e(str(text))} <small style="color:#444">p(change) = {x:.3f}</small></div>'
            for text, x, colour in zip(view["text"], p, probability_shading(p)))
        blocks.append(f"<p><strong>{e(post)} · {e(dimension)}</strong></p>{rows}")
    return HTML("".join(blocks))
