r"""What the theory chapters (1, the derivation; 2, the propositions) compute
besides their lesson: tables of checks, the simulation studies laid out, real judges placed on the
simulated map, and the figures.

The chapters show the lines that *are* the lesson (a weight, a sum of log-odds, a call of
:func:`tefcore.fusion.fuse_many` or :func:`fusion_study`); this module holds the rest,
so that each figure or table is one call. The definitions are those of :mod:`tefcore.fusion`,
:mod:`tefcore.information` and :mod:`tefcore.simulate`; the checks that the claims ledger also runs
use the ledger's own posts (:mod:`tefpaper.ledger`), so a number printed by a chapter and by
the ledger is one number.

Chapter 1
    :func:`curve_figure`, :func:`contribution_figure` (the first hedging count that flips each rule is
    :func:`tefpaper.posts.first_flips`, the claims ledger's); for :math:`K > 2`: :data:`K3_EXAMPLE`,
    :func:`bayes_log_posterior`, :func:`k_class_scores`, :func:`bayes_disagreement`,
    :func:`k3_disagreement`; the explorable post's rules in Vega's expression language:
    :func:`vega_weight`, :func:`vega_log_odds`, :func:`vega_rules`.
Chapter 2
    :class:`Checks`, :func:`sentence_accuracy`, :func:`reliability_figure`, :func:`information_table`,
    :func:`information_figure`, :func:`prop2_table`, :func:`stress_table`, :func:`stress_figure`,
    :data:`STUDY_RULES`, :func:`decisive_counts`, :func:`fusion_study`, :func:`gain_maps`, :func:`study_summary`, :func:`gain_map_figure`,
    :func:`judge_map`, :func:`weight_histogram_figure`, :func:`nearest_cells`, :func:`sweep_table`,
    :func:`sweep_figure`.
The teaching lab (chapter 10) needs nothing of this module: it runs where only ``tefcore`` is
installed.

"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import logsumexp
from scipy.stats import norm

from tefcore import information
from tefcore import simulate as sim
from tefbook.companion.labels import judge_label
from tefcore.evaluate import flatten_sentences
from tefcore.fusion import CLASSES, clipped_log_odds, entropy_weight, fuse_many
from tefcore.fusion import CLIP, EPS, RULE_LABELS, RULE_NAMES, TIE_RTOL
from tefpaper.posts import gaussian_shift_posts, random_posts

__all__ = [
    "CURVE_LABELS",
    "CURVE_RULES",
    "K3_EXAMPLE",
    "MAP_POSITION",
    "MAP_PREMISES",
    "STUDY_RULES",
    "Checks",
    "bayes_disagreement",
    "bayes_log_posterior",
    "contribution_figure",
    "curve_figure",
    "decisive_counts",
    "decisive_threshold",
    "detector_numbers",
    "fusion_study",
    "gain_map_figure",
    "gain_maps",
    "information_figure",
    "information_numbers",
    "information_table",
    "judge_map",
    "judge_names",
    "judge_sources",
    "k3_disagreement",
    "k_class_scores",
    "lean_numbers",
    "nearest_cells",
    "premises_table",
    "prop2_table",
    "reliability_figure",
    "sentence_accuracy",
    "stress_figure",
    "stress_numbers",
    "stress_table",
    "study_summary",
    "sweep_figure",
    "sweep_table",
    "weight_histogram_figure",
]

FloatArray = npt.NDArray[np.float64]

CURVE_RULES: tuple[str, ...] = information.CONTRIBUTION_RULES
"""The rules drawn on one scale in chapter 1: MV, SV, the log-odds sum and TEF."""

CURVE_LABELS: dict[str, str] = RULE_LABELS | {"tef_without_entropy": "log-odds sum (w/o Entropy)"}
"""Chapter 1's names of the rules (the log-odds sum is the w/o Entropy ablation)."""

_COLORS: dict[str, str] = {"majority_vote": "#1b9e77", "soft_vote": "#d95f02",
                           "tef_without_entropy": "#7570b3", "tef": "#e7298a"}
_PALETTE: tuple[str, ...] = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02")
_LAYOUT: dict[str, Any] = {"template": "plotly_white", "legend": {"orientation": "h", "y": -0.22}}


def _go() -> Any:
    """plotly.graph_objects, imported when a figure is drawn (the tables need no plotly)."""
    import plotly.graph_objects as go

    return go


def _subplots(**kwargs: Any) -> Any:
    from plotly.subplots import make_subplots

    return make_subplots(**kwargs)


# --------------------------------------------------------------------------------------------------
# chapter 1: one sentence's weight and evidence, the rules on one scale
# --------------------------------------------------------------------------------------------------
def curve_figure(p: npt.ArrayLike) -> Any:
    r"""TEF's weight :math:`w(p)`, and the log-odds :math:`\ell(p)` beside the tempered :math:`w(p)\ell(p)`.

    Parameters
    ----------
    p : array_like of float in (0, 1)
        The grid of probabilities drawn.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    go, grid = _go(), np.asarray(p, dtype=np.float64)
    w, ell = entropy_weight(grid), clipped_log_odds(grid)
    fig = _subplots(rows=1, cols=2, subplot_titles=("weight w(p)", "log-odds l(p) and tempered w(p)·l(p)"))
    fig.add_trace(go.Scatter(x=grid, y=w, name="w(p)", line={"color": "#1b9e77", "width": 3}), 1, 1)
    fig.add_trace(go.Scatter(x=grid, y=ell, name="l(p)", line={"color": "#7570b3", "width": 2, "dash": "dash"}),
                  1, 2)
    fig.add_trace(go.Scatter(x=grid, y=w * ell, name="w(p)·l(p)", line={"color": "#e7298a", "width": 3}), 1, 2)
    fig.update_xaxes(title_text="p = P(change | sentence)", range=[0, 1])
    fig.update_yaxes(title_text="w", range=[0, 1.02], row=1, col=1)
    fig.update_yaxes(title_text="evidence", range=[-8, 8], row=1, col=2)
    fig.update_layout(height=420, hovermode="x unified", title="TEF's weight and a sentence's tempered evidence",
                      **_LAYOUT)
    return fig


def contribution_figure(p: npt.ArrayLike, reference: float) -> Any:
    r"""Each rule's contribution :math:`\varphi(p)` of one sentence, scaled so that a sentence at
    ``reference`` contributes one (:func:`tefcore.information.contributions`): over the probability
    ``p`` (left) and over the log-odds out to beyond the clip at :math:`\pm M` (right), where the curves
    part most. Nothing is cut off.

    Parameters
    ----------
    p : array_like of float in (0, 1)
        The grid of probabilities of the left panel.
    reference : float
        The probability whose contribution is the unit of every rule.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    from scipy.special import expit

    from tefcore.fusion import CLIP

    go, unit = _go(), information.contributions([reference]).iloc[0]
    grid, ell = np.asarray(p, dtype=np.float64), np.linspace(-1.3 * CLIP, 1.3 * CLIP, 521)
    fig = _subplots(rows=1, cols=2, horizontal_spacing=0.1,
                    subplot_titles=("over the probability p", "over the log-odds ℓ(p), past the clip at ±M"))
    for col, (x, q) in enumerate(((grid, grid), (ell, expit(ell))), start=1):
        curves = information.contributions(q)
        for rule in CURVE_RULES:
            fig.add_trace(go.Scatter(x=x, y=curves[rule] / unit[rule], name=CURVE_LABELS[rule], legendgroup=rule,
                                     showlegend=col == 1,
                                     line={"color": _COLORS[rule], "width": 3 if rule == "tef" else 2}), 1, col)
    fig.update_xaxes(title_text="p = P(change | sentence)", range=[0, 1], row=1, col=1)
    fig.update_xaxes(title_text="log-odds ℓ(p)", row=1, col=2)
    fig.update_yaxes(title_text=f"relative to one sentence at p = {reference:g}", row=1, col=1)
    fig.update_layout(height=440, hovermode="x unified",
                      title=f"Contribution of one sentence, relative to a sentence at p = {reference:g}", **_LAYOUT)
    return fig


# --------------------------------------------------------------------------------------------------
# chapter 1's explorable post: the rules in the expression language of Vega, which the browser evaluates
# --------------------------------------------------------------------------------------------------
def vega_weight(p: str) -> str:
    """w(p) = 1 - H(p)/log 2 as a Vega expression in ``p`` (0 log 0 = 0).

    Examples
    --------
    >>> vega_weight("x")
    '1 + (((x) > 0 ? (x) * log(x) : 0) + ((x) < 1 ? (1 - (x)) * log(1 - (x)) : 0)) / LN2'
    """
    return (f"1 + ((({p}) > 0 ? ({p}) * log({p}) : 0)"
            f" + (({p}) < 1 ? (1 - ({p})) * log(1 - ({p})) : 0)) / LN2")


def vega_log_odds(p: str) -> str:
    """ℓ(p) as a Vega expression: ``p`` clipped to [ε, 1 − ε], ℓ clipped to [−M, M].

    Examples
    --------
    >>> vega_log_odds("x")
    'clamp(log(clamp(x, 1e-06, 0.999999)) - log(1 - clamp(x, 1e-06, 0.999999)), -10.0, 10.0)'
    """
    q = f"clamp({p}, {EPS}, {1 - EPS})"
    return f"clamp(log({q}) - log(1 - {q}), {-CLIP}, {CLIP})"


def vega_rules(p: list[str], n: str) -> dict[str, tuple[str, str]]:
    """Each rule's score and decision on the post ``p[0], ..., p[n - 1]``, as Vega expressions.

    Sums add sentence 1 and then the others, as numpy does; a sum within rounding of 0 is a tie, which goes
    to change, as in :mod:`tefcore.fusion`; a Majority Vote tie goes to the first vote cast (the reference
    release's rule).

    Examples
    --------
    >>> rules = vega_rules(["p1", "p2"], "n")
    >>> list(rules), rules["Soft Vote"][1]
    (['Majority Vote', 'Soft Vote', 'log-odds sum', 'TEF'], "(p1 + ((n >= 2 ? p2 : 0))) / n >= 0.5 ? 'change' : 'stability'")
    """
    def total(term: Any) -> str:  # sentence 1 plus the sum of the others, as numpy adds them
        rest = [f"({n} >= {i} ? {term(x)} : 0)" for i, x in enumerate(p[1:], start=2)]
        return f"({term(p[0])} + ({' + '.join(rest) or '0'}))"

    def sign(term: Any) -> tuple[str, str]:  # change when the sum is >= 0; a sum within rounding of 0 is a tie
        s, size = total(term), total(lambda x: f"abs({term(x)})")
        tie = f"abs({s}) <= {TIE_RTOL} * {size}"
        return s, f"{tie} || {s} >= 0 ? 'change' : 'stability'"

    votes = total(lambda x: f"(({x}) >= 0.5 ? 1 : 0)")  # votes for change
    first = f"({p[0]}) >= 0.5 ? 'change' : 'stability'"  # the first vote wins a tie
    mean = f"{total(lambda x: x)} / {n}"
    return {
        "Majority Vote": (votes, f"2 * {votes} > {n} ? 'change' : "
                                 f"2 * {votes} < {n} ? 'stability' : {first}"),
        "Soft Vote": (mean, f"{mean} >= 0.5 ? 'change' : 'stability'"),
        "log-odds sum": sign(vega_log_odds),
        "TEF": sign(lambda x: f"({vega_weight(x)}) * ({vega_log_odds(x)})"),
    }


# --------------------------------------------------------------------------------------------------
# chapter 1: more than two classes
# --------------------------------------------------------------------------------------------------
K3_EXAMPLE: FloatArray = np.array([[0.05, 0.15, 0.80], [0.55, 0.40, 0.05]])
"""A post of two sentences over three classes on which Eq. 3 and the Bayes rule pick different classes."""


def bayes_log_posterior(p: npt.ArrayLike, doc_index: npt.ArrayLike,
                        prior: npt.ArrayLike | None = None) -> FloatArray:
    r"""The Bayes log-posterior of every class of every post, from calibrated, conditionally
    independent sentence posteriors over :math:`K` classes.

    .. math::

        \log P(c \mid D_{1:N}) = \sum_{i=1}^{N} \log p_i^{(c)} - (N - 1)\log\pi_c - \log Z,

    with :math:`Z` the normaliser over classes (:func:`scipy.special.logsumexp`). For :math:`K = 2` the
    difference of the two classes is the additive identity of Proposition 2
    (:func:`tefcore.information.additive_log_odds`).

    Parameters
    ----------
    p : array_like, shape (n_sentences, K)
        Rows of sentence posteriors (each a distribution over the classes), strictly positive.
    doc_index : array_like of int, shape (n_sentences,)
        Post of each sentence, ``0 .. n_posts - 1``.
    prior : array_like, shape (K,), optional
        Class priors :math:`\pi` (default uniform).

    Returns
    -------
    ndarray, shape (n_posts, K)

    Examples
    --------
    >>> np.exp(bayes_log_posterior([[0.6, 0.3, 0.1], [0.5, 0.25, 0.25]], [0, 0])).round(3).tolist()
    [[0.75, 0.188, 0.063]]
    """
    arr = np.asarray(p, dtype=np.float64)
    idx = np.asarray(doc_index)
    if arr.ndim != 2 or arr.shape[0] != idx.shape[0] or arr.shape[0] == 0:
        raise ValueError(f"p must be (n_sentences, K) and aligned with doc_index, got {arr.shape} and {idx.shape}")
    if not (arr.min() > 0.0 and np.allclose(arr.sum(axis=1), 1.0)):
        raise ValueError("every row of p must be a distribution with positive entries")
    if idx.dtype.kind not in "iu" or idx.min() < 0:
        raise ValueError("doc_index must hold non-negative integers")
    k = arr.shape[1]
    pi = np.full(k, 1.0 / k) if prior is None else np.asarray(prior, dtype=np.float64)
    if pi.shape != (k,) or pi.min() <= 0 or not np.isclose(pi.sum(), 1.0):
        raise ValueError(f"prior must be a positive distribution over the {k} classes")
    n_posts = int(idx.max()) + 1
    summed = np.zeros((n_posts, k))
    np.add.at(summed, idx, np.log(arr))
    n = np.bincount(idx, minlength=n_posts)[:, None]
    log_post = summed - (n - 1) * np.log(pi)[None, :]
    return log_post - logsumexp(log_post, axis=1, keepdims=True)


def k_class_scores(p: npt.ArrayLike) -> pd.DataFrame:
    r"""One post over :math:`K` classes: the Bayes log-posterior beside Eq. 3's one-vs-rest scores.

    Columns: ``Bayes log P(c | D)`` (:func:`bayes_log_posterior`, equal priors), ``Eq. 3, w = 1``
    (:math:`\sum_i \ell(p_i^{(c)})`, the ``tef_without_entropy`` rule) and ``TEF`` (:math:`\sum_i w_i
    \ell(p_i^{(c)})`), one row per class; each column's largest value is the class it picks.

    Examples
    --------
    >>> k_class_scores(K3_EXAMPLE).idxmax().tolist()
    ['c2', 'c3', 'c3']
    """
    arr = np.asarray(p, dtype=np.float64)
    doc = np.zeros(arr.shape[0], dtype=np.int64)
    return pd.DataFrame({
        "Bayes log P(c | D)": bayes_log_posterior(arr, doc)[0],
        "Eq. 3, w = 1: Σ ℓ(p_i)": fuse_many(arr, doc, rule="tef_without_entropy").scores[0],
        "TEF: Σ w_i ℓ(p_i)": fuse_many(arr, doc, rule="tef").scores[0],
    }, index=[f"c{k + 1}" for k in range(arr.shape[1])]).rename_axis("class")


def bayes_disagreement(p: npt.ArrayLike, doc_index: npt.ArrayLike,
                       rules: Sequence[str] = ("tef_without_entropy", "tef")) -> pd.Series:
    """Share of posts (percent) on which a rule's argmax differs from the Bayes argmax (equal priors).

    Examples
    --------
    >>> bayes_disagreement(K3_EXAMPLE, [0, 0]).tolist()
    [100.0, 100.0]
    """
    arr, idx = np.asarray(p, dtype=np.float64), np.asarray(doc_index)
    bayes = bayes_log_posterior(arr, idx).argmax(axis=1)
    return pd.Series({r: 100.0 * float(np.mean(fuse_many(arr, idx, rule=r).index != bayes)) for r in rules},
                     name="differs from Bayes (%)")


def k3_disagreement(n_posts: int = 5000, seed: int = 3) -> tuple[pd.Series, int]:
    """:func:`bayes_disagreement` on the random three-class posts of the claims ledger's row ``k3-bayes``.

    Returns
    -------
    rates : pandas.Series
        Percent of posts per rule (``tef_without_entropy``, ``tef``).
    n_posts : int
        The number of posts.
    """
    p, doc = random_posts(3, n=n_posts, seed=seed)
    return bayes_disagreement(p, doc), n_posts


# --------------------------------------------------------------------------------------------------
# chapter 2: checks that print what they measured
# --------------------------------------------------------------------------------------------------
KINDS: dict[str, str] = {
    "simulator": "a fault of our simulator",
    "code": "a fault of our code, against a textbook result",
    "estimator": "a fault of our estimator, against the exact value",
    "construction": "nothing: it holds by construction",
}
"""What a check of :class:`Checks` can catch, by kind."""


@dataclass
class Checks:
    """The numerical checks of a chapter, each printed as it runs and kept for a summary table.

    Every check says what it could catch (its ``kind``, :data:`KINDS`): a fault of the simulator, of
    our code or estimator against a textbook result, or nothing (it holds by construction, and
    illustrates). A failing check raises :class:`AssertionError`, so the chapter and the book's build
    stop there. :meth:`measure` records a quantity the chapter learns, with no verdict: how far an
    identity breaks when its hypotheses do.

    Examples
    --------
    >>> checks = Checks()
    >>> checks.at_most("toy", 0.001, 0.01, kind="code")
    toy: measured 0.001; tolerance <= 0.01 -> PASS
    >>> checks.measure("gap without the prior term", 5.93)
    gap without the prior term: measured 5.93
    >>> checks.within("slope", 1.2, 1.0, 0.05, kind="simulator")
    Traceback (most recent call last):
    AssertionError: check failed: slope: measured 1.2, tolerance 1 ± 0.05
    >>> checks.table()["result"].tolist()
    ['PASS', 'measured', 'FAIL']
    """

    rows: list[dict[str, str]] = field(default_factory=list)

    def add(self, name: str, measured: float, tolerance: str, passed: bool, kind: str) -> None:
        """Record and print one check; raise when it fails."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        result = "PASS" if passed else "FAIL"
        self.rows.append({"check": name, "could catch": KINDS[kind], "measured": f"{measured:.4g}",
                          "tolerance": tolerance, "result": result})
        print(f"{name}: measured {measured:.4g}; tolerance {tolerance} -> {result}")
        if not passed:
            raise AssertionError(f"check failed: {name}: measured {measured:.4g}, tolerance {tolerance}")

    def measure(self, name: str, measured: float) -> None:
        """Record and print a measurement, which has no verdict."""
        self.rows.append({"check": name, "could catch": "— (a measurement)", "measured": f"{measured:.4g}",
                          "tolerance": "—", "result": "measured"})
        print(f"{name}: measured {measured:.4g}")

    def at_most(self, name: str, measured: float, bound: float, *, kind: str) -> None:
        """Check ``measured <= bound``."""
        self.add(name, measured, f"<= {bound:g}", measured <= bound, kind)

    def at_least(self, name: str, measured: float, bound: float, *, kind: str) -> None:
        """Check ``measured >= bound``."""
        self.add(name, measured, f">= {bound:g}", measured >= bound, kind)

    def within(self, name: str, measured: float, target: float, tol: float, *, kind: str) -> None:
        """Check ``|measured - target| <= tol``."""
        self.add(name, measured, f"{target:g} ± {tol:g}", abs(measured - target) <= tol, kind)

    def table(self) -> pd.DataFrame:
        """One row per check: what it could catch, measured, tolerance, result; indexed by its name."""
        return pd.DataFrame(self.rows, columns=["check", "could catch", "measured", "tolerance", "result"]
                            ).set_index("check")


def sentence_accuracy(strength: float | npt.ArrayLike) -> FloatArray | float:
    r"""How often one sentence of strength :math:`\mu` is right alone, equal priors: :math:`\Phi(\mu/2)`.

    Examples
    --------
    >>> round(sentence_accuracy(3.0), 3), round(sentence_accuracy(0.5), 3)
    (0.933, 0.599)
    """
    out = norm.cdf(np.asarray(strength, dtype=np.float64) / 2.0)
    return float(out) if np.ndim(out) == 0 else out


def detector_numbers(decisive_strength: float, uncertain_strength: float) -> dict[str, float]:
    """The numbers chapter 2's prose quotes about its detector: the two strengths, how often a sentence
    of each is right alone (percent, :func:`sentence_accuracy`) and the probability from which a
    sentence is decisive (:func:`decisive_threshold`).

    Examples
    --------
    >>> {k: round(v, 1) for k, v in detector_numbers(3.0, 0.5).items()}
    {'mu_dec': 3.0, 'mu_unc': 0.5, 'acc_dec': 93.3, 'acc_unc': 59.9, 'decisive_p': 0.9}
    """
    return {"mu_dec": float(decisive_strength), "mu_unc": float(uncertain_strength),
            "acc_dec": 100 * float(sentence_accuracy(decisive_strength)),
            "acc_unc": 100 * float(sentence_accuracy(uncertain_strength)),
            "decisive_p": decisive_threshold(0.5)}


def reliability_figure(reliability: pd.DataFrame) -> Any:
    """The reliability diagram of :func:`tefcore.metrics.reliability_table` with 2-standard-error bars."""
    go = _go()
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                             line={"color": "grey", "dash": "dash"}))
    fig.add_trace(go.Scatter(
        x=reliability["mean_predicted"], y=reliability["observed"], mode="markers+lines", name="simulated sentences",
        marker={"size": 9, "color": "#e7298a"}, error_y={"type": "data", "array": 2 * reliability["stderr"]},
        customdata=reliability["count"],
        hovertemplate="predicted %{x:.3f}<br>observed %{y:.3f}<br>%{customdata} sentences"))
    fig.update_layout(height=420, title="Reliability of the simulated sentence posteriors",
                      xaxis_title="reported P(change)", yaxis_title="share of change posts", **_LAYOUT)
    return fig


def information_table(strengths: Sequence[float], n_sentences: int, bins: int,
                      rng: np.random.Generator | int | None) -> pd.DataFrame:
    r"""Exact and plug-in :math:`I(Y; p_i)` and :math:`I(Y; \hat y_i)` (nats) of single sentences.

    Exact values from :func:`tefcore.simulate.gaussian_information`; plug-in estimates from
    ``n_sentences`` simulated sentences per strength (:func:`tefcore.information.mutual_information`,
    ``bins`` quantile bins with :math:`1/2` an edge for :math:`p`).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``strength``: ``I(Y;p) exact``, ``I(Y;p) plug-in``, ``I(Y;ŷ) exact``,
        ``I(Y;ŷ) plug-in``, ``share lost by ŷ`` (of the exact :math:`I(Y; p)`).
    """
    exact = sim.gaussian_information(np.asarray(strengths, dtype=np.float64))
    rows = []
    for mu, soft, hard in zip(strengths, exact.soft, exact.hard):
        c = sim.simulate_documents(n_sentences, n_decisive=1, n_uncertain=0, strength=float(mu), rng=rng)
        rows.append({"strength": mu, "I(Y;p) exact": float(soft),
                     "I(Y;p) plug-in": information.mutual_information(c.y, c.p, bins=bins),
                     "I(Y;ŷ) exact": float(hard),
                     "I(Y;ŷ) plug-in": information.mutual_information(c.y, c.p >= 0.5, bins=None)})
    info = pd.DataFrame(rows).set_index("strength")
    info["share lost by ŷ"] = 1 - info["I(Y;ŷ) exact"] / info["I(Y;p) exact"]
    return info


def information_numbers(info: pd.DataFrame) -> dict[str, float]:
    """The share of information the hard label loses (percent) at the weakest and the strongest strength
    of :func:`information_table`, with the two strengths."""
    lost = info["share lost by ŷ"]
    return {"lost_weak": 100 * float(lost.iloc[0]), "mu_weak": float(lost.index[0]),
            "lost_strong": 100 * float(lost.iloc[-1]), "mu_strong": float(lost.index[-1])}


def information_figure(info: pd.DataFrame, mu_max: float = 8.0) -> Any:
    """Exact information curves with the plug-in estimates of :func:`information_table`, and the share
    of :math:`I(Y; p)` that the hard label loses."""
    go = _go()
    mu = np.linspace(0.01, mu_max, 200)
    curve = sim.gaussian_information(mu)
    fig = _subplots(rows=1, cols=2, subplot_titles=("mutual information with Y (nats)",
                                                    "share of I(Y;p) that the hard label loses"))
    for name, exact, col, color in (("I(Y; p)", curve.soft, "I(Y;p) plug-in", "#e7298a"),
                                    ("I(Y; ŷ)", curve.hard, "I(Y;ŷ) plug-in", "#1b9e77")):
        fig.add_trace(go.Scatter(x=mu, y=exact, name=name, line={"color": color, "width": 3}), 1, 1)
        fig.add_trace(go.Scatter(x=info.index, y=info[col], mode="markers", name=f"plug-in {name}",
                                 marker={"color": color, "symbol": "circle-open", "size": 10}), 1, 1)
    fig.add_trace(go.Scatter(x=mu, y=1 - curve.hard / curve.soft, name="lost share",
                             line={"color": "#7570b3", "width": 3}), 1, 2)
    fig.update_xaxes(title_text="sentence strength μ")
    fig.update_yaxes(range=[0, 0.72], row=1, col=1)
    fig.update_yaxes(range=[0, 0.4], tickformat=".0%", row=1, col=2)
    fig.update_layout(height=420, hovermode="x unified", title="Proposition 1: what a hard vote throws away",
                      **_LAYOUT)
    return fig


PROP2_POSTS: tuple[tuple[float, int], ...] = ((0.5, 5), (0.3, 6))
"""(prior, seed) of the claims ledger's rows ``prop2`` and ``prop2-prior``."""


def prop2_table(posts: Sequence[tuple[float, int]] = PROP2_POSTS) -> pd.DataFrame:
    r"""Proposition 2 against exact posteriors computed independently, with and without the prior term.

    For each (prior :math:`\pi`, seed) the claims ledger's simulated posts are drawn: 1 to 8 calibrated,
    conditionally independent sentences of known Gaussian likelihoods, whose exact posterior log-odds
    come from the joint likelihood (:func:`scipy.stats.norm.logpdf`), a route that never forms a
    sentence posterior. The table gives the largest gap of
    :math:`\sum_i \ell(p_i) - (N-1)\ell(\pi)` (:func:`tefcore.information.additive_log_odds`) and of the
    plain sum :math:`\sum_i \ell(p_i)` from the exact log-odds.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``prior π``: ``posts``, ``longest post``, ``with the prior term``,
        ``plain sum`` (largest absolute gaps, nats).
    """
    rows = []
    for prior, seed in posts:
        p, doc, exact = gaussian_shift_posts(prior, seed=seed)
        rows.append({"prior π": prior, "posts": int(exact.size), "longest post": int(np.bincount(doc).max()),
                     "with the prior term": float(np.abs(information.additive_log_odds(p, doc, prior=prior)
                                                         - exact).max()),
                     "plain sum": float(np.abs(information.additive_log_odds(p, doc) - exact).max())})
    return pd.DataFrame(rows).set_index("prior π")


def stress_table(settings: Sequence[tuple[str, float, float]], n_docs: int, rng: np.random.Generator | int | None,
                 detector: sim.Detector | None = None, *, n_decisive: int = 2, n_uncertain: int = 4,
                 **params: float) -> pd.DataFrame:
    r"""The additive identity and TEF when the hypotheses fail: shared noise (:math:`\rho`) or a
    temperature (:math:`T`).

    Parameters
    ----------
    settings : sequence of (label, correlation, temperature)
        One simulated corpus each.
    n_docs : int
        Posts per setting.
    rng : numpy Generator, int or None
    detector : tefcore.simulate.Detector, optional
        The other parameters of the detector.
    n_decisive, n_uncertain : int
        Sentences of each kind per post.
    **params : float
        Other fields of :class:`tefcore.simulate.Detector` that replace those of ``detector``.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``setting``: ``mean |sum - exact|`` (nats), the calibration slopes of the sum and of
        TEF's score (:func:`tefcore.information.calibration_slope`), and the accuracy of the sum, TEF and
        the model's Bayes decision (``oracle``).
    """
    rows = []
    for label, rho, temp in settings:
        c = sim.simulate_documents(n_docs, detector, n_decisive=n_decisive, n_uncertain=n_uncertain,
                                   rng=rng, **(params | {"correlation": rho, "temperature": temp}))
        s_sum = information.additive_log_odds(c.p, c.doc_index)
        s_tef = fuse_many(c.p, c.doc_index, rule="tef").scores[:, 0]
        rows.append({"setting": label, "mean |sum - exact|": float(np.mean(np.abs(s_sum - c.true_log_odds))),
                     "slope, sum": information.calibration_slope(s_sum, c.y),
                     "slope, TEF": information.calibration_slope(s_tef, c.y),
                     "accuracy, sum": float(np.mean((s_sum >= 0) == c.is_change)),
                     "accuracy, TEF": float(np.mean((s_tef >= 0) == c.is_change)),
                     "accuracy, oracle": float(np.mean((c.true_log_odds >= 0) == c.is_change))})
    return pd.DataFrame(rows).set_index("setting")


def stress_numbers(stress: pd.DataFrame, correlations: Sequence[float]) -> dict[str, float]:
    """What chapter 2's prose quotes from :func:`stress_table`: at the first and the last correlation, the
    accuracies (percent) of the sum and of TEF and their calibration slopes."""
    first, last = stress.loc[f"ρ = {correlations[0]}"], stress.loc[f"ρ = {correlations[-1]}"]
    return {"acc_sum_0": 100 * float(first["accuracy, sum"]), "acc_tef_0": 100 * float(first["accuracy, TEF"]),
            "slope_tef_0": float(first["slope, TEF"]), "rho_max": float(correlations[-1]),
            "slope_sum_max": float(last["slope, sum"]), "slope_tef_max": float(last["slope, TEF"]),
            "acc_sum_max": 100 * float(last["accuracy, sum"]), "acc_tef_max": 100 * float(last["accuracy, TEF"])}


def stress_figure(stress: pd.DataFrame, labels: Sequence[str], x: Sequence[float]) -> Any:
    """Calibration slopes and accuracies of :func:`stress_table` along the rows ``labels`` (at ``x``)."""
    go, part = _go(), stress.loc[list(labels)]
    fig = _subplots(rows=1, cols=2, subplot_titles=("calibration slope (1 = calibrated)", "accuracy"))
    for col, name, color in (("slope, sum", "log-odds sum", "#7570b3"), ("slope, TEF", "TEF", "#e7298a")):
        fig.add_trace(go.Scatter(x=list(x), y=part[col], name=name, mode="lines+markers",
                                 line={"color": color, "width": 3}), 1, 1)
    fig.add_hline(y=1, line={"color": "grey", "dash": "dash"}, row=1, col=1)
    for col, name, color in (("accuracy, sum", "log-odds sum", "#7570b3"), ("accuracy, TEF", "TEF", "#e7298a"),
                             ("accuracy, oracle", "oracle", "grey")):
        fig.add_trace(go.Scatter(x=list(x), y=part[col], name=name, mode="lines+markers", showlegend=name == "oracle",
                                 line={"color": color, "width": 3, "dash": "dot" if name == "oracle" else None}), 1, 2)
    fig.update_xaxes(title_text="correlation ρ of the sentences' noise")
    fig.update_layout(height=420, title="Correlated sentences: the sum is overconfident", **_LAYOUT)
    return fig


# --------------------------------------------------------------------------------------------------
# chapter 2: the map of where TEF gains
# --------------------------------------------------------------------------------------------------
def decisive_counts(
    share: float, n_uncertain: int, n_docs: int, *, rng: int | np.random.Generator | None = None
) -> npt.NDArray[np.int64]:
    r"""Per-document numbers of decisive sentences that make a share :math:`q` of all sentences decisive
    beside :math:`u` uncertain ones: with :math:`r = u\,q/(1-q)`, :math:`\lceil r\rceil` with probability
    :math:`r - \lfloor r\rfloor`, else :math:`\lfloor r\rfloor` (possibly none), so the pooled share is
    :math:`q` in expectation.

    Parameters
    ----------
    share, n_uncertain : float, int
        :math:`q \in [0, 1)` and :math:`u \ge 1`.
    n_docs : int
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ndarray of int, shape (n_docs,)

    Examples
    --------
    >>> counts = decisive_counts(0.2, 4, 10_000, rng=0)   # r = 4 * 0.2 / 0.8 = 1 per document
    >>> sorted(set(counts.tolist())), float(counts.sum() / (counts.sum() + 4 * 10_000))
    ([1], 0.2)
    """
    if not 0.0 <= share < 1.0:  # a NaN compares False
        raise ValueError(f"share must lie in [0, 1), got {share!r}")
    if n_uncertain < 1:
        raise ValueError(f"n_uncertain must be >= 1 to define a share, got {n_uncertain!r}")
    r = n_uncertain * share / (1.0 - share)
    base = math.floor(r)
    extra = np.random.default_rng(rng).random(n_docs) < (r - base)
    return (base + extra).astype(np.int64)


STUDY_RULES: tuple[str, ...] = ("majority_vote", "soft_vote", "tef", "tef_without_entropy")


def fusion_study(
    decisive_shares: Sequence[float],
    n_uncertain_values: Sequence[int],
    detector: sim.Detector | None = None,
    *,
    n_docs: int = 2000,
    rules: Sequence[str] = STUDY_RULES,
    rng: int | np.random.Generator | None = None,
    **params: float,
) -> pd.DataFrame:
    """Accuracy of fusion rules over a grid of (share of decisive sentences, uncertain sentences): ``n_docs``
    documents per cell (:func:`decisive_counts`), one :func:`tefcore.fusion.fuse_many` call per rule, and
    ``oracle``, the Bayes-optimal decision (the sign of :attr:`tefcore.simulate.SimulatedCorpus.true_log_odds`).

    Parameters
    ----------
    decisive_shares, n_uncertain_values : sequence
        The grid: shares in [0, 1), and uncertain sentences per document (>= 1).
    detector, rng, **params
        As in :func:`tefcore.simulate.simulate_documents`.
    n_docs : int
    rules : sequence of str
        Sentence-level rules of :data:`tefcore.fusion.RULE_NAMES` (not ``"direct"``).

    Returns
    -------
    pandas.DataFrame
        ``decisive_share, n_uncertain, rule`` (with ``oracle``), ``accuracy`` (a fraction), ``n_docs``.

    Examples
    --------
    >>> study = fusion_study([0.2], [4], sim.Detector(logit_bias=0.5), n_docs=500, rng=0)
    >>> acc = study.set_index("rule")["accuracy"]
    >>> bool(acc["tef"] > acc["majority_vote"]), bool(acc["oracle"] >= acc["tef"])
    (True, True)
    """
    shares = [float(s) for s in decisive_shares]
    uncertain = [int(u) for u in n_uncertain_values]
    if not shares or not uncertain:
        raise ValueError("decisive_shares and n_uncertain_values must be non-empty")
    unknown = [r for r in rules if r not in RULE_NAMES or r == "direct"]
    if unknown:
        raise ValueError(f"rules must be sentence-level rules of tefcore.fusion, got {unknown}")
    gen = np.random.default_rng(rng)
    cells = [(s, u) for s in shares for u in uncertain]
    n_dec = np.concatenate([decisive_counts(s, u, n_docs, rng=gen) for s, u in cells])
    n_unc = np.repeat(np.asarray([u for _, u in cells], dtype=np.int64), n_docs)
    corpus = sim.simulate_documents(len(cells) * n_docs, detector, n_decisive=n_dec, n_uncertain=n_unc, rng=gen,
                                    **params)
    cell_of_doc = np.repeat(np.arange(len(cells)), n_docs)
    correct: dict[str, npt.NDArray[np.bool_]] = {}
    for rule in rules:
        batch = fuse_many(corpus.p, corpus.doc_index, rule=rule)
        correct[rule] = np.asarray(batch.prediction == corpus.y, dtype=bool)
    correct["oracle"] = (corpus.true_log_odds >= 0.0) == corpus.is_change
    grid = pd.DataFrame(cells, columns=["decisive_share", "n_uncertain"])
    return pd.concat([grid.assign(rule=name, accuracy=np.bincount(cell_of_doc, weights=hits.astype(np.float64))
                                  / n_docs, n_docs=n_docs) for name, hits in correct.items()], ignore_index=True)


def gain_maps(studies: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """TEF's accuracy minus the better of MV and SV, in points, per cell of each
    :func:`fusion_study`: rows the share of decisive sentences, columns the number of
    uncertain sentences per post."""
    out = {}
    for name, study in studies.items():
        acc = study.pivot_table(index=["decisive_share", "n_uncertain"], columns="rule", values="accuracy")
        gain = 100 * (acc["tef"] - acc[["majority_vote", "soft_vote"]].max(axis=1))
        out[name] = gain.unstack("n_uncertain")
    return out


def study_summary(studies: Mapping[str, pd.DataFrame],
                  maps: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The simulation study in two tables, one column per judge of the study.

    Returns
    -------
    gains : pandas.DataFrame
        Largest gain, largest loss and mean gain of TEF over the better of MV and SV (points, over the
        cells of :func:`gain_maps`).
    accuracy : pandas.DataFrame
        Each rule's mean accuracy over the cells (percent), the model's Bayes decision last as
        ``oracle (Bayes)``.
    """
    gains = pd.DataFrame({name: {"largest gain (points)": float(m.to_numpy().max()),
                                 "largest loss (points)": float(m.to_numpy().min()),
                                 "mean gain (points)": float(m.to_numpy().mean())} for name, m in maps.items()})
    accuracy = pd.DataFrame({name: 100 * s.groupby("rule")["accuracy"].mean() for name, s in studies.items()})
    rules = [r for r in accuracy.index if r != "oracle"] + ["oracle"]
    names = {r: RULE_LABELS.get(r, r) for r in rules} | {"oracle": "oracle (Bayes)"}
    return gains, accuracy.loc[rules].rename(index=names).rename_axis("rule")


def lean_numbers(lean: float) -> dict[str, float]:
    """What an evidence-free sentence of a judge with lean ``b`` reports, :math:`\\sigma(b)`, and its TEF
    weight.

    Examples
    --------
    >>> {k: round(v, 3) for k, v in lean_numbers(0.5).items()}
    {'lean_p': 0.622, 'lean_w': 0.044}
    """
    from scipy.special import expit

    p = float(expit(lean))
    return {"lean_p": p, "lean_w": float(entropy_weight([p])[0])}


_DIVERGING: list[list[Any]] = [[0.0, "#d6604d"], [0.25, "#f4a582"], [0.5, "#f7f7f7"], [0.75, "#92c5de"],
                               [1.0, "#4393c3"]]
"""A diverging scale of middle tones, on which dark cell labels stay readable at both ends."""


def gain_map_figure(maps: Mapping[str, pd.DataFrame], placed: pd.DataFrame | None = None) -> Any:
    """The maps of :func:`gain_maps` as heatmaps, one above the other, with equal cells and every cell's
    gain written in it; with ``placed`` (:func:`judge_map`), each real judge marked at its mean position
    (circles English, squares Chinese) instead of the numbers."""
    go = _go()
    fig = _subplots(rows=len(maps), cols=1, subplot_titles=[f"{k} judge" for k in maps], vertical_spacing=0.16)
    zmax = max(float(np.abs(m.to_numpy()).max()) for m in maps.values())
    judges = [] if placed is None else list(dict.fromkeys(placed.index.get_level_values("judge")))
    for row, m in enumerate(maps.values(), start=1):
        x, y = np.arange(m.shape[1]), np.arange(m.shape[0])  # cells of equal size; ticks name the grid
        fig.add_trace(go.Heatmap(
            z=m.to_numpy(), x=x, y=y, zmid=0, zmin=-zmax, zmax=zmax, colorscale=_DIVERGING, xgap=1, ygap=1,
            text=np.round(m.to_numpy(), 1), texttemplate="%{text}" if placed is None else None,
            textfont={"size": 12, "color": "#222222"}, showscale=row == 1,
            colorbar={"title": "points", "len": 0.4, "y": 0.8},
            customdata=np.stack(np.broadcast_arrays(np.asarray(m.columns)[None, :], np.asarray(m.index)[:, None]), -1),
            hovertemplate="uncertain %{customdata[0]}<br>decisive share %{customdata[1]:.0%}"
                          "<br>TEF − best vote %{z:.1f} points<extra></extra>"), row, 1)
        for (judge, lang), r in ([] if placed is None else placed.iterrows()):
            fig.add_trace(go.Scatter(
                x=[np.interp(r["uncertain per post"], m.columns, x)], y=[np.interp(r["decisive share (%)"] / 100,
                                                                                  m.index, y)],
                mode="markers", name=f"{judge} ({lang})", legendgroup=f"{judge}{lang}", showlegend=row == 1,
                marker={"size": 13, "color": _PALETTE[judges.index(judge) % len(_PALETTE)],
                        "symbol": "circle" if lang == "en" else "square", "line": {"color": "black", "width": 1.5}},
                hovertemplate=f"{judge} ({lang})<br>uncertain per post {r['uncertain per post']:.2f}<br>decisive "
                              f"share {r['decisive share (%)']:.1f} %<extra></extra>"), row, 1)
        fig.update_xaxes(tickvals=x, ticktext=[str(u) for u in m.columns], row=row, col=1,
                         title_text="uncertain sentences per post" if row == len(maps) else None)
        fig.update_yaxes(tickvals=y, ticktext=[f"{q:.0%}" for q in m.index], title_text="decisive share",
                         row=row, col=1)
    title = "Accuracy of TEF minus the better of MV and SV (points)" if placed is None else \
        "Real judges on the simulated map"
    fig.update_layout(height=330 * len(maps) + 90, title=title, **_LAYOUT)
    return fig


_SHORT: dict[str, str] = {"llama_cpp": "", "e5-zeroshot": "e5 zero-shot", "e5-crossfit": "e5 cross-fit"}


def judge_names(runs: Any) -> dict[str, str]:
    """A short name per judge of a :class:`tefbook.companion.runs.Runs`, read from its caches' provenance.

    The model and, for the cross-fitted e5 judge, how its probe was set
    (:func:`tefbook.companion.provenance.probe_setting`): two
    registry names whose caches hold the same setting get the same name, and a cache re-extracted
    under another setting gets a new one.

    Examples
    --------
    >>> from tefbook.companion.runs import Runs
    >>> prov = pd.DataFrame([{"model": "e5-crossfit", "backend": "e5-crossfit", "standardize": True, "C": "inner-cv"},
    ...                      {"model": "local", "backend": "llama_cpp", "model_file": "SmolLM2-135M-Instruct.Q4_1.gguf"}])
    >>> judge_names(Runs(pd.DataFrame({"model": ["e5-crossfit", "local"]}), prov))
    {'e5-crossfit': 'e5 cross-fit (standardized, C by inner CV)', 'local': 'SmolLM2-135M'}
    """
    from tefbook.companion.provenance import judge_name, probe_setting

    names = {}
    for model in runs.models:
        prov = runs.provenance[runs.provenance["model"] == model].iloc[0].to_dict()
        backend = str(prov.get("backend") or "")
        setting = probe_setting(prov)
        base = _SHORT.get(backend.removesuffix("-raw").removesuffix("-std")) or judge_name(prov)
        names[model] = f"e5 cross-fit ({setting})" if setting else base
    return names


def judge_sources(runs: Any) -> pd.DataFrame:
    """Which judge produced which numbers: per judge, its short name (:func:`judge_names`), the label
    read from its caches' provenance (:func:`tefbook.companion.provenance.run_labels`: judge, engine,
    hardware, data) and its pairs per language (counts)."""
    from tefbook.companion.provenance import run_labels

    names, labels = judge_names(runs), run_labels(runs)
    pairs = runs.provenance.pivot_table(index="model", columns="lang", values="n_pairs", aggfunc="sum")
    rows = [{"judge": names[m], "registry name": m, "from the caches' provenance": labels[m]}
            | {f"pairs, {lang}": int(pairs.loc[m, lang]) if lang in pairs.columns and pd.notna(pairs.loc[m, lang])
               else 0 for lang in sorted(pairs.columns)} for m in runs.models]
    return pd.DataFrame(rows).set_index("judge")


def decisive_threshold(decisive_weight: float = 0.5) -> float:
    r"""The probability above which a sentence's TEF weight reaches ``decisive_weight``: the :math:`p > 1/2`
    with :math:`w(p)` = ``decisive_weight``. A calibrated judge's decisive sentences point to the right
    side at least this often.

    Examples
    --------
    >>> round(decisive_threshold(0.5), 3)
    0.89
    """
    from scipy.optimize import brentq

    if not 0.0 < decisive_weight < 1.0:
        raise ValueError(f"decisive_weight must lie in (0, 1), got {decisive_weight!r}")
    return float(brentq(lambda q: float(entropy_weight(q)) - decisive_weight, 0.5, 1.0 - 1e-15))


def _premises(r: pd.Series, cell: pd.Series, lean: float, threshold: float, min_gain: float) -> list[tuple[bool, str]]:
    """The map's three premises for a gain of TEF, each (holds, why not) for one judge and language."""
    gain_map, agree = float(cell["simulated gain, leaning"]), float(r["decisive agree (%)"])
    return [
        (gain_map >= min_gain, f"the leaning map gives TEF only {gain_map:+.1f} points at its cell"),
        (abs(r["lean b"]) >= lean / 2,
         f"its uncertain sentences lean little (b = {r['lean b']:+.2f}; the map's leaning judge: {lean:+.2f})"),
        (r["decisive sentences"] > 0 and agree >= threshold,
         "it has no decisive sentence" if r["decisive sentences"] == 0 else
         f"its decisive sentences agree with the gold side only {agree:.0f} % of the time (a calibrated "
         f"judge's: at least {threshold:.0f} %)")]


def premises_table(placed: pd.DataFrame, nearest: pd.DataFrame, *, lean: float, min_gain: float = 1.0,
                   decisive_weight: float = 0.5) -> pd.DataFrame:
    """For every judge and language, the map's three premises for a gain of TEF over MV and SV (yes/no)
    and whether all hold: the leaning map's gain at the judge's cell (at least ``min_gain`` points), a
    lean of its uncertain sentences (``|b|`` at least half the map's ``lean``), decisive sentences as
    reliable as a calibrated judge's (:func:`decisive_threshold`; a dash for a judge with none)."""
    threshold = 100 * decisive_threshold(decisive_weight)
    rows = []
    for key, r in placed.iterrows():
        held = [ok for ok, _ in _premises(r, nearest.loc[key], lean, threshold, min_gain)]
        rows.append({"judge": key[0], "lang": key[1], "map gain at its cell": "yes" if held[0] else "no",
                     f"uncertain sentences lean (|b| >= {lean / 2:.2f})": "yes" if held[1] else "no",
                     f"decisive agree >= {threshold:.0f} %": "–" if r["decisive sentences"] == 0
                     else "yes" if held[2] else "no",
                     "where TEF should gain": "yes" if all(held) else "no"})
    return pd.DataFrame(rows).set_index(["judge", "lang"])


def _cells(frame: pd.DataFrame) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Readable sentence posteriors of a cache frame and the row of each."""
    flat, pair = flatten_sentences(frame["sentences"])
    ok = ~np.isnan(flat)
    return flat[ok], pair[ok]


MAP_POSITION: list[str] = ["posts", "sentences", "decisive sentences", "decisive share (%)", "uncertain per post"]
"""Columns of :func:`judge_map` that place a judge on the map (counts, percent, per post)."""

MAP_PREMISES: list[str] = ["l, change posts", "l, stability posts", "lean b", "decisive agree (%)",
                           "uncertain agree (%)"]
"""Columns of :func:`judge_map` that test the map's premises: the lean and the sentences' agreement."""


def judge_map(frame: pd.DataFrame, labels: Mapping[str, str] | None = None, decisive_weight: float = 0.5) -> pd.DataFrame:
    r"""Where real judges sit on the simulated map, and what their sentences say about TEF's premises.

    Per judge and language: posts and sentences (counts), the share of decisive sentences
    (:math:`w \ge` ``decisive_weight``, percent), uncertain sentences per post, the mean clipped
    log-odds of the uncertain sentences in change posts and in stability posts and their midpoint (the
    judge's lean :math:`b`: a lean shifts both alike, evidence pulls them apart), and how often a
    decisive and an uncertain sentence points to its post's gold side (percent).

    Parameters
    ----------
    frame : DataFrame
        Cache rows of several judges (``model, lang, side, sentences``; :func:`tefbook.companion.runs.load_runs`).
    labels : mapping, optional
        Judge name shown per registry name (default :func:`tefbook.companion.labels.judge_label`).
    decisive_weight : float
        The weight from which a sentence counts as decisive.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``judge, lang``.
    """
    p, pair = _cells(frame)
    rows = frame.iloc[pair]
    s = pd.DataFrame({"model": rows["model"].to_numpy(), "lang": rows["lang"].to_numpy(), "pair": pair,
                      "change": (rows["side"] == CLASSES[0]).to_numpy(), "w": entropy_weight(p),
                      "l": clipped_log_odds(p)})
    s["decisive"] = s["w"] >= decisive_weight
    s["agrees"] = (s["l"] >= 0) == s["change"]
    out = []
    for (model, lang), g in s.groupby(["model", "lang"], sort=False):
        unc = g[~g["decisive"]]
        lean_c, lean_s = unc.loc[unc["change"], "l"].mean(), unc.loc[~unc["change"], "l"].mean()
        posts = g["pair"].nunique()
        out.append({"judge": (labels or {}).get(model, judge_label(model)), "lang": lang, "posts": posts,
                    "sentences": len(g), "decisive sentences": int(g["decisive"].sum()),
                    "decisive share (%)": 100 * float(g["decisive"].mean()),
                    "uncertain per post": float(len(unc) / posts),
                    "l, change posts": float(lean_c), "l, stability posts": float(lean_s),
                    "lean b": float(np.nanmean([lean_c, lean_s])),
                    "decisive agree (%)": 100 * float(g.loc[g["decisive"], "agrees"].mean())
                    if g["decisive"].any() else math.nan,
                    "uncertain agree (%)": 100 * float(unc["agrees"].mean()) if len(unc) else math.nan})
    return pd.DataFrame(out).set_index(["judge", "lang"])


def weight_histogram_figure(frame: pd.DataFrame, simulated: npt.ArrayLike,
                            labels: Mapping[str, str] | None = None, bins: int = 20) -> Any:
    """The distribution of TEF weights of every judge's sentences, one panel per language, beside a
    simulated calibrated judge (binned here, so that the page stores the bars and not every sentence)."""
    go = _go()
    p, pair = _cells(frame)
    rows = frame.iloc[pair]
    models, langs = rows["model"].to_numpy(), rows["lang"].to_numpy()
    edges = np.linspace(0, 1, bins + 1)
    mids = (edges[:-1] + edges[1:]) / 2
    order = list(dict.fromkeys(langs))
    fig = _subplots(rows=1, cols=len(order), subplot_titles=order, shared_yaxes=True, horizontal_spacing=0.06)
    sim_w = entropy_weight(np.asarray(simulated, dtype=np.float64))
    judges = list(dict.fromkeys(models))
    for col, lang in enumerate(order, start=1):
        fig.add_trace(go.Bar(x=mids, y=np.histogram(sim_w, bins=edges)[0] / sim_w.size, width=1 / bins,
                             name="simulated (calibrated)", marker_color="grey", opacity=0.45,
                             legendgroup="sim", showlegend=col == 1), 1, col)
        for k, model in enumerate(judges):
            w = entropy_weight(p[(models == model) & (langs == lang)])
            if w.size:
                fig.add_trace(go.Scatter(x=mids, y=np.histogram(w, bins=edges)[0] / w.size, mode="lines+markers",
                                         name=(labels or {}).get(model, judge_label(model)), legendgroup=model,
                                         showlegend=col == 1, line={"color": _PALETTE[k % len(_PALETTE)]}),
                              1, col)
        fig.update_xaxes(title_text="weight w(p)", row=1, col=col)
    fig.update_yaxes(title_text="share of sentences", row=1, col=1)
    fig.update_layout(height=460, title="TEF weights of sentence posteriors: real judges and the simulation",
                      **_LAYOUT)
    return fig


def nearest_cells(placed: pd.DataFrame, maps: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The simulated gain of the map cell nearest to each judge's position (:func:`judge_map`)."""
    rows = []
    for key, r in placed.iterrows():
        first = next(iter(maps.values()))
        u = min(first.columns, key=lambda v: abs(v - r["uncertain per post"]))
        q = min(first.index, key=lambda v: abs(v - r["decisive share (%)"] / 100))
        rows.append({"judge": key[0], "lang": key[1], "nearest cell": f"{u} uncertain, {q:.0%} decisive"}
                    | {f"simulated gain, {name}": float(m.loc[q, u]) for name, m in maps.items()})
    return pd.DataFrame(rows).set_index(["judge", "lang"])


def sweep_table(sweep: pd.DataFrame, floor: Mapping[str, float], t: float = 1.0) -> pd.DataFrame:
    """The judges as they are (re-tempering factor ``t``, default 1) in
    :func:`tefbook.companion.calibration.temperature_sweep`: per judge (its ``judge`` column) and
    language, the strongest baseline and its Average accuracy, TEF's, TEF's gain with its 95 % interval,
    the majority-class rate (``floor``, percent per language) and whether TEF falls below it."""
    from tefbook.companion.tables import format_interval

    at = sweep[sweep["t"] == t]
    out = pd.DataFrame({
        "judge": at["judge"], "lang": at["lang"], "baseline": at["best_baseline"].map(RULE_LABELS),
        "baseline acc.": at["baseline"], "TEF acc.": at["tef"],
        "TEF − baseline": [format_interval(g, lo, hi, signed=True)
                           for g, lo, hi in zip(at["gain"], at["low"], at["high"])],
        "majority": at["lang"].map(dict(floor))})
    out["TEF < majority"] = np.where(out["TEF acc."] < out["majority"], "yes", "no")
    return out.set_index(["judge", "lang"])


def sweep_figure(sweep: pd.DataFrame) -> Any:
    """TEF's gain over the strongest baseline against the re-tempering factor, with intervals, one line
    per judge (its ``judge`` column) and language."""
    go = _go()
    fig = go.Figure()
    judges = list(dict.fromkeys(sweep["judge"]))
    for (judge, lang), g in sweep.groupby(["judge", "lang"], sort=False):
        fig.add_trace(go.Scatter(
            x=g["t"], y=g["gain"], mode="lines+markers", name=f"{judge} ({lang})",
            line={"color": _PALETTE[judges.index(judge) % len(_PALETTE)], "width": 3,
                  "dash": "solid" if lang == "en" else "dot"},
            error_y={"type": "data", "symmetric": False, "array": g["high"] - g["gain"],
                     "arrayminus": g["gain"] - g["low"], "thickness": 1},
            customdata=np.stack([g["best_baseline"].map(RULE_LABELS), g["decisive_share"]], axis=1),
            hovertemplate="t = %{x}<br>gain %{y:.1f} points<br>strongest baseline %{customdata[0]}"
                          "<br>decisive sentences %{customdata[1]:.1f} %"))
    fig.add_hline(y=0, line={"color": "grey", "dash": "dash"})
    fig.update_xaxes(type="log", tickvals=sorted(set(sweep["t"])), title_text="temperature t (< 1 sharper, > 1 flatter)")
    fig.update_layout(height=460, yaxis_title="TEF − strongest baseline (accuracy points)",
                      title="TEF's gain on real posts as the judges are re-tempered", **_LAYOUT)
    return fig
