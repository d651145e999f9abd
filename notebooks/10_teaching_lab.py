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
# # Teaching lab: fusing sentence decisions
#
# Six exercises on decision fusion, built on the simulated detectors of chapter 2
# (`tefcore.simulate`) and the fusion rules of `tefcore.fusion`. Each exercise has a cell for your
# answer, which runs as it is and tells you whether an answer is there yet, followed by a hidden
# solution: click **Solution** (or *Show code cell content*) to open it. Work in a copy of the
# notebook: `jupytext --to ipynb notebooks/10_teaching_lab.py` gives one. The lab reads no MIND data;
# every post in it is simulated or written down by hand.
#
# Background: chapter 1 (the derivation, equations {eq}`deriv-weight` and {eq}`deriv-phi`) and
# chapter 2 (the propositions). Natural logarithms throughout.

# %% tags=["parameters"]
seed = 7
n_posts = 2000
lab_decisive = 1
lab_uncertain = 6
lab_lean = 0.5
sweep = [0.25, 0.5, 1.0, 2.0, 4.0]

# %% tags=["hide-input"]
from tefcore.chapters.parameters import check_parameters

check_parameters("10_teaching_lab")  # a misspelt -p name fails here, naming the parameters above

import numpy as np
import pandas as pd
from IPython.display import display
from myst_nb import glue

from tefcore import information
from tefcore import simulate as sim
from tefcore.chapters import theory
from tefcore.chapters.figures import setup_notebook
from tefcore.chapters.presentation import bold_best, format_columns
from tefcore.fusion import clipped_log_odds, entropy_weight, fuse_many  # noqa: F401 (for your answers)

setup_notebook()
for key, value in theory.lab_numbers(strength=sim.Detector().strength).items():
    glue(key, value, display=False)

# %% [markdown]
# ## Exercise 1: weights and log-odds by hand
#
# For $p \in \{0.5, 0.6, 0.9, 0.99\}$ compute, with a pocket calculator,
# the entropy $H(p) = -p\log p - (1-p)\log(1-p)$, the weight $w(p) = 1 - H(p)/\log 2$,
# the log-odds $\ell(p) = \log\frac{p}{1-p}$ and the tempered evidence $w(p)\,\ell(p)$.
# Which of the four sentences would you call decisive?

# %%
# Your answers (replace None by numbers, two decimals are enough)
my_w = {0.5: None, 0.6: None, 0.9: None, 0.99: None}
my_l = {0.5: None, 0.6: None, 0.9: None, 0.99: None}
_ = theory.check_numbers(my_w, entropy_weight)
_ = theory.check_numbers(my_l, clipped_log_odds)

# %% [markdown]
# ```{admonition} Solution
# :class: dropdown
#
# For $p = 0.9$: $H = -0.9\log 0.9 - 0.1\log 0.1 =$ {glue:text}`e1_h09a:.4f` $+$
# {glue:text}`e1_h09b:.4f` $=$ {glue:text}`e1_h09:.4f`, so
# $w = 1 -$ {glue:text}`e1_h09:.4f` $/$ {glue:text}`e1_log2:.4f` $=$ {glue:text}`e1_w09:.3f`;
# $\ell = \log 9 =$ {glue:text}`e1_l09:.3f` and $w\ell =$ {glue:text}`e1_c09:.3f`.
# For $p = 0.5$ the entropy is its maximum $\log 2$: $w = 0$, $\ell = 0$.
# For $p = 0.6$: $w =$ {glue:text}`e1_w06:.3f` and $\ell =$ {glue:text}`e1_l06:.3f`, so
# $w\ell =$ {glue:text}`e1_c06:.3f`: the $p = 0.9$ sentence's tempered evidence is
# {glue:text}`e1_c_ratio:.0f` times as large, although its log-odds are only
# {glue:text}`e1_l_ratio:.1f` times as large. For $p = 0.99$: $w =$ {glue:text}`e1_w099:.3f`,
# $\ell =$ {glue:text}`e1_l099:.3f`, $w\ell =$ {glue:text}`e1_c099:.3f`. The last two are decisive,
# $0.6$ is not. The hidden cell below computes the whole table with `tefcore.fusion`.
# ```

# %% tags=["hide-cell"]
ps = np.array([0.5, 0.6, 0.9, 0.99])
pd.DataFrame({
    "p": ps,
    "H(p)": information.binary_entropy(ps),
    "w(p)": entropy_weight(ps),
    "l(p)": clipped_log_odds(ps),
    "w(p)·l(p)": entropy_weight(ps) * clipped_log_odds(ps),
}).round(3)

# %% [markdown]
# ## Exercise 2: the bounds of the weight
#
# Prove, for $K = 2$:
#
# 1. $0 \le w(p) \le 1$, with $w = 0$ only at $p = 1/2$ and $w = 1$ only at $p \in \{0, 1\}$;
# 2. $w(p) = w(1-p)$;
# 3. $w$ increases with $|p - 1/2|$;
# 4. near the middle, $w(1/2 + \delta) = \frac{2\delta^2}{\log 2} + O(\delta^4)$;
# 5. for $K$ classes, $\log K - H(\mathbf p) = \mathrm{KL}(\mathbf p \,\|\, u)$ with $u$ the uniform
#    distribution, hence $0 \le w(\mathbf p) \le 1$ in general.
#
# Then check (1)-(4) numerically on a grid.

# %%
# Your numerical check here (for example with numpy and tefcore.fusion.entropy_weight)
grid = np.linspace(0, 1, 1001)

# %% [markdown]
# ```{admonition} Solution
# :class: dropdown
#
# (1) Each term $-p\log p$ is non-negative on $[0, 1]$, so $H \ge 0$ and $w \le 1$, with equality
# only when both terms vanish, i.e. $p \in \{0, 1\}$. For the lower bound use (5) with $K = 2$:
# $\log 2 - H(p) = \mathrm{KL}((p, 1-p) \,\|\, (1/2, 1/2)) \ge 0$ by Gibbs' inequality, with
# equality only at $p = 1/2$.
#
# (2) $H$ is symmetric in its two arguments: $H(p) = H(1-p)$.
#
# (3) $\frac{dH}{dp} = \log\frac{1-p}{p} = -\ell(p)$, negative for $p > 1/2$: $H$ decreases and $w$
# increases on $[1/2, 1]$; by (2) the same holds on the other side.
#
# (4) $H''(p) = -\frac{1}{p(1-p)}$ equals $-4$ at $p = 1/2$ and $H'(1/2) = 0$, so
# $H(1/2 + \delta) = \log 2 - 2\delta^2 + O(\delta^4)$ (odd terms vanish by symmetry) and
# $w = 2\delta^2/\log 2 + O(\delta^4)$.
#
# (5) $\mathrm{KL}(\mathbf p \,\|\, u) = \sum_k p^{(k)} \log\frac{p^{(k)}}{1/K}
# = \log K - H(\mathbf p)$. KL is non-negative, and at most $\log K$ because $H \ge 0$.
#
# The hidden cell checks (1)-(4) on a grid of probabilities (`theory.weight_properties`).
# ```

# %% tags=["hide-cell"]
properties = theory.weight_properties(grid.size)
assert properties["holds"].all(), properties
properties

# %% [markdown]
# ## Exercise 3: how many hedging sentences overturn a decisive one?
#
# A post has one sentence at $p = 0.95$ and $n$ sentences at $p = 0.45$. For each rule (MV, SV, the
# plain log-odds sum and TEF), find the smallest $n$ for which the post is decided "stability".
# Remember that ties go to change. Work it out on paper first (chapter 1, {eq}`deriv-phi`), then
# confirm with `fuse_many`.

# %%
my_n = {
    "majority_vote": None,
    "soft_vote": None,
    "tef_without_entropy": None,
    "tef": None,
}
_ = theory.check_first_flips(my_n, strong=0.95, weak=0.45)

# %% [markdown]
# ```{admonition} Solution
# :class: dropdown
#
# - MV: at $n = 1$ the vote is one against one, a tie, which goes to change;
#   $n =$ {glue:text}`e3_mv:.0f` flips it.
# - SV: the mean is below $1/2$ when $(0.95 - 0.5) < n\,(0.5 - 0.45)$, i.e.
#   $n >$ {glue:text}`e3_sv_ratio:.0f` (at that $n$ the mean is exactly $1/2$, a tie):
#   $n =$ {glue:text}`e3_sv:.0f`.
# - Log-odds sum: $\ell(0.95) =$ {glue:text}`e3_l_strong:.3f` and $\ell(0.45) =$
#   {glue:text}`e3_l_weak:.4f`; the sum is negative when $n >$ {glue:text}`e3_sum_ratio:.2f`:
#   $n =$ {glue:text}`e3_sum:.0f`.
# - TEF: $w(0.95)\,\ell(0.95) =$ {glue:text}`e3_c_strong:.3f` and $w(0.45)\,\ell(0.45) =$
#   {glue:text}`e3_c_weak:.5f`; the score is negative when $n >$ {glue:text}`e3_tef_ratio:.1f`:
#   $n =$ {glue:text}`e3_tef:,.0f`.
#
# Under TEF, a decisive sentence is worth about {glue:text}`e3_tef:,.0f` hedging ones; under MV, one.
# The hidden cell lets `fuse_many` find the same numbers (`theory.first_flips`).
# ```

# %% tags=["hide-cell"]
flips = theory.first_flips(0.95, 0.45, range(2000))
flips.rename(index=theory.CURVE_LABELS).to_frame()

# %% [markdown]
# ### Explore: other probabilities
#
# The figure answers the same question for any pair of probabilities: drag the decisive sentence's
# and the hedging sentences' probabilities and read each rule's decision for every $n$ up to 30, its
# exchange rate (hedging sentences per decisive one) and the first $n$ that turns the post. Your
# browser computes it from the contributions of chapter 1, written below in the expression language
# of Vega (the engine that draws the figure); no Python runs while you drag. Before you touch the
# sliders, predict: what happens to TEF's exchange rate when the hedging sentences move from 0.45 to
# 0.3? And when the decisive sentence drops from 0.95 to 0.8?

# %% tags=["explorable"]
from tefcore.fusion import CLIP, EPS, TIE_RTOL  # M, ε and the tie tolerance of tefcore.fusion


def vega_contributions(p: str) -> dict[str, str]:
    """What one sentence at p adds to each rule's sum (chapter 1), as Vega expressions."""
    w = f"(1 + ((({p}) > 0 ? ({p}) * log({p}) : 0) + (({p}) < 1 ? (1 - ({p})) * log(1 - ({p})) : 0)) / LN2)"
    q = f"clamp({p}, {EPS}, {1 - EPS})"
    ell = f"clamp(log({q}) - log(1 - {q}), {-CLIP}, {CLIP})"
    return {"Majority Vote": f"(({p}) >= 0.5 ? 1 : -1)", "Soft Vote": f"(({p}) - 0.5)",
            "log-odds sum": ell, "TEF": f"{w} * {ell}"}


def vega_first_flip(rule: str, decisive: str, hedging: str) -> str:
    """The smallest n for which one decisive sentence followed by n hedging ones is decided stability."""
    if rule == "Majority Vote":  # n = 1 is a tie, won by the first vote cast: the decisive sentence's
        return f"({hedging}) < 0 ? 2 : 1 / 0"
    rate = f"({decisive}) / -({hedging})"  # the exchange rate: hedging sentences per decisive one
    return f"({hedging}) < 0 ? floor({rate} * (1 + 2 * {TIE_RTOL})) + 1 : 1 / 0"  # n = rate is a tie


# %% tags=["explorable", "hide-input"]
import altair as alt
from tefcore.fusion import CLASSES

SIDES = alt.Scale(domain=list(CLASSES), range=["#1b9e77", "#d95f02"])
EMBED = {"renderer": "svg", "actions": {"export": True, "source": False, "compiled": False, "editor": False}}


def exchange_figure(decisive0: float, hedging0: float, n_max: int = 30) -> alt.VConcatChart:
    """One decisive sentence against n hedging ones: a slider for each probability, each rule's decision
    for n = 0 .. n_max as a strip, its exchange rate and first flip in words, all computed by Vega."""
    decisive = alt.param(name="pd", value=decisive0, bind=alt.binding_range(
        min=0.5, max=1, step=0.005, name="decisive sentence: p "))
    hedging = alt.param(name="ph", value=hedging0, bind=alt.binding_range(
        min=0, max=0.5, step=0.005, name="each hedging sentence: p "))
    c_d, c_h = vega_contributions("pd"), vega_contributions("ph")
    rules = list(c_d)
    first = "{" + ", ".join(f"'{r}': {vega_first_flip(r, c_d[r], c_h[r])}" for r in rules) + "}[datum.rule]"
    rate = "{" + ", ".join(f"'{r}': ({c_h[r]}) < 0 ? ({c_d[r]}) / -({c_h[r]}) : 1 / 0" for r in rules) + "}[datum.rule]"
    grid = alt.Chart(alt.Data(values=[{"rule": r, "n": n} for r in rules for n in range(n_max + 1)]))
    grid = grid.transform_calculate(first=first).transform_calculate(
        decision="datum.n < datum.first ? 'change' : 'stability'")
    y = alt.Y("rule:N", sort=rules, title=None, axis=alt.Axis(labelFontSize=13, labelFontWeight="bold"))
    strip = grid.mark_rect(stroke="white", strokeWidth=1).encode(
        x=alt.X("n:O", title="n, the number of hedging sentences after the decisive one"),
        y=y, color=alt.Color("decision:N", title="the post is decided", scale=SIDES, legend=alt.Legend(orient="top")),
        tooltip=["rule:N", "n:O", "decision:N"]).properties(width=520, height=26 * len(rules))
    summary = alt.Chart(alt.Data(values=[{"rule": r} for r in rules])).transform_calculate(
        first=first, rate=rate).transform_calculate(
        text="isFinite(datum.rate) ? 'one decisive sentence is worth ' + format(datum.rate, ',.1f')"
             " + ' hedging ones; the post turns at n = ' + format(datum.first, ',d')"
             " : 'the hedging sentences never turn the post'")
    words = summary.mark_text(align="left", fontSize=13).encode(y=y, x=alt.value(4), text="text:N").properties(
        width=520, height=26 * len(rules))
    return alt.vconcat(strip, words, spacing=15).add_params(decisive, hedging).configure_view(stroke=None).properties(
        usermeta={"embedOptions": EMBED})  # drawn as SVG; the menu saves images, nothing opens online


# %% tags=["hide-input"]
exchange_figure(0.95, 0.45)

# %% [markdown]
# ## Exercise 4: find a post where MV and TEF disagree
#
# Simulate `n_posts` posts with `lab_decisive` decisive and `lab_uncertain` uncertain sentences each
# from a judge that leans towards change (`logit_bias = lab_lean`), as the cell below does. Fuse them with MV and with TEF.
# (a) On how many posts do the two rules disagree? (b) Show the sentences of one such post: what
# does each rule see? (c) On the disagreements, which rule is right more often, and why?

# %%
corpus = sim.simulate_documents(n_posts, n_decisive=lab_decisive,
                                n_uncertain=lab_uncertain, logit_bias=lab_lean,
                                rng=seed)
# Your code here: fuse corpus.p with corpus.doc_index under "majority_vote" and
# "tef", compare the predictions with each other and with corpus.y
disagreements = None
answer = "not computed yet" if disagreements is None else disagreements
print("answer (a):", answer)

# %% [markdown]
# ```{admonition} Solution
# :class: dropdown
#
# The hidden cell counts the disagreements (`theory.disagreements`) and shows the first one. In a
# typical disagreement the decisive sentence points to stability, and the uncertain sentences sit a
# little above $1/2$ because of the judge's lean: MV counts many change votes against one, TEF gives
# the uncertain sentences weights of a few hundredths and follows the decisive one. On the
# disagreements TEF is right far more often than MV, because the lean carries no information about
# the post while the decisive sentence does (alone, it is right {glue:text}`e4_acc_dec:.0f` % of the
# time).
# ```

# %% tags=["hide-cell"]
summary, first = theory.disagreements(corpus, "majority_vote", "tef")
display(bold_best(summary[["right there", "right there (%)"]]))
post = first.attrs
print(f"the first: post {post['post']}, gold side {post['gold']}; "
      f"MV says {post['majority_vote']}, TEF says {post['tef']}")
first.round(3)

# %% [markdown]
# ## Exercise 5: a miscalibrated judge
#
# Take a *calibrated* simulated judge and make it sharper or flatter with a temperature $T$
# (`temperature=T` in `simulate_documents`: the reported log-odds are the calibrated ones divided by
# $T$). Before running anything, predict: as $T$ goes over `sweep`, which of MV, SV, the log-odds
# sum and TEF keep exactly the same accuracy, and why? What does TEF turn into when $T \to 0$, and
# when $T \to \infty$? Then run the sweep (same `rng` seed for every $T$, so that only the
# temperature changes).

# %%
my_prediction = {
    "unchanged rules": None,
    "TEF as T -> 0": None,
    "TEF as T -> infinity": None,
}
my_prediction

# %% [markdown]
# ```{admonition} Solution
# :class: dropdown
#
# A temperature multiplies every log-odds by $1/T$ and keeps its sign. MV only reads signs: no
# change. The log-odds sum is multiplied by $1/T$ as a whole: its sign, hence its decision, does not
# change either (as long as the clip at $M$ does not bind, which it starts to do at small $T$).
# SV and TEF are not scale-free and do change. As $T \to 0$ every posterior goes to 0 or 1, every
# weight to 1 and every log-odds to $\pm M$: TEF becomes $M$ times the vote count, i.e. MV. As
# $T \to \infty$ every posterior goes to $1/2$, $w \approx \ell^2/(8\log 2)$ and TEF follows the sign
# of $\sum_i \ell_i^3$, a rule that trusts large log-odds even more than the sum does, while SV tends
# to the log-odds sum (its contribution is $\approx \ell/4$ near the middle). The hidden cell runs
# the sweep (`theory.temperature_accuracy`; accuracy in percent, the best rule at each $T$ in bold).
# ```

# %% tags=["hide-cell"]
table = theory.temperature_accuracy(sweep, n_posts, seed)
theory.accuracy_figure(table).show()
bold_best(table, digits=2)

# %% [markdown]
# ## Exercise 6: the information a hard vote throws away
#
# Proposition 1 says $I(Y; p_i) \ge I(Y; \hat y_i)$. For a sentence of strength $\mu = 1$:
#
# 1. get the exact values with `sim.gaussian_information(1.0)`;
# 2. draw 2,000 sentences (`sim.simulate_documents(2000, n_decisive=1, n_uncertain=0, strength=1.0,
#    rng=seed)`) and estimate both with `information.mutual_information` (use `bins=None` for the
#    hard labels);
# 3. repeat the estimate of $I(Y; p_i)$ with 4, 16 and 64 bins. Why does the estimate move with the
#    number of bins, and in which direction do the two sources of error push it?

# %%
# Your code here
my_estimates = {"exact soft": None, "exact hard": None,
                "plug-in soft (16 bins)": None}
my_estimates

# %% [markdown]
# ```{admonition} Solution
# :class: dropdown
#
# The exact values are $I(Y; p) =$ {glue:text}`e6_soft:.3f` and $I(Y; \hat y) =$
# {glue:text}`e6_hard:.3f` nats. The plug-in estimate has two errors of opposite sign. Binning merges
# posteriors, which is itself a processing step and can only *lose* information (the estimate of the
# binned variable is below $I(Y; p)$ for the true distribution); the finite sample *adds* a positive
# bias of roughly $(\text{bins} - 1)/(2n)$ nats, because random fluctuations look like dependence.
# Few bins: binning loss dominates; many bins on few sentences: the sample bias dominates. Because
# $1/2$ is always a bin edge, the soft estimate is never below the hard one on the same sample,
# whatever the number of bins. The hidden cell computes all of them
# (`theory.information_estimates`).
# ```

# %% tags=["hide-cell"]
format_columns(theory.information_estimates(1.0, 2000, seed), digits=4)
