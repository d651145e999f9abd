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
# # Prompt robustness (paper Table 1)
#
# A fusion rule should not owe its advantage to one lucky wording of the question. The paper reruns
# every method with two other prompts, a **verbose** one (role, background and annotation
# guidelines) and a **minimal** one (only the dimension, the two positions and the instruction),
# and reports in Table 1 the Average accuracy over both languages of the strongest baseline (best of
# Direct, MV and SV, picked per prompt) and of TEF. Its text says that TEF stays best under every
# prompt ({glue:md}`link_best`) and loses the least accuracy under either change
# ({glue:md}`link_least`).
#
# **Only an LLM that beats a constant answer can test this claim.** The e5 judges compare
# embeddings of the text and read no prompt at all, so their numbers cannot depend on the wording.
# The prompt is read on this page by {glue:text}`llm_judges` only, and the best rule on an LLM judge's
# answers clears the majority-class floor of the pairs scored under {glue:text}`llm_clear_of` (computed
# below); where a judge stays under it, a change of its accuracy with the prompt is a change in its
# letter bias, not in how well a fusion rule reads evidence. What this chapter can do is compute
# Table 1's quantities the way the protocol fixes them, show them for the runs it has, and read the
# paper's Table 1 itself.

# %% tags=["parameters"]
llm_models = "local"  # judges that read the prompt (registry names)
prompt_free = "e5-crossfit,e5-zeroshot"  # judges that read no prompt, shown under the original prompt
prompts = "original,verbose,minimal"  # prompt variants (a variant without caches reads "not run")
langs = "zh,en"  # languages averaged over
cache_dir = "data/caches"  # root of <model>/<prompt>/<lang>.jsonl
reading = "summed"  # how the LLM judges' answer tokens were read: "summed" or "reference"
invalid = "drop"  # unreadable answers: left out ("drop") or read as 0.5 ("reference")
n_boot: "int >= 1" = 1000  # bootstrap replicates
seed: "int >= 0" = 0  # bootstrap seed

# %% tags=["hide-input"]
from tefbook.parameters import check_parameters

check_parameters("07_prompt_robustness")  # a misspelt -p name fails here, naming the parameters above

import pandas as pd
from IPython.display import HTML, Markdown, display
from myst_nb import glue

from tefbook.chapters import ch07
from tefbook.companion.tables import format_p, glue_all, plain
from tefbook.companion.commands import reproduce_block
from tefbook.companion.figures import setup_notebook
from tefbook.companion.labels import LANG_LABELS, run_table, short_names
from tefpaper.ledger import chapter_claims, claim_link
from tefbook.companion.results import majority_floor, posterior_summary, predict_runs
from tefbook.companion.runs import Runs, concat_runs, load_runs, parse_list
from tefcore.fusion import RULE_LABELS
from tefpaper import tables as paper

setup_notebook()
RULES = ["direct", "majority_vote", "soft_vote", "tef"]
BASELINES = RULES[:3]
lang_list, prompt_list, llms = parse_list(langs), parse_list(prompts), parse_list(llm_models)
t1, t3 = paper.load_table("table1"), paper.load_table("table3")
for key, claim in {"link_best": "prompt-best", "link_least": "prompt-least", "link_t1": "table1-original"}.items():
    glue(key, Markdown(claim_link(claim)), display=False)

# %% [markdown]
# ## The three prompts
#
# The English templates, verbatim from protocol §4 (the Chinese ones are their counterparts); the
# slots in braces are filled with the dimension, its two positions per side and the text. The
# SHA-256 of each template is what a cache records as the prompt it was made with.

# %%
from tefcore.mind.prompts import template, template_hash

for variant in prompt_list:
    print(f"--- {variant} (sha256 {template_hash('en', variant)[:12]})\n{template('en', variant)}\n")

# %% [markdown]
# ## Which caches exist
#
# The LLM judges under every prompt variant, the prompt-free judges under the original prompt
# only (their caches record that the prompt is not read):

# %% tags=["full-width"]
runs = concat_runs(load_runs(llm_models, prompt_list, lang_list, cache_dir, reading=reading),
                   load_runs(prompt_free, "original", lang_list, cache_dir))
names = short_names(runs)
run_table(runs, names)

# %% [markdown]
# The embedded LLM scores a few prompts a second on a CPU, so some of its caches hold only the first
# pairs of every dimension (the `pairs` column above). Prompts are compared on the same pairs: those
# that every prompt variant of a judge has.

# %%
frame = runs.frame
shared = (frame.groupby(["model", "lang", "post_id", "dimension"])["prompt"].transform("nunique")
          == frame.groupby("model")["prompt"].transform("nunique"))  # the pair is in every prompt's cache
runs = Runs(frame[shared].reset_index(drop=True), runs.provenance, runs.missing)
plain(frame[shared].groupby(["model", "prompt", "lang"]).size().rename("pairs compared").to_frame().rename(
    index=names, level="model").rename(index=LANG_LABELS, level="lang").rename_axis(["judge", "prompt", "language"]))

# %% [markdown]
# ## Table 1's quantities, computed
#
# Protocol §7 fixes the computation: per judge and prompt variant, each rule's Average accuracy
# (mean over the six dimensions) is averaged over the two languages; the strongest baseline is the
# best of Direct, MV and SV for each variant separately; TEF's margin is TEF minus it. The table
# names that baseline, gives its accuracy and TEF's in percent of pairs, and TEF's margin in points; a
# row appears only for a judge and prompt whose caches cover both languages.

# %%
from tefcore.evaluate import paired_comparisons, score_table, strongest_baseline

pred = predict_runs(runs, rules=RULES, invalid=invalid)
scores = score_table(pred, by=["model", "prompt", "lang", "rule", "dimension"])
average = scores[scores["dimension"] == "Average"]
complete = average.groupby(["model", "prompt"])["lang"].transform("nunique") == len(lang_list)
table1 = strongest_baseline(average[complete], ["model", "prompt"], baselines=BASELINES)
plain(table1.replace(RULE_LABELS).rename(index=names, level="model").rename_axis(["judge", "prompt"]).rename(
    columns={"strongest_baseline": "strongest baseline", "baseline": "baseline (%)", "tef": "TEF (%)",
             "gain": "TEF − baseline (points)"}), signed={"TEF − baseline (points)"})

# %% [markdown]
# Is each margin larger than the noise of the sample? The paired bootstrap resamples the pairs
# within the twelve language-dimension cells and scores TEF and the strongest baseline on the same
# draws (a 95 % interval of the margin and a two-sided p-value); McNemar's test asks whether the
# pairs only TEF gets right (b) and those only the baseline gets right (c) differ by more than
# chance. The columns of the table below:
#
# `vs`
# : the strongest baseline of the row, the rule TEF is compared with.
#
# `TEF − baseline [95 % CI]`
# : TEF's Average accuracy minus the baseline's, in points, and in brackets the 2.5 % and 97.5 %
#   quantiles of that difference over the bootstrap draws.
#
# `p (bootstrap)`
# : the two-sided bootstrap p-value: twice the smaller share of draws whose difference lies on
#   either side of zero (at most 1; below one over the number of draws when no draw reaches zero).
#
# `b`, `c`, `p (McNemar)`
# : the pairs only TEF gets right, the pairs only the baseline gets right, and McNemar's p-value
#   (exact when fewer than 25 pairs are discordant).

# %%
best = {key: rule for key, rule in table1["strongest_baseline"].items()}
tested = paired_comparisons(pred, "tef", best, by=["model", "prompt"], n_boot=n_boot,
                            random_state=seed, strata=("lang", "dimension"))
ch07.comparison_table(tested, names, n_boot)

# %% [markdown]
# The interval and the two p-values of a row need not agree, because the two tests do not measure the
# same difference. The bootstrap's statistic is the margin of the *Averages*: the mean over the
# twelve language-dimension cells of each cell's difference, every cell weighing one twelfth however
# few pairs it holds. McNemar's test pools the *pairs*: it compares the b pairs only TEF gets right
# with the c pairs only the baseline gets right, each pair counting once, so the large cells carry
# it. Were every cell the same size, the Average and the pooled difference would be one number and
# the two tests would nearly agree; the more the cells' sizes and differences vary, the further
# apart they can fall. The row where the two p-values lie furthest apart, cell by cell:

# %%
import numpy as np

gap = (np.log10(tested["p_bootstrap"].clip(lower=1 / n_boot)) - np.log10(tested["p_mcnemar"].clip(lower=1e-12))).abs()
row = tested.loc[gap.idxmax()]
one = pred[(pred["model"] == row["model"]) & (pred["prompt"] == row["prompt"])]
right = one[one["rule"].isin(["tef", row["b"]])].pivot_table(
    index=["lang", "dimension", "post_id"], columns="rule", values="correct", aggfunc="first").astype(bool)
only_tef, only_base = right["tef"] & ~right[row["b"]], ~right["tef"] & right[row["b"]]
cells = pd.DataFrame({"pairs": right.groupby(level=["lang", "dimension"]).size(),
                      "b (only TEF right)": only_tef.groupby(level=["lang", "dimension"]).sum(),
                      "c (only baseline right)": only_base.groupby(level=["lang", "dimension"]).sum()})
cells["TEF − baseline (points)"] = 100 * (cells["b (only TEF right)"] - cells["c (only baseline right)"]) / cells["pairs"]
average_margin = cells["TEF − baseline (points)"].mean()  # the bootstrap's statistic
pooled_margin = 100 * (only_tef.sum() - only_base.sum()) / len(right)  # what McNemar's b and c amount to
plain(cells.rename(index=LANG_LABELS, level="lang").rename_axis(["language", "dimension"]),
      signed={"TEF − baseline (points)"})

# %% [markdown]
# Each test's verdict on that row, at the 5 % level:

# %%
alpha = 0.05
finds = {True: "a difference beyond chance", False: "no difference beyond chance"}
mcnemar_finds, bootstrap_finds = finds[bool(row["p_mcnemar"] < alpha)], finds[bool(row["p_bootstrap"] < alpha)]
verdicts_agree = mcnemar_finds == bootstrap_finds
print(f"McNemar's test (p = {row['p_mcnemar']:.3f}): {mcnemar_finds}\n"
      f"the paired bootstrap (p = {format_p(row['p_bootstrap'], n_boot)}): {bootstrap_finds}")

# %% tags=["hide-input"]
glue_all(ch07.split_numbers(row, cells, names, average_margin, pooled_margin, n_boot),
         split_alpha=f"{alpha:.0%}".replace("%", " %"), split_m_finds=mcnemar_finds, split_b_finds=bootstrap_finds,
         split_agree="agree" if verdicts_agree else "differ")

# %% [markdown]
# For {glue:text}`split_judge` under the {glue:text}`split_prompt` prompt (TEF against
# {glue:text}`split_base`), McNemar counts b = {glue:text}`split_b` pairs only TEF gets right against
# c = {glue:text}`split_c` pairs only the baseline gets right (p {glue:text}`split_pm`): pooled over
# all pairs, TEF's accuracy minus the baseline's is {glue:text}`split_pooled:+.1f` points. The
# difference of the Averages over the cells, the number Table 1 reports, is
# {glue:text}`split_avg:+.1f` points, with a bootstrap interval from {glue:text}`split_low:+.1f` to
# {glue:text}`split_high:+.1f` (p {glue:text}`split_pb`). At the {glue:text}`split_alpha` level
# McNemar's test finds {glue:text}`split_m_finds` and the bootstrap finds
# {glue:text}`split_b_finds`: on this row the two verdicts {glue:text}`split_agree`. How far apart
# the two p-values can fall depends on the cells. TEF is behind in {glue:text}`split_neg` of the
# {glue:text}`split_cells` cells, which hold from {glue:text}`split_small` to
# {glue:text}`split_large` pairs; the large cells carry McNemar's pooled count, while in the Average
# every cell weighs the same, so the small ones, swinging widely from draw to draw, widen the
# bootstrap interval. Both tests look only at the pairs on which the two rules disagree; where they
# agree on every pair (b = c = 0), neither has anything to test and both p-values are 1. These are
# tests on the judges of this page, not on the paper's models.
#
# ## Against the majority-class floor
#
# The majority-class floor of Table 1's quantity is the mean over the two languages of the mean
# over dimensions of the larger side's share; a judge that reads the text usefully must clear it.
# Each row is set against the floor of the pairs it was scored on: a judge whose caches hold fewer
# pairs has a floor of its own. Below, `best rule` is the higher of the strongest baseline and TEF,
# `floor` the accuracy of always answering each cell's larger side on the same pairs, in the same
# terms:

# %%
scored_once = pred[pred["rule"] == "tef"]  # one row per scored pair
floor = scored_once.groupby(["model", "prompt"]).apply(lambda g: majority_floor(g).mean()).reindex(table1.index)
best_rule = table1[["baseline", "tef"]].max(axis=1)
above = best_rule > floor
plain(pd.DataFrame({"pairs": scored_once.groupby(["model", "prompt"]).size().reindex(table1.index),
                    "best rule (%)": best_rule, "floor (%)": floor, "clears the floor": above}).rename(
    index=names, level="model").rename_axis(["judge", "prompt"]))

# %% tags=["hide-input"]
glue_all(ch07.floor_numbers(table1, above, floor, llms, names))

# %% [markdown]
# On the answers of {glue:text}`llm_judges`, the best rule clears the floor of the pairs scored
# under {glue:text}`llm_clear_of`; the highest of these rows reaches {glue:text}`llm_best:.1f` %
# against a floor of {glue:text}`llm_best_floor:.1f` % on the same pairs. A
# robustness check asks whether TEF's advantage survives a change of prompt; where no rule beats a
# constant answer under any prompt there is no advantage to survive, and the rows above say nothing
# about the paper's claim, in either direction.
#
# ## Ours beside the paper's Table 1
#
# The strongest baseline, TEF and TEF's margin under each prompt, ours and the paper's (GPU and API
# models on the full release). A variant without caches in every language reads `not run`, never 0;
# a judge that reads no prompt has a value under the original prompt only. The paper's Original
# column equals Table 3's accuracy averaged over dimensions and languages (ledger row
# {glue:md}`link_t1`).

# %% tags=["hide-input", "full-width"]
display(ch07.table1_layout(table1, t1, names, runs.models, llms, prompt_list))

# %% tags=["hide-input", "full-width", "nbval-ignore-output"]
ch07.prompt_figure(table1, t1, names, prompt_list).show()

# %% [markdown]
# ## What the prompt does to an LLM judge's answers
#
# For an LLM judge the prompt is the only thing that changes between the variants, so any change in
# accuracy is a change in its answer-token probabilities: per variant, the spread of the sentence
# answers, the mean TEF weight and the share of decisive sentences ($w \ge 0.5$). `mean p` and
# `sd p` are the mean and standard deviation of the sentences' P(change), `mean w` the mean of
# $w_i = 1 - H(p_i)/\log 2$, and `decisive %` the percentage of sentences whose weight is at
# least one half, that is whose P(change) lies below about 0.11 or above about 0.89.

# %%
llm_runs = runs.select(model=llms)
answers = posterior_summary(llm_runs)
plain(ch07.summary_table(answers, names))

# %% [markdown]
# A prompt moves *where* the nearly constant answer sits: it can push the shared P(change) across
# 0.5 and flip every rule from one side to the other at once, a large swing in accuracy with no
# change in the gap between rules.
#
# The prompt should be the only thing that changes between a judge's caches. The headers of
# SmolLM2's {glue:text}`n_caches` caches name the llama.cpp build (its CPU instructions) and the system
# turn each was scored with (the collapsed cell below, each build listed once above its table): distinct
# builds, {glue:text}`n_builds`; caches without the
# chat template's default system turn, {glue:text}`n_no_system` ({glue:text}`no_system`). The
# appendix *Running the book* says how these caches were made. For a judge under the floor with
# every prompt this changes nothing. The paper's question, whether TEF's margin survives a new wording, needs an LLM that
# clears the floor, scored with one engine and one system turn for every variant, as one run of
# `tef reproduce` gives.

# %% tags=["hide-cell"]
header = llm_runs.provenance.set_index(["model", "prompt", "lang"]).dropna(subset=["llama_cpp_cpu"])  # llama.cpp runs
builds = {cpu: f"build {k}" for k, cpu in enumerate(header["llama_cpp_cpu"].unique(), start=1)}
scored = pd.DataFrame({"llama.cpp build": header["llama_cpp_cpu"].map(builds),
                       "system turn": header["system_prompt"], "pairs": header["n_pairs"]})
no_system = [f"{prompt} prompt, {LANG_LABELS.get(lang, lang)}" for (_, prompt, lang), turn
             in scored["system turn"].items() if str(turn).startswith("none")]
glue_all({"n_caches": len(scored), "n_builds": scored.iloc[:, 0].nunique(), "n_no_system": len(no_system),
          "no_system": "; ".join(no_system) or "none"})
print("\n".join(f"{name}, CPU instructions: {cpu}" for cpu, name in builds.items()))
with pd.option_context("display.max_colwidth", None):
    display(plain(scored.rename(index=names, level="model").rename(index=LANG_LABELS, level="lang").rename_axis(
        ["judge", "prompt", "language"])))

# %% [markdown]
# ## The paper's Table 1, read as a reviewer reads it
#
# The paper's Table 1 has no counts beside it. The floor of its quantity on the full release (counts
# of the release's files, not printed by the paper), and every printed number against it: each entry
# below is the paper's accuracy minus that floor, in points, so that a negative entry is a number
# below what always answering the larger side would score on the same pairs.

# %%
from tefpaper import review

counts = review.cell_counts()
paper_floor = counts["floor"].groupby("lang").mean().mean()
wide = t1.pivot_table(index="model", columns=["method", "prompt"], values="value").reindex(paper.MODELS)
plain((wide - paper_floor).rename(index=paper.MODEL_LABELS).rename_axis("model (paper)").rename(
    columns={"strongest_baseline": "strongest baseline", "tef": "TEF"}, level="method").reindex(
    columns=prompt_list, level="prompt").rename_axis(columns=["rule", "prompt"]), signed=True)

# %% tags=["hide-input"]
glue_all(ch07.paper_numbers(t1, wide, paper_floor))

# %% [markdown]
# On the full release, always answering the larger side averages {glue:text}`paper_floor:.1f` % in
# Table 1's terms. If the paper scored the release's pairs (the premise chapter 5 tests, and finds
# not to fit every printed number), {glue:text}`paper_below` of Table 1's {glue:text}`paper_cells`
# numbers lie below it: {glue:text}`paper_below_base` of the {glue:text}`paper_base_cells` strongest
# baselines and {glue:text}`below_tef_of`, and TEF's margin, between
# {glue:text}`margin_min:+.1f` and {glue:text}`margin_max:+.1f` points (paper), is partly a margin over
# baselines that do not beat a constant answer. What needs no premise: the margin does not shrink under the perturbed prompts: it *grows* from the
# original to the verbose to the minimal prompt for {glue:text}`grows_of`, because the strongest baseline loses more than TEF does.
#
# ## What this chapter can and cannot say
#
# * **The claim is tested here only by an LLM that clears the floor.** The e5 judges read no
#   prompt, and on the answers of {glue:text}`llm_judges` the best rule clears the majority-class floor
#   of the pairs scored under {glue:text}`llm_clear_of`; where none does, no judge
#   on the page can show whether TEF's advantage survives a change of wording.
# * **The computation is.** Table 1's quantities, the strongest baseline per prompt and TEF's margin,
#   with a paired bootstrap and McNemar's test, are computed on this page exactly as for a GPU run.
# * **The paper's Table 1, read against its floor:** {glue:text}`paper_below` of its
#   {glue:text}`paper_cells` numbers lie below the floor of {glue:text}`paper_floor:.1f` % (paper's
#   numbers, floor counted from the release's files: a verdict that holds only if the paper scored
#   those pairs).
#
# ## The paper's models, on a GPU
#
# The three prompts for Qwen2.5-7B: the command below, generated from the same plan as
# `tef reproduce`, extracts all three variants in both languages on the full release with the
# reference release's reading, and rebuilds this chapter with the model added. Until then every
# number of the paper's models on this page is the paper's.

# %% tags=["hide-input"]
display(Markdown(reproduce_block("07")))

# %% [markdown]
# The rows of the claims ledger this chapter examines, checked as the page was built:

# %% tags=["hide-input"]
display(HTML(chapter_claims("07_prompt_robustness")))
