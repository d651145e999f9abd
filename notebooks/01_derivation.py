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
# Vote (MV) and Soft Vote (SV) are two other choices on the same scale. Every number and figure
# below is computed by `tefcore.fusion`, the implementation the later chapters use on real judges.

# %% tags=["parameters"]
# Posteriors of the worked example: one decisive sentence and four hedging ones.
example_posteriors = [0.90, 0.40, 0.38, 0.42, 0.36]
# The "decisive" and "hedging" probabilities of the exchange-rate figure.
decisive_p = 0.95
hedging_p = 0.45
max_hedging = 40
# Resolution of the curves of w(p) and l(p).
grid_points = 399

# %%
from tefcore.chapters.parameters import check_parameters

check_parameters("01_derivation")  # a misspelt -p name fails here, naming the parameters above

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tefcore.chapters.presentation import RULE_LABELS
from tefcore.fusion import RULES, clipped_log_odds, fuse_many, weights
from tefcore.chapters.figures import setup_notebook
from tefcore.information import contributions

_ = setup_notebook()
RULE_ORDER = ["majority_vote", "soft_vote", "tef_without_entropy", "tef"]
COLORS = {
    "majority_vote": "#1b9e77",
    "soft_vote": "#d95f02",
    "tef_without_entropy": "#7570b3",
    "tef": "#e7298a",
}
LABELS = RULE_LABELS | {"tef_without_entropy": "log-odds sum (w/o Entropy)"}

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
# $1/2$; it gets something like $0.4$ or $0.6$, pushed by the wording or by the model's taste for
# one answer letter. Under the plain sum each of these sentences adds a small error of the same
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
# first order of the plain log-odds sum. Far from the middle $w \to 1$, and the sentence keeps almost
# its full Bayesian weight. In the implementation probabilities are clipped to
# $[\epsilon, 1-\epsilon]$ and log-odds to $[-M, M]$ with $\epsilon = 10^{-6}$ and $M = 10$, so no
# single sentence can contribute more than $M$.
#
# The figure shows the three functions; hover over the curves to read values.

# %% tags=["hide-input"]
p_grid = np.linspace(0.0005, 0.9995, grid_points)
w_grid = weights(p_grid)
l_grid = clipped_log_odds(p_grid)

fig = make_subplots(
    rows=1, cols=2, subplot_titles=("weight w(p)", "log-odds l(p) and tempered w(p)·l(p)")
)
fig.add_trace(
    go.Scatter(x=p_grid, y=w_grid, name="w(p)", line=dict(color="#1b9e77", width=3)), 1, 1
)
fig.add_trace(
    go.Scatter(
        x=p_grid, y=l_grid, name="l(p)", line=dict(color="#7570b3", width=2, dash="dash")
    ),
    1,
    2,
)
fig.add_trace(
    go.Scatter(
        x=p_grid, y=w_grid * l_grid, name="w(p)·l(p)", line=dict(color="#e7298a", width=3)
    ),
    1,
    2,
)
fig.update_xaxes(title_text="p = P(change | sentence)", range=[0, 1])
fig.update_yaxes(title_text="w", range=[0, 1.02], row=1, col=1)
fig.update_yaxes(title_text="evidence", range=[-8, 8], row=1, col=2)
fig.update_layout(
    height=420,
    hovermode="x unified",
    template="plotly_white",
    title="TEF's weight and a sentence's tempered evidence",
    legend=dict(orientation="h", y=-0.2),
)
fig.show()

# %% [markdown]
# The flat bottom of $w(p)\,\ell(p)$ around $p = 1/2$ is the soft censoring of {eq}`deriv-cubic`. The
# table puts numbers on it: a few probabilities, their weight, log-odds and tempered evidence.

# %%
probe = np.array([0.5, 0.55, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999])
delta = probe - 0.5
probe_table = pd.DataFrame(
    {
        "p": probe,
        "w(p)": weights(probe),
        "l(p)": clipped_log_odds(probe),
        "w(p)·l(p)": weights(probe) * clipped_log_odds(probe),
        "8δ³/log 2 (near 1/2)": 8 * delta**3 / np.log(2),
    }
)
probe_table.round(4)

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
# MV's contribution is a vote ($\operatorname{sign}(0) = +1$: ties go to change), SV's is bounded
# by $\pm 1/2$, the log-odds sum is the Bayes rule under the two assumptions, and TEF tempers it.
# SV predicts change when the mean probability is at least $1/2$, i.e. when $\sum_i (p_i - 1/2) \ge 0$,
# which gives its line. Seen this way MV keeps only the sign of each sentence's evidence and throws
# away its size; SV keeps the size but squashes it: it grows like $\ell/4$ near zero (the same
# shape as the log-odds there) and saturates at $\pm 1/2$, so a sentence at $p = 0.999$ counts
# barely more than one at $p = 0.95$. The log-odds sum keeps the size exactly, which is right only
# when the judge is calibrated and the sentences independent. TEF keeps the large contributions of
# the log-odds sum and removes the small ones.
#
# Since a decision depends only on the sign of the sum, multiplying $\varphi$ by a constant changes
# nothing. The figure therefore scales each rule so that a sentence at $p = 0.95$ contributes one.

# %% tags=["hide-input"]
curves = contributions(p_grid)
reference = contributions([decisive_p]).iloc[0]
fig = go.Figure()
for rule in RULE_ORDER:
    fig.add_trace(
        go.Scatter(
            x=p_grid,
            y=curves[rule] / reference[rule],
            name=LABELS[rule],
            line=dict(color=COLORS[rule], width=3 if rule == "tef" else 2),
        )
    )
fig.update_layout(
    height=430,
    template="plotly_white",
    hovermode="x unified",
    title=f"Contribution of one sentence, relative to a sentence at p = {decisive_p}",
    xaxis_title="p = P(change | sentence)",
    yaxis_title="relative contribution",
    yaxis_range=[-2.5, 2.5],
    legend=dict(orientation="h", y=-0.2),
)
fig.show()

# %% [markdown]
# ### How many hedging sentences overturn a decisive one?
#
# One way to read the figure: a post has one decisive sentence at $p = $ `decisive_p` and $n$
# hedging ones at $p = $ `hedging_p`, leaning slightly the other way. How large must $n$ be for each
# rule to flip to the hedging side? The answer is the ratio of the two contributions
# (`tefcore.simulate.contributions` returns $\varphi$ of every rule); we also let `fuse_many` decide
# the posts $n = 0, 1, \dots$ and report the first $n$ at which each rule flips.

# %%
# exchange rate: how many hedging contributions cancel one decisive contribution, per rule
rate = contributions([decisive_p]).iloc[0] / -contributions([hedging_p]).iloc[0]
# post n holds one decisive sentence followed by n hedging ones; fuse_many decides all of them
n_hedge = np.arange(max_hedging + 1)
p_flat = np.concatenate([np.r_[decisive_p, np.full(n, hedging_p)] for n in n_hedge])
doc = np.repeat(n_hedge, n_hedge + 1)
first_flip = {}
for rule in RULE_ORDER:
    pred = fuse_many(p_flat, doc, rule=rule).prediction
    flipped = np.flatnonzero(pred != pred[0])
    first_flip[rule] = int(flipped[0]) if flipped.size else f"> {max_hedging}"
pd.DataFrame(
    {
        "exchange rate (hedging sentences per decisive one)": rate[RULE_ORDER].round(1),
        f"first n that flips (n ≤ {max_hedging})": pd.Series(first_flip),
    }
).rename(index=LABELS)

# %% [markdown]
# MV flips as soon as the hedging sentences outnumber the decisive one (at one hedging sentence the
# vote is tied and goes to change). SV holds out longer, the log-odds sum longer still, and TEF's
# exchange rate is in the thousands: the hedging sentences are, in effect, not counted. Whether that
# is good depends on whether the hedging probabilities carry real evidence; chapter 2 explores both
# cases with detectors whose calibration we control.
#
# ## A worked example
#
# One post, five sentences: the parameter `example_posteriors` (default: one sentence at $0.90$
# and four hedging ones slightly on the stability side). The table shows each sentence's vote,
# weight, log-odds and tempered evidence; the second table what each rule concludes, computed by the
# per-document functions of `tefcore.fusion`.

# %%
ex = np.asarray(example_posteriors, dtype=float)
sentence_table = pd.DataFrame(
    {
        "p = P(change)": ex,
        "MV vote": np.where(ex >= 0.5, "change", "stability"),
        "w(p)": weights(ex),
        "l(p)": clipped_log_odds(ex),
        "w(p)·l(p)": weights(ex) * clipped_log_odds(ex),
    },
    index=pd.RangeIndex(1, len(ex) + 1, name="sentence"),
)
sentence_table.round(3)

# %%
outcome = []
for rule in RULE_ORDER + ["tef_without_log_odds"]:
    r = RULES[rule](ex)
    outcome.append(
        {
            "rule": LABELS[rule],
            "prediction": r.prediction,
            "score (change)": round(r.scores[0], 3),
            "confidence": round(r.confidence, 3),
        }
    )
pd.DataFrame(outcome).set_index("rule")

# %% [markdown]
# The scores are on each rule's own scale: the share of change votes for MV, the mean probability
# for SV and for the w/o Log-Odds ablation (whose mean is weighted by $w_i$), and the evidence sum
# for the two log-odds rules. TEF's confidence is the softmax of its two scores at temperature
# $T = 5$, i.e. $\sigma(2\,|\mathrm{Score}(c)|/5)$.
#
# With the default posteriors MV and SV side with the four hedging sentences: four votes against
# one, and a mean probability just under $1/2$. The log-odds sum and TEF side with the decisive
# sentence, the sum narrowly (the hedging log-odds are not small enough to ignore) and TEF clearly,
# because its weights all but remove the hedging sentences. Change `example_posteriors` in the
# parameters cell and re-run to see where each rule's decision turns.
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
