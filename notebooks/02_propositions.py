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
# # The propositions, checked by simulation
#
# The paper supports TEF with two propositions (its Section 3). Both are textbook results about
# idealised detectors: the data processing inequality, and Bayes' rule for conditionally independent
# evidence. A simulation cannot confirm a theorem. What it can do is check that our simulator and our
# code reproduce the two results where their hypotheses hold, and measure how far the results fail
# where the hypotheses do not, which is where the lessons for TEF are. This chapter draws sentence
# posteriors from a generative model whose calibration and dependence we control
# (`tefcore.simulate`), checks each proposition against a value computed by another route, measures
# where the additive identity breaks and what tempering does then, maps when TEF beats Majority and
# Soft Vote, and finally places real CPU judges, run on the MIND sample, on that map. Every check
# prints what it measured and its tolerance, and stops the chapter if it fails; the summary at the
# end says what each check could catch. Only the last section reads MIND data (judges' caches); it
# says which.

# %% tags=["parameters"]
seed: "int >= 0" = 20251122
# sentences for the calibration check and for the information estimates
n_calibration_docs = 40_000
n_information_sentences = 200_000
information_bins: "int >= 2" = 64
strengths = [0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
# posts for the calibration slope and the stress tests, their decisive strength
n_identity_docs = 20_000
identity_strength = 2.0
correlations = [0.0, 0.2, 0.4, 0.6]
temperatures = [0.5, 1.0, 2.0]
# the simulation study: share of decisive sentences x uncertain sentences
study_shares = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
study_uncertain = [1, 2, 3, 4, 6, 8, 12, 16]
study_docs: "int >= 1" = 2000
decisive_strength = 3.0
uncertain_strength = 0.5
detector_lean = 0.5
# tolerances of the checks
tol_calibration = 0.02
tol_identity = 1e-8
tol_information = 0.005
tol_slope = 0.05
# real judges (their caches are read when present)
cache_dir = "data/caches"
judges = "local, e5-zeroshot, e5-crossfit-raw, e5-crossfit"
prompt = "original"
sweep_temperatures = [0.25, 0.5, 1.0, 2.0, 4.0]
sweep_bootstrap: "int >= 1" = 200

# %% tags=["hide-input"]
from tefbook.parameters import check_parameters

check_parameters("02_propositions")  # a misspelt -p name fails here, naming the parameters above

import numpy as np
import pandas as pd
from IPython.display import HTML, display
from myst_nb import glue

from tefbook.chapters import ch02, theory
from tefbook.companion.calibration import temperature_sweep
from tefbook.companion.figures import setup_notebook
from tefbook.companion.labels import LANG_LABELS, RELIABILITY_LABELS, reader_table
from tefpaper.ledger import chapter_claims
from tefbook.companion.results import majority_floor
from tefbook.companion.runs import load_runs, setting_notes
from tefbook.companion.tables import bold_best, glue_all
from tefcore.fusion import RULE_LABELS, entropy_weight
from tefcore import information
from tefcore import simulate as sim
from tefcore.metrics import reliability_table

setup_notebook()
pd.set_option("display.max_colwidth", None)
rng = np.random.default_rng(seed)
checks = theory.Checks()
for key, value in {"n_information_sentences": n_information_sentences, "study_docs": study_docs,
                   "detector_lean": detector_lean, "lean_min": detector_lean / 2,
                   "sweep_bootstrap": sweep_bootstrap}.items():
    glue(key, value, display=False)

# %% [markdown]
# ## A detector whose calibration we control
#
# Each post has a side $Y$ (change with prior $\pi$) and $s = \pm 1$ its sign. Sentence $i$ carries a
# latent observation with a *strength* $\mu_i$,
#
# $$
# x_i = s\,\frac{\mu_i}{2} + \varepsilon_i,\qquad
# \varepsilon_i = \sqrt{\rho}\,z + \sqrt{1-\rho}\,e_i,\qquad z, e_i \sim \mathcal N(0,1),
# $$ (prop-model)
#
# so that $\mu_i$ is the distance between the two class means in noise standard deviations and
# $\rho$ the correlation that a noise term shared by the post's sentences creates. Whatever $\rho$,
# each sentence alone has $x_i \mid Y \sim \mathcal N(s\mu_i/2, 1)$, whose exact posterior log-odds is
# $\lambda_i = \mu_i x_i + \ell(\pi)$. The simulated judge reports
#
# $$
# p_i = \sigma\bigl(\lambda_i / T + b + \eta_i\bigr),\qquad \eta_i \sim \mathcal N(0, \tau^2),
# $$ (prop-report)
#
# and is therefore calibrated exactly when the temperature is $T = 1$, the lean $b = 0$ and the noise
# $\tau = 0$. *Decisive* sentences get strength $\mu = $ {glue:text}`mu_dec:g` (right
# {glue:text}`acc_dec:.0f` % of the time alone, $\Phi(\mu/2)$), *uncertain* ones
# $\mu = $ {glue:text}`mu_unc:g` (right {glue:text}`acc_unc:.0f` % of the time): the defaults of the
# parameters cell. The model's exact document posterior is in the docstring of
# `tefcore.simulate.simulate_documents`.
#
# **Check 0, of the simulator: its posteriors are calibrated.** Among sentences reported at $p$, a
# share $p$ should come from change posts. The reliability table bins the posteriors; every bin must
# lie within the tolerance of the diagonal. The check can only catch a fault of `tefcore.simulate`;
# it says nothing about the paper.

# %%
detector = sim.Detector(strength=decisive_strength,
                        uncertain_strength=uncertain_strength)
right_alone = {"decisive": theory.sentence_accuracy(decisive_strength),  # Φ(μ/2), equal priors
               "uncertain": theory.sentence_accuracy(uncertain_strength)}
decisive_p = theory.decisive_threshold(0.5)  # the p from which a sentence's TEF weight reaches 1/2
calib = sim.simulate_documents(n_calibration_docs, detector, n_decisive=1,
                               n_uncertain=4, rng=rng)
reliability = reliability_table(calib.p, calib.sentence_is_change, n_bins=10)
worst = reliability["gap"].abs().max()
checks.at_most("0 calibration: max |observed − predicted| over 10 bins", worst,
               tol_calibration, kind="simulator")
reader_table(reliability.set_index("bin").rename(columns=RELIABILITY_LABELS), 4, **{"p from": 1, "p to": 1})

# %% tags=["hide-input"]
glue_all(mu_dec=decisive_strength, mu_unc=uncertain_strength, acc_dec=100 * right_alone["decisive"],
         acc_unc=100 * right_alone["uncertain"], decisive_p=decisive_p)
theory.reliability_figure(reliability).show()

# %% [markdown]
# ## Proposition 1: soft posteriors carry at least the information of hard labels
#
# ```{prf:proposition} Information preservation
# :label: prop-information
#
# The hard label $\hat y_i = \mathbb 1[p_i \ge 1/2]$ is a function of the sentence posterior $p_i$,
# so by the data processing inequality {cite}`cover2005elements`
# $I(Y; p_i) \ge I(Y; \hat y_i)$.
# ```
#
# For a sentence of the model {eq}`prop-model` both sides have closed forms (the hard label is a
# binary channel; $I(Y; p_i)$ is a one-dimensional integral, computed by Gauss-Hermite quadrature in
# `sim.gaussian_information`). We also estimate both from {glue:text}`n_information_sentences:,d`
# simulated sentences per strength with a plug-in estimator on binned posteriors
# (`theory.information_table`). Three checks, none of which tests the proposition, a theorem:
# (1a) our quadrature obeys the inequality at every strength, which could fail only through a fault
# of our code; (1b) the plug-in estimates agree with the exact values, a check of the estimator;
# (1c) the estimates obey the inequality too, which holds by construction: one bin edge sits at
# $1/2$, so the hard label is a function of the bin and the inequality holds for the empirical
# distribution of any sample. It illustrates the proposition; it cannot fail.

# %%
info = theory.information_table(strengths, n_information_sentences,
                                information_bins, rng)
exact = info["I(Y;p) exact"] - info["I(Y;ŷ) exact"]
checks.at_least("1a exact: min over strengths of I(Y;p) − I(Y;ŷ)", exact.min(),
                0, kind="code")
err = max((info["I(Y;p) plug-in"] - info["I(Y;p) exact"]).abs().max(),
          (info["I(Y;ŷ) plug-in"] - info["I(Y;ŷ) exact"]).abs().max())
checks.at_most("1b plug-in vs exact: max |difference| (nats)", err,
               tol_information, kind="estimator")
plug_in = info["I(Y;p) plug-in"] - info["I(Y;ŷ) plug-in"]
checks.at_least("1c plug-in: min over strengths of I(Y;p) − I(Y;ŷ)",
                plug_in.min(), 0, kind="construction")
info.round(4)

# %% tags=["hide-input"]
for key, value in theory.information_numbers(info).items():
    glue(key, value, display=False)
theory.information_figure(info).show()

# %% [markdown]
# The hard label loses {glue:text}`lost_weak:.0f` % of the information of a sentence of strength
# {glue:text}`mu_weak:g`, and less the more decisive the sentence ({glue:text}`lost_strong:.0f` % at
# strength {glue:text}`mu_strong:g`): a sentence that is nearly always right has little left to say
# beyond its sign. Note what the proposition does *not* claim: it is about one sentence, not about the
# accuracy of a fusion rule, and it holds for any function of $p_i$, whether calibrated or not. A
# uniform temperature, for instance, is an invertible map of $p_i$ and leaves $I(Y; p_i)$ unchanged.
#
# ## Proposition 2: the additive log-odds identity
#
# ```{prf:proposition} Additive Bayes log-odds
# :label: prop-additive
#
# For a binary contrast with equal priors, calibrated and conditionally independent sentence
# posteriors satisfy
# $\log\frac{P(c \mid D_{1:N})}{P(\bar c \mid D_{1:N})} = \sum_{i=1}^{N} \ell(p_i)$.
# ```
#
# Chapter 1 derived it with the prior term that unequal priors need, {eq}`deriv-additive`:
# $\sum_i \ell(p_i) - (N-1)\,\ell(\pi)$. **Check 2a**, of our code against the identity, compares it
# with an exact posterior computed independently. The posts (the claims ledger's, `theory.prop2_table`) have one to eight calibrated,
# independent sentences of known Gaussian likelihoods and random strengths; the exact posterior
# log-odds of each post is computed from the joint likelihood of its latent observations with
# `scipy.stats.norm`, a route that never forms a sentence posterior. The check runs at equal priors
# and at an unequal prior, where the term $-(N-1)\,\ell(\pi)$ matters: the last column shows how far
# the plain sum lands without it.

# %%
identity = theory.prop2_table()
for prior, gap in identity["with the prior term"].items():
    name = f"2a identity, π = {prior}: max |Σℓ(p_i) − (N−1)ℓ(π) − exact|"
    checks.at_most(name, gap, tol_identity, kind="code")
miss = identity.loc[identity.index != 0.5, "plain sum"].min()
checks.measure("2a′ without the prior term, π ≠ ½: max |Σℓ(p_i) − exact| (nats)",
               miss)
identity.assign(**{gap: identity[gap].map("{:.2g}".format) for gap in ("with the prior term", "plain sum")})

# %% tags=["hide-input"]
glue("p2_miss", float(miss), display=False)
glue("p2_longest", int(identity["longest post"].max()), display=False)

# %% [markdown]
# With the prior term the sum of sentence log-odds *is* the exact posterior log-odds, to round-off,
# at both priors: nothing in the check was built from the identity it tests. Without the term, the
# sum misses by up to {glue:text}`p2_miss:.2f` nats at the unequal prior, on posts of up to
# {glue:text}`p2_longest:d` sentences: each sentence posterior carries the prior once, and the plain
# sum counts it once per sentence instead of once per post. The paper's equal-prior statement hides
# this term, since $\ell(1/2) = 0$; a judge that reads the prior from its training data, as an LLM
# does, brings it back.
#
# A second check of the simulator looks at the sum as a probability. **Check 2b**: its calibration
# slope, the $\beta$ of a logistic regression of $Y$ on the score, is one for calibrated log-odds,
# below one for overconfident and above one for underconfident ones
# (`information.calibration_slope`).

# %%
ideal = sim.simulate_documents(n_identity_docs, detector, n_decisive=2,
                               n_uncertain=4, strength=identity_strength,
                               rng=rng)
summed = information.additive_log_odds(ideal.p, ideal.doc_index)
slope = information.calibration_slope(summed, ideal.y)
checks.within("2b calibration slope of the summed log-odds", slope, 1,
              tol_slope, kind="simulator")

# %% [markdown]
# ## Where the identity breaks, and what tempering does
#
# Now we violate the hypotheses one at a time: sentences that share noise ($\rho > 0$) and a judge
# that is too sharp or too flat ($T \ne 1$). For each setting the table gives the mean distance
# between the summed log-odds and the exact ones (for $\rho > 0$ the model's exact posterior of the
# correlated observations), the calibration slopes of the plain sum and of TEF's score
# $\sum_i w_i \ell(p_i)$, and the accuracy of both next to the Bayes decision of the model
# (`oracle`). The first column measures how far the identity fails; it is a measurement, not a
# check, and the summary lists it without a verdict.

# %%
settings = [(f"ρ = {r}", r, 1.0) for r in correlations]
settings += [(f"T = {t}", 0.0, t) for t in temperatures if t != 1.0]
stress = theory.stress_table(settings, n_identity_docs, rng, detector,
                             strength=identity_strength)
broken = stress.loc[[f"ρ = {r}" for r in correlations if r > 0],
                    "mean |sum - exact|"]
checks.measure("2c identity under correlation: min mean |Σℓ − exact| for ρ > 0",
               broken.min())
stress.round(3)

# %% tags=["hide-input"]
for key, value in theory.stress_numbers(stress, correlations).items():
    glue(key, value, display=False)
theory.stress_figure(stress, [f"ρ = {r}" for r in correlations], correlations).show()

# %% [markdown]
# Read the table from the top. With independent, calibrated sentences the sum *is* the posterior:
# slope one, and the sign of the sum is the Bayes decision. TEF pays a small price there: its
# weights shrink the evidence (slope {glue:text}`slope_tef_0:.2f`) and discard the weak but genuine
# evidence of the uncertain sentences, so its accuracy, {glue:text}`acc_tef_0:.1f` %, sits a little
# below the sum's {glue:text}`acc_sum_0:.1f` %. Shared noise changes the picture: the sum counts the
# common part of the noise once per sentence, and at $\rho$ = {glue:text}`rho_max:g` its slope falls to
# {glue:text}`slope_sum_max:.2f` (overconfidence) and its accuracy to {glue:text}`acc_sum_max:.1f` %;
# TEF's weights shrink exactly the sentences that the shared noise pushes around near $1/2$, its
# slope stays nearer one ({glue:text}`slope_tef_max:.2f`) and its accuracy is
# {glue:text}`acc_tef_max:.1f` %. A uniform temperature, finally, rescales every log-odds by $1/T$:
# the slope of the sum becomes $T$, and its decisions do not change at all (a sign is scale-free);
# TEF's weights are not scale-free, but its decisions barely move either. This is the sense in which
# tempering is a hedge: it costs a little when the ideal holds and helps when the sentences are not
# the independent witnesses the identity needs.
#
# ## When does TEF beat Majority and Soft Vote?
#
# A grid of posts: along one axis the number of uncertain sentences per post, along the other the
# share of decisive sentences among all of them (each post gets on average $u\,q/(1-q)$ decisive
# sentences for $u$ uncertain ones and a share $q$; some posts get none, see
# `theory.decisive_counts`). At a fixed share, posts get longer from left to right. Each cell holds
# {glue:text}`study_docs:,d` posts, and the map shows TEF's accuracy minus the better of MV and SV,
# in points. Two
# judges:
#
# - **calibrated**: the model above, exactly calibrated;
# - **leaning**: the same, but every reported log-odds is shifted by $b$ = {glue:text}`detector_lean:g`
#   towards change, whatever the sentence says. This is the failure we expect of an LLM that prefers
#   one answer letter: a sentence without evidence comes out at $\sigma(b)$ =
#   {glue:text}`lean_p:.2f` rather than $1/2$.

# %%
grid = dict(decisive_shares=study_shares, n_uncertain_values=study_uncertain,
            detector=detector, n_docs=study_docs, rng=rng)
studies = {
    "calibrated": theory.fusion_study(**grid),
    "leaning": theory.fusion_study(**grid, logit_bias=detector_lean),
}
maps = theory.gain_maps(studies)
gains, accuracy = theory.study_summary(studies, maps)
lean_p = 1 / (1 + np.exp(-detector_lean))  # what an evidence-free sentence of the leaning judge reports
lean_w = entropy_weight([lean_p])[0]  # and its TEF weight
display(gains.round(1))
bold_best(accuracy, skip={"oracle (Bayes)"})

# %% tags=["hide-input"]
glue_all(lean_p=float(lean_p), lean_w=float(lean_w))
theory.gain_map_figure(maps).show()

# %% [markdown]
# With a calibrated judge there is little to choose between TEF and Soft Vote: both follow the
# decisive sentences, because a calibrated uncertain sentence sits close to $1/2$ where both rules
# give it little say (MV, which gives it a full vote, is the weak one; compare the mean accuracies
# above, best in bold). With a judge that leans, every uncertain sentence becomes a small vote for
# change; MV and SV add these up, and in long posts with few decisive sentences they overrule the
# decisive evidence. TEF's weight of an evidence-free sentence of this judge is
# {glue:text}`lean_w:.3f`, so the lean hardly enters its score: the gain is large in the lower right
# of the map (many uncertain sentences, few decisive ones) and vanishes where decisive sentences
# dominate. This is the situation the paper describes ("uncertain sentences outvote a few decisive
# ones"); the map shows that it needs both ingredients, many uncertain sentences *and* a systematic
# lean in them.
#
# ## Real judges on the map
#
# Where do real judges sit? The caches of the CPU judges on the MIND sample give real sentence
# posteriors: SmolLM2-135M (an LLM small enough for a CPU, with a near-constant preference for one
# answer letter: it exercises the pipeline, not the accuracy), the zero-shot multilingual-e5-small
# judge (each text compared with descriptions of the two sides), and the cross-fitted e5 judge (a
# logistic-regression probe on post embeddings, applied to each sentence, with no post scored by a
# probe that saw it) under its first setting and tuned (standardized embeddings, the probe's
# regularisation chosen by nested cross-validation). These are not the paper's LLMs. Which judge is
# which, and on which data, is read from each cache's provenance:

# %%
runs = load_runs(judges, prompt, ("en", "zh"), cache_dir)
names = theory.judge_names(runs)
sources = theory.judge_sources(runs).drop(columns="registry name")
reader_table(sources.rename(columns={"from the caches' provenance": "what produced it (model, engine, hardware, data)",
                                     **{f"pairs, {lang}": f"pairs, {label}" for lang, label in LANG_LABELS.items()}}))

# %% [markdown]
# Each row says, from the cache header, which model produced the judge's numbers, which engine ran it,
# on which hardware, and on which data (the embedded MIND sample unless the caches say otherwise); the
# pair counts say how many evaluation pairs the judge scored per language. The judges' names in the
# tables below add, for the cross-fitted judge, how its probe was set.

# %% tags=["hide-input"]
from tefbook.companion.provenance import data_kind

differing = setting_notes(runs.provenance)  # a judge's languages scored under different settings
glue("judges_data", " and ".join(sorted({data_kind(g) for _, g in runs.frame.groupby("model")})), display=False)
glue("judges_missing", len(runs.missing) - len(differing), display=False)
glue("judges_differing", ch02.differing_settings(runs.provenance, names), display=False)

# %% [markdown]
# All these caches were scored on the {glue:text}`judges_data`; {glue:text}`judges_missing` of the
# requested caches are missing or uneven. Judges whose two languages were scored under different
# settings: {glue:text}`judges_differing`.
# Such a judge stays in every table, since the tables compare the rules within one judge and one
# language, but its English and Chinese numbers are not one setting's.

# %% [markdown]
# For each judge and language we count, per post, its decisive sentences (weight $w \ge 1/2$, i.e.
# $p \ge$ {glue:text}`decisive_p:.2f` or $p \le 1 -$ {glue:text}`decisive_p:.2f`) and its uncertain
# ones, and we estimate the judge's lean $b$ from its uncertain sentences: their mean log-odds in
# change posts and in stability posts, and the midpoint of the two (a lean shifts both alike, genuine
# evidence pulls them apart). The last two columns say how often a decisive and an uncertain sentence
# points to its post's gold side; a dash marks a judge that gave no such sentence in that language.
# The first table places each judge; the second tests the map's premises (the lean to three decimals,
# so that a lean just short of the threshold below reads as short of it).

# %%
placed = theory.judge_map(runs.frame, names)
percent = {"decisive share (%)": 1, "decisive agree (%)": 1, "uncertain agree (%)": 1}
display(reader_table(placed[theory.MAP_POSITION], 2, **percent))
reader_table(placed[theory.MAP_PREMISES], 2, **percent, **{"lean b": 3}).replace("", "–")

# %% [markdown]
# The weight distributions of the real judges next to the simulated calibrated judge of the map:

# %% tags=["hide-input"]
theory.weight_histogram_figure(runs.frame, calib.p, names).show()

# %% [markdown]
# Each judge's mean position (uncertain sentences per post, pooled share of decisive sentences),
# placed on the two maps (circles: English, squares: Chinese), and the simulated gain of the nearest
# grid cell:

# %% tags=["hide-input"]
theory.gain_map_figure(maps, placed).show()
nearest = theory.nearest_cells(placed, maps)
display(reader_table(nearest, 1))
glue("min_gain", theory.premises_table.__kwdefaults__["min_gain"], display=False)  # the rule's threshold

# %% [markdown]
# ### Sharper or flatter: a temperature sweep on real posts
#
# The map says that TEF's advantage depends on how many sentences are decisive. A real judge can be
# made sharper or flatter by re-tempering its posteriors, $p \mapsto \sigma(\ell(p)/t)$ with $t < 1$
# sharper and $t > 1$ flatter (`temperature_sweep`). Direct and MV do not move ($1/2$ is a fixed
# point), so the sweep shows how TEF and SV respond. The first table gives the judges as they are
# ($t = 1$): the strongest baseline (the best of Direct, MV and SV on the average over dimensions)
# and its accuracy, TEF's accuracy and TEF's gain in points with a 95 % paired bootstrap interval
# over posts ({glue:text}`sweep_bootstrap:,d` replicates), beside the majority-class rate of the language (always
# answering the more frequent side). The figure gives the gain at every temperature, the strongest
# baseline chosen again at each (hover for it and for the share of decisive sentences). Chapter 5 makes
# the same comparison at $t = 1$ and finds the same gains, but its intervals differ a little from these:
# both bootstraps resample the evaluation pairs within each dimension, chapter 5 with its own number of
# replicates and its own seed, this sweep with the {glue:text}`sweep_bootstrap:,d` replicates above and
# this chapter's seed.

# %%
sweep = temperature_sweep(runs.frame, sweep_temperatures,
                          n_boot=sweep_bootstrap, random_state=seed % 2**32)
sweep["judge"] = sweep["model"].map(names)
floor = majority_floor(runs.frame)
reader_table(theory.sweep_table(sweep, floor), 1)

# %% tags=["hide-input"]
theory.sweep_figure(sweep).show()

# %% [markdown]
# How to read these results against the theory. The map assumes that decisive sentences are
# *calibrated*: a calibrated judge's decisive sentences point to the post's side at least
# {glue:text}`decisive_p:.0%` of the time. The column "decisive agree (%)" measures this for the real
# judges (a proxy: a sentence may quote the other side, so even a perfect judge would not reach
# 100 %). Where it falls far short, the decisive sentences are overconfident and TEF, which trusts
# them most, inherits their errors; the map then overstates what TEF can gain, whatever the judge's
# position on it. A judge whose sentence posteriors stay near $1/2$ gives TEF almost nothing to work
# with: its weights are near zero, TEF's score is a sum of near-cubes
# $\approx \sum_i \ell_i^3/(8\log 2)$ (chapter 1, {eq}`deriv-cubic`), and the rule behaves like a
# noisier soft vote. Sharpening a judge moves it up the map (more decisive sentences) but also
# inflates the log-odds of the sentences that were wrong, so the sweep, not the map alone, says
# whether it pays.
#
# The map's three premises for a gain of TEF over MV and SV, judge by judge: a gain of at least
# {glue:text}`min_gain:.1f` points at the judge's cell of the leaning map (a smaller gain, even a positive one,
# counts as a no), a lean in its uncertain sentences ($|b|$ at least
# {glue:text}`lean_min:.2f`, half the leaning map's $b$), and decisive sentences as reliable as a
# calibrated judge's (`theory.premises_table`; a dash where the judge gave no decisive sentence, so
# there is nothing to judge):

# %% tags=["hide-input"]
reader_table(theory.premises_table(placed, nearest, lean=detector_lean)).rename(
    columns={"map gain at its cell": f"map gain at its cell (>= {theory.premises_table.__kwdefaults__['min_gain']:.1f} points)"})

# %% [markdown]
# The tuned cross-fitted judge is the CPU detector that carries signal, so it is the one to read
# closely. Does it sit where TEF should gain, and does TEF then gain on its posts? Its premises per
# language, beside the sweep's row for the judge as it is ($t = 1$): the strongest baseline, TEF's
# gain over it with the interval's ends, and TEF's accuracy against the majority-class rate.

# %%
tuned = names.get("e5-crossfit")
premises = theory.premises_table(placed, nearest, lean=detector_lean)
as_is = sweep[(sweep["judge"] == tuned) & (sweep["t"] == 1.0)].set_index("lang")
present = tuned in premises.index.get_level_values("judge")  # its cache is read when present
verdict = (premises.xs(tuned, level="judge") if present else premises.iloc[:0].droplevel("judge")).join(
    as_is[["best_baseline", "gain", "low", "high", "tef"]])
verdict["TEF beats the baseline"] = verdict["low"] > 0
verdict["majority rate"] = [floor[lang] for lang in verdict.index]
verdict["TEF above the majority rate"] = verdict["tef"] > verdict["majority rate"]
tuned_counts = {"tuned_langs": len(verdict),
                "tuned_sits": int((verdict["where TEF should gain"] == "yes").sum()),
                "tuned_beats": int(verdict["TEF beats the baseline"].sum()),
                "tuned_above": int(verdict["TEF above the majority rate"].sum())}
reader_table(verdict.assign(best_baseline=verdict["best_baseline"].map(RULE_LABELS)), 1).rename(
    columns={"best_baseline": "strongest baseline", "gain": "TEF − baseline (points)", "low": "95 % low",
             "high": "95 % high", "tef": "TEF accuracy (%)", "majority rate": "majority rate (%)"},
    index=LANG_LABELS).T.rename_axis(index=tuned, columns=None)

# %% tags=["remove-cell"]
for key, value in tuned_counts.items():
    glue(key, value, display=False)
for key in ("tuned_sits", "tuned_beats", "tuned_above"):
    glue(f"{key}_in", ch02.count_words(tuned_counts[key], len(verdict), "language", "languages"), display=False)

# %% [markdown]
# The tuned judge sits where TEF should gain in {glue:text}`tuned_sits_in`; on its posts TEF beats
# the strongest baseline (the interval above zero) in {glue:text}`tuned_beats_in`, and its accuracy is
# above the majority-class rate in {glue:text}`tuned_above_in`. The map's premises and the posts' outcome are read from the same
# sentence posteriors, so where a premise fails the table says which one, and the gain column shows
# what that costs.

# %% [markdown]
# ## Summary of the checks
#
# Each check says what it could catch: a fault of our simulator, of our code or of our estimator
# against a textbook result, or nothing at all (it holds by construction). None of them could refute
# a proposition: both are theorems, and a simulation built on their hypotheses reproduces them. The
# measurements of how far the identity breaks without its hypotheses close the table, without a
# verdict: they are what the chapter learns, not what it checks.

# %%
checks.table()

# %% [markdown]
# ## This chapter in the claims ledger
#
# The paper's statements that this chapter examines, as the claims ledger checks them (each link
# opens the ledger's row):

# %% tags=["remove-input"]
HTML(chapter_claims("02_propositions"))
