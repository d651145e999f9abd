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
# A 90-minute class on the first two chapters: six exercises on how sentence-level judgments should be
# combined into one decision about a post, with simulated judges whose calibration we control
# (`tefcore.simulate`) and the fusion rules of the paper (`tefcore.fusion`). The lab reads no MIND data:
# every post in it is simulated or written down by hand, so it runs anywhere `tefcore` runs.
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
#    (exercise 6).
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
# | 70–80 | exercise 6 | mutual information, exact and estimated (or as homework) |
# | 80–90 | discussion | the questions at the end |
#
# ## How to work
#
# Open the lab as a notebook: with the download button at the top of the page (for your own Jupyter),
# or, where the book is published with its repository, the launch button (Binder or Colab). The two
# cells below the parameters install `tefcore` where it is missing and load what the lab uses.
#
# Each exercise has an answer cell: replace each `None` by your answer and run the cell; its check
# prints ✓ for a right answer, ✗ for a wrong one (and says which), and nothing to worry about while
# answers are missing. A hidden solution follows: click it open once you have tried. The solutions are
# the few lines of numpy and `fuse_many` that a student writes, and each ends with the same check.
#
# Before the class, open the lab once where the students will: Binder builds its environment on the
# first launch, which can take a few minutes; Colab needs a Google account; on machines of your own,
# `pip install` tefcore from the book's repository once. Nothing in the lab needs a network after that,
# and every cell runs in seconds on a laptop.
#
# If something goes wrong: a `ModuleNotFoundError` for `tefcore` in the second cell means the copy
# of the lab names no repository (set `repository` to the book's `owner/name`, or install `tefcore`
# yourself); on Colab, run the cells from the top after a restart of the runtime, since the install
# lives in the runtime, not in the notebook. A check that prints ✗ names the answer that is off; it
# never stops the notebook, so the rest of the lab runs whatever the state of the answers.
#
# Background: chapter 1 (the derivation: the weight {eq}`deriv-weight` and the rules on one scale
# {eq}`deriv-phi`) and chapter 2 (the propositions). Natural logarithms throughout.

# %% tags=["parameters"]
seed: "int >= 0" = 7
n_posts: "int >= 1" = 2000
lab_decisive = 1
lab_uncertain = 6
lab_lean = 0.5
sweep = [0.25, 0.5, 1.0, 2.0, 4.0]
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

import numpy as np
import pandas as pd

from tefcore import information
from tefcore import simulate as sim
from tefcore.fusion import clipped_log_odds, entropy_weight, fuse_many

try:  # in the book: its check of the parameters, its figures and its glued numbers
    from myst_nb import glue

    from companion.figures import setup_notebook
    from tefbook.parameters import check_parameters
except ImportError:  # on Colab, Binder or your own Jupyter none of the book is needed
    if os.environ.get("TEF_BOOK_BUILD"):
        raise
    check_parameters = setup_notebook = glue = lambda *args, **kwargs: None

check_parameters("10_teaching_lab")  # a misspelt -p name fails here, naming the others
setup_notebook()
RULES = ["majority_vote", "soft_vote", "tef_without_entropy", "tef"]  # fuse_many's
NAMES = dict(zip(RULES, ["MV", "SV", "log-odds sum", "TEF"]))


def glue_all(values: dict) -> None:
    """The numbers that the text of the page quotes."""
    for name, value in values.items():
        glue(name, value.item() if isinstance(value, np.generic) else value,
             display=False)


# %% tags=["hide-input", "checks"]
# The checks of the exercises: each computes the answers with tefcore and compares.
def check(answers: dict, truth: dict, tol: float = 0.01) -> bool | None:
    """✓ or ✗ per answer given; False if one is wrong, None while some are missing."""
    verdicts = []
    for key, right in truth.items():
        mine = answers.get(key)
        if mine is None:
            continue
        if isinstance(right, (bool, set)):
            ok = mine == right
        else:
            number = isinstance(mine, (int, float, np.number)) and mine is not True \
                and mine is not False
            ok = number and abs(mine - right) <= tol
        shown = f"{mine:.4g}" if isinstance(mine, (float, np.floating)) else repr(mine)
        print(f"{'✓' if ok else '✗'} {key}: {shown}" + ("" if ok else " is not right"))
        verdicts.append(ok)
    missing = len(truth) - len(verdicts)
    if missing:
        print(f"· {missing} of {len(truth)} answers still missing (replace the None)")
    return False if not all(verdicts) else None if missing else True


def check_exercise_1(H: dict, w: dict, l: dict, wl: dict) -> bool | None:
    """Entropy (nats), weight, log-odds and tempered evidence at each p."""
    ps = list(H)
    truth = {"H": information.binary_entropy(ps), "w": entropy_weight(ps),
             "ℓ": clipped_log_odds(ps)}
    truth["w·ℓ"] = truth["w"] * truth["ℓ"]
    key = [f"{name}({q})" for name in truth for q in ps]
    answers = dict(zip(key, [mine.get(q) for mine in (H, w, l, wl) for q in ps]))
    return check(answers, dict(zip(key, np.concatenate(list(truth.values())))))


def check_exercise_2(answers: dict) -> bool | None:
    """Properties of w on 1,001 points of [0, 1], and the c of w(1/2 + δ) ≈ c δ²."""
    w = entropy_weight(np.linspace(0, 1, 1001))
    increases = bool(np.all(np.diff(w[500:]) > 0))
    return check(answers, {"min w": w.min(), "max w": w.max(),
                           "max |w(p) - w(1 - p)|": np.abs(w - w[::-1]).max(),
                           "w increases on [1/2, 1]": increases, "c": 2 / np.log(2)})


def check_exercise_3(first_n: dict, strong: float, weak: float) -> bool | None:
    """The smallest n for which `strong` followed by n `weak` sentences is stability."""
    n = np.arange(3001)
    p = np.concatenate([np.r_[strong, np.full(k, weak)] for k in n])
    turned = {r: fuse_many(p, np.repeat(n, n + 1), rule=r).prediction == "stability"
              for r in first_n}
    return check(first_n, {r: int(np.argmax(t)) for r, t in turned.items()}, 0)


def check_exercise_4(corpus: sim.SimulatedCorpus, disagreements: int | None,
                     right: dict) -> bool | None:
    """The posts MV and TEF decide differently, and the share each gets right there."""
    pred = {r: fuse_many(corpus.p, corpus.doc_index, rule=r).prediction
            for r in ("majority_vote", "tef")}
    differ = pred["majority_vote"] != pred["tef"]
    truth = {r: np.mean(v[differ] == corpus.y[differ]) for r, v in pred.items()}
    return check({"disagreements": disagreements} | right,
                 {"disagreements": differ.sum()} | truth, 0.005)


def check_exercise_5(accuracy: dict, unchanged: set | None, temperatures: list, n: int,
                     seed: int) -> bool | None:
    """Accuracy (%) of each rule at each T, and the rules whose accuracy stays put."""
    truth = {r: [] for r in RULES}
    for t in temperatures:
        c = sim.simulate_documents(n, n_decisive=1, n_uncertain=4, temperature=t,
                                   rng=seed)
        for r in RULES:
            correct = fuse_many(c.p, c.doc_index, rule=r).prediction == c.y
            truth[r].append(100 * np.mean(correct))
    keys = [f"{r} at T = {t:g}" for r in RULES for t in temperatures]
    mine = [v for r in RULES for v in (accuracy.get(r) or [None] * len(temperatures))]
    still = {r for r, values in truth.items() if len(set(values)) == 1}
    return check(dict(zip(keys, mine)) | {"unchanged": unchanged},
                 dict(zip(keys, sum(truth.values(), []))) | {"unchanged": still})


def check_exercise_6(answers: dict, n: int, seed: int) -> bool | None:
    """Exact and plug-in information (nats) of a sentence of strength 1."""
    exact = sim.gaussian_information(1.0)
    c = sim.simulate_documents(n, n_decisive=1, n_uncertain=0, strength=1.0, rng=seed)
    truth = {"exact soft": exact.soft, "exact hard": exact.hard,
             "plug-in hard": information.mutual_information(c.y, c.p >= 0.5, bins=None)}
    for b in (4, 16, 64):
        truth[f"plug-in soft ({b} bins)"] = information.mutual_information(c.y, c.p,
                                                                            bins=b)
    return check(answers, truth, 0.001)


# %% tags=["remove-cell"]
glue_all({"n_posts": n_posts, "lab_decisive": lab_decisive, "lab_uncertain": lab_uncertain,
          "lab_lean": lab_lean, "sweep": ", ".join(f"{x:g}" for x in sweep)})

# %% [markdown]
# ## Exercise 1: weights and log-odds by hand
#
# A judge hands TEF one probability per sentence, and TEF turns it into two numbers: how far the
# sentence is from "no idea" (its weight) and which side it points to, by how much (its log-odds).
# Computing them by hand once is the quickest way to feel how differently they grow.
#
# For four sentences, at $p \in \{0.5, 0.6, 0.9, 0.99\}$, compute with a pocket calculator the entropy
# $H(p) = -p\log p - (1-p)\log(1-p)$ (in nats), the weight $w(p) = 1 - H(p)/\log 2$, the log-odds
# $\ell(p) = \log\frac{p}{1-p}$ and the tempered evidence $w(p)\,\ell(p)$; two decimals are enough.
# Which of the four sentences would you call decisive?

# %% [markdown]
# ```{admonition} For the teacher
# :class: tip
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

# %% [markdown]
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

# %% tags=["hide-cell"]
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
# nearest $1/2$ (`entropy_weight` of `tefcore.fusion` gives $w$).

# %% [markdown]
# ```{admonition} For the teacher
# :class: tip
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

# %% [markdown]
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
# Why the proofs matter: (1) and (2) say the weight is a proper, side-blind discount, so TEF never
# reverses a sentence and never prefers a side; (3) says a more confident sentence always counts
# more; (4) is the whole of soft censoring, and (5) is why TEF needs no labels to compute it. They
# also say what the weight does not do: nothing in them involves whether the judge is right.

# %% tags=["hide-cell"]
w = entropy_weight(grid)
near = slice(480, 521)  # the 41 points nearest 1/2
delta = grid[near] - 0.5
properties = {"min w": w.min(), "max w": w.max(),
              "max |w(p) - w(1 - p)|": np.abs(w - w[::-1]).max(),
              "w increases on [1/2, 1]": bool(np.all(np.diff(w[500:]) > 0)),
              "c": np.sum(w[near] * delta**2) / np.sum(delta**4)}  # least squares
check_exercise_2(properties)
pd.Series(properties, name="on the grid").map(lambda v: round(v, 3) if isinstance(v, float) else v).to_frame()

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
# each rule's contribution per sentence (chapter 1, {eq}`deriv-phi`), then confirm with `fuse_many`.

# %% [markdown]
# ```{admonition} For the teacher
# :class: tip
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

# %% [markdown]
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

# %% tags=["hide-cell"]
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

# %% [markdown]
# ### Explore: other probabilities
#
# The figure answers the same question for any pair of probabilities: drag the decisive sentence's
# and the hedging sentences' probabilities and read each rule's decision for every $n$ up to 30, its
# exchange rate and the first $n$ that turns the post. Your browser computes it from the
# contributions of chapter 1, written below in the expression language of Vega (the engine that draws
# the figure); no Python runs while you drag. Before you touch the sliders, predict: what happens to
# TEF's exchange rate when the hedging sentences move from 0.4 to 0.3, and when the decisive
# sentence drops from 0.9 to 0.8?

# %% tags=["explorable"]
from tefcore.fusion import CLIP, EPS, TIE_RTOL  # M, ε and tefcore's tie tolerance


def vega_contributions(p: str) -> dict[str, str]:
    """What one sentence at p adds to each rule's sum (chapter 1), written in Vega."""
    entropy = (f"-(({p}) > 0 ? ({p}) * log({p}) : 0)"
               f" - (({p}) < 1 ? (1 - ({p})) * log(1 - ({p})) : 0)")  # 0 log 0 = 0
    q = f"clamp({p}, {EPS}, {1 - EPS})"
    ell = f"clamp(log({q}) - log(1 - {q}), {-CLIP}, {CLIP})"
    return {"Majority Vote": f"(({p}) >= 0.5 ? 1 : -1)", "Soft Vote": f"(({p}) - 0.5)",
            "log-odds sum": ell, "TEF": f"(1 - ({entropy}) / LN2) * {ell}"}


def vega_first_flip(rule: str, decisive: str, hedging: str) -> str:
    """The first n at which n hedging sentences after the decisive one turn the post."""
    if rule == "Majority Vote":  # n = 1 is a tie: the first vote cast (decisive) wins
        return f"({hedging}) < 0 ? 2 : 1 / 0"
    rate = f"({decisive}) / -({hedging})"  # the exchange rate; at n = rate, a tie
    return f"({hedging}) < 0 ? floor({rate} * (1 + 2 * {TIE_RTOL})) + 1 : 1 / 0"


# %% tags=["explorable", "hide-input"]
import altair as alt

from tefcore.fusion import CLASSES

SIDES = alt.Scale(domain=list(CLASSES), range=["#1b9e77", "#d95f02"])
EMBED = {"renderer": "svg",  # the menu saves images and opens nothing online
         "actions": {"export": True, "source": False, "compiled": False,
                     "editor": False}}


def exchange_figure(decisive0: float, hedging0: float, n_max: int = 30):
    """Sliders for both probabilities; each rule's decision for n = 0 .. n_max, its
    exchange rate and first flip, all computed by Vega."""
    sliders = [alt.param(name=name, value=v, bind=alt.binding_range(
                   min=lo, max=hi, step=0.005, name=label))
               for name, v, lo, hi, label in (
                   ("pd", decisive0, 0.5, 1, "decisive sentence: p "),
                   ("ph", hedging0, 0, 0.5, "each hedging sentence: p "))]
    c_d, c_h = vega_contributions("pd"), vega_contributions("ph")
    def pick(exprs: dict[str, str]) -> str:  # the expression of the row's rule
        pairs = ", ".join(f"'{r}': {x}" for r, x in exprs.items())
        return "{" + pairs + "}[datum.rule]"

    first = pick({r: vega_first_flip(r, c_d[r], c_h[r]) for r in c_d})
    rate = pick({r: f"({c_h[r]}) < 0 ? ({c_d[r]}) / -({c_h[r]}) : 1 / 0" for r in c_d})
    y = alt.Y("rule:N", sort=list(c_d), title=None,
              axis=alt.Axis(labelFontSize=13, labelFontWeight="bold"))
    strip = alt.Chart(alt.Data(values=[{"rule": r, "n": n} for r in c_d
                                       for n in range(n_max + 1)]))
    strip = strip.transform_calculate(first=first).transform_calculate(
        decision="datum.n < datum.first ? 'change' : 'stability'")
    strip = strip.mark_rect(stroke="white")
    strip = strip.encode(
        x=alt.X("n:O", title="n, the hedging sentences after the decisive one"),
        y=y, color=alt.Color("decision:N", title="the post is decided", scale=SIDES,
                             legend=alt.Legend(orient="top")))
    words = alt.Chart(alt.Data(values=[{"rule": r} for r in c_d])).transform_calculate(
        first=first, rate=rate).transform_calculate(
        text="isFinite(datum.rate) ? 'one decisive sentence is worth '"
             " + format(datum.rate, ',.1f') + ' hedging ones; the post turns at n = '"
             " + format(datum.first, ',d')"
             " : 'the hedging sentences never turn the post'")
    words = words.mark_text(align="left", fontSize=13)
    words = words.encode(y=y, x=alt.value(4), text="text:N")
    size = {"width": 520, "height": 26 * len(c_d)}
    chart = alt.vconcat(strip.properties(**size), words.properties(**size), spacing=15)
    chart = chart.add_params(*sliders).configure_view(stroke=None)
    return chart.properties(usermeta={"embedOptions": EMBED})


# %% tags=["hide-input"]
exchange_figure(strong, weak)

# %% [markdown]
# What to look for: MV's rate is one whatever the probabilities, SV's and the sum's change smoothly,
# and TEF's collapses as the hedging sentences move away from $1/2$, because its contribution grows
# like the cube of that distance (chapter 1, {eq}`deriv-cubic`). Drag the decisive sentence down to
# 0.6 and see how few hedging sentences TEF then needs to turn the post: it discounts uncertain
# evidence, it does not protect a weak claim.

# %% [markdown]
# ## Exercise 4: where MV and TEF disagree, and why
#
# The cell below simulates {glue:text}`n_posts:,d` posts (`n_posts`) of {glue:text}`lab_decisive:d`
# decisive and {glue:text}`lab_uncertain:d` uncertain sentences each (`lab_decisive`,
# `lab_uncertain`), from a judge that leans towards change: it adds {glue:text}`lab_lean:g`
# (`lab_lean`) to every log-odds it reports, whatever the sentence says. Fuse the posts with MV and
# with TEF. (a) On how many posts do
# the two rules disagree? (b) On those posts, which share does each rule get right? (c) Look at one
# such post: what does each rule see?

# %% [markdown]
# ```{admonition} For the teacher
# :class: tip
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

# %% [markdown]
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

# %% tags=["hide-cell"]
mv = fuse_many(corpus.p, corpus.doc_index, rule="majority_vote").prediction
tef = fuse_many(corpus.p, corpus.doc_index, rule="tef").prediction
differ = mv != tef
right = {"majority_vote": np.mean(mv[differ] == corpus.y[differ]),
         "tef": np.mean(tef[differ] == corpus.y[differ])}
check_exercise_4(corpus, int(differ.sum()), right)
first = int(np.flatnonzero(differ)[0])
mine = corpus.doc_index == first
pd.DataFrame({"p": corpus.p[mine], "decisive": corpus.decisive[mine],
              "w(p)": entropy_weight(corpus.p[mine])}).round(3)

# %% tags=["remove-cell"]
sentences = corpus.p[mine]
glue_all({"e4_differ": int(differ.sum()), "e4_posts": n_posts, "e4_mv_right": 100 * right["majority_vote"],
          "e4_tef_right": 100 * right["tef"], "e4_first": first, "e4_gold": str(corpus.y[first]),
          "e4_first_decisive": "change" if sentences[corpus.decisive[mine]][0] >= 0.5 else "stability",
          "e4_first_votes": int(np.sum(sentences >= 0.5)), "e4_first_n": int(mine.sum()),
          "e4_first_mv": str(mv[first]), "e4_first_tef": str(tef[first]),
          "e4_first_wmax": entropy_weight(sentences[~corpus.decisive[mine]]).max()})

# %% [markdown]
# ### What the simulation built in
#
# TEF wins this exercise by design. The judge was built to lean: the next cell measures how its
# uncertain sentences vote, by the true side of their post, and fuses the same posts once more from a
# judge without the lean (the same seed).

# %%
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

# %% tags=["remove-cell"]
lean_p = 1 / (1 + np.exp(-lab_lean))
glue_all({"e4_votes_change": votes["change"], "e4_votes_stability": votes["stability"], "e4_lean": lab_lean,
          "e4_lean_p": lean_p, "e4_lean_w": entropy_weight(np.array([lean_p]))[0], "e4_uncertain": lab_uncertain}
         | {f"e4_{key}_{rule}": both.round(1).loc[rule, column] for rule in ("MV", "SV", "TEF")
            for column, key in (("leaning judge", "lean"), ("without the lean", "fair"))})

# %% [markdown]
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
# most of them fall on the wrong side. A simulation can show how a rule works; whether real judges lean is a question for data
# (chapter 2 measures the lean of the book's CPU judges).
#
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
# rule's accuracy in percent at each $T$, and the set of rules whose accuracy does not move.

# %% [markdown]
# ```{admonition} For the teacher
# :class: tip
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

# %% [markdown]
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

# %% tags=["hide-cell"]
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

# %% [markdown]
# TEF is not the best rule here. Its accuracy, {glue:text}`e5_tef_low:.2f` to
# {glue:text}`e5_tef_high:.2f` %, is below the plain log-odds sum's at {glue:text}`e5_below_sum:d` of
# the {glue:text}`e5_n_T:d` temperatures and below SV's at {glue:text}`e5_below_sv:d`; both beat it at
# $T$ = {glue:text}`e5_below_both`. The margins are small, at most {glue:text}`e5_gap:.2f` points
# ({glue:text}`e5_gap_posts:d` posts of {glue:text}`e5_posts:,d`), but they point one way, and
# chapter 2 explains why: this judge is calibrated at $T = 1$ and leans nowhere, so its uncertain
# sentences carry weak but genuine evidence. The plain sum is then the Bayes rule (chapter 1), and
# TEF's weights throw part of that evidence away. Tempering pays when the weak sentences are biased,
# as in exercise 4, not when they are merely weak.
#
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

# %% [markdown]
# ```{admonition} For the teacher
# :class: tip
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

# %% [markdown]
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

# %% tags=["hide-cell"]
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

# %% [markdown]
# What this means for fusion: Majority Vote sees only $\hat y_i$, so on a sentence of this strength it
# starts from {glue:text}`e6_kept:.0f` % of the information the judge gave; Soft Vote, the log-odds
# sum and TEF see $p_i$ and start from all of it. Proposition 1 stops there: it says nothing about
# how a rule *uses* the information it keeps, which is what exercises 3 to 5 were about. A rule can
# keep all of it and still lose to one that keeps less, as Soft Vote did to TEF in exercise 4, and
# TEF to the plain sum in exercise 5.
#
# ## Discussion
#
# Questions for the last ten minutes, or for a written answer. Each has more than one defensible
# answer; the note after them says what a good one contains.
#
# 1. Under TEF one decisive sentence outweighs about {glue:text}`e3_tef_rate:,.0f` hedging sentences
#    at $p = 0.4$ (exercise 3). When is it right that hedging sentences count for almost nothing, and
#    when is it wrong? Use exercises 4 and 5 in your answer.
# 2. The judge of exercise 4 leans by construction. How would you find out whether a real LLM judge
#    leans, without labels, and with labels? (Chapter 2 does it one way.)
# 3. In exercise 5 the plain log-odds sum beats TEF on a calibrated judge. Given chapter 1's
#    derivation, why is that expected? What would make you choose TEF anyway?
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
#
# ```{admonition} For the teacher: what a good answer contains
# :class: tip
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
#
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
