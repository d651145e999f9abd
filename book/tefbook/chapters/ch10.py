"""Chapter 10 (the teaching lab): its answer key, and the plumbing of its explorable figure.

The lab's exercises stay in the chapter and their checks are :mod:`tefbook.chapters.ch10_checks`, which the
student edition writes out so that it runs where only ``tefcore`` is installed. The checks hold no answer:
they compare hashes with the answer key, which :func:`answer_key` computes here from the lab's own names
(its parameters, exercise 3's probabilities, exercise 7's posts) and seals. The page computes it as the lab
runs; the student edition holds it sealed, computed when the edition is written
(:func:`tefbook.launch.student_edition`).

The figure of exercise 3 lets the reader drag two probabilities and read, for each rule, how many hedging
sentences turn a post decided by one decisive sentence. The browser computes it: this module writes each
rule's per-sentence contribution (chapter 1) in the expression language of Vega, and lays out the chart.
The figure is drawn on the book's page only, and so is exercise 7's shading of real sentences by the
judge's probabilities (the student edition prints the same numbers as a table).
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from tefbook.chapters import ch10_checks as checks
from tefcore import information
from tefcore import simulate as sim
from tefcore.explain import SIDE_COLOURS as EVIDENCE_COLOURS
from tefcore.fusion import CLASSES, CLIP, EPS, TIE_RTOL, clipped_log_odds, entropy_weight, fuse_many

__all__ = ["RULE_NAMES", "accepted", "answer_key", "exchange_figure", "probability_shading", "seal",
           "shade_by_probability", "vega_contributions", "vega_first_flip"]

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


# --------------------------------------------------------------------------------------------------
# the answer key
# --------------------------------------------------------------------------------------------------
def accepted(expect: checks.Expect, truth: Any) -> list[str]:
    """The written answers (:func:`~tefbook.chapters.ch10_checks.written`) the key accepts for ``truth``.

    A number is compared at the decimals its exercise states, and a right answer can sit on either side
    of a rounding boundary: 0.4449 and 0.4451 are both right for 0.445 "to two decimals", and a student who
    computes 0.44499 by another route rounds to 0.44. So the key accepts the value rounded, and the values
    a little under half a unit below and above it rounded: every written value less than one unit of the
    last decimal from the truth (one, or two when the truth lies between two of them), never more. Other
    kinds are exact; a set of rules is one statement per rule.

    Examples
    --------
    >>> two = checks.Expect("number", "", 2)
    >>> accepted(two, 0.445), accepted(two, 0.25), accepted(two, 0.4449999)
    (['0.44', '0.45'], ['0.25'], ['0.44', '0.45'])
    >>> accepted(checks.Expect("whole", ""), 7), accepted(checks.Expect("rules", ""), {"tef"})[:2]
    (['7'], ['majority_vote out', 'soft_vote out'])
    """
    if expect.kind == "number":
        half = 0.499 * expect.step
        texts = [checks.written(expect, truth + d) for d in (-half, 0.0, half)]
    elif expect.kind == "rules":
        texts = checks.written(expect, set(truth))
        texts = texts if isinstance(texts, list) else [texts]
    else:
        texts = [checks.written(expect, truth)]
    off = [t for t in texts if isinstance(t, checks.Off)]
    if off:
        raise ValueError(f"the lab's answer {truth!r} is no answer its check accepts: {off[0].hint}")
    return sorted(set(texts))


def seal(exercise: str, fingerprint: str, said: str, expects: Mapping[str, checks.Expect],
         truths: Mapping[str, Any]) -> dict[str, Any]:
    """An exercise's key: for each answer the hashes of what :func:`accepted` accepts, salted with what its
    answers depend on (``fingerprint``), and what they were computed for in words (``said``).

    Examples
    --------
    >>> key = seal("exercise 3", "f", "strong = 0.9", {"tef": checks.Expect("whole", "")}, {"tef": 100})
    >>> key["for"], key["answers"]["tef"] == [checks.digest(checks.salt_of("exercise 3", "f"), "tef", "100")]
    ('strong = 0.9', True)
    """
    salt = checks.salt_of(exercise, fingerprint)
    answers = {}
    for name, truth in truths.items():
        texts = accepted(expects[name], truth)
        if expects[name].kind == "number" and len(texts) == 1:
            texts.append("·")  # a hash no answer has: whether a truth falls on a rounded value stays unsaid
        answers[name] = sorted(checks.digest(salt, name, text) for text in texts)
    return {"for": said, "salt": salt, "answers": answers}


def _key_1(names: Mapping[str, Any]) -> dict[str, Any]:
    p = checks.P_GIVEN
    values = {"H": information.binary_entropy(p), "w": entropy_weight(p), "ℓ": clipped_log_odds(p)}
    values["w·ℓ"] = values["w"] * values["ℓ"]
    truths = {f"{q}({x})": float(v) for q, column in values.items() for x, v in zip(p, column)}
    return seal("exercise 1", checks.fingerprint_1(), checks.fingerprint_1(), checks.expect_1(), truths)


def _key_2(names: Mapping[str, Any]) -> dict[str, Any]:
    w = entropy_weight(np.linspace(0, 1, 1001))
    truths = {"min w": w.min(), "max w": w.max(), "max |w(p) - w(1 - p)|": np.abs(w - w[::-1]).max(),
              "w increases on [1/2, 1]": bool(np.all(np.diff(w[500:]) > 0)), "c": 2 / np.log(2)}
    return seal("exercise 2", checks.fingerprint_2(), checks.fingerprint_2(), checks.expect_2(), truths)


def first_turn(strong: float, weak: float, rule: str, most: int = 4096) -> int:
    """The smallest ``n`` for which ``strong`` followed by ``n`` sentences at ``weak`` is decided stability.

    Raises
    ------
    ValueError
        When no ``n`` up to ``most`` turns the post.

    Examples
    --------
    >>> first_turn(0.9, 0.4, "majority_vote"), first_turn(0.9, 0.4, "soft_vote")
    (2, 5)
    """
    size = 64
    while size <= most:
        n = np.arange(size + 1)
        p = np.concatenate([np.r_[strong, np.full(k, weak)] for k in n])
        turned = np.flatnonzero(fuse_many(p, np.repeat(n, n + 1), rule=rule).prediction == "stability")
        if turned.size:
            return int(turned[0])
        size *= 4
    raise ValueError(f"exercise 3: no n up to {most:,} sentences at {weak} turns {rule}'s post")


def _key_3(names: Mapping[str, Any]) -> dict[str, Any]:
    fingerprint = checks.fingerprint_3(names["strong"], names["weak"])
    truths = {r: first_turn(names["strong"], names["weak"], r) for r in checks.RULES}
    return seal("exercise 3", fingerprint, fingerprint, checks.expect_3(), truths)


def _key_4(names: Mapping[str, Any]) -> dict[str, Any]:
    corpus = sim.simulate_documents(names["n_posts"], n_decisive=names["lab_decisive"], rng=names["seed"],
                                    n_uncertain=names["lab_uncertain"], logit_bias=names["lab_lean"])
    pred = {r: fuse_many(corpus.p, corpus.doc_index, rule=r).prediction for r in ("majority_vote", "tef")}
    differ = pred["majority_vote"] != pred["tef"]
    truths = {"disagreements": int(differ.sum())} | {r: float(np.mean(v[differ] == corpus.y[differ]))
                                                     for r, v in pred.items()}
    said = (f"the posts simulated with seed = {names['seed']}, n_posts = {names['n_posts']:,}, lab_decisive = "
            f"{names['lab_decisive']}, lab_uncertain = {names['lab_uncertain']} and lab_lean = {names['lab_lean']:g}")
    return seal("exercise 4", checks.fingerprint_4(corpus), said, checks.expect_4(len(corpus.y)), truths)


def _key_5(names: Mapping[str, Any]) -> dict[str, Any]:
    sweep, n, seed = names["sweep"], names["n_posts"], names["seed"]
    values: dict[str, list[float]] = {r: [] for r in checks.RULES}
    for t in sweep:
        c = sim.simulate_documents(n, n_decisive=1, n_uncertain=4, temperature=t, rng=seed)
        for r in checks.RULES:
            values[r].append(float(100 * np.mean(fuse_many(c.p, c.doc_index, rule=r).prediction == c.y)))
    truths: dict[str, Any] = {f"{r} at T = {t:g}": v for r in checks.RULES for t, v in zip(sweep, values[r])}
    truths["unchanged"] = {r for r, v in values.items() if len(set(v)) == 1}
    fingerprint = checks.fingerprint_5(sweep, n, seed)
    return seal("exercise 5", fingerprint, fingerprint, checks.expect_5(sweep), truths)


def _key_6(names: Mapping[str, Any]) -> dict[str, Any]:
    n, seed = names["n_posts"], names["seed"]
    exact = sim.gaussian_information(1.0)
    c = sim.simulate_documents(n, n_decisive=1, n_uncertain=0, strength=1.0, rng=seed)
    truths = {"exact soft": exact.soft, "exact hard": exact.hard,
              "plug-in hard": information.mutual_information(c.y, c.p >= 0.5, bins=None)}
    truths |= {f"plug-in soft ({b} bins)": information.mutual_information(c.y, c.p, bins=b) for b in (4, 16, 64)}
    fingerprint = checks.fingerprint_6(n, seed)
    return seal("exercise 6", fingerprint, fingerprint, checks.expect_6(), truths)


def _key_7(names: Mapping[str, Any]) -> dict[str, Any]:
    judged = {post: p for post, (_, p) in names["JUDGED"].items()}
    truths = {}
    for (post, _), p in judged.items():
        one_post = np.zeros(len(p), dtype=int)
        truths |= {f"{post}, {r}": str(fuse_many(np.asarray(p, dtype=float), one_post, rule=r).prediction[0])
                   for r in checks.READ_RULES}
    return seal("exercise 7", checks.fingerprint_7(judged), "the probabilities of JUDGED as the lab gives them",
                checks.expect_7([post for post, _ in judged]), truths)


_KEYS = (_key_1, _key_2, _key_3, _key_4, _key_5, _key_6, _key_7)


def answer_key(names: Mapping[str, Any]) -> dict[str, Callable[[], dict[str, Any]]]:
    """The lab's answer key: per exercise, a function that computes its right answers from ``names`` and
    seals them (:func:`seal`), for :data:`~tefbook.chapters.ch10_checks.ANSWER_KEY`.

    ``names`` are the lab's variables: on the page its namespace, read when an exercise is first checked
    (so exercise 3's probabilities and exercise 7's posts are there by then); for the student edition the
    notebook's literal values. A function, not a value, so that the page computes a key only when its
    exercise is checked.

    Examples
    --------
    >>> key = answer_key({"strong": 0.9, "weak": 0.4})
    >>> sorted(key)[:2], key["exercise 3"]()["for"]
    (['exercise 1', 'exercise 2'], 'strong = 0.9, weak = 0.4')
    """
    return {f"exercise {k}": functools.partial(build, names) for k, build in enumerate(_KEYS, start=1)}
