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
# notebook: `jupytext --to ipynb notebooks/10_teaching_lab.py` gives one.
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

# %%
from tefcore.chapters.parameters import check_parameters

check_parameters("10_teaching_lab")  # a misspelt -p name fails here, naming the parameters above

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from IPython.display import display

from tefcore import information
from tefcore import simulate as sim
from tefcore.chapters.presentation import RULE_LABELS
from tefcore.fusion import clipped_log_odds, fuse_many, weights
from tefcore.chapters.figures import setup_notebook

_ = setup_notebook()


def check_numbers(answers: dict, reference, tol: float = 0.01) -> None:
    """Compare your numbers with a reference function; None means 'not answered yet'."""
    for x, mine in answers.items():
        if mine is None:
            print(f"{x}: no answer yet")
            continue
        truth = float(np.asarray(reference(np.array([x])))[0])
        verdict = (
            "correct"
            if abs(mine - truth) <= tol
            else f"not quite (off by {mine - truth:+.3f})"
        )
        print(f"{x}: {verdict}")


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
check_numbers(my_w, weights)
check_numbers(my_l, clipped_log_odds)

# %% [markdown]
# ```{admonition} Solution
# :class: dropdown
#
# For $p = 0.9$: $H = -0.9\log 0.9 - 0.1\log 0.1 = 0.0948 + 0.2303 = 0.3251$, so
# $w = 1 - 0.3251/0.6931 = 0.531$; $\ell = \log 9 = 2.197$ and $w\ell = 1.167$.
# For $p = 0.5$ the entropy is its maximum $\log 2$: $w = 0$, $\ell = 0$.
# For $p = 0.6$: $w = 0.029$ and $\ell = 0.405$, so $w\ell = 0.012$, a hundredth of the $p = 0.9$
# sentence although its log-odds is only five times smaller. For $p = 0.99$: $w = 0.919$,
# $\ell = 4.595$, $w\ell = 4.224$. The last two are decisive, $0.6$ is not. The hidden cell below
# computes the whole table with `tefcore.fusion`.
# ```

# %% tags=["hide-cell"]
ps = np.array([0.5, 0.6, 0.9, 0.99])
pd.DataFrame(
    {
        "p": ps,
        "H(p)": information.binary_entropy(ps),
        "w(p)": weights(ps),
        "l(p)": clipped_log_odds(ps),
        "w(p)·l(p)": weights(ps) * clipped_log_odds(ps),
    }
).round(3)

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
# Your numerical check here (for example with numpy and tefcore.fusion.weights)
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
# ```

# %% tags=["hide-cell"]
w = weights(grid)
assert w.min() >= 0 and w.max() <= 1  # (1)
assert w[500] == 0 and w[0] == 1 and w[-1] == 1  # (1) at 1/2, 0 and 1
assert np.allclose(w, w[::-1])  # (2)
assert np.all(np.diff(w[500:]) > 0)  # (3)
delta = grid[480:521] - 0.5
assert np.allclose(w[480:521], 2 * delta**2 / np.log(2), atol=2e-5)  # (4)
print("all four properties hold on the grid")

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


def flips_at(rule: str, n: int) -> bool:
    """Whether one sentence at 0.95 and n at 0.45 are decided 'stability' by the rule."""
    p = np.r_[0.95, np.full(n, 0.45)]
    return fuse_many(p, np.zeros(p.size, dtype=int), rule=rule).prediction[0] == "stability"


for rule, n in my_n.items():
    if n is None:
        print(f"{RULE_LABELS[rule]}: no answer yet")
    else:
        ok = flips_at(rule, n) and (n == 0 or not flips_at(rule, n - 1))
        print(f"{RULE_LABELS[rule]}: {'correct' if ok else 'not quite'}")

# %% [markdown]
# ```{admonition} Solution
# :class: dropdown
#
# - MV: at $n = 1$ the vote is one against one, a tie, which goes to change; $n = 2$ flips it.
# - SV: the mean is below $1/2$ when $(0.95 - 0.5) < n\,(0.5 - 0.45)$, i.e. $n > 9$
#   (at $n = 9$ the mean is exactly $1/2$, a tie): $n = 10$.
# - Log-odds sum: $\ell(0.95) = 2.944$ and $\ell(0.45) = -0.2007$; the sum is negative when
#   $n > 14.67$: $n = 15$.
# - TEF: $w(0.95)\,\ell(0.95) = 2.101$ and $w(0.45)\,\ell(0.45) = -0.00145$; the score is negative
#   when $n > 1449.1$: $n = 1450$.
#
# Under TEF, a decisive sentence is worth about 1,450 hedging ones; under MV, one.
# ```

# %% tags=["hide-cell"]
solution_n = {}
for rule in my_n:
    n = np.arange(0, 2000)
    p = np.concatenate([np.r_[0.95, np.full(k, 0.45)] for k in n])
    pred = fuse_many(p, np.repeat(n, n + 1), rule=rule).prediction
    solution_n[RULE_LABELS[rule]] = int(np.flatnonzero(pred == "stability")[0])
solution_n

# %% [markdown]
# ## Exercise 4: find a post where MV and TEF disagree
#
# Simulate `n_posts` posts with one decisive and six uncertain sentences from a judge that leans
# towards change (`logit_bias = lab_lean`):
#
# ```python
# corpus = sim.simulate_documents(n_posts, n_decisive=lab_decisive, n_uncertain=lab_uncertain,
#                                 logit_bias=lab_lean, rng=seed)
# ```
#
# Fuse them with MV and with TEF. (a) On how many posts do the two rules disagree? (b) Show the
# sentences of one such post: what does each rule see? (c) On the disagreements, which rule is
# right more often, and why?

# %%
corpus = sim.simulate_documents(
    n_posts,
    n_decisive=lab_decisive,
    n_uncertain=lab_uncertain,
    logit_bias=lab_lean,
    rng=seed,
)
# Your code here: fuse corpus.p with corpus.doc_index under "majority_vote" and "tef",
# compare the predictions with each other and with corpus.y
disagreements = None
print("answer (a):", "not computed yet" if disagreements is None else disagreements)

# %% [markdown]
# ```{admonition} Solution
# :class: dropdown
#
# The hidden cell counts the disagreements and shows the first one. In a typical disagreement the
# decisive sentence points to stability, and the six uncertain sentences sit a little above $1/2$
# because of the judge's lean: MV counts six change votes against one, TEF gives
# the uncertain sentences weights of a few hundredths and follows the decisive one. On the
# disagreements TEF is right far more often than MV, because the lean carries no information about
# the post while the decisive sentence does (it is right 93 % of the time on its own).
# ```

# %% tags=["hide-cell"]
mv = fuse_many(corpus.p, corpus.doc_index, rule="majority_vote").prediction
tef = fuse_many(corpus.p, corpus.doc_index, rule="tef").prediction
differ = np.flatnonzero(mv != tef)
print(f"(a) MV and TEF disagree on {differ.size} of {corpus.n_docs} posts")
first = differ[0]
sentences = corpus.p[corpus.doc_index == first]
print(
    f"(b) post {first}, true side {corpus.y[first]}: MV says {mv[first]}, TEF says {tef[first]}"
)
display(
    pd.DataFrame(
        {
            "p": sentences,
            "decisive (simulated)": corpus.decisive[corpus.doc_index == first],
            "w(p)": weights(sentences),
            "w(p)·l(p)": weights(sentences) * clipped_log_odds(sentences),
        }
    ).round(3)
)
print(
    f"(c) on the disagreements, MV is right {np.mean(mv[differ] == corpus.y[differ]):.1%} "
    f"and TEF {np.mean(tef[differ] == corpus.y[differ]):.1%} of the time"
)

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
# change either (as long as the clip at $M = 10$ does not bind, which it starts to do at small $T$).
# SV and TEF are not scale-free and do change. As $T \to 0$ every posterior goes to 0 or 1, every
# weight to 1 and every log-odds to $\pm M$: TEF becomes $M$ times the vote count, i.e. MV. As
# $T \to \infty$ every posterior goes to $1/2$, $w \approx \ell^2/(8\log 2)$ and TEF follows the sign
# of $\sum_i \ell_i^3$, a rule that trusts large log-odds even more than the sum does, while SV tends
# to the log-odds sum (its contribution is $\approx \ell/4$ near the middle).
# ```

# %% tags=["hide-cell"]
rows = []
for T in sweep:
    c = sim.simulate_documents(
        n_posts, n_decisive=1, n_uncertain=4, temperature=T, rng=seed
    )
    row = {"T": T}
    for rule in ("majority_vote", "soft_vote", "tef_without_entropy", "tef"):
        row[RULE_LABELS[rule]] = np.mean(
            fuse_many(c.p, c.doc_index, rule=rule).prediction == c.y
        )
    rows.append(row)
table = pd.DataFrame(rows).set_index("T")
fig = go.Figure()
for col in table.columns:
    fig.add_trace(go.Scatter(x=table.index, y=table[col], mode="lines+markers", name=col))
fig.update_xaxes(
    type="log", title_text="temperature T (< 1 overconfident, > 1 underconfident)"
)
fig.update_layout(
    height=380,
    template="plotly_white",
    yaxis_title="accuracy",
    title="Accuracy under a temperature",
    legend=dict(orientation="h", y=-0.3),
)
fig.show()
table.round(4)

# %% [markdown]
# ## Exercise 6: the information a hard vote throws away
#
# Proposition 1 says $I(Y; p_i) \ge I(Y; \hat y_i)$. For a sentence of strength $\mu = 1$:
#
# 1. get the exact values with `sim.gaussian_information(1.0)`;
# 2. draw 2,000 sentences (`sim.simulate_documents(2000, n_decisive=1, n_uncertain=0, strength=1.0,
#    rng=seed)`) and estimate both with `information.mutual_information` (use `bins=None` for the hard labels);
# 3. repeat the estimate of $I(Y; p_i)$ with 4, 16 and 64 bins. Why does the estimate move with the
#    number of bins, and in which direction do the two sources of error push it?

# %%
# Your code here
my_estimates = {"exact soft": None, "exact hard": None, "plug-in soft (16 bins)": None}
my_estimates

# %% [markdown]
# ```{admonition} Solution
# :class: dropdown
#
# The exact values are $I(Y; p) = 0.111$ and $I(Y; \hat y) = 0.075$ nats. The plug-in estimate has two
# errors of opposite sign. Binning merges posteriors, which is itself a processing step and can only
# *lose* information (the estimate of the binned variable is below $I(Y; p)$ for the true
# distribution); the finite sample *adds* a positive bias of roughly $(\text{bins} - 1)/(2n)$ nats,
# because random fluctuations look like dependence. Few bins: binning loss dominates; many bins on
# few sentences: the sample bias dominates. Because $1/2$ is always a bin edge, the soft estimate is
# never below the hard one on the same sample, whatever the number of bins.
# ```

# %% tags=["hide-cell"]
exact = sim.gaussian_information(1.0)
c = sim.simulate_documents(2000, n_decisive=1, n_uncertain=0, strength=1.0, rng=seed)
estimates = {
    "exact I(Y;p)": exact.soft,
    "exact I(Y;ŷ)": exact.hard,
    "plug-in I(Y;ŷ)": information.mutual_information(c.y, c.p >= 0.5, bins=None),
}
for b in (4, 16, 64):
    estimates[f"plug-in I(Y;p), {b} bins"] = information.mutual_information(c.y, c.p, bins=b)
    estimates[f"  sample bias ≈ (bins-1)/(2n), {b} bins"] = (b - 1) / (2 * c.n_docs)
pd.Series(estimates, name="nats").round(4)
