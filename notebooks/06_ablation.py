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
# # Ablation: what entropy weighting and the log-odds transform each contribute (paper Table 4)
#
# TEF combines two ideas. The **log-odds transform** puts each sentence's answer on an additive
# evidence scale, $\ell(p) = \log\frac{p}{1-p}$ (clipped at $\pm M$), so that a near-certain answer
# counts for much more than a lukewarm one. **Entropy weighting** multiplies each sentence's
# evidence by $w(p) = 1 - H(p)/\log 2$, which shrinks uncertain answers towards zero. The paper
# removes one at a time:
#
# * **w/o Entropy**: every $w_i = 1$, so the decision is the sign of $\sum_i \ell(p_i)$, the naive
#   Bayes sum of chapter 1 without tempering;
# * **w/o Log-Odds**: the entropy-weighted mean of the probabilities,
#   $m_w = \sum_i w_i p_i / \sum_i w_i$, compared with 0.5.
#
# Table 4 of the paper reports both for Qwen2.5-7B and DeepSeek-V3.2, and its text makes three
# statements. Recomputed from its own Tables 3 and 4 (paper's numbers): on Qwen2.5-7B both variants
# keep most of TEF's gain over Soft Vote, between {glue:text}`qwen_kept_min:.0f` % and
# {glue:text}`qwen_kept_max:.0f` % of TEF's Average margin in accuracy and macro-F1
# ({glue:md}`link_qwen`); on DeepSeek-V3.2
# {glue:text}`deepseek_below` of the 4 ablation Averages (two variants, two languages, accuracy)
# fall below Soft Vote ({glue:md}`link_deepseek`); and the largest drop is on
# {glue:text}`drop_cell` dimension, {glue:text}`drop_entropy:.1f` points without entropy weighting and
# {glue:text}`drop_log_odds:.1f` without the log-odds transform ({glue:md}`link_drop`). This
# chapter shows the two ablated rules at work, runs them on our CPU judges with paired tests, and
# reads Table 4 as a reviewer would.

# %% tags=["parameters"]
models = "e5-crossfit,e5-zeroshot,local"  # judges (registry names), comma-separated
prompt = "original"  # prompt variant of the caches
langs = "zh,en"  # languages, in table order
cache_dir = "data/caches"  # root of <model>/<prompt>/<lang>.jsonl
reading = "summed"  # how the LLM judges' answer tokens were read: "summed" or "reference"
invalid = "drop"  # unreadable answers: left out ("drop") or read as 0.5 ("reference")
n_boot: "int >= 1" = 1000  # bootstrap replicates
paper_models = "qwen2.5-7b,deepseek-v3.2"  # the paper's ablated models
seed: "int >= 0" = 0  # bootstrap seed

# %% tags=["hide-input"]
from tefbook.parameters import check_parameters

check_parameters("06_ablation")  # a misspelt -p name fails here, naming the parameters above

import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown, display

from tefbook.chapters import ch06
from tefbook.companion.commands import reproduce_block
from tefbook.companion.figures import setup_notebook
from tefbook.companion.labels import short_names
from tefpaper.ledger import chapter_claims
from tefbook.companion.results import reader_labels
from tefbook.companion.runs import chapter_runs, parse_list
from tefbook.companion.tables import format_columns, glue_all, plain, round_half_up
from tefcore.fusion import RULE_LABELS
from tefpaper import tables as paper

setup_notebook()
ABLATION = ["tef", "tef_without_entropy", "tef_without_log_odds"]
RULES = ["soft_vote", *ABLATION]
lang_list = parse_list(langs)
t3, t4 = paper.load_table("table3"), paper.load_table("table4")
glue_all(ch06.claim_links())


def show(frame: pd.DataFrame, digits: int = 1, signed=()):
    """A table as the book prints it: judges, languages and rules by name, numbers rounded half up (with a
    sign in the ``signed`` columns, or everywhere for ``True``)."""
    return plain(reader_labels(frame, globals().get("names")), digits, signed)

# %% [markdown]
# ## The paper's statements, recomputed from its tables
#
# `ablation_drops` subtracts each ablation's accuracy from full TEF's in every cell of Table 4 (a
# positive drop: the component helped); `ablation_versus_soft_vote` sets each Average of Table 4
# against Soft Vote's Average in Table 3, the margin, and divides an ablation's margin by TEF's, the
# share of TEF's gain that the ablation keeps. From these two tables, the three statements as
# numbers (all the paper's; the largest drop is found, not assumed):

# %%
drops = paper.ablation_drops(t4).xs("accuracy", level="metric")
versus = paper.ablation_versus_soft_vote(t3, t4)
kept = 100 * versus.loc["qwen2.5-7b", ["retained_tef_without_entropy", "retained_tef_without_log_odds"]]
deepseek = versus.loc["deepseek-v3.2"].xs("accuracy", level="metric")
below = deepseek[["margin_tef_without_entropy", "margin_tef_without_log_odds"]] < 0
removed = drops[["drop_without_entropy", "drop_without_log_odds"]]
largest = removed.max(axis=1).idxmax()  # the cell with the largest drop: (model, language, dimension)
statements = pd.Series({
    "Qwen2.5-7B: the least of TEF's margin an ablation keeps, accuracy or macro-F1 (%)": kept.min().min(),
    "Qwen2.5-7B: the most (%)": kept.max().max(),
    "DeepSeek-V3.2: ablation Averages below Soft Vote (of 4)": below.sum().sum(),
    "the largest drop, w/o Entropy (points)": removed.loc[largest, "drop_without_entropy"],
    "the largest drop, w/o Log-Odds (points)": removed.loc[largest, "drop_without_log_odds"]}, dtype=object)
show(statements.to_frame("paper"))

# %% tags=["hide-input"]
glue_all(ch06.statement_glue(statements, largest))  # rounded as the prose prints them

# %% [markdown]
# ## The two ablated rules on one post
#
# The three variants read the same sentence probabilities and differ only in how they weigh them.
# Take a post of six sentences: one decisive for *stability*, five that lean to *change* without
# conviction.

# %%
from tefcore.fusion import clipped_log_odds, entropy_weight, fuse_many

p = np.array([0.002, 0.85, 0.8, 0.83, 0.86, 0.84])  # P(change) of each sentence
w, ell = entropy_weight(p), clipped_log_odds(p)
by_hand = {
    "tef": np.sum(w * ell),  # Σ w_i ℓ_i
    "tef_without_entropy": np.sum(ell),  # Σ ℓ_i: every w_i = 1
    "tef_without_log_odds": np.sum(w * p) / np.sum(w) - 0.5,  # m_w − 1/2
}
one_post = np.zeros(len(p), dtype=int)
decided = {rule: fuse_many(p, one_post, rule).prediction[0] for rule in by_hand}
plain(pd.DataFrame({"score for change (by hand)": by_hand, "decision (fuse_many)": decided}).rename(
    index=RULE_LABELS), 3)

# %% [markdown]
# Per sentence, its weight and what each variant adds up:

# %%
plain(pd.DataFrame({"p": p, "w": w, "ℓ (w/o Entropy sums)": ell, "w·ℓ (TEF sums)": w * ell,
                    "w·p (w/o Log-Odds averages)": w * p}, index=pd.RangeIndex(1, len(p) + 1, name="sentence")), 3)

# %% [markdown]
# The five sentences that lean to change without conviction against the decisive one: the range of
# what each lukewarm sentence adds with and without the weights, and what the decisive one adds.

# %%
lukewarm = p > 0.5
adds = pd.DataFrame({"ℓ (w/o Entropy)": ell, "w·ℓ (TEF)": w * ell})
adds = pd.concat([adds[lukewarm].agg(["min", "max"]).rename(index=lambda s: f"lukewarm, {s}"),
                  adds[~lukewarm].sum().to_frame("decisive").T])
plain(adds, 2)

# %% tags=["hide-input"]
glue_all({f"one_{rule}": side for rule, side in decided.items()},
         lukewarm_min=round_half_up(adds.iloc[0, 0]), lukewarm_max=round_half_up(adds.iloc[1, 0]),
         weighted_min=round_half_up(adds.iloc[0, 1], 2), weighted_max=round_half_up(adds.iloc[1, 1], 2),
         decisive_weighted=round_half_up(adds.iloc[2, 1], 2))

# %% [markdown]
# TEF decides *{glue:text}`one_tef`*, w/o Entropy *{glue:text}`one_tef_without_entropy`* and w/o
# Log-Odds *{glue:text}`one_tef_without_log_odds`*. Without the weights, the five lukewarm sentences
# add their full log-odds, between {glue:text}`lukewarm_min:.1f` and {glue:text}`lukewarm_max:.1f` each,
# and together outweigh the decisive one: the sum counts sentences. With the weights, each adds only
# {glue:text}`weighted_min:.2f` to {glue:text}`weighted_max:.2f`, and the decisive sentence
# ({glue:text}`decisive_weighted:.2f`),
# whose weight is close to one, decides. Without the log-odds transform the decisive sentence keeps its
# large weight, but a weighted mean lets no answer pull further than its probability, here 0.002
# against five answers above 0.8: a mean cannot let one answer count for more than its weight.
#
# ## The three variants on every pair
#
# `predict_pairs` applies the variants and Soft Vote to every pair of every cache (with `fuse_many`,
# as above), and `score_table` scores them per dimension, as in chapter 5:

# %%
from tefcore.evaluate import predict_pairs, score_table

runs = chapter_runs(models, prompt, lang_list, cache_dir, reading=reading)
names = short_names(runs)
pred = pd.concat([predict_pairs(g, rules=RULES, invalid=invalid).assign(model=model)
                  for model, g in runs.frame.groupby("model", sort=False)])
table = score_table(pred, by=["model", "lang", "rule", "dimension"])

# %% [markdown]
# Accuracy is the share of pairs decided for the gold side, macro-F1 the mean of the two sides' F1
# (scikit-learn's, protocol §7). For the first judge and language of the page, computed from the
# decisions and held against `score_table`; the accuracy of each variant per dimension:

# %%
from sklearn.metrics import accuracy_score, f1_score

first = pred[(pred["model"] == runs.models[0]) & (pred["lang"] == lang_list[0])]
by_hand = first.groupby(["rule", "dimension"]).apply(lambda g: pd.Series({
    "accuracy": 100 * accuracy_score(g["side"], g["prediction"]),
    "macro_f1": 100 * f1_score(g["side"], g["prediction"], average="macro", labels=["change", "stability"],
                               zero_division=0)}))
library = table[(table["model"] == runs.models[0]) & (table["lang"] == lang_list[0])].set_index(["rule", "dimension"])
assert np.allclose(library.loc[by_hand.index, ["accuracy", "macro_f1"]], by_hand)
accuracy = by_hand["accuracy"].unstack("dimension").rename(index=RULE_LABELS).map(round_half_up)  # as printed
spread = accuracy.max() - accuracy.min()  # per dimension: how far apart the four rules lie
tef_best = accuracy.loc["TEF"] >= accuracy.max()  # dimensions where full TEF is (jointly) best
plain(accuracy)

# %% tags=["hide-input"]
glue_all(first_gap=round_half_up(spread.max()), first_gap_dim=str(spread.idxmax()), first_tef_best=tef_best.sum(),
         first_dims=len(tef_best))

# %% [markdown]
# For each dimension, the cell above takes the highest accuracy of the four rules minus the lowest
# (the spread), and marks the dimensions where full TEF's accuracy equals that highest one (a tie
# counts as best, as bold type does in the paper's tables).
#
# Read the table column by column: a column is one dimension, and its four rows are the same sentence
# answers of one judge fused four ways. The rows differ by at most {glue:text}`first_gap:.1f` points (in
# {glue:text}`first_gap_dim`), and full TEF is the best or tied for best in {glue:text}`first_tef_best`
# of the {glue:text}`first_dims` dimensions. On a dimension of a hundred pairs one point is one pair,
# so gaps of this size are a few posts decided differently; the next table counts them.

# %% [markdown]
# The variants disagree only where the weighing matters. For each judge and language, the pairs on
# which full TEF and each ablation decide differently (the *flips*), and how many of those each gets
# right; then the same counts summed over judges and languages. A flip is a whole post decided for
# the other side, so these counts, not the accuracies, are the size of what a component does: every
# accuracy difference of the table above is made of them. With two sides, exactly one of the two
# rules is right on a flip unless one of them abstains, so the two right-hand columns of a row add up
# to its flips, or nearly.

# %%
decision = pred.pivot_table(index=["model", "lang", "post_id", "dimension", "side"], columns="rule",
                            values="prediction", aggfunc="first").reset_index()
rows = []
for ablation in ABLATION[1:]:
    differ = decision[decision["tef"] != decision[ablation]]
    rows.append(differ.assign(removed=RULE_LABELS[ablation],
                              tef_right=differ["tef"] == differ["side"],
                              ablation_right=differ[ablation] == differ["side"]))
disagreements = pd.concat(rows).groupby(["model", "lang", "removed"], sort=False).agg(**{
    "decided differently": ("post_id", "size"), "TEF right": ("tef_right", "sum"),
    "ablation right": ("ablation_right", "sum")})
display(show(disagreements))
flips = disagreements.groupby(level="removed").sum().reindex([RULE_LABELS[a] for a in ABLATION[1:]], fill_value=0)
show(flips)  # summed over judges and languages

# %% tags=["hide-input"]
glue_all(ch06.flip_glue(flips))

# %% [markdown]
# Summed over our judges and languages, removing the entropy weights changes the decision on
# {glue:text}`dis_entropy` pairs, of which full TEF gets {glue:text}`dis_entropy_tef` right and w/o
# Entropy {glue:text}`dis_entropy_ablation`. Removing the log-odds transform changes
# {glue:text}`dis_log_odds` pairs, {glue:text}`dis_log_odds_tef` right for TEF against
# {glue:text}`dis_log_odds_ablation` for w/o Log-Odds. Both components are monotone ways of letting
# an answer far from 0.5 count for more than one near it, so they change a decision only on a post
# whose sentences take both sides. Dropping the weights lets every lukewarm sentence count in full,
# the failure of the one-post example above; dropping the transform keeps the weights and only bounds
# how far one answer can pull, which changes fewer decisions when the weights already single out the
# confident answers. Where TEF and an ablation are right about equally often on the pairs they
# disagree on, the component removed is not what makes the judge's decisions right or wrong.
#
# The difference of two rules' accuracies on a dimension is exactly (TEF right − ablation right) on
# its disagreeing pairs, divided by its pairs: every other pair counts the same for both. A judge and
# language absent from this table is one where the variants never disagree.

# %% [markdown]
# ## Two real posts where the weights decide
#
# Behind each flip counted above is a post. The evidence view of `tefcore.explain` lays a post out
# sentence by sentence: each sentence's probability of each side, its weight $w_i$, its clipped
# log-odds $\ell_i$, its contribution $w_i \ell_i$ to TEF's score (Eq. 3), and its *share* of TEF's
# decision, that is of the margin between TEF's side and the other one: positive for a sentence that
# pushes towards TEF's side, negative for one that pushes against it, the absolute shares of a post
# adding up to 1. `explain_file` reads a cache, finds each post's sentences again by the segmentation
# the cache records, and puts the decisions of Direct, Majority Vote, Soft Vote and TEF beside them.
#
# Every number of this section comes from one judge, `e5-crossfit` (a logistic probe on
# multilingual-e5-small embeddings, fitted on the sample's labels and cross-fitted, so that no post is
# scored by a probe that saw it), on the English sample with the original prompt. The chapter's `weights_decide` keeps the posts of at most six sentences on which TEF decides
# otherwise than both Majority Vote and w/o Entropy, so that the weights, and nothing else, turn the
# decision. Of those, it takes the post TEF gets right on which TEF is most confident, then the same
# among the posts TEF gets wrong.

# %%
from tefbook.companion.runs import repo_path
from tefcore.explain import explain_file

view = explain_file(repo_path(cache_dir) / "e5-crossfit" / "original" / "en.jsonl")  # one row per sentence
posts = ch06.weights_decide(view, max_sentences=6)
show(posts.set_index(["id", "dimension"])[["gold", "direct", "majority_vote", "soft_vote", "tef", "tef_without_entropy",
     "tef_confidence"]].rename(columns={**RULE_LABELS, "gold": "gold side", "tef_confidence": "TEF confidence"})
     .rename_axis(["post", "dimension"]), 3)

# %% [markdown]
# The sentences of the two posts as the view gives them: the judge's probability of change
# (P(change)), the weight ($w$), the clipped log-odds of change ($\ell$), the contribution to the score
# of change ($w \cdot \ell$), the share of TEF's margin (share), and the side the sentence leans to.
# With two sides, a sentence's contribution to the score of stability is the negative of the one
# shown, and the contributions of a post add up to its score.

# %%
chosen = ch06.texts_of(view, posts)
pd.set_option("display.max_colwidth", None)  # whole sentences
format_columns(chosen.set_index(["id", "sentence"])[["text", "p_change", "weight", "log_odds_change",
                                                    "contribution_change", "share", "leans"]], 3).rename(columns={
    "p_change": "P(change)", "weight": "w", "log_odds_change": "ℓ", "contribution_change": "w·ℓ", "share": "share",
    "leans": "leans to"}).rename_axis(["post", "sentence"])

# %% [markdown]
# Per post, `decisive_sentences` names the sentence with the largest share of TEF's margin ("for
# TEF") and the one with the largest share against it ("against"), each with its probability of the
# side it pushes towards, its weight and its share; then the largest weight among the post's other
# sentences, and how many sentences lean to Majority Vote's side.

# %%
summary = ch06.decisive_sentences(chosen, posts)
plain(summary.set_index(["id", "dimension"]).rename_axis(["post", "dimension"]).T.rename(index=ch06.SUMMARY_LABELS), 3)

# %% tags=["hide-input"]
glue_all(ch06.evidence_numbers(summary, chosen))

# %% [markdown]
# **Post {glue:text}`ev_a_id`, {glue:text}`ev_a_dimension`** (gold side *{glue:text}`ev_a_gold`*).
# {glue:text}`ev_a_lean_mv` of its {glue:text}`ev_a_sentences` sentences lean to
# *{glue:text}`ev_a_majority_vote`*, and Majority Vote, which counts them, decides
# *{glue:text}`ev_a_majority_vote`*; TEF decides *{glue:text}`ev_a_tef`*. The sentence with the largest
# share of TEF's margin is number {glue:text}`ev_a_for_sentence` (*{glue:text}`ev_a_for_text`*): the judge
# gives it p({glue:text}`ev_a_tef`) = {glue:text}`ev_a_for_p:.3f`, so its weight is
# {glue:text}`ev_a_for_weight:.3f`, and it holds {glue:text}`ev_a_for_share:.0%` of the margin. The
# sentence that pulls hardest the other way is number {glue:text}`ev_a_against_sentence`
# (*{glue:text}`ev_a_against_text`*), with p({glue:text}`ev_a_majority_vote`) =
# {glue:text}`ev_a_against_p:.3f` and weight {glue:text}`ev_a_against_weight:.3f`; it holds
# {glue:text}`ev_a_against_share:.0%` of the margin, against TEF's side. No other sentence of the post
# weighs more than {glue:text}`ev_a_rest_weight:.3f`: under TEF each of them adds at most that fraction of its log-odds,
# under Majority Vote each adds one full vote. Without the weights, every sentence adds its whole
# log-odds, and w/o Entropy decides *{glue:text}`ev_a_tef_without_entropy`*.
#
# **Post {glue:text}`ev_b_id`, {glue:text}`ev_b_dimension`** (gold side *{glue:text}`ev_b_gold`*). Here
# {glue:text}`ev_b_lean_mv` of the {glue:text}`ev_b_sentences` sentences lean to
# *{glue:text}`ev_b_majority_vote`*, Majority Vote's decision, and TEF decides *{glue:text}`ev_b_tef`*.
# The sentence with the largest share of its margin is number {glue:text}`ev_b_for_sentence`
# (*{glue:text}`ev_b_for_text`*): the judge gives it
# p({glue:text}`ev_b_tef`) = {glue:text}`ev_b_for_p:.3f` and weight {glue:text}`ev_b_for_weight:.3f`, and
# it holds {glue:text}`ev_b_for_share:.0%` of the margin. Against it, sentence
# {glue:text}`ev_b_against_sentence` (*{glue:text}`ev_b_against_text`*) gets
# p({glue:text}`ev_b_majority_vote`) = {glue:text}`ev_b_against_p:.3f` and weight
# {glue:text}`ev_b_against_weight:.3f`, and {glue:text}`ev_b_against_share:.0%` of the margin; the other
# sentences weigh at most {glue:text}`ev_b_rest_weight:.3f`. Without the weights, w/o Entropy decides
# *{glue:text}`ev_b_tef_without_entropy`*.
#
# The two posts are the same mechanism with opposite outcomes. The weights hand a post to the sentences
# the judge answers with the most conviction, and discount the others; Majority Vote and w/o Entropy
# let the others count. That helps when the judge's confident answer is the right one and hurts when
# it is not, and the weighting itself cannot tell the two apart: which happens more often on a judge's
# flips is what the counts above, and the paired comparisons below, measure.
#
# The library renders the same view as a self-contained HTML page (`render(view, "html")`): each
# sentence shaded in the colour of the side it favours, the stronger the larger its share, with the
# rules' decisions and TEF's scores beside it, and the probabilities and weight of a sentence shown when
# the pointer rests on it.

# %% tags=["hide-input"]
ch06.evidence_report(chosen, "e5-crossfit, English sample: two posts where the weights decide")

# %% [markdown]
# ## Table 4, ours beside the paper's
#
# One table per language in the paper's layout, the best variant of each column in bold within
# each judge (nothing bold where all tie). The first rows count the pairs of each dimension and
# give their majority-class floor. Soft Vote is not part of the paper's Table 4; our rows include
# it because the paper's text measures the ablations against it. The paper's rows are its Table 4,
# their Average the mean of the six printed dimensions (Table 4 prints that mean rounded half up).

# %% tags=["hide-input", "full-width"]
ch06.table4_beside(table, t4, runs, names, RULES, parse_list(paper_models), lang_list)

# %% [markdown]
# The table answers per dimension; the paper's question is about the Average. Per judge and
# language, the Average accuracy of each rule: do they all tie (a judge whose sentence answers all
# lean one way leaves the rules nothing to disagree on), and if not, is full TEF the best? The
# tolerance of $10^{-9}$ only absorbs the rounding of a mean of percentages.

# %%
average_accuracy = table[table["dimension"] == "Average"].pivot_table(
    index=["model", "lang"], columns="rule", values="accuracy")
all_tie = average_accuracy.max(axis=1) - average_accuracy.min(axis=1) < 1e-9
tef_top = ~all_tie & (average_accuracy["tef"] >= average_accuracy.max(axis=1) - 1e-9)
pd.Series({"judge-language cells": len(average_accuracy), "every rule ties": int(all_tie.sum()),
           "of the others, full TEF best": int(tef_top.sum())}).to_frame("count")

# %% [markdown]
# Of our {glue:text}`t4_ours_cells` judge-language cells, {glue:text}`t4_ours_ties` have the same
# Average accuracy under every rule (a judge whose sentence answers all lean one way, so that every
# rule decides the same side), and in {glue:text}`t4_ours_tef_best` of the others full TEF has the best
# Average accuracy of the four rules. The paper's rows show the pattern its text describes; ours do
# not have to, because the ablations only matter where a judge's confident answers are the right
# ones, which is what the paired comparisons below put to the test.

# %% [markdown]
# ## Paired comparisons: full TEF against each ablation
#
# Same pairs, same resampling: a positive difference means the component that was removed helped.
# The bootstrap interval is of the difference of Averages (each dimension weighs the same);
# McNemar's b counts pairs only full TEF gets right, c pairs only the ablation gets right (the two
# right-hand columns of the disagreement table above, pooled over dimensions). Its p-value is the
# exact binomial test when fewer than 25 pairs are discordant, and otherwise the chi-squared test with
# continuity correction, $(|b - c| - 1)^2/(b + c)$, under which even b = c gives a p-value below 1.

# %%
from tefbook.companion.results import compare_runs

comparisons = pd.concat([compare_runs(pred, "tef", ablation, metric="accuracy", n_boot=n_boot,
                                      random_state=seed) for ablation in ABLATION[1:]])
comparisons["effect"] = np.select([comparisons["low"] > 0, comparisons["high"] < 0], ["helped", "hurt"],
                                  "within noise")  # the interval of TEF − ablation: above 0, below 0, across
effects = comparisons["effect"].value_counts().reindex(["helped", "within noise", "hurt"], fill_value=0)
effects.to_frame("comparisons")

# %% tags=["hide-input", "full-width"]
display(ch06.comparison_table(comparisons, names, n_boot))
glue_all(t4_ours_cells=len(average_accuracy), t4_ours_ties=all_tie.sum(), t4_ours_tef_best=tef_top.sum())
glue_all(n_comparisons=len(comparisons), n_helped=effects["helped"], n_hurt=effects["hurt"])

# %% [markdown]
# Of our {glue:text}`n_comparisons` comparisons (judge × language × ablation, accuracy), the removed
# component helped beyond the noise in {glue:text}`n_helped` and hurt in {glue:text}`n_hurt`; the
# others are within the noise of the sample. Each row names the judge it rests on. A "hurt" row is
# a judge and language where full TEF does worse *with* the component: the answers the component
# lets count for more (those far from 0.5) are wrong more often there than the lukewarm ones it
# discounts, the case the section "What to expect" below describes.
#
# ## Against Soft Vote, as the paper reads it
#
# The paper measures each ablation by how much of TEF's margin over Soft Vote it keeps. The Average
# accuracy margin over Soft Vote of TEF and of each ablation, in points, ours (on the caches above)
# and the paper's (from its Tables 3 and 4):

# %%
average = table[table["dimension"] == "Average"].pivot_table(
    index=["model", "lang"], columns="rule", values="accuracy", sort=False)
ours = average[ABLATION].sub(average["soft_vote"], axis=0)
theirs = versus.xs("accuracy", level="metric")[[f"margin_{v}" for v in ABLATION]].set_axis(ABLATION, axis=1)
display(show(pd.concat({"ours": ours, "paper": theirs}).rename(columns=RULE_LABELS), signed=True))
tef_margin = pd.Series({"ours, smallest": ours["tef"].min(), "ours, largest": ours["tef"].max(),
                        "Qwen2.5-7B (paper), smallest": theirs.loc["qwen2.5-7b", "tef"].min()})
show(tef_margin.to_frame("full TEF's margin over SV"), signed=True)  # points of Average accuracy

# %% tags=["hide-input"]
glue_all(ours_tef_min=round_half_up(tef_margin.iloc[0]), ours_tef_max=round_half_up(tef_margin.iloc[1]),
         qwen_tef_min=round_half_up(tef_margin.iloc[2]))

# %% [markdown]
# Each margin is the difference of the two unrounded Averages, rounded after subtracting, as every
# difference in chapter 5 is; a printed margin can therefore lie 0.1 from the difference of the
# Averages as the tables print them. A variant that keeps most of TEF's margin has a number close to TEF's; a negative
# number is an Average below Soft Vote's. Our judges give this measure little to work with: full TEF's own margin
# over Soft Vote lies between {glue:text}`ours_tef_min:+.1f` and {glue:text}`ours_tef_max:+.1f` points
# on our caches, against at least {glue:text}`qwen_tef_min:+.1f` for Qwen2.5-7B in the paper. The
# share of a margin near zero that an ablation "keeps" is the ratio of two small and noisy numbers,
# so this page computes that share for the paper's models only; for ours, the paired comparisons
# above are the measure, and the margins say whether an ablation lands on the same side of Soft
# Vote as full TEF.
#
# ## Table 4, read as a reviewer reads it
#
# As in chapter 5 for Table 3, the counts of the release's files (not printed by the paper) give
# each accuracy of Table 4 a floor, if the paper scored those pairs, and the ablations give the
# consistency question of chapter 5 more rules to compare: all five sentence rules of a cell fuse
# the same posteriors.

# %%
from tefpaper import review

floors = review.floors(t4)
show(floors.pivot_table(index="method", columns=["model", "lang"], values="below", aggfunc="sum"))

# %% [markdown]
# Each entry counts the dimensions, of the six, in which one rule of one model scores below the floor
# of its language and dimension. A rule whose column holds the same count as full TEF's fails the
# same test as often; what matters for the ablation is whether removing a component pushes a cell
# under the floor that full TEF kept above it. The cells where the sentence rules of one model fall on
# both sides of the floor:

# %%
consistency = review.sentence_rules(t3, t4)
asked = consistency[consistency["question"] & consistency["model"].isin(parse_list(paper_models))]
show(asked.set_index(["model", "lang", "dimension"])[[*[r for r in review.SENTENCE_RULES if r in asked], "floor",
     "required"]].rename(columns={**RULE_LABELS, "required": "posts that must disagree (%)"}))

# %% [markdown]
# Counted, and the cell of the paper's largest drop (found above) against its floor:

# %%
counted = pd.Series({"Table 4 accuracies": len(floors), "below the floor of their cell": floors["below"].sum(),
                     "cells asking the question": len(asked)}).to_frame("count")
largest_cell = floors.set_index(["model", "lang", "dimension", "method"]).loc[(*largest, "tef")]
display(show(counted))
show(largest_cell[["n", "floor", "value"]].rename({"n": "pairs", "value": "TEF's accuracy (paper)"}).to_frame(
    "the largest drop's cell"))

# %% tags=["hide-input"]
glue_all(t4_cells=len(floors), t4_below=counted.loc["below the floor of their cell", "count"],
         t4_questions=len(asked), env_n=int(largest_cell["n"]), env_floor=round_half_up(largest_cell["floor"]),
         env_tef=round_half_up(largest_cell["value"]))

# %% [markdown]
# On the release's pair counts (a premise, not a fact: chapter 5 finds printed numbers of Table 3
# that no confusion matrix on these counts can produce), {glue:text}`t4_below` of Table 4's {glue:text}`t4_cells` accuracies lie below the floor of
# their cell, and {glue:text}`t4_questions` cells of the two ablated models have one sentence rule below
# the floor and another above it, each beyond its noise: the share of posts whose sentences disagree
# would have to be at least the gap in the last column. {glue:text}`drop_cell` cell,
# the paper's largest drop, has {glue:text}`env_n` pairs in the release's files and a floor of
# {glue:text}`env_floor:.1f` %; full TEF scores {glue:text}`env_tef:.1f` there (paper).
#
# ## What to expect, and why
#
# When a judge's sentence probabilities all lie in a narrow band on one side of 0.5 (SmolLM2), the
# three scores have the same sign on almost every post and the ablation changes almost nothing.
# When the judge's decisive answers are trustworthy, the two components help in the way the paper
# describes. When they are not (a detector that is sure for the wrong reasons), emphasising them can
# hurt, and an ablation can score *higher* than full TEF: the paired comparisons above say which of
# these our judges are.
#
# ## The paper's ablated models, on a GPU
#
# Qwen2.5-7B's ablation needs the model on a GPU (DeepSeek-V3.2 runs through its API). The command
# below, generated from the same plan as `tef reproduce`, extracts its answers on the full release
# with the reference release's reading and rebuilds this chapter with its rows added; until then
# the Qwen2.5-7B and DeepSeek-V3.2 rows are the paper's.

# %% tags=["hide-input"]
display(Markdown(reproduce_block("06")))

# %% [markdown]
# The rows of the claims ledger this chapter examines, checked as the page was built:

# %% tags=["hide-input"]
display(HTML(chapter_claims("06_ablation")))
