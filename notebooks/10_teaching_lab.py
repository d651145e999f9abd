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
#   tef_launch: true
# ---

# %% [markdown]
# # Teaching lab: fusing sentence decisions
#
# A 90-minute class on the first two chapters: seven exercises on how sentence-level judgments should be
# combined into one decision about a post, with simulated judges whose calibration we control
# (`tefcore.simulate`) and the fusion rules of the paper (`tefcore.fusion`). Every post of the first six
# exercises is simulated or written down by hand; the last one reads two real posts of the MIND sample
# that ships with `tefcore`, with the probabilities a judge gave their sentences written out, so the lab
# runs anywhere `tefcore` runs.
#
# ## Learning objectives
#
# After the class a student can
#
# 1. compute a sentence's entropy, TEF weight $w(p)$, log-odds $\ell(p)$ and tempered evidence
#    $w(p)\,\ell(p)$ by hand, and say why the tempered evidence all but vanishes near $p = 1/2$
#    (exercise 1);
# 2. prove the bounds of the weight, its symmetry and its behaviour near $1/2$, and read
#    $\log K - H$ as a Kullback-Leibler divergence (exercise 2);
# 3. compute, for Majority Vote (MV), Soft Vote (SV), the plain log-odds sum and TEF, how many hedging
#    sentences outvote one decisive sentence: each rule's exchange rate (exercise 3);
# 4. tell a rule that wins because of how a simulation was built from one that wins in general
#    (exercise 4);
# 5. predict which rules a judge's temperature cannot change, and check the prediction (exercise 5);
# 6. estimate mutual information from a sample and name the two errors of the estimate
#    (exercise 6);
# 7. read a real post sentence by sentence and predict what MV, SV and TEF decide before any rule is
#    run (exercise 7).
#
# ## Timing plan
#
# | minutes | part | what the class does |
# | --- | --- | --- |
# | 0–5 | set-up | open the lab as a notebook (see below), run its first cells; drag the sentences of chapter 1's figure |
# | 5–15 | exercise 1 | four sentences by hand with a pocket calculator, then the check |
# | 15–30 | exercise 2 | the proofs in pairs, then the numerical check on a grid |
# | 30–45 | exercise 3 | the exchange rates on paper, the check with `fuse_many`, then the figure |
# | 45–57 | exercise 4 | the disagreements of MV and TEF on a leaning judge, and what the simulation built in |
# | 57–70 | exercise 5 | a temperature sweep: predictions first, then the run |
# | 70–78 | exercise 6 | mutual information, exact and estimated (or as homework) |
# | 78–85 | exercise 7 | two real posts: predict the rules' decisions from the shaded sentences, then the check |
# | 85–90 | discussion | the questions at the end |
#
# ## How to work
#
# Each exercise has an answer cell: replace each `None` by your answer and run the cell; its check
# prints ✓ for a right answer, ✗ for one that is off, with a hint of what was expected (the kind of
# value, its range, too high or too low when it lies outside that range), and counts the answers
# still missing. Numbers are compared at the decimals the exercise states: the check rounds your
# answer to them and accepts it when it is less than one unit of the last decimal from the exact
# value, so give at least that many decimals (more do no harm). A check never stops
# the notebook, so the rest of the lab runs whatever the state of the answers. The two cells below the
# parameters install `tefcore` where it is missing and load what the lab uses.
#
# If something goes wrong: a `ModuleNotFoundError` for `tefcore` in the second cell means the copy
# of the lab names no repository (set `repository` to the book's `owner/name`, or install `tefcore`
# yourself); on Colab, run the cells from the top after a restart of the runtime, since the install
# lives in the runtime, not in the notebook.
#
# Background: chapter 1 (the derivation of the weight, and the four rules written on one scale) and
# chapter 2 (the propositions). Natural logarithms throughout.

# %% [markdown] tags=["book-only"]
# ### Two editions
#
# This page is the teacher's edition: each exercise is followed by its solution in a dropdown (the few
# lines of numpy and `fuse_many` that a student writes, ending with the same check) and by what the
# result means, also folded; the notes for the teacher are folded too. The students get the student
# edition, a notebook with the same exercises and checks and no solution or teacher note:
# {download}`download the student notebook <10_teaching_lab_student.ipynb>` for your own Jupyter, or,
# where the book is published with its repository, open it with the launch button at the top of the
# page (Binder or Colab). It reads cleanly in plain Jupyter: its numbers are written out.
#
# Before the class, open the student notebook once where the students will: Binder builds its
# environment on the first launch, which can take a few minutes; Colab needs a Google account; on
# machines of your own, `pip install` tefcore from the book's repository once. Nothing in the lab needs
# a network after that, and every cell runs in seconds on a laptop.

# %% [markdown] tags=["remove-cell", "student"]
# This is the student edition of the lab: the exercises and their checks. The solutions and the
# notes for the teacher are on the book's page.

# %% tags=["parameters"]
seed: "int >= 0" = 7
n_posts: "int >= 1" = 2000
lab_decisive = 1
lab_uncertain = 6
lab_lean = 0.5
sweep = [0.25, 0.5, 1.0, 2.0, 4.0]
lab_seeds: "int >= 2" = 20  # the seeds of exercise 5's Monte Carlo error
# the book's repository (owner/name on GitHub): the next cell installs tefcore from it
repository = ""

# %%
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("tefcore") is None:  # on Colab, or in a fresh Jupyter
    if not repository:
        raise ModuleNotFoundError("tefcore is not installed, and this copy of the lab "
                                  "names no repository: set `repository` to owner/name")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    f"tefcore @ git+https://github.com/{repository}"], check=True)

# %% tags=["hide-input"]
import os
import warnings

import numpy as np
import pandas as pd

warnings.filterwarnings("ignore", message="IProgress not found")  # a progress bar's notice, not the lab's
from tefcore import information
from tefcore import simulate as sim
from tefcore.explain import explain, render
from tefcore.fusion import CLASSES, clipped_log_odds, entropy_weight, fuse_many
from tefcore.mind import load_posts, split_sentences

try:  # in the book: its check of the parameters, its figures and its glued numbers
    from myst_nb import glue

    from tefbook.companion.figures import setup_notebook
    from tefbook.parameters import check_parameters
except ImportError:  # on Colab, Binder or your own Jupyter none of the book is needed
    if os.environ.get("TEF_BOOK_BUILD"):
        raise
    check_parameters = setup_notebook = glue = lambda *args, **kwargs: None

check_parameters("10_teaching_lab")  # a misspelt -p name fails here, naming the others
setup_notebook()
RULES = ["majority_vote", "soft_vote", "tef_without_entropy", "tef"]  # fuse_many's
NAMES = dict(zip(RULES, ["MV", "SV", "log-odds sum", "TEF"]))
SIDES = list(CLASSES)  # the two sides of a MIND dimension


def glue_all(values: dict) -> None:
    """The numbers that the text of the page quotes."""
    for name, value in values.items():
        glue(name, value.item() if isinstance(value, np.generic) else value,
             display=False)


# %% tags=["hide-input", "checks"]
# The checks of the exercises: each answer given gets ✓, or ✗ with a hint of what was expected.
from tefbook.chapters.ch10_checks import (ANSWER_KEY, check_exercise_1, check_exercise_2, check_exercise_3,
                                          check_exercise_4, check_exercise_5, check_exercise_6, check_exercise_7)

# %% tags=["remove-cell", "answer-key"]
from tefbook.chapters.ch10 import answer_key

ANSWER_KEY.update(answer_key(globals()))  # each exercise's answers, sealed when its check first runs


# %% tags=["remove-cell"]
glue_all({"n_posts": n_posts, "lab_decisive": lab_decisive, "lab_uncertain": lab_uncertain,
          "lab_lean": lab_lean, "lab_seeds": lab_seeds, "sweep": ", ".join(f"{x:g}" for x in sweep)})

# %% [markdown]
# ## Exercise 1: weights and log-odds by hand
#
# A judge hands TEF one probability per sentence, and TEF turns it into two numbers: how far the
# sentence is from "no idea" (its weight) and which side it points to, by how much (its log-odds).
# Computing them by hand once is the quickest way to feel how differently they grow.
#
# For four sentences, at $p \in \{0.5, 0.6, 0.9, 0.99\}$, compute with a pocket calculator the entropy
# $H(p) = -p\log p - (1-p)\log(1-p)$ (in nats), the weight $w(p) = 1 - H(p)/\log 2$, the log-odds
# $\ell(p) = \log\frac{p}{1-p}$ and the tempered evidence $w(p)\,\ell(p)$, each to two decimals
# (carry more decimals through the intermediate steps).
# Which of the four sentences would you call decisive?

# %% [markdown] tags=["teacher"]
# ```{admonition} For the teacher
# :class: tip dropdown
#
# The usual slips: logarithms to base 10 or 2 (with base 2 the entropy of a fair coin is 1, and the
# weight is then $1 - H$); forgetting that the entropy of $p = 1/2$ is $\log 2 \approx 0.69$ nats, not
# 1; and reading a small log-odds as no evidence (the log-odds of 0.6 are 0.41, not 0). Ask the class
# which of the four quantities separates the sentences best before showing the ratios.
# ```

# %%
my_H = {0.5: None, 0.6: None, 0.9: None, 0.99: None}
my_w = {0.5: None, 0.6: None, 0.9: None, 0.99: None}
my_l = {0.5: None, 0.6: None, 0.9: None, 0.99: None}
my_wl = {0.5: None, 0.6: None, 0.9: None, 0.99: None}
check_exercise_1(my_H, my_w, my_l, my_wl)

# %% [markdown] tags=["solution"]
# ```{admonition} Solution
# :class: dropdown
#
# For $p = 0.9$: $H = -0.9\log 0.9 - 0.1\log 0.1 =$ {glue:text}`e1_h09a:.4f` $+$
# {glue:text}`e1_h09b:.4f` $=$ {glue:text}`e1_h09:.4f`, so
# $w = 1 -$ {glue:text}`e1_h09:.4f` $/$ {glue:text}`e1_log2:.4f` $=$ {glue:text}`e1_w09:.3f`;
# $\ell = \log 9 =$ {glue:text}`e1_l09:.3f` and $w\ell =$ {glue:text}`e1_c09:.3f`.
# For $p = 0.5$ the entropy is its largest value, $\log 2$: $w = 0$ and $\ell = 0$.
# For $p = 0.6$: $w =$ {glue:text}`e1_w06:.3f` and $\ell =$ {glue:text}`e1_l06:.3f`, so
# $w\ell =$ {glue:text}`e1_c06:.4f`. For $p = 0.99$: $w =$ {glue:text}`e1_w099:.3f`,
# $\ell =$ {glue:text}`e1_l099:.3f`, $w\ell =$ {glue:text}`e1_c099:.3f`.
#
# The lesson is in the ratios: the log-odds of the $p = 0.9$ sentence are {glue:text}`e1_l_ratio:.1f`
# times those of the $p = 0.6$ one, its tempered evidence {glue:text}`e1_c_ratio:.0f` times. The
# weight, small near $1/2$ and close to one far from it, does most of the separating. The two
# sentences with $w \ge 1/2$, at 0.9 and 0.99, are the decisive ones; 0.6 is not. The code:
# ```

# %% tags=["hide-cell", "solution"]
p = np.array([0.5, 0.6, 0.9, 0.99])
H = -(p * np.log(p) + (1 - p) * np.log(1 - p))
w = 1 - H / np.log(2)
l = np.log(p / (1 - p))
by_hand = {name: dict(zip(p.tolist(), values.tolist())) for name, values in
           {"H": H, "w": w, "l": l, "wl": w * l}.items()}
check_exercise_1(**by_hand)
pd.DataFrame({"H(p)": H, "w(p)": w, "ℓ(p)": l, "w(p)·ℓ(p)": w * l},
             index=pd.Index(p, name="p")).round(4)

# %% tags=["remove-cell"]
glue_all({"e1_h09a": -0.9 * np.log(0.9), "e1_h09b": -0.1 * np.log(0.1), "e1_h09": H[2], "e1_log2": np.log(2),
          "e1_w09": w[2], "e1_l09": l[2], "e1_c09": w[2] * l[2], "e1_w06": w[1], "e1_l06": l[1],
          "e1_c06": w[1] * l[1], "e1_w099": w[3], "e1_l099": l[3], "e1_c099": w[3] * l[3],
          "e1_l_ratio": l[2] / l[1], "e1_c_ratio": (w[2] * l[2]) / (w[1] * l[1])})

# %% [markdown]
# ## Exercise 2: the bounds of the weight
#
# Prove, for $K = 2$:
#
# 1. $0 \le w(p) \le 1$, with $w = 0$ only at $p = 1/2$ and $w = 1$ only at $p \in \{0, 1\}$;
# 2. $w(p) = w(1-p)$;
# 3. $w$ increases with $|p - 1/2|$;
# 4. near the middle, $w(1/2 + \delta) = c\,\delta^2 + O(\delta^4)$: find $c$;
# 5. for $K$ classes, $\log K - H(\mathbf p) = \mathrm{KL}(\mathbf p \,\|\, u)$ with $u$ the uniform
#    distribution, hence $0 \le w(\mathbf p) \le 1$ in general.
#
# Then check (1) to (4) on a grid of 1,001 points of $[0, 1]$: the smallest and largest weight, the
# largest $|w(p) - w(1-p)|$, whether $w$ increases on $[1/2, 1]$, and $c$ estimated from the points
# nearest $1/2$ (`entropy_weight` of `tefcore.fusion` gives $w$); the numbers to two decimals.

# %% [markdown] tags=["teacher"]
# ```{admonition} For the teacher
# :class: tip dropdown
#
# Split the class in pairs: one proves (1) to (3), the other (4) and (5), then they explain their
# proofs to each other. Students who differentiate $w$ directly get lost in the algebra; the hint that
# unlocks (3) and (4) is $dH/dp = -\ell(p)$. Part (5) is the idea worth the time: the weight is a
# divergence from "no idea", which is why it needs no labels.
# ```

# %%
grid = np.linspace(0, 1, 1001)
my_properties = {"min w": None, "max w": None, "max |w(p) - w(1 - p)|": None,
                 "w increases on [1/2, 1]": None, "c": None}
check_exercise_2(my_properties)

# %% [markdown] tags=["solution"]
# ```{admonition} Solution
# :class: dropdown
#
# (1) Each term $-p\log p$ is non-negative on $[0, 1]$, so $H \ge 0$ and $w \le 1$, with equality
# only when both terms vanish, that is at $p \in \{0, 1\}$. For the lower bound use (5) with $K = 2$:
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
# $c = 2/\log 2 =$ {glue:text}`e2_c:.4f`. The least-squares fit of $w = c\,\delta^2$ on the 41 grid
# points nearest $1/2$ gives {glue:text}`e2_c_fit:.4f`.
#
# (5) $\mathrm{KL}(\mathbf p \,\|\, u) = \sum_k p^{(k)} \log\frac{p^{(k)}}{1/K}
# = \log K - H(\mathbf p)$. KL is non-negative, and at most $\log K$ because $H \ge 0$.
#
# Near the middle the weight is quadratic and the log-odds linear ($\ell \approx 4\delta$), so a
# sentence's tempered evidence is cubic in its distance from $1/2$: the soft censoring of chapter 1.
# ```
#
# ```{admonition} Why the proofs matter
# :class: dropdown
#
# (1) and (2) say the weight is a proper, side-blind discount, so TEF never reverses a sentence and
# never prefers a side; (3) says a more confident sentence always counts more; (4) is the whole of
# soft censoring, and (5) is why TEF needs no labels to compute it. They also say what the weight does
# not do: nothing in them involves whether the judge is right.
# ```

# %% tags=["hide-cell", "solution"]
w = entropy_weight(grid)
near = slice(480, 521)  # the 41 points nearest 1/2
delta = grid[near] - 0.5
properties = {"min w": w.min(), "max w": w.max(),
              "max |w(p) - w(1 - p)|": np.abs(w - w[::-1]).max(),
              "w increases on [1/2, 1]": bool(np.all(np.diff(w[500:]) > 0)),
              "c": np.sum(w[near] * delta**2) / np.sum(delta**4)}  # least squares
check_exercise_2(properties)
pd.Series(properties, name="on the grid").map(
    lambda v: ("yes" if v else "no") if isinstance(v, bool) else round(v, 3)).to_frame()

# %% tags=["remove-cell"]
glue_all({"e2_c": 2 / np.log(2), "e2_c_fit": properties["c"]})

# %% [markdown]
# ## Exercise 3: how many hedging sentences overturn a decisive one?
#
# The paper's title says "count evidence, not sentences". This exercise puts a number on it: for each
# rule, how many sentences that hedge against a post's side it takes to undo one sentence that takes
# the side clearly.
#
# A post has one sentence at $p = 0.9$, followed by $n$ sentences at $p = 0.4$. For each rule (MV,
# SV, the plain log-odds sum and TEF) find the smallest $n$ for which the post is decided
# "stability". A tie of MV goes to the side of the first vote cast (here the decisive sentence's);
# a mean of exactly $1/2$ and a sum of exactly zero go to change. Work it out on paper first, from
# each rule's contribution per sentence (chapter 1, the rules on one scale), then confirm with
# `fuse_many`.

# %% [markdown] tags=["teacher"]
# ```{admonition} For the teacher
# :class: tip dropdown
#
# Most wrong answers come from the ties: MV's tie at $n = 1$ (the first vote cast wins it) and SV's
# exact tie at its exchange rate. Draw the four contributions of chapter 1's figure on the board and ask
# for each rule's rate before anyone computes. The figure after the solution shows how fast TEF's rate
# falls once the hedging sentences carry some evidence of their own.
# ```

# %%
strong, weak = 0.9, 0.4
my_first_n = {"majority_vote": None, "soft_vote": None, "tef_without_entropy": None,
              "tef": None}
check_exercise_3(my_first_n, strong, weak)

# %% [markdown] tags=["solution"]
# ```{admonition} Solution
# :class: dropdown
#
# Each rule adds one contribution per sentence, and the post turns when the hedging sentences'
# contributions outweigh the decisive one's. Their ratio is the rule's *exchange rate*: how many
# hedging sentences one decisive sentence is worth.
#
# - MV: a vote each, a rate of one. At $n = 1$ the vote is tied and the first vote cast, the decisive
#   sentence's, wins it; $n =$ {glue:text}`e3_majority_vote:d` turns the post.
# - SV: the contributions are $p - 1/2$, so the rate is $(0.9 - 0.5)/(0.5 - 0.4) =$
#   {glue:text}`e3_sv_rate:.0f`; at that $n$ the mean is exactly $1/2$, a tie that goes to change:
#   $n =$ {glue:text}`e3_soft_vote:d`.
# - Log-odds sum: $\ell(0.9) =$ {glue:text}`e3_l_strong:.3f` and $\ell(0.4) =$
#   {glue:text}`e3_l_weak:.3f`, a rate of {glue:text}`e3_sum_rate:.2f`:
#   $n =$ {glue:text}`e3_tef_without_entropy:d`.
# - TEF: $w(0.9)\,\ell(0.9) =$ {glue:text}`e3_c_strong:.3f` and $w(0.4)\,\ell(0.4) =$
#   {glue:text}`e3_c_weak:.4f`, a rate of {glue:text}`e3_tef_rate:,.1f`: $n =$ {glue:text}`e3_tef:,d`.
#
# Under MV a decisive sentence is worth one hedging sentence; under TEF about
# {glue:text}`e3_tef_rate:,.0f`. The code builds the posts with 0 to 1,000 hedging sentences and lets
# `fuse_many` decide them all at once:
# ```

# %% tags=["hide-cell", "solution"]
n = np.arange(1001)
p = np.concatenate([np.r_[strong, np.full(k, weak)] for k in n])  # post k: 1 + k
decided = {rule: fuse_many(p, np.repeat(n, n + 1), rule=rule).prediction
           for rule in RULES}
first_n = {rule: int(n[d == "stability"][0]) for rule, d in decided.items()}
check_exercise_3(first_n, strong, weak)
pd.Series(first_n, name="first n").rename(NAMES).to_frame()

# %% tags=["remove-cell"]
one = np.array([strong, weak])
sv, total, tempered = one - 0.5, clipped_log_odds(one), entropy_weight(one) * clipped_log_odds(one)
glue_all({"e3_sv_rate": sv[0] / -sv[1], "e3_sum_rate": total[0] / -total[1],
          "e3_tef_rate": tempered[0] / -tempered[1], "e3_l_strong": total[0],
          "e3_l_weak": total[1], "e3_c_strong": tempered[0], "e3_c_weak": tempered[1]}
         | {f"e3_{rule}": first for rule, first in first_n.items()})

# %% [markdown] tags=["book-only"]
# ### Explore: other probabilities
#
# The figure answers the same question for any pair of probabilities: drag the decisive sentence's
# and the hedging sentences' probabilities and read each rule's decision for every $n$ up to 30, its
# exchange rate and the first $n$ that turns the post. Your browser computes it from the
# contributions of chapter 1; no Python runs while you drag. Before you touch the sliders, predict:
# what happens to TEF's exchange rate when the hedging sentences move from 0.4 to 0.3, and when the
# decisive sentence drops from 0.9 to 0.8?

# %% tags=["explorable", "hide-input", "book-only"]
try:  # the figure's plumbing (each rule's contribution written for the browser) is the chapter's support
    from tefbook.chapters.ch10 import exchange_figure
except ImportError:  # outside the book: the figure is on the book's page
    exchange_figure = None

# %% tags=["hide-input", "book-only"]
exchange_figure(strong, weak) if exchange_figure is not None else None

# %% [markdown] tags=["book-only"]
# What to look for: MV's rate is one whatever the probabilities, SV's and the sum's change smoothly,
# and TEF's collapses as the hedging sentences move away from $1/2$, because its contribution grows
# like the cube of that distance (chapter 1). Drag the decisive sentence down to 0.6 and see how few
# hedging sentences TEF then needs to turn the post: it discounts uncertain evidence, it does not
# protect a weak claim.

# %% [markdown]
# ## Exercise 4: where MV and TEF disagree, and why
#
# The cell below simulates {glue:text}`n_posts:,d` posts (`n_posts`) of {glue:text}`lab_decisive:d`
# decisive and {glue:text}`lab_uncertain:d` uncertain sentences each (`lab_decisive`,
# `lab_uncertain`), from a judge that leans towards change: it adds {glue:text}`lab_lean:g`
# (`lab_lean`) to every log-odds it reports, whatever the sentence says. Fuse the posts with MV and
# with TEF. (a) On how many posts do
# the two rules disagree? (b) On those posts, which share (from 0 to 1, to two decimals) does each
# rule get right? (c) Look at one such post: what does each rule see?

# %% [markdown] tags=["teacher"]
# ```{admonition} For the teacher
# :class: tip dropdown
#
# Students conclude from (b) that TEF is the better rule. Before opening the section after the
# solution, ask how the judge was made, and whether a real judge would be made that way: the point of
# the exercise is the difference between a mechanism and evidence for it.
# ```

# %%
corpus = sim.simulate_documents(n_posts, n_decisive=lab_decisive, rng=seed,
                                n_uncertain=lab_uncertain, logit_bias=lab_lean)
# Your code: fuse corpus.p (corpus.doc_index says which post each sentence is in)
# with "majority_vote" and with "tef"; compare the decisions with each other and
# with the true sides, corpus.y
my_disagreements = None
my_right = {"majority_vote": None, "tef": None}
check_exercise_4(corpus, my_disagreements, my_right)

# %% [markdown] tags=["solution"]
# ```{admonition} Solution
# :class: dropdown
#
# The two rules disagree on {glue:text}`e4_differ:,d` of the {glue:text}`e4_posts:,d` posts. There
# MV is right on {glue:text}`e4_mv_right:.1f` % of them and TEF on {glue:text}`e4_tef_right:.1f` %.
# In the first of them (post {glue:text}`e4_first:d`, true side {glue:text}`e4_gold`), the decisive
# sentence points to {glue:text}`e4_first_decisive`, the uncertain ones sit a little above $1/2$:
# MV counts {glue:text}`e4_first_votes:d` votes for change out of {glue:text}`e4_first_n:d` and decides
# {glue:text}`e4_first_mv`; TEF gives the uncertain sentences weights of at most
# {glue:text}`e4_first_wmax:.3f` and decides {glue:text}`e4_first_tef`, with the decisive sentence.
# ```

# %% tags=["hide-cell", "solution"]
mv = fuse_many(corpus.p, corpus.doc_index, rule="majority_vote").prediction
tef = fuse_many(corpus.p, corpus.doc_index, rule="tef").prediction
differ = mv != tef
right = {"majority_vote": np.mean(mv[differ] == corpus.y[differ]),
         "tef": np.mean(tef[differ] == corpus.y[differ])}
check_exercise_4(corpus, int(differ.sum()), right)
first = int(np.flatnonzero(differ)[0])
mine = corpus.doc_index == first
pd.DataFrame({"p": corpus.p[mine], "decisive": np.where(corpus.decisive[mine], "yes", "no"),
              "w(p)": entropy_weight(corpus.p[mine])}).round(3).set_index("p")

# %% tags=["remove-cell"]
sentences = corpus.p[mine]
glue_all({"e4_differ": int(differ.sum()), "e4_posts": n_posts, "e4_mv_right": 100 * right["majority_vote"],
          "e4_tef_right": 100 * right["tef"], "e4_first": first, "e4_gold": str(corpus.y[first]),
          "e4_first_decisive": "change" if sentences[corpus.decisive[mine]][0] >= 0.5 else "stability",
          "e4_first_votes": int(np.sum(sentences >= 0.5)), "e4_first_n": int(mine.sum()),
          "e4_first_mv": str(mv[first]), "e4_first_tef": str(tef[first]),
          "e4_first_wmax": entropy_weight(sentences[~corpus.decisive[mine]]).max()})

# %% [markdown] tags=["solution"]
# ### What the simulation built in
#
# TEF wins this exercise by design. The judge was built to lean: the next cell measures how its
# uncertain sentences vote, by the true side of their post, and fuses the same posts once more from a
# judge without the lean (the same seed). Its table is folded: it answers the exercise.

# %% tags=["solution", "hide-output"]
uncertain = ~corpus.decisive
side = corpus.y[corpus.doc_index]  # the true side of each sentence's post
votes = {s: 100 * np.mean(corpus.p[uncertain & (side == s)] >= 0.5)
         for s in ("change", "stability")}  # uncertain sentences voting change, by side
fair = sim.simulate_documents(n_posts, n_decisive=lab_decisive,
                              n_uncertain=lab_uncertain, rng=seed)  # no lean
both = pd.DataFrame({
    name: {NAMES[r]: 100 * np.mean(fuse_many(c.p, c.doc_index, rule=r).prediction
                                   == c.y) for r in RULES}
    for name, c in (("leaning judge", corpus), ("without the lean", fair))})
both.round(1)

# %% tags=["remove-cell", "solution"]
lean_p = 1 / (1 + np.exp(-lab_lean))
glue_all({"e4_votes_change": votes["change"], "e4_votes_stability": votes["stability"], "e4_lean": lab_lean,
          "e4_lean_p": lean_p, "e4_lean_w": entropy_weight(np.array([lean_p]))[0], "e4_uncertain": lab_uncertain}
         | {f"e4_{key}_{rule}": both.round(1).loc[rule, column] for rule in ("MV", "SV", "TEF")
            for column, key in (("leaning judge", "lean"), ("without the lean", "fair"))})

# %% [markdown] tags=["solution"]
# ```{admonition} What the simulation built in, in numbers
# :class: dropdown
#
# The uncertain sentences vote change in {glue:text}`e4_votes_stability:.0f` % of the stability posts
# (and {glue:text}`e4_votes_change:.0f` % of the change posts): the lean of $b$ =
# {glue:text}`e4_lean:g` puts a sentence without evidence at $\sigma(b)$ = {glue:text}`e4_lean_p:.2f`,
# a change vote for MV, a push towards change for SV, and a weight of {glue:text}`e4_lean_w:.3f` for
# TEF. MV and SV add these pushes up; TEF all but ignores them. That is the mechanism the paper
# describes, and the simulation put it there: on this judge TEF's accuracy is
# {glue:text}`e4_lean_TEF:.1f` %, MV's {glue:text}`e4_lean_MV:.1f` % and SV's
# {glue:text}`e4_lean_SV:.1f` %. Without the lean SV comes back to {glue:text}`e4_fair_SV:.1f` %,
# next to TEF's {glue:text}`e4_fair_TEF:.1f` %, while MV stays at {glue:text}`e4_fair_MV:.1f` %:
# {glue:text}`e4_uncertain:d` weak votes against one decisive sentence still outvote it whenever
# most of them fall on the wrong side. A simulation can show how a rule works; whether real judges
# lean is a question for data (chapter 2 measures the lean of the book's CPU judges).
# ```

# %% [markdown]
# ## Exercise 5: a miscalibrated judge
#
# LLM probabilities are often too sharp or too flat, and a temperature is the simplest model of it:
# the judge's ranking of sentences stays right, its confidence does not. This exercise asks what each
# rule makes of such a judge.
#
# Take a *calibrated* simulated judge and make it sharper or flatter with a temperature $T$
# (`temperature=T` in `simulate_documents`: the reported log-odds are the calibrated ones divided by
# $T$). Before running anything, predict: as $T$ goes over {glue:text}`sweep` (`sweep`), which of MV,
# SV, the log-odds sum and TEF cannot change their decisions, and why? What does TEF turn into as
# $T \to 0$, and as $T \to \infty$? Then run the sweep, with {glue:text}`n_posts:,d` posts
# (`n_posts`) of one decisive and four uncertain
# sentences and the same seed for every $T$ (so that only the temperature changes), and give each
# rule's accuracy in percent at each $T$, to two decimals, and the set of rules whose accuracy does
# not move.

# %% [markdown] tags=["teacher"]
# ```{admonition} For the teacher
# :class: tip dropdown
#
# Collect the predictions on the board before anyone runs the sweep: most students expect TEF to stay
# the best rule, and many expect the log-odds sum to move with $T$. That TEF loses to the plain sum on a
# calibrated judge is the result to discuss; it leads to discussion question 3.
# ```

# %%
my_accuracy = {"majority_vote": None, "soft_vote": None, "tef_without_entropy": None,
               "tef": None}  # a list each: the accuracy at each T of sweep
my_unchanged = None  # a set of rule names
check_exercise_5(my_accuracy, my_unchanged, sweep, n_posts, seed)

# %% [markdown] tags=["solution"]
# ```{admonition} Solution
# :class: dropdown
#
# A temperature divides every log-odds by $T$ and keeps its sign. MV reads only signs: its decisions
# cannot change. The log-odds sum is divided by $T$ as a whole: its sign, hence its decision, does
# not change either, as long as the clip at $M$ does not bind; at small $T$ it does, and the sum's
# accuracy moves a little, between {glue:text}`e5_sum_low:.2f` and {glue:text}`e5_sum_high:.2f` %.
# SV and TEF are not scale-free. As $T \to 0$
# every posterior goes to 0 or 1, every weight to 1 and every log-odds to $\pm M$: TEF becomes $M$
# times the vote count, that is MV. As $T \to \infty$ every posterior goes to $1/2$,
# $w \approx \ell^2/(8\log 2)$, and TEF follows the sign of $\sum_i \ell_i^3$, a rule that trusts
# large log-odds even more than the sum does, while SV tends to the log-odds sum (its contribution
# is $\approx \ell/4$ near the middle). The rules whose accuracy does not move over the sweep:
# {glue:text}`e5_unchanged`.
# ```

# %% tags=["hide-cell", "solution"]
accuracy = {rule: [] for rule in RULES}
for T in sweep:
    c = sim.simulate_documents(n_posts, n_decisive=1, n_uncertain=4, temperature=T,
                               rng=seed)
    for rule in RULES:
        correct = fuse_many(c.p, c.doc_index, rule=rule).prediction == c.y
        accuracy[rule].append(100 * np.mean(correct))
unchanged = {rule for rule, values in accuracy.items() if len(set(values)) == 1}
check_exercise_5(accuracy, unchanged, sweep, n_posts, seed)
table = pd.DataFrame(accuracy, index=pd.Index(sweep, name="T")).rename(columns=NAMES).T
table.round(2)

# %% tags=["remove-cell"]
tef, total, soft = table.loc["TEF"], table.loc["log-odds sum"], table.loc["SV"]
gap = max((total - tef).max(), (soft - tef).max())
glue_all({"e5_unchanged": ", ".join(NAMES[r] for r in RULES if r in unchanged) or "none", "e5_n_T": len(sweep),
          "e5_sum_low": total.min(), "e5_sum_high": total.max(), "e5_below_sum": int(np.sum(tef < total)),
          "e5_below_sv": int(np.sum(tef < soft)), "e5_tef_low": tef.min(), "e5_tef_high": tef.max(), "e5_gap": gap,
          "e5_gap_posts": int(round(gap * n_posts / 100)), "e5_posts": n_posts,
          "e5_below_both": ", ".join(f"{x:g}" for x in sweep if tef[x] < total[x] and tef[x] < soft[x]) or "none"})

# %% [markdown] tags=["solution"]
# ```{admonition} What the sweep shows
# :class: dropdown
#
# TEF is not the best rule here. Its accuracy, {glue:text}`e5_tef_low:.2f` to
# {glue:text}`e5_tef_high:.2f` %, is below the plain log-odds sum's at {glue:text}`e5_below_sum:d` of
# the {glue:text}`e5_n_T:d` temperatures and below SV's at {glue:text}`e5_below_sv:d`; both beat it at
# $T$ = {glue:text}`e5_below_both`. The margins are small, at most {glue:text}`e5_gap:.2f` points
# ({glue:text}`e5_gap_posts:d` posts of {glue:text}`e5_posts:,d`), but they point one way, and
# chapter 2 explains why: this judge is calibrated at $T = 1$ and leans nowhere, so its uncertain
# sentences carry weak but genuine evidence. The plain sum is then the Bayes rule (chapter 1), and
# TEF's weights throw part of that evidence away. Tempering pays when the weak sentences are biased,
# as in exercise 4, not when they are merely weak. How sure that is, given that these margins come from
# one seed, is the next cell's question.
# ```
#
# ### How sure is the lesson?
#
# One seed draws one set of {glue:text}`e5_posts:,d` posts per temperature, and another seed would
# move every accuracy a little. The next cell repeats the sweep over {glue:text}`lab_seeds:d` seeds
# (`lab_seeds`, from `seed` on) and gives, at each $T$, the mean margin of the log-odds sum and of SV
# over TEF in points, its Monte Carlo standard error (the standard deviation over the seeds divided
# by the square root of their number), and on how many seeds TEF is below. Its table is folded.

# %% tags=["solution", "hide-output"]
seeds = range(seed, seed + lab_seeds)
corpora = [[sim.simulate_documents(n_posts, n_decisive=1, n_uncertain=4, temperature=T, rng=s)
            for T in sweep] for s in seeds]
acc = np.array([[[100 * np.mean(fuse_many(c.p, c.doc_index, rule=r).prediction == c.y)
                  for r in RULES] for c in row] for row in corpora])  # seeds x T x rules
margin = {"sum": acc[:, :, 2] - acc[:, :, 3], "SV": acc[:, :, 1] - acc[:, :, 3]}  # over TEF
mc = pd.DataFrame({f"{name} − TEF": m.mean(axis=0) for name, m in margin.items()}
                  | {f"± s.e. ({name})": m.std(axis=0, ddof=1) / np.sqrt(len(seeds))
                     for name, m in margin.items()}
                  | {f"seeds TEF below {name}": (m > 0).sum(axis=0) for name, m in margin.items()},
                  index=pd.Index(sweep, name="T"))
mc.round(2)

# %% tags=["remove-cell", "solution"]
sum_gain, sum_se = mc["sum − TEF"], mc["± s.e. (sum)"]
sv_gain, sv_se = mc["SV − TEF"], mc["± s.e. (SV)"]
glue_all({"e5_mc_sum_low": sum_gain.min(), "e5_mc_sum_high": sum_gain.max(), "e5_mc_se": sum_se.max(),
          "e5_mc_sum_beyond": int(np.sum(sum_gain > 2 * sum_se)), "e5_mc_sv_beyond": int(np.sum(sv_gain > 2 * sv_se)),
          "e5_mc_sum_against": int(np.sum(sum_gain < -2 * sum_se)), "e5_mc_sv_against": int(np.sum(sv_gain < -2 * sv_se)),
          "e5_mc_sd": margin["sum"].std(axis=0, ddof=1).max(),
          "e5_mc_seeds": len(seeds)})

# %% [markdown] tags=["solution"]
# ```{admonition} The Monte Carlo error
# :class: dropdown
#
# Over {glue:text}`e5_mc_seeds:d` seeds the log-odds sum's mean margin over TEF runs from
# {glue:text}`e5_mc_sum_low:.2f` to {glue:text}`e5_mc_sum_high:.2f` points across the temperatures,
# with standard errors of at most {glue:text}`e5_mc_se:.2f` points. The sum's margin exceeds twice its
# standard error at {glue:text}`e5_mc_sum_beyond:d` of the {glue:text}`e5_n_T:d` temperatures, and
# SV's at {glue:text}`e5_mc_sv_beyond:d`; TEF is ahead by more than twice the error at
# {glue:text}`e5_mc_sum_against:d` against the sum and {glue:text}`e5_mc_sv_against:d` against SV.
# From one seed to the next, the sum's margin over TEF scatters with a standard deviation of up to
# {glue:text}`e5_mc_sd:.2f` points: compare it with the margins of at most {glue:text}`e5_gap:.2f`
# points that the single seed above showed. The lesson "TEF is not the best rule here" holds, at this
# scale of simulation, at the temperatures where the mean margin stands beyond twice its error, and
# only there.
# ```

# %% [markdown]
# ## Exercise 6: the information a hard vote throws away
#
# Proposition 1 says $I(Y; p_i) \ge I(Y; \hat y_i)$. For a sentence of strength $\mu = 1$:
#
# 1. get the exact values with `sim.gaussian_information(1.0)` (fields `soft` and `hard`);
# 2. draw {glue:text}`n_posts:,d` sentences with
#    `sim.simulate_documents(n_posts, n_decisive=1, n_uncertain=0, strength=1.0, rng=seed)` and
#    estimate both with `information.mutual_information` (`bins=None` for the hard labels
#    $p \ge 1/2$);
# 3. estimate $I(Y; p_i)$ again with 4, 16 and 64 bins. Why does the estimate move with the number of
#    bins, and in which direction does each source of error push it?
#
# Give the six values in nats, to three decimals.

# %% [markdown] tags=["teacher"]
# ```{admonition} For the teacher
# :class: tip dropdown
#
# This exercise can be homework. The bias $(\text{bins} - 1)/(2n)$ is the first-order (Miller-Madow)
# correction of the plug-in entropy; students who know it can check that it accounts for most of the
# rise of the estimate from 16 to 64 bins.
# ```

# %%
my_estimates = {"exact soft": None, "exact hard": None, "plug-in hard": None,
                "plug-in soft (4 bins)": None, "plug-in soft (16 bins)": None,
                "plug-in soft (64 bins)": None}
check_exercise_6(my_estimates, n_posts, seed)

# %% [markdown] tags=["solution"]
# ```{admonition} Solution
# :class: dropdown
#
# The exact values are $I(Y; p) =$ {glue:text}`e6_soft:.4f` and $I(Y; \hat y) =$
# {glue:text}`e6_hard:.4f` nats: the hard vote keeps {glue:text}`e6_kept:.0f` % of the sentence's
# information. The plug-in estimate of $I(Y; p)$ has two errors of opposite sign. Binning merges
# posteriors, which is itself a processing step and can only *lose* information; the finite sample
# *adds* a bias of roughly $(\text{bins} - 1)/(2n)$ nats, because chance fluctuations look like
# dependence: {glue:text}`e6_bias_4:.4f` nats at 4 bins, {glue:text}`e6_bias_64:.4f` at 64. With 4
# bins the estimate, {glue:text}`e6_soft_4:.4f`, is below the exact value (binning loss dominates);
# with 64 bins it is {glue:text}`e6_soft_64:.4f`, above it (the sample bias dominates). Because $1/2$
# is always a bin edge, the soft estimate is never below the hard one on the same sample, whatever
# the number of bins.
# ```

# %% tags=["hide-cell", "solution"]
exact = sim.gaussian_information(1.0)
c = sim.simulate_documents(n_posts, n_decisive=1, n_uncertain=0, strength=1.0, rng=seed)
estimates = {"exact soft": exact.soft, "exact hard": exact.hard,
             "plug-in hard": information.mutual_information(c.y, c.p >= 0.5, bins=None)}
for b in (4, 16, 64):
    name = f"plug-in soft ({b} bins)"
    estimates[name] = information.mutual_information(c.y, c.p, bins=b)
check_exercise_6(estimates, n_posts, seed)
pd.Series(estimates, name="nats").round(4).to_frame()

# %% tags=["remove-cell"]
glue_all({"e6_soft": exact.soft, "e6_hard": exact.hard, "e6_kept": 100 * exact.hard / exact.soft,
          "e6_bias_4": 3 / (2 * n_posts), "e6_bias_64": 63 / (2 * n_posts),
          "e6_soft_4": estimates["plug-in soft (4 bins)"], "e6_soft_64": estimates["plug-in soft (64 bins)"]})

# %% [markdown] tags=["solution"]
# ```{admonition} What this means for fusion
# :class: dropdown
#
# Majority Vote sees only $\hat y_i$, so on a sentence of this strength it
# starts from {glue:text}`e6_kept:.0f` % of the information the judge gave; Soft Vote, the log-odds
# sum and TEF see $p_i$ and start from all of it. Proposition 1 stops there: it says nothing about
# how a rule *uses* the information it keeps, which is what exercises 3 to 5 were about. A rule can
# keep all of it and still lose to one that keeps less, as Soft Vote did to TEF in exercise 4, and
# TEF to the plain sum in exercise 5.
# ```

# %% [markdown]
# ## Exercise 7: predict the decision from the sentences
#
# Two real posts now, from the MIND sample that ships with `tefcore`, on the dimension Culture: the
# multilingual E5 judge fitted on the sample's labels (`e5-crossfit`) gave each sentence a probability
# of change, written out in the next cell, and `tefcore.explain.explain` lays the sentences out with
# them. The cell's table shows each sentence with the judge's probabilities, and nothing else: no
# weight, no rule's decision. On the book's page the table is folded and the sentences are shaded
# instead, in the colour of the side the judge leans to, the more strongly the further $p$ is from
# $1/2$.
#
# Read the sentences and their probabilities, and before running any rule predict, for each post,
# what MV, SV and TEF decide: `"change"` or `"stability"`. Then say which sentence you expect to
# decide each post under TEF, and why.

# %% [markdown] tags=["teacher"]
# ```{admonition} For the teacher
# :class: tip dropdown
#
# Have the students read the sentences aloud and guess from the words alone before they look at the
# numbers: the judge does not always agree with them, which is a lesson of its own. Then ask for the
# three predictions per post by a show of hands. SV is the hard one: both posts sit within a hair of a
# mean of 1/2, so it takes a sum, not a glance.
# ```

# %% tags=["hide-output"]
# e5-crossfit's P(change) of each post as a whole and of each of its sentences, in text order
JUDGED = {("en-single-50", "Culture"): (0.5845, [0.3613, 0.5559, 0.5562]),
          ("en-single-2949", "Culture"): (0.6003, [0.5261, 0.2326, 0.7474])}
mind_posts = {post.id: post for post in load_posts("en")}  # the sample, with its gold sides
gold_side = {post: next(label.side for label in mind_posts[post].labels if label.dimension == dimension)
             for post, dimension in JUDGED}
views = {(post, dimension): explain(p, split_sentences(mind_posts[post].text, "en"), direct=direct)
         .assign(id=post, dimension=dimension, gold=gold_side[post])
         for (post, dimension), (direct, p) in JUDGED.items()}
pd.set_option("display.max_colwidth", None)  # whole sentences in the table
judged = pd.concat({f"{post} · {dimension}": view.set_index("sentence")[["p_change", "p_stability", "text"]]
                    for (post, dimension), view in views.items()})
judged.round(3)

# %% tags=["hide-input", "book-only"]
try:  # the shading is drawn on the book's page; the table above holds the same numbers
    from tefbook.chapters.ch10 import shade_by_probability
except ImportError:
    shade_by_probability = None
shade_by_probability(views) if shade_by_probability is not None else None

# %%
my_decisions = {"en-single-50": {"majority_vote": None, "soft_vote": None, "tef": None},
                "en-single-2949": {"majority_vote": None, "soft_vote": None, "tef": None}}
check_exercise_7(my_decisions, views)

# %% [markdown] tags=["solution"]
# ```{admonition} Solution
# :class: dropdown
#
# Post en-single-50: {glue:text}`e7_a_votes:d` of its {glue:text}`e7_a_n:d` sentences are above $1/2$,
# so MV decides {glue:text}`e7_a_mv`; the mean probability of change is {glue:text}`e7_a_mean:.4f`,
# so SV decides {glue:text}`e7_a_sv`; TEF's score of change is {glue:text}`e7_a_score:+.4f`, so it
# decides {glue:text}`e7_a_tef`. The first sentence, at $p$ = {glue:text}`e7_a_p_top:.3f`, is the only
# one far enough from $1/2$ to carry weight ($w$ = {glue:text}`e7_a_w_top:.3f`, against at most
# {glue:text}`e7_a_w_rest:.3f` for the other two), and it holds {glue:text}`e7_a_share:.0%` of TEF's
# margin. The gold side is {glue:text}`e7_a_gold`.
#
# Post en-single-2949: MV decides {glue:text}`e7_b_mv` ({glue:text}`e7_b_votes:d` of
# {glue:text}`e7_b_n:d` sentences above $1/2$), SV {glue:text}`e7_b_sv` (a mean of
# {glue:text}`e7_b_mean:.4f`), TEF {glue:text}`e7_b_tef` (a score of change of
# {glue:text}`e7_b_score:+.4f`). Two sentences pull hard in opposite directions, at $p$ =
# {glue:text}`e7_b_p_low:.3f` and {glue:text}`e7_b_p_high:.3f`: the first is a little further from
# $1/2$, so its weight, {glue:text}`e7_b_w_low:.3f`, beats the other's, {glue:text}`e7_b_w_high:.3f`,
# and it decides the post under TEF. The gold side is {glue:text}`e7_b_gold`: here TEF is wrong, and the
# rules that count or average are right. The code runs `fuse_many` on each post, and `render` prints the
# evidence view with each sentence's weight, contribution and share:
# ```

# %% tags=["hide-cell", "solution"]
decided = {}
for (post, dimension), (direct, p) in JUDGED.items():
    one_post = np.zeros(len(p), dtype=int)  # every sentence in post 0
    decided[post] = {rule: str(fuse_many(np.array(p), one_post, rule=rule).prediction[0])
                     for rule in ["majority_vote", "soft_vote", "tef"]}
check_exercise_7(decided, views)
print(render(pd.concat(views.values(), ignore_index=True), width=110))

# %% tags=["remove-cell", "solution"]
def glue_post(tag: str, view: pd.DataFrame, gold: str) -> None:
    """The numbers of one post that the solution quotes."""
    p, w = view["p_change"].to_numpy(), view["weight"].to_numpy()
    top, low, high = int(np.argmax(w)), int(np.argmin(p)), int(np.argmax(p))
    glue_all({f"e7_{tag}_votes": int(np.sum(p >= 0.5)), f"e7_{tag}_n": len(p), f"e7_{tag}_mean": p.mean(),
              f"e7_{tag}_score": view["tef_score_change"].iloc[0], f"e7_{tag}_p_top": p[top],
              f"e7_{tag}_w_top": w[top], f"e7_{tag}_w_rest": np.delete(w, top).max(),
              f"e7_{tag}_share": view["share"].iloc[top], f"e7_{tag}_gold": gold,
              f"e7_{tag}_p_low": p[low], f"e7_{tag}_p_high": p[high], f"e7_{tag}_w_low": w[low],
              f"e7_{tag}_w_high": w[high]}
             | {f"e7_{tag}_{short}": str(view[rule].iloc[0])
                for short, rule in (("mv", "majority_vote"), ("sv", "soft_vote"), ("tef", "tef"))})


for tag, ((post, dimension), view) in zip("ab", views.items()):
    glue_post(tag, view, gold_side[post])

# %% [markdown] tags=["solution"]
# ```{admonition} What the two posts show
# :class: dropdown
#
# In both posts MV follows the number of sentences and TEF the most confident one. On en-single-50 that
# is what the paper asks for, and TEF is right; on en-single-2949 the most confident sentence is the
# judge's mistake, and TEF follows it all the same. TEF cannot tell a confident right sentence from a
# confident wrong one; it only discounts the sentences near $1/2$. Whether that helps on a corpus is
# a question for its labelled texts, as the MIND chapters ask it.
# ```

# %% [markdown]
# ## Discussion
#
# Questions for the last ten minutes, or for a written answer. Each has more than one defensible
# answer.
#
# 1. Under TEF one decisive sentence outweighs many hedging sentences at $p = 0.4$ (your exchange
#    rate of exercise 3). When is it right that hedging sentences count for almost nothing, and when
#    is it wrong? Use exercises 4 and 5 in your answer.
# 2. The judge of exercise 4 leans by construction. How would you find out whether a real LLM judge
#    leans, without labels, and with labels? (Chapter 2 does it one way.)
# 3. In exercise 5, how did TEF fare against the plain log-odds sum on a calibrated judge, and by
#    more than the Monte Carlo error? Given chapter 1's derivation, what should one expect? What would
#    make you choose TEF anyway?
# 4. TEF computes each sentence's weight from that sentence's own probability; the generalised Bayes
#    posterior that the paper cites uses one learning rate fixed before seeing the data. What does
#    this difference change in what the tempered posterior can claim? How could a rate be chosen from
#    labelled data instead?
# 5. Majority Vote breaks a tie by the first vote cast. Write a post of four sentences whose decision
#    changes when the sentences are read in another order. Is a rule whose decision depends on the
#    order of the sentences acceptable for measurement?
# 6. For more than two classes the one-vs-rest score of the paper is not the Bayes log-posterior
#    (chapter 1). Propose a $K$-class rule that reduces to TEF for $K = 2$ and keeps the soft
#    censoring.

# %% [markdown] tags=["teacher"]
# ```{admonition} For the teacher: what a good answer contains
# :class: tip dropdown
#
# 1. It separates weak evidence from biased evidence: discounting hedging sentences helps when they
#    carry a shared bias (exercise 4) and costs accuracy when they carry weak but honest evidence
#    (exercise 5).
# 2. Without labels: the judge's average probability on sentences that should say nothing, or on
#    posts of both sides (a lean moves both the same way). With labels: the mean log-odds of
#    uncertain sentences by true side, as chapter 2 measures it; a midpoint away from zero is a lean.
# 3. Under calibration and independence the sum is the Bayes rule, so any reweighting can only lose;
#    TEF is a hedge against judges that are neither, and one chooses it when one expects them to be.
# 4. With a fixed rate the tempered posterior is a posterior (of a tempered model); with a rate
#    computed from each sentence it is a heuristic score, judged by its accuracy. A rate can be chosen
#    on labelled posts, by the accuracy or the log-loss of the fused decision.
# 5. Two sentences for change and two for stability: the side of whichever comes first wins. An
#    order-dependent rule is not exchangeable in its sentences; a measurement should say so, or break
#    ties by a rule that ignores order (a coin, or a fixed side stated in advance).
# 6. One route: weight the Bayes log-posteriors $\sum_i w_i \log p_i^{(c)}$; for $K = 2$ its argmax
#    is TEF's, and the weights still vanish for near-uniform sentences.
# ```

# %% [markdown]
# ## Going further
#
# Three problems for homework, each a few lines of numpy and `fuse_many`:
#
# 1. Repeat exercise 1 for three classes: the weight of $(0.5, 0.3, 0.2)$ and of $(0.8, 0.1, 0.1)$,
#    with $\log 3$ in place of $\log 2$. Which one does TEF trust more, and by how much?
# 2. Give the sentences of exercise 5's judge a shared noise (`correlation=0.4` in
#    `simulate_documents`) and compare MV, SV, the log-odds sum and TEF again. Which rule suffers
#    most, and why? (Chapter 2 answers with the calibration slope.)
# 3. Find the smallest lean `logit_bias` at which TEF beats Soft Vote on exercise 4's posts, and
#    compare it with the lean that chapter 2 measures for the book's CPU judges.
