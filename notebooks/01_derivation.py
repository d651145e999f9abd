# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # From decision fusion to Tempered Evidence Fusion
#
# A long post is cut into sentences and a judge (an LLM read through its answer-token
# probabilities, or any other detector) gives every sentence a probability
# $p_i = P(\text{change} \mid D_i)$. The post's side has to be decided from these $N$ numbers.
# Signal processing knows this problem as *distributed detection*: $N$ local detectors each send a
# soft decision to a fusion centre, which must combine them
# {cite}`tenney1981detection,chair1986optimal`. This chapter derives the fusion rule of the paper
# {cite}`tefpaper`, Tempered Evidence Fusion (TEF), from that point of view, and shows that Majority
# Vote (MV) and Soft Vote (SV) are two other choices on the same scale. It reads no MIND data: every
# number and figure below is computed by `tefcore.fusion`, the implementation the later chapters use
# on real judges, from the formulas or from posts written down on this page.

# %% tags=["parameters"]
# Posteriors of the worked example: one decisive sentence and four hedging ones.
example_posteriors = [0.90, 0.40, 0.38, 0.42, 0.36]
# The "decisive" and "hedging" probabilities of the exchange-rate figure.
decisive_p = 0.95
hedging_p = 0.45
max_hedging = 40
# Resolution of the curves of w(p) and l(p).
grid_points = 399
# Softmax temperatures of TEF's confidence shown beside the reference release's.
confidence_temperatures = [1.0, 2.0, 5.0, 10.0, 20.0]

# %% tags=["hide-input"]
from tefbook.parameters import check_parameters

check_parameters("01_derivation")  # a misspelt -p name fails here, naming the parameters above

import numpy as np
import pandas as pd
from IPython.display import HTML, display
from myst_nb import glue

from tefbook.chapters import theory
from tefbook.companion.figures import setup_notebook
from tefpaper.ledger import chapter_claims
from tefbook.companion.tables import bold_best
from tefcore.fusion import TEMPERATURE, clipped_log_odds, entropy_weight, fuse_many
from tefcore.information import contributions

setup_notebook()
p_grid = np.linspace(0.0005, 0.9995, grid_points)
glue("T_ref", float(TEMPERATURE), display=False)
glue("w_09", float(entropy_weight([0.9])[0]), display=False)
glue("w_099", float(entropy_weight([0.99])[0]), display=False)

# %% [markdown]
# ## Notation
#
# We stay with the binary case of the paper's experiments ($K = 2$): $Y \in \{c, \bar c\}$ with
# $c$ = change and $\bar c$ = stability, prior $\pi = P(Y = c)$. The post $X$ is segmented into
# sentences $D_1, \dots, D_N$. The judge reports $p_i = P(Y = c \mid D_i)$, and we write the
# log-odds of a probability as
#
# $$
# \ell(p) = \log\frac{p}{1-p}, \qquad p = \sigma(\ell) = \frac{1}{1 + e^{-\ell}}.
# $$ (deriv-logodds)
#
# Natural logarithms throughout, as in the protocol.
#
# ## What an ideal fusion centre would do
#
# Two assumptions make the problem exactly solvable.
#
# 1. **Conditional independence**: given the side, the sentences are independent,
#    $P(D_1, \dots, D_N \mid Y) = \prod_i P(D_i \mid Y)$.
# 2. **Calibration**: each $p_i$ is the true posterior of the side given that sentence alone,
#    under the prior $\pi$.
#
# Bayes' rule for the whole post, written in log-odds, turns the product of likelihoods into a sum:
#
# $$
# \log\frac{P(c \mid D_{1:N})}{P(\bar c \mid D_{1:N})}
#   = \ell(\pi) + \sum_{i=1}^{N} \log\frac{P(D_i \mid c)}{P(D_i \mid \bar c)} .
# $$ (deriv-bayes)
#
# The judge does not report likelihood ratios but posteriors. Bayes' rule for one sentence gives
# the ratio back: a posterior is the prior times the likelihood ratio, so in log-odds the sentence's
# evidence is its posterior log-odds minus the prior log-odds,
#
# $$
# \log\frac{P(D_i \mid c)}{P(D_i \mid \bar c)} = \ell(p_i) - \ell(\pi) .
# $$ (deriv-lr)
#
# Putting {eq}`deriv-lr` into {eq}`deriv-bayes`: every sentence posterior carries the prior once,
# the sum would count it $N$ times, and $N-1$ copies must be taken out,
#
# $$
# \log\frac{P(c \mid D_{1:N})}{P(\bar c \mid D_{1:N})}
#   = \sum_{i=1}^{N} \ell(p_i) - (N-1)\,\ell(\pi) .
# $$ (deriv-additive)
#
# With equal priors $\ell(\pi) = 0$ and the post's log-odds is simply the sum of its sentences'
# log-odds: the additive identity of the paper's Proposition 2, a classical result of
# decision fusion {cite}`varshney1997distributed`. The Bayes decision is "change" exactly when
# $\sum_i \ell(p_i) \ge 0$. Chapter 2 checks {eq}`deriv-additive` numerically.


# %% [markdown]
# ## Why not simply add the log-odds?
#
# Real judges break both assumptions. The sentences of one post share a topic, an author and a
# vocabulary, so they are not independent given the side. And an LLM's answer-token probabilities
# are calibrated only roughly: a sentence that says nothing about the dimension rarely gets exactly
# $1/2$; it lands a little above or below, pushed by the wording or by the model's taste for one
# answer letter. Under the plain sum each of these sentences adds a small error of the same
# kind, and $N$ of them add $N$ errors: evidence that is not there accumulates linearly with the
# length of the post, while the one sentence that takes a position counts once.
#
# ## Tempering: a generalised Bayesian update per sentence
#
# Generalised Bayesian inference {cite}`bissiri2016general` updates a belief with a loss scaled by a
# learning rate $\eta \ge 0$, $\;\pi_\eta(y \mid D) \propto \pi(y)\, \exp\{-\eta\,
# \mathrm{loss}(y, D)\}$. With the log-loss, $\mathrm{loss}(y, D) = -\log P(D \mid y)$, the update
# raises the likelihood to the power $\eta$: a *tempered* (or power) likelihood, the standard repair
# for models that are wrong in ways one cannot write down {cite}`grunwald2017inconsistency`. Giving
# sentence $i$ its own rate $w_i \in [0, 1]$ and repeating the steps above,
#
# $$
# \log\frac{P_w(c \mid D_{1:N})}{P_w(\bar c \mid D_{1:N})}
#   = \ell(\pi) + \sum_{i=1}^{N} w_i\,\bigl[\ell(p_i) - \ell(\pi)\bigr]
#   \;\overset{\pi = 1/2}{=}\; \sum_{i=1}^{N} w_i\,\ell(p_i) .
# $$ (deriv-tempered)
#
# A rate of one keeps the full Bayesian weight; a rate of zero ignores the sentence. For $K = 2$ the
# right-hand side is the paper's $\mathrm{Score}(c)$, and $\mathrm{Score}(\bar c) = -\mathrm{Score}(c)$
# because $\ell(1-p) = -\ell(p)$.
#
# TEF chooses each rate from the sentence's own distribution, with no labels and no training: the
# *normalised information gain* over the uniform distribution $u$,
#
# $$
# w(\mathbf p) = 1 - \frac{H(\mathbf p)}{\log K}
#   = \frac{\log K - H(\mathbf p)}{\log K}
#   = \frac{\mathrm{KL}(\mathbf p \,\|\, u)}{\log K},
# $$ (deriv-weight)
#
# where $H(\mathbf p) = -\sum_k p^{(k)} \log p^{(k)}$ is the entropy of the sentence's
# distribution over the $K$ classes ($0 \log 0 = 0$). The middle form reads "how much the sentence moved away from *no idea*", the last one says the
# same in terms of relative entropy: $\log K - H(\mathbf p)$ is exactly the Kullback-Leibler
# divergence from the uniform distribution, and $\log K$ its largest possible value. So
# $0 \le w \le 1$, $w = 0$ at $p = 1/2$ and $w = 1$ at $p \in \{0, 1\}$ (the teaching lab asks for
# the proofs).
#
# Here TEF leaves the theory it borrows. In generalised Bayesian inference the learning rate $\eta$
# is fixed before the data are seen (or tuned on other data), and what the tempered posterior
# guarantees, coherence and the robustness to a wrong model {cite}`bissiri2016general,grunwald2017inconsistency`,
# is stated for that fixed rate. TEF computes each sentence's rate from the very probability it then
# tempers: $w_i = w(p_i)$. Its contribution $w(p_i)\,\ell(p_i)$ is therefore not a likelihood raised
# to a power chosen in advance but a new function of $p_i$, and {eq}`deriv-tempered` with
# data-dependent rates is no longer a posterior. The generalised-Bayes argument motivates the *form*
# of TEF's score, a weighted sum of log-odds with weights in $[0, 1]$; it does not make
# $\sum_i w_i \ell(p_i)$ the log-odds of any posterior. Calling it a "tempered posterior" is a
# heuristic, and TEF's worth has to be measured rather than derived: chapter 2 does it on simulated
# judges, chapters 5 to 9 on real ones.
#
# ## Soft censoring
#
# In censored distributed detection {cite}`rago1996censoring` a sensor keeps quiet when its
# likelihood ratio falls inside a "no-send" interval around one: observations that would barely move
# the fusion centre are not transmitted at all. TEF does this smoothly. Near the middle, write
# $p = 1/2 + \delta$; a second-order expansion of the entropy gives
#
# $$
# \begin{aligned}
# H(p) &\approx \log 2 - 2\delta^2, & w(p) &\approx \frac{2\delta^2}{\log 2},\\
# \ell(p) &\approx 4\delta, & w(p)\,\ell(p) &\approx \frac{8\,\delta^3}{\log 2} .
# \end{aligned}
# $$ (deriv-cubic)
#
# A sentence's contribution vanishes to *third* order in its distance from $1/2$, instead of the
# first order of the plain log-odds sum. Far from the middle $w \to 1$ and a sentence keeps its
# Bayesian weight, but only far: at $p = 0.9$ it keeps {glue:text}`w_09:.0%` of its log-odds, at
# $p = 0.99$ {glue:text}`w_099:.0%`. In the implementation probabilities are clipped to
# $[\epsilon, 1-\epsilon]$ and log-odds to $[-M, M]$, with the paper's constants $\epsilon = 10^{-6}$
# and $M = 10$, so no single sentence can contribute more than $M$.
#
# The figure shows the three functions; hover over the curves to read values.

# %% tags=["hide-input"]
theory.curve_figure(p_grid).show()

# %% [markdown]
# The flat bottom of $w(p)\,\ell(p)$ around $p = 1/2$ is the soft censoring of {eq}`deriv-cubic`. The
# table puts numbers on it: a few probabilities, their weight, log-odds and tempered evidence.

# %%
probe = np.array([0.5, 0.55, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999])
pd.DataFrame({
    "p": probe,
    "w(p)": entropy_weight(probe),
    "ℓ(p)": clipped_log_odds(probe),
    "w(p)·ℓ(p)": entropy_weight(probe) * clipped_log_odds(probe),
    "8δ³/log 2 (near 1/2)": 8 * (probe - 0.5) ** 3 / np.log(2),
}).round(4).set_index("p")

# %% [markdown]
# ## MV, SV and TEF on one scale
#
# Every rule of the paper decides by the sign of a sum of per-sentence contributions
# $\varphi(\ell_i)$, $\ell_i = \ell(p_i)$; they differ only in $\varphi$:
#
# $$
# \begin{aligned}
# \text{MV:}\quad & \varphi(\ell) = \operatorname{sign}(\ell),\\
# \text{SV:}\quad & \varphi(\ell) = p - \tfrac12 = \sigma(\ell) - \tfrac12 = \tfrac12\tanh(\ell/2),\\
# \text{log-odds sum:}\quad & \varphi(\ell) = \ell,\\
# \text{TEF:}\quad & \varphi(\ell) = w\bigl(\sigma(\ell)\bigr)\,\ell .
# \end{aligned}
# $$ (deriv-phi)
#
# MV's contribution is a vote (a sentence at exactly $1/2$ votes change, and a tied vote goes to the
# side of the first vote cast, as in the authors' reference release), SV's is bounded
# by $\pm 1/2$, the log-odds sum is the Bayes rule under the two assumptions, and TEF tempers it.
# SV predicts change when the mean probability is at least $1/2$, i.e. when $\sum_i (p_i - 1/2) \ge 0$,
# which gives its line. Seen this way MV keeps only the sign of each sentence's evidence and throws
# away its size; SV keeps the size but squashes it: it grows like $\ell/4$ near zero (the same
# shape as the log-odds there) and saturates at $\pm 1/2$, so a sentence at $p = 0.999$ counts
# only {glue:text}`sv_ratio:.2f` times as much as one at $p = 0.95$, although its log-odds are
# {glue:text}`lo_ratio:.2f` times as large. The log-odds sum keeps the size exactly, which is right only
# when the judge is calibrated and the sentences independent. TEF keeps the large contributions of
# the log-odds sum and removes the small ones.
#
# Since a decision depends only on the sign of the sum, multiplying $\varphi$ by a constant changes
# nothing. The figure therefore scales each rule so that a sentence at $p = $
# {glue:text}`decisive_p:g` contributes one. Its left panel is drawn over $p$; the right one over the
# log-odds $\ell$ itself, out to the clip at $\pm M$, where the four curves part most.

# %% tags=["hide-input"]
ratio = contributions([0.999]).iloc[0] / contributions([0.95]).iloc[0]
glue("sv_ratio", float(ratio["soft_vote"]), display=False)
glue("lo_ratio", float(ratio["tef_without_entropy"]), display=False)
theory.contribution_figure(p_grid, decisive_p).show()

# %% [markdown]
# ### How many hedging sentences overturn a decisive one?
#
# One way to read the figure: a post has one decisive sentence at $p = $ {glue:text}`decisive_p:g`
# followed by $n$ hedging ones at $p = $ {glue:text}`hedging_p:g`, leaning slightly the other way. How
# large must $n$ be for each rule to flip to the hedging side? The answer is the ratio of the two
# contributions, each rule's *exchange rate*; we also let `fuse_many` decide the posts
# $n = 0, 1, \dots,$ {glue:text}`max_hedging:d` and report the first $n$ at which each rule flips.

# %%
decisive = contributions([decisive_p]).iloc[0]
hedging = contributions([hedging_p]).iloc[0]
rate = decisive / -hedging  # hedging sentences that cancel one decisive one
first_whole = np.floor(rate) + 1  # the first whole n past the rate (a tie keeps the decisive side)
n = np.arange(max_hedging + 1)  # post k: the decisive sentence, then k hedging ones
posts = np.concatenate([np.r_[decisive_p, np.full(k, hedging_p)] for k in n])
decided = {rule: fuse_many(posts, np.repeat(n, n + 1), rule=rule).prediction
           for rule in rate.index}
flips = pd.Series({rule: n[d == "stability"].min() if "stability" in d else pd.NA
                   for rule, d in decided.items()}, dtype="Int64")
pd.DataFrame({
    "hedging sentences per decisive one": rate.round(1),
    "first n that flips": flips.astype(object).fillna(f"> {max_hedging}"),
}).rename(index=theory.CURVE_LABELS)

# %% tags=["hide-input"]
for rule, first in flips.items():
    glue(f"flip_{rule}", f"more than {max_hedging}" if pd.isna(first) else int(first), display=False)
glue("tef_rate", float(rate["tef"]), display=False)
glue("tef_first_n", int(first_whole["tef"]), display=False)
for name in ("decisive_p", "hedging_p"):
    glue(name, float(globals()[name]), display=False)
glue("max_hedging", int(max_hedging), display=False)

# %% [markdown]
# MV flips as soon as the hedging sentences outnumber the decisive one, here at
# $n = $ {glue:text}`flip_majority_vote` (at one hedging sentence the vote is tied, and the first
# vote cast, the decisive sentence's, wins the tie). SV holds out until $n = $ {glue:text}`flip_soft_vote`, the log-odds sum until
# $n = $ {glue:text}`flip_tef_without_entropy`, and TEF's exchange rate is
# {glue:text}`tef_rate:,.1f` hedging sentences per decisive one (a ratio of contributions; the first
# whole $n$ that flips TEF is the next whole number, {glue:text}`tef_first_n:,d`, far beyond the
# largest $n$ decided above, {glue:text}`max_hedging:d`): the hedging sentences are, in effect, not
# counted. Whether that is good depends on whether the hedging probabilities carry real
# evidence; chapter 2 explores both cases with detectors whose calibration we control.
#
# ## A worked example
#
# One post of {glue:text}`ex_n:d` sentences, at $p$ = {glue:text}`ex_list` (the chapter's
# parameters), by default one decisive sentence and four hedging ones slightly on the stability side.
# The table shows each sentence's vote, weight, log-odds and tempered evidence; the cell after it
# applies Eq. 3 and its argmax by hand, and `fuse_many` then applies every rule of the paper.

# %%
ex = np.asarray(example_posteriors, dtype=float)
w, ell = entropy_weight(ex), clipped_log_odds(ex)
pd.DataFrame(
    {"p = P(change)": ex, "MV vote": np.where(ex >= 0.5, "change", "stability"),
     "w(p)": w, "ℓ(p)": ell, "w(p)·ℓ(p)": w * ell},
    index=pd.RangeIndex(1, len(ex) + 1, name="sentence"),
).round(3)

# %%
# Eq. 3: Score(c) = Σ_i w_i ℓ(p_i^(c)) for each side; the argmax decides (ties: change)
score = {"change": np.sum(w * clipped_log_odds(ex)),
         "stability": np.sum(w * clipped_log_odds(1 - ex))}
tef_decision = max(score, key=score.get)
print(f"Score(change) = {score['change']:+.4f}, "
      f"Score(stability) = {score['stability']:+.4f}: {tef_decision}")

rules = {"MV": "majority_vote", "SV": "soft_vote", "TEF": "tef",
         "log-odds sum": "tef_without_entropy", "w/o Log-Odds": "tef_without_log_odds"}
post = np.zeros(ex.size, dtype=int)  # all sentences belong to post 0
fused = {name: fuse_many(ex, post, rule=rule) for name, rule in rules.items()}
assert fused["TEF"].prediction[0] == tef_decision  # the hand computation is tefcore's
outcome = pd.DataFrame({"prediction": [b.prediction[0] for b in fused.values()],
                        "score (change)": [b.scores[0, 0] for b in fused.values()],
                        "confidence": [b.confidence[0] for b in fused.values()]},
                       index=pd.Index(list(fused), name="rule"))
outcome.round(3)

# %% tags=["hide-input"]
for rule, key in {"MV": "mv", "SV": "sv", "log-odds sum": "sum", "TEF": "tef"}.items():
    glue(f"ex_{key}", outcome.loc[rule, "prediction"], display=False)
glue("ex_n", int(ex.size), display=False)
glue("ex_list", ", ".join(f"{x:g}" for x in ex[:-1]) + f" and {ex[-1]:g}" if ex.size > 1 else f"{ex[0]:g}",
     display=False)
first = np.round(np.arange(1.0, 0.4999, -0.005), 3)  # sentence 1 pulled down, the others as they are
tef_side = fuse_many(np.column_stack([first, np.tile(ex[1:], (first.size, 1))]).ravel(),
                     np.repeat(np.arange(first.size), ex.size), rule="tef").prediction
glue("ex_turn", float(first[np.argmax(tef_side != tef_side[0])]) if (tef_side != tef_side[0]).any() else float("nan"),
     display=False)
glue("ex_first", float(ex[0]), display=False)

# %% [markdown]
# On these posteriors MV decides {glue:text}`ex_mv`, SV {glue:text}`ex_sv`, the log-odds sum
# {glue:text}`ex_sum` and TEF {glue:text}`ex_tef`. With the default posteriors, MV and SV side with
# the hedging sentences, which outnumber the decisive one and pull the mean probability just under
# $1/2$; the log-odds sum and TEF side with the decisive sentence, the sum narrowly (the hedging
# log-odds are not small enough to ignore) and TEF clearly, because its weights all but remove the
# hedging sentences.
#
# The scores are on each rule's own scale: the share of change votes for MV, the mean probability
# for SV and for the w/o Log-Odds ablation (whose mean is weighted by $w_i$), and the evidence sum
# for the two log-odds rules.
#
# ### Drag the sentences
#
# The figure below holds the same post, and your browser recomputes it whenever a slider moves:
# drag a sentence's probability, or shorten the post with the last slider, and watch each
# sentence's weight, log-odds and tempered evidence, and the four decisions. No Python runs while
# you do: the rules are written a second time, in the expression language of Vega (the engine that
# draws the figure), term by term as in {eq}`deriv-weight` and the clipped log-odds, and the four
# rules are written the same way in the chapter's module (a test checks that they decide as
# `fuse_many` does). Majority Vote breaks a tie as the authors' reference release does: the side of the first vote cast, here
# sentence 1's, wins. The two sums count a total within rounding error of zero as a tie, which
# goes to change, as in `tefcore.fusion`.
#
# Things to try: pull sentence 1 down from {glue:text}`ex_first:g` and see TEF give up its side at
# {glue:text}`ex_turn:.3f`, long before the sentence reaches $1/2$, because the tempered evidence
# shrinks like the cube of the distance from $1/2$; move the hedging sentences just above $1/2$ and
# the decisive one below it; shorten the post by one sentence and make the vote a tie.

# %% tags=["explorable", "hide-input"]
import altair as alt

from tefbook.chapters.theory import vega_log_odds, vega_rules, vega_weight  # the rules, written in Vega's expressions
from tefcore.fusion import CLASSES, CLIP

SIDES = alt.Scale(domain=list(CLASSES), range=["#1b9e77", "#d95f02"])
EMBED = {"renderer": "svg", "actions": {"export": True, "source": False, "compiled": False, "editor": False}}


def sentence_figure(p0: list[float], n0: int | None = None) -> alt.VConcatChart:
    """The explorable post: a slider per sentence and one for the post's length, the per-sentence
    quantities as bars, each rule's score and decision as text, all computed by Vega."""
    k = len(p0)
    names = [f"p{i}" for i in range(1, k + 1)]
    sliders = [alt.param(name=name, value=float(v), bind=alt.binding_range(
        min=0, max=1, step=0.01, name=f"sentence {i}: p{i} ")) for i, (name, v) in enumerate(zip(names, p0), 1)]
    n = alt.param(name="n", value=k if n0 is None else n0,
                  bind=alt.binding_range(min=1, max=k, step=1, name="sentences in the post: n "))
    rows = alt.Chart(alt.Data(values=[{"i": i} for i in range(1, k + 1)])).transform_calculate(
        p="[" + ", ".join(names) + "][datum.i - 1]").transform_calculate(
        w=vega_weight("datum.p"), l=vega_log_odds("datum.p"),
        side="datum.p >= 0.5 ? 'change' : 'stability'", shown="datum.i <= n").transform_calculate(
        wl="datum.w * datum.l")

    def panel(field: str, title: str, domain: list[float], first: bool = False) -> alt.LayerChart:
        y = alt.Y("i:O", title="sentence" if first else None, axis=alt.Axis(labels=first, ticks=first))
        x = alt.X(f"{field}:Q", title=title, scale=alt.Scale(domain=domain))
        fade = alt.condition("datum.shown", alt.value(1.0), alt.value(0.15))
        bars = rows.mark_bar(height=16).encode(y=y, x=x, opacity=fade,
                                               color=alt.Color("side:N", title="the sentence points to", scale=SIDES,
                                                                               legend=alt.Legend(orient="top")))
        labels = rows.mark_text(fontSize=11, dx=alt.expr(f"datum.{field} < 0 ? -3 : 3"),
                                align=alt.expr(f"datum.{field} < 0 ? 'right' : 'left'")).encode(
            y=y, x=x, text=alt.Text(f"{field}:Q", format=".3f"), opacity=fade)
        return (bars + labels).properties(width=112, height=22 * k)

    grid = alt.hconcat(panel("p", "p = P(change)", [0, 1], first=True), panel("w", "weight w(p)", [0, 1]),
                       panel("l", "log-odds ℓ(p)", [-CLIP, CLIP]), panel("wl", "w(p)·ℓ(p)", [-CLIP, CLIP]),
                       spacing=34)
    rules = vega_rules(names, "n")
    shown = {"Majority Vote": "'votes for change: ' + {s} + ' of ' + n"
                              " + (2 * {s} == n ? ' (a tie: sentence 1 decides)' : '')",
             "Soft Vote": "'mean p = ' + format({s}, '.3f')",
             "log-odds sum": "'Σ ℓ(pᵢ) = ' + format({s}, '+.3f')",
             "TEF": "'Σ w(pᵢ)·ℓ(pᵢ) = ' + format({s}, '+.3f')"}
    table = alt.Chart(alt.Data(values=[{"rule": r} for r in rules])).transform_calculate(
        decision="{" + ", ".join(f"'{r}': {d}" for r, (s, d) in rules.items()) + "}[datum.rule]",
        score="{" + ", ".join(f"'{r}': {shown[r].format(s=s)}" for r, (s, d) in rules.items()) + "}[datum.rule]")
    y = alt.Y("rule:N", sort=list(rules), title=None,
              axis=alt.Axis(labelFontSize=13, labelFontWeight="bold", domain=False, ticks=False))
    verdict = table.mark_text(fontSize=15, align="left", fontWeight="bold").encode(
        y=y, x=alt.value(4), text="decision:N", color=alt.Color("decision:N", scale=SIDES, legend=None))
    score = table.mark_text(fontSize=13, align="left").encode(y=y, x=alt.value(110), text="score:N")
    verdict = (verdict + score).properties(width=460, height=26 * len(rules),
                                           title="What each rule decides for the post")
    return alt.vconcat(grid, verdict, spacing=25).add_params(*sliders, n).configure_view(stroke=None).properties(
        usermeta={"embedOptions": EMBED})  # drawn as SVG; the menu saves images, nothing opens online


# %% tags=["hide-input"]
sentence_figure(example_posteriors)

# %% [markdown]
#
# ### Confidence: the reference release's, not the paper's
#
# The paper defines a decision for every rule but a confidence for none. The confidence column
# follows the authors' reference release (the protocol, §6): the winning share of votes for MV, the
# larger of the mean and its complement for SV and w/o Log-Odds, and for TEF the softmax of its two
# scores at a temperature $T$ = {glue:text}`T_ref:g`, that is $\sigma(2\,|\mathrm{Score}(c)|/T)$. This
# $T$ is a constant of that release, not of the method, and it changes no decision. It does change
# the confidence, and with it every calibration verdict for TEF (chapter 9 varies it):

# %%
tef_at = {T: fuse_many(ex, post, rule="tef", T=T) for T in confidence_temperatures}
pd.DataFrame({"prediction": [b.prediction[0] for b in tef_at.values()],
              "confidence": [b.confidence[0] for b in tef_at.values()]},
             index=pd.Index(confidence_temperatures, name="T")).round(3)

# %% [markdown]
# ## More than two classes
#
# The paper writes TEF for $K$ classes: each sentence gives a distribution
# $\mathbf p_i = (p_i^{(1)}, \dots, p_i^{(K)})$, Eq. 3 scores every class by its one-vs-rest log-odds,
# $\mathrm{Score}(c) = \sum_i w_i \log\frac{p_i^{(c)}}{1 - p_i^{(c)}}$, and the post goes to the
# argmax; `tefcore.fusion` implements it for any $K$. The derivation above was for two classes.
# Under the same two assumptions, Bayes' rule for $K$ classes gives each class the log-posterior
#
# $$
# \log P(c \mid D_{1:N}) = \sum_{i=1}^{N} \log p_i^{(c)} - (N-1)\log \pi_c + \text{const},
# $$ (deriv-kclass)
#
# while the one-vs-rest score with every $w_i = 1$ is
# $\sum_i \log p_i^{(c)} - \sum_i \log\bigl(1 - p_i^{(c)}\bigr)$. For $K = 2$ the second sum is
# $\sum_i \log p_i^{(\bar c)}$, the other class's Bayes term, so the score of $c$ minus that of
# $\bar c$ is twice the Bayes log-odds and the argmax is the Bayes decision {eq}`deriv-additive`.
# For $K > 2$, $1 - p_i^{(c)}$ is the mass of *all* the other classes together, not that of one
# rival: the second sum adds a bonus $-\log\bigl(1 - p_i^{(c)}\bigr)$ to a class each time a
# sentence is sure of it, on top of the Bayes term, and the argmax of Eq. 3 is no longer the Bayes
# argmax. A post of two sentences over three classes,
# equal priors (the scores below: the Bayes log-posterior {eq}`deriv-kclass` normalised over the
# classes, and Eq. 3 by `fuse_many` with and without the weights; in bold, the class each column
# picks):

# %%
post = pd.DataFrame(theory.K3_EXAMPLE, columns=["c1", "c2", "c3"],
                    index=["sentence 1", "sentence 2"])
display(post)
scores = theory.k_class_scores(post.to_numpy())
bold_best(scores, digits=3)

# %% tags=["hide-input"]
picks = scores.idxmax()
glue("k3_bayes_pick", picks.iloc[0], display=False)
glue("k3_eq3_pick", picks.iloc[1], display=False)
k3_rates, k3_posts = theory.k3_disagreement()
glue("k3_posts", k3_posts, display=False)
glue("k3_sum", float(k3_rates["tef_without_entropy"]), display=False)
glue("k3_tef", float(k3_rates["tef"]), display=False)

# %% [markdown]
# Bayes picks {glue:text}`k3_bayes_pick`, the class that both sentences find plausible; Eq. 3 picks
# {glue:text}`k3_eq3_pick`, the class that the first sentence is sure of: that sentence's bonus
# $-\log\bigl(1 - p_1^{(c)}\bigr)$ outweighs the second sentence's doubt. Nor is this a rare corner: on {glue:text}`k3_posts:,d` random three-class posts of one to
# eight sentences (the claims ledger's posts), the argmax of Eq. 3 with $w_i = 1$ differs from the
# Bayes argmax on {glue:text}`k3_sum:.1f` % of them, and TEF's on {glue:text}`k3_tef:.1f` %. For
# $K > 2$ the one-vs-rest score is therefore not the Bayes log-posterior that this chapter derives,
# and the additive evidence scale of Proposition 2 holds for the binary contrast only. The paper's
# experiments all have $K = 2$, where the two coincide.
#
# ## Summary
#
# - Under conditional independence and calibration, the Bayes-optimal document log-odds is the sum
#   of the sentence log-odds minus $N-1$ prior terms, {eq}`deriv-additive`.
# - Tempering each sentence's likelihood, as a generalised Bayesian posterior does, turns the sum
#   into $\sum_i w_i \ell(p_i)$, {eq}`deriv-tempered`; TEF's weight is the normalised information
#   gain {eq}`deriv-weight`, which vanishes at $p = 1/2$ and makes a sentence's contribution cubic
#   near the middle {eq}`deriv-cubic`: a soft version of censoring.
# - MV, SV, the log-odds sum and TEF are all "sign of a sum of $\varphi(\ell_i)$" with different
#   $\varphi$, {eq}`deriv-phi`. They disagree exactly when a few strong sentences face many weak
#   ones.
# - TEF's confidence, a softmax at a fixed temperature, comes from the reference release, not from
#   the paper; it never changes a decision.
# - For more than two classes the one-vs-rest score of Eq. 3 is not the Bayes log-posterior
#   {eq}`deriv-kclass`, and the two decide differently.
#
# ## This chapter in the claims ledger
#
# The paper's statements that this chapter examines, as the claims ledger checks them (each link
# opens the ledger's row):

# %% tags=["remove-input"]
HTML(chapter_claims("01_derivation"))
