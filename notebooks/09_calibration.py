# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Calibration of the post-level confidence (paper Fig. 4)
#
# A measurement pipeline thresholds or hand-checks its least certain outputs, so the confidence
# attached to a decision matters as much as the decision. The paper's Fig. 4 compares, on
# Qwen2.5-7B, the **expected calibration error** (ECE) and the **overconfidence gap** of the four
# rules in both languages; its text says that Direct and both voting rules are overconfident
# ({glue:md}`link_baselines`) while TEF has the lowest ECE and the smallest gap ({glue:md}`link_tef`).
# The figure prints no values, so only that ordering can be set against anything.
#
# **That claim is about one model, and only that model can test it.** Calibration is a property of a
# judge and a rule together: the same rule is well calibrated on one judge's answers and badly on
# another's. None of the judges that run here is Qwen2.5-7B, and {glue:text}`n_below` of the
# {glue:text}`n_judges` ({glue:text}`below_names`) clear the majority-class floor in neither language
# (computed below, as in chapter 5). What this chapter can show is the computation itself, written
# out, and what the CPU judges say about the rules' confidences, which is a statement about those
# judges, not a test of the paper's.
#
# The paper defines no confidence for any rule ({glue:md}`link_confidence`). The confidences here are
# those of the public reference release, which protocol §6 records:
#
# | rule | confidence of the predicted side |
# | --- | --- |
# | Direct | $\max(p, 1-p)$ of the whole-post answer |
# | Majority Vote | the winning share of sentence votes |
# | Soft Vote | $\max(m, 1-m)$ with $m$ the mean sentence probability |
# | TEF | $\sigma(2\lvert s\rvert / T)$, the softmax of the two side scores $\pm s$ at temperature $T$ |
#
# TEF's temperature is $T =$ {glue:text}`reference_T` in the reference release's code: a constant of
# that release, not of the paper or the method, fitted to no data. TEF's decisions do not depend on
# it, only its confidence does, so this chapter also shows TEF's calibration across a range of $T$.

# %% tags=["parameters"]
models = "e5-crossfit,e5-zeroshot,local"  # judges (registry names), comma-separated
prompt = "original"  # prompt variant of the caches
langs = "zh,en"  # languages
cache_dir = "data/caches"  # root of <model>/<prompt>/<lang>.jsonl
reading = "summed"  # how the LLM judges' answer tokens were read: "summed" or "reference"
invalid = "drop"  # unreadable answers: left out ("drop") or read as 0.5 ("reference")
n_bins: "int >= 1" = 10  # confidence bins
temperatures = "0.5,1,2,5,10,20,50,100"  # TEF's softmax temperatures T to compare
n_boot: "int >= 1" = 1000  # bootstrap replicates of the ECE intervals
seed: "int >= 0" = 0  # bootstrap seed

# %% tags=["hide-input"]
from tefbook.parameters import check_parameters

check_parameters("09_calibration")  # a misspelt -p name fails here, naming the parameters above

import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown, display

from tefbook.chapters import ch09
from tefbook.companion.tables import glue_all
from tefbook.companion.commands import reproduce_block
from tefbook.companion.figures import setup_notebook
from tefbook.companion.labels import run_table, short_names
from tefpaper.ledger import chapter_claims, claim_link
from tefbook.companion.runs import chapter_runs, parse_list
from tefcore.fusion import RULE_LABELS, TEMPERATURE

setup_notebook()
RULES = ["direct", "majority_vote", "soft_vote", "tef"]
lang_list = parse_list(langs)
links = {"link_tef": "calibration-tef", "link_baselines": "calibration-baselines", "link_confidence": "calibration-confidence"}
glue_all({"reference_T": f"{TEMPERATURE:g}", **{key: Markdown(claim_link(c)) for key, c in links.items()}})

# %% [markdown]
# ## The judges and their decisions
#
# The caches of chapter 5, every rule's decision on every pair with the confidence of the decided
# side (`predict_pairs`):

# %% tags=["full-width"]
from tefcore.evaluate import predict_pairs

runs = chapter_runs(models, prompt, lang_list, cache_dir, reading=reading)
names = short_names(runs)
display(run_table(runs, names))
pred = pd.concat([predict_pairs(g, rules=RULES, invalid=invalid, scores=True).assign(model=model)
                  for model, g in runs.frame.groupby("model", sort=False)])
pred = pred[pred["prediction"] != "abstain"]  # an abstention carries no confidence
ch09.shown(pred.head()[["model", "lang", "post_id", "dimension", "rule", "prediction", "confidence", "correct"]], names, 3,
           index=False)

# %% [markdown]
# As in chapter 5, a judge is worth calibrating only where it beats a constant answer: each judge's
# best Average accuracy (mean over dimensions) against the majority-class floor of the pairs it
# decided:

# %%
from tefbook.companion.results import majority_floor
from tefcore.evaluate import score_table

table = score_table(pred, by=["model", "lang", "rule", "dimension"])
best_average = table[table["dimension"] == "Average"].groupby(["model", "lang"], sort=False)["accuracy"].max()
decided = pred[pred["rule"] == "tef"]  # one row per decided pair: each judge's floor on its own pairs
floor = pd.concat({m: majority_floor(g) for m, g in decided.groupby("model")}, names=["model"]).reindex(best_average.index)
clears = best_average > floor
ch09.shown(pd.DataFrame({"best Average accuracy (%)": best_average, "floor (%)": floor, "clears the floor": clears}),
           names)

# %% tags=["hide-input"]
glue_all(ch09.below_numbers(clears, runs.models, names))

# %% [markdown]
# {glue:text}`n_below` of the {glue:text}`n_judges` judges ({glue:text}`below_names`) stay under the
# floor in both languages. Their confidences can still be calibrated (a judge right on 55 % of the
# pairs and 55 % sure of each is perfectly calibrated), but a calibrated confidence of a judge that
# a constant answer beats is of no use for thresholding or hand-checking. The tables below keep every
# judge, because calibration and accuracy are separate properties; read the rows of the judges under
# the floor as a check of the computation rather than as evidence about the rules.

# %% [markdown]
# ## The expected calibration error, by hand
#
# Protocol §7: ten equal-width confidence bins (the last one closed at 1.0), pooled over all
# dimensions of a language; in each bin $b$ the mean confidence $\mathrm{conf}(b)$ and the share of
# correct decisions $\mathrm{acc}(b)$; the ECE weighs their distance by the bin's share of the
# decisions, $\mathrm{ECE} = \sum_b \frac{n_b}{n}\lvert \mathrm{acc}(b) - \mathrm{conf}(b)\rvert$. The
# overconfidence gap is the mean confidence minus the accuracy (positive: overconfident).

# %%
def ece(confidence: np.ndarray, correct: np.ndarray, bins: int = n_bins) -> float:
    """Expected calibration error with equal-width bins, the last closed at 1.0."""
    b = np.minimum((confidence * bins).astype(int), bins - 1)
    n_b = np.bincount(b, minlength=bins)
    gap_b = np.bincount(b, weights=confidence - correct, minlength=bins)  # Σ (conf − correct) per bin
    return float(np.sum(np.abs(gap_b)) / n_b.sum())  # Σ_b n_b/n · |conf(b) − acc(b)|

calibration = pred.groupby(["model", "lang", "rule"], sort=False).apply(lambda g: pd.Series({
    "decisions": len(g), "accuracy": 100 * g["correct"].mean(), "mean confidence": g["confidence"].mean(),
    "ECE": ece(g["confidence"].to_numpy(), g["correct"].to_numpy(float)),
    "gap": g["confidence"].mean() - g["correct"].mean()}))
order = pd.MultiIndex.from_product([runs.models, lang_list, RULES], names=calibration.index.names)
calibration = calibration.reindex(order).dropna(how="all")  # judge by judge, language by language

# %% [markdown]
# The library's `expected_calibration_error` and `overconfidence_gap` (used by the intervals below)
# give the same numbers:

# %%
from tefcore import metrics

for (model, lang, rule), g in pred.groupby(["model", "lang", "rule"], sort=False):
    row = calibration.loc[(model, lang, rule)]
    assert np.isclose(row["ECE"], metrics.expected_calibration_error(g["confidence"], g["correct"], n_bins))
    assert np.isclose(row["gap"], metrics.overconfidence_gap(g["confidence"], g["correct"]))

# %% [markdown]
# Per judge and language, the accuracy over the decided pairs (all dimensions pooled, so it differs a
# little from chapter 5's Average, a mean over dimensions), the mean confidence, the ECE with its 95 %
# bootstrap interval (pairs resampled within dimensions) and the gap. The lowest ECE and the gap
# closest to zero of each judge and language are in bold.

# %%
for (model, lang, rule), g in pred.groupby(["model", "lang", "rule"], sort=False):
    ci = metrics.bootstrap_ci(lambda c, y: ece(c, y), g["confidence"].to_numpy(), g["correct"].to_numpy(float),
                              n_boot=n_boot, strata=g["dimension"].to_numpy(), random_state=seed)
    calibration.loc[(model, lang, rule), ["ECE low", "ECE high"]] = ci.low, ci.high

# %% tags=["hide-input", "full-width"]
display(ch09.calibration_table(calibration, names))

# %% [markdown]
# Two things to keep in mind when reading the intervals. The ECE is biased upwards on small samples:
# with few decisions in a bin, $\lvert \mathrm{acc}(b) - \mathrm{conf}(b)\rvert$ is positive
# even for a perfectly calibrated rule, so the same rule shows a larger ECE on a smaller language or sample.
# And the four rules of one judge read the same posts, so their intervals overlap more than a paired
# comparison of their errors would; an ECE that is *clearly* lowest, as the next section defines it (its
# whole interval below every other rule's estimate), is a conservative verdict.

# %% [markdown]
# ## Which rule is best calibrated, judge by judge
#
# For each judge and language, the rule with the lowest ECE and the rule with the gap closest to zero,
# and whether the lowest ECE is *clearly* lowest: its interval lies below every other rule's estimate.

# %%
best = calibration.groupby(["model", "lang"], sort=False).apply(lambda g: pd.Series({
    "lowest ECE": RULE_LABELS[g["ECE"].idxmin()[2]],
    "clearly": bool((g["ECE high"].loc[g["ECE"].idxmin()] < g["ECE"].drop(g["ECE"].idxmin())).all()),
    "gap closest to 0": RULE_LABELS[g["gap"].abs().idxmin()[2]],
    "TEF overconfident": bool(g.xs("tef", level="rule")["gap"].iloc[0] > 0)}))
ch09.shown(best, names)

# %% [markdown]
# The cells where TEF has the lowest ECE, and whether their judge beats a constant answer there. A
# lowest ECE on a judge under the floor says that TEF's confidences match that judge's accuracy,
# not that TEF turns good sentence answers into good confidences: that judge gives it few to work with.

# %%
tef_lowest = best[best["lowest ECE"] == "TEF"].join(clears.rename("judge clears the floor"))
tef_clearly = tef_lowest[tef_lowest["clearly"].astype(bool)]
ch09.shown(tef_lowest[["clearly", "judge clears the floor"]].astype(bool), names)

# %% tags=["hide-input"]
glue_all(ch09.best_numbers(best), clearly_names=ch09.cell_names(tef_clearly.index, names),
         clearly_above=tef_clearly["judge clears the floor"].sum())

# %% [markdown]
# In {glue:text}`tef_lowest` of our {glue:text}`n_cells` judge-language cells TEF has the lowest ECE
# at the reference release's $T$, clearly so in {glue:text}`tef_clearly` ({glue:text}`clearly_names`);
# in {glue:text}`clearly_above` of these the judge clears the majority-class floor. A judge under the
# floor makes such a cell a check of the computation, not evidence about TEF. These are statements about
# the CPU judges of this page on the MIND sample: they neither confirm nor contradict the paper's
# statement about Qwen2.5-7B. TEF's gap is the closest to zero in {glue:text}`tef_gap_closest` of
# the cells; the last column says on which side TEF errs where it does not, overconfident (its
# confidence above its accuracy) or underconfident.
#
# ## TEF's calibration depends on $T$
#
# TEF's decision is the sign of its score $s = \sum_i w_i \ell_i$; its confidence is $\sigma(2|s|/T)$.
# A larger $T$ pulls every confidence towards 0.5, a smaller one towards 1; no decision changes. The
# same TEF decisions, their confidence recomputed at each temperature:

# %%
from scipy.special import expit

tef = pred[pred["rule"] == "tef"]
grid = sorted({float(t) for t in parse_list(temperatures)} | {TEMPERATURE})  # the reference T always among them
rows = []
for (model, lang), g in tef.groupby(["model", "lang"], sort=False):
    score = g["scores"].map(lambda scores: scores["change"]).to_numpy()
    for T in grid:
        rows.append({"model": model, "lang": lang, "T": T,
                     "ECE": ece(expit(2 * np.abs(score) / T), g["correct"].to_numpy(float))})
sweep = pd.DataFrame(rows)
ece_by_t = sweep.pivot_table(index=["model", "lang"], columns="T", values="ECE", sort=False)
ch09.shown(ece_by_t.rename(columns=lambda t: f"T = {t:g}").rename_axis(columns=None), names, digits=3)

# %% tags=["hide-input", "full-width", "nbval-ignore-output"]
ch09.temperature_figure(sweep, names, lang_list, TEMPERATURE).show()

# %% [markdown]
# Per judge and language, the $T$ of the grid with the lowest ECE, and how far that ECE lies below
# the ECE at the reference release's $T$; then the same for the cells whose judge clears the
# majority-class floor in that language:

# %%
best_t = ece_by_t.idxmin(axis=1)  # the T of the lowest ECE of the grid
fall = ece_by_t[TEMPERATURE] - ece_by_t.min(axis=1)  # how much lower the best T's ECE is than the reference T's
moved, above = best_t != TEMPERATURE, clears.reindex(fall.index).astype(bool)  # above: the judge clears the floor
ch09.shown(pd.DataFrame({"best T": best_t.map(lambda t: f"{t:g}"), "ECE at the reference T": ece_by_t[TEMPERATURE],
                         "lowest ECE": ece_by_t.min(axis=1), "fall": fall, "judge clears the floor": above}), names, 3)

# %% tags=["hide-input"]
glue_all(sweep_cells=len(fall), sweep_moved=moved.sum(), sweep_best_min=best_t[moved].min(), sweep_best_max=best_t[moved].max(),
         sweep_fall=fall.max(), sweep_fall_cell=ch09.cell_names(pd.Index([fall.idxmax()]), names), above_cells=above.sum(),
         sweep_fall_floor="clears" if above[fall.idxmax()] else "does not clear", above_moved=(moved & above).sum(),
         above_names=ch09.cell_names(fall.index[above], names), above_fall=fall[above].max() if above.any() else 0.0)

# %% [markdown]
# Read along a row: as $T$ grows, TEF's confidences fall from near 1 towards 0.5, and the ECE falls
# and, where the grid reaches far enough, rises again. It is lowest near the $T$ at which TEF's mean
# confidence comes closest to its accuracy (the ECE is never below the absolute gap), and a row that
# still falls at the largest $T$ is a judge whose TEF decisions are right barely more often than half
# the time, so that the best confidence is the one closest to 0.5. In {glue:text}`sweep_moved` of the
# {glue:text}`sweep_cells` judge-language cells the lowest ECE of the grid lies at a $T$ other than
# the reference release's {glue:text}`reference_T`; in those cells it lies at $T$ from
# {glue:text}`sweep_best_min:g` to {glue:text}`sweep_best_max:g`. The largest fall of the ECE from
# the reference $T$ to the best of the grid, {glue:text}`sweep_fall:.3f`, is that of
# {glue:text}`sweep_fall_cell`, a cell whose judge {glue:text}`sweep_fall_floor` the majority-class
# floor. In the {glue:text}`above_cells` cells whose judge clears the floor
# ({glue:text}`above_names`), the lowest ECE lies at another $T$ than the reference one in
# {glue:text}`above_moved` of them, and the largest fall there is {glue:text}`above_fall:.3f`.
#
# The lowest ECE of the grid is chosen on the same pairs it is measured on, so it flatters TEF: it
# says how much of TEF's calibration error is the choice of $T$, not what a $T$ fitted on other posts
# would achieve. A verdict "TEF is (or is not) the best calibrated rule" at one $T$ is a verdict about
# that $T$ as much as about TEF.
#
# ## Reliability diagrams
#
# Each point is one confidence bin: its mean confidence (x) against the share of correct decisions
# in it (y), its size the number of decisions. Points under the diagonal are overconfident. The
# confidence of a binary decision is at least 0.5, so only the upper half of the axis is used.
# Look for where the decisions pile up: a rule whose points crowd into the last bin decides with
# near-certainty (Majority Vote on the cross-fitted probe, confidence 1 on
# {glue:text}`probe_mv_one_min:.0f` to {glue:text}`probe_mv_one_max:.0f` % of the pairs), and its
# calibration then rests on whether those decisions are right; a rule whose points sit near 0.5
# hedges every decision, and is underconfident wherever the judge beats a coin flip.

# %% tags=["hide-input", "full-width", "nbval-ignore-output"]
for model in runs.models:
    ch09.reliability_figure(pred[pred["model"] == model], names[model], lang_list, RULES, n_bins).show()

# %% [markdown]
# ## What the CPU judges can say
#
# Each rule's confidence is built differently, and what is measured above is largely that
# construction meeting a particular judge. Per judge, language and rule: the accuracy over the decided
# pairs, the mean confidence and the gap, the share of decisions made with confidence 1, the share
# of pairs decided *change*, and the share whose gold side is *change* (what a rule that always
# answers *change* scores):

# %%
profile = pred.groupby(["model", "lang", "rule"], sort=False).agg(
    accuracy=("correct", lambda c: 100 * c.mean()), confidence=("confidence", "mean"),
    confidence_one=("confidence", lambda c: 100 * (c >= 1 - 1e-12).mean()),
    says_change=("prediction", lambda d: 100 * (d == "change").mean()), gold_change=("side", lambda d: 100 * (d == "change").mean()))
profile = profile.reindex(calibration.index)  # judge by judge, language by language
profile["gap"] = calibration["gap"]
ch09.profile_table(profile, names)

# %% tags=["hide-input"]
zero_clears = clears[clears.index.get_level_values("model") == "e5-zeroshot"]  # the floor check above
numbers = ch09.profile_numbers(profile, RULES)
glue_all(numbers, **ch09.profile_words(numbers, zero_clears))

# %% [markdown]
# * **Nearly constant answers** (SmolLM2): the rule that decides *change* least often still does so
#   on {glue:text}`small_change:.1f` % of the pairs, and every rule's accuracy equals the share of pairs
#   whose gold side is *change* ({glue:text}`small_acc_words`). Direct's
#   confidence is the constant itself, Majority Vote's is 1 on {glue:text}`small_mv_one:.1f` % of the
#   pairs (those where every vote agrees), TEF's grows with the number of sentences (each adds about
#   the same $w\,\ell$). Confidences that follow the length of a post, not its content, cannot track
#   correctness: the gaps run from {glue:text}`small_gap_min:+.2f` to {glue:text}`small_gap_max:+.2f`
#   (positive: overconfident).
# * **Hedged confidences** (the cross-fitted probe): Soft Vote's and TEF's mean confidences lie
#   between {glue:text}`probe_conf_min:.2f` and {glue:text}`probe_conf_max:.2f`, below their
#   accuracies of {glue:text}`probe_acc_min:.0f` to {glue:text}`probe_acc_max:.0f` %: the
#   two rules' gaps run from {glue:text}`probe_gap_min:+.3f` to {glue:text}`probe_gap_max:+.3f`
#   (negative: underconfident). Majority Vote's confidence is built otherwise: it is the share of
#   votes, 1 whenever the sentences all lean the same way, however slightly
#   ({glue:text}`probe_mv_one_min:.0f` to {glue:text}`probe_mv_one_max:.0f` % of the pairs), and its
#   gap runs from {glue:text}`probe_mv_gap_min:+.3f` to {glue:text}`probe_mv_gap_max:+.3f`.
# * **Confidence without accuracy** (zero-shot e5, under the majority-class floor in
#   {glue:text}`zero_below_of` in the table of the floors above): a post with many sentences that lean
#   the same way gets a large $|s|$ and a confident TEF decision whether or not the lean is right. TEF's
#   mean confidence, {glue:text}`zero_tef_conf_min:.2f` to {glue:text}`zero_tef_conf_max:.2f`, lies above
#   its accuracy of {glue:text}`zero_tef_acc_min:.0f` to {glue:text}`zero_tef_acc_max:.0f` %: its gap is
#   {glue:text}`zero_tef_gap_min:+.3f` to {glue:text}`zero_tef_gap_max:+.3f` (positive: overconfident).
#
# The paper's claim concerns Qwen2.5-7B, whose sentence answers nothing on this page measures;
# whether its answers make TEF's confidences track accuracy better than the votes' do, only those
# answers can tell. Testing it needs them: the command below extracts them
# on a GPU box and rebuilds this chapter with its rows added. Calibration could also be repaired after
# the fact for any rule (temperature scaling of the final score, fitted on held-out posts); the
# comparison here, like the paper's, is of the rules as defined, without such a fit.

# %% tags=["hide-input"]
display(Markdown(reproduce_block("09")))

# %% [markdown]
# The rows of the claims ledger this chapter examines, checked as the page was built:

# %% tags=["hide-input"]
display(HTML(chapter_claims("09_calibration")))
