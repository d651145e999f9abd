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
# the whole post (Direct) and one for each of its sentences (MV, SV and TEF). This chapter produces
# them. It runs the extraction loop of `tefcore.judges.run`, the same code as the command line
# `tef extract`, for each judge named in its parameters, writes the probability caches that the later
# chapters read, and then looks at what was read.
#
# Three kinds of judges can run here:
#
# * **LLM judges** are asked the paper's prompt (protocol §4) and answer with one letter, C or S.
#   Nothing is sampled: the judge's next-token distribution at the answer position is read, the
#   probability of every token that spells the letter is summed, and
#   $p = P(C) / (P(C) + P(S))$ (protocol §5). $P(C) + P(S)$, the *mass*, says how much of the
#   distribution went to a well-formed answer. The prompt is the reference rendering: one user turn of
#   the model's own chat template, with the generation prompt, and the template's default system turn
#   where it has one. On a CPU the default is **SmolLM2-135M-Instruct**, a GGUF file shipped inside a
#   PyPI wheel and run with llama.cpp. On a GPU box any registry name (`qwen2.5-7b`, `llama3-8b`,
#   `qwen3-14b`) runs the paper's models with vLLM, and `deepseek-v3.2` or `gpt-4o-mini` call an
#   OpenAI-compatible API. A path to any `.gguf` file also works.
# * **e5-zeroshot** compares each text's multilingual-e5-small embedding with a description of each
#   side's two positions; no prompt, no training labels.
# * **e5-crossfit** is a standardized logistic-regression probe on post embeddings, fitted per language
#   and dimension with cross-fitting over posts, its regularisation chosen by an inner cross-validation
#   on the training folds only, so that no post is scored by a model whose fit saw its label.
#
# The paper's numbers come from its models on the full release. On a GPU box, the command below runs
# that setting for Qwen2.5-7B and rebuilds the result chapters with it (the first line); the second line
# is its extraction step alone, which writes the same kind of caches this chapter writes on a CPU.

# %% tags=["hide-input"]
from tefcore.chapters.figures import setup_notebook

setup_notebook()
from IPython.display import Markdown, display

from tefcore.chapters import extraction as ex4
from tefcore.chapters.claims import claim_link

display(Markdown(ex4.paper_commands("qwen2.5-7b") + "\n\nThe paper's claim that it reads the answer-token "
                 "log-probabilities without sampling is checked this way: "
                 + claim_link("answer-logprobs", "claims ledger, row answer-logprobs") + "."))

# %% [markdown]
# **API keys** never pass through this notebook. papermill writes every parameter into the executed
# notebook, so a key given as a parameter would be published with the book; instead each API entry of
# the registry (`tefcore/judges/models.yaml`) names the environment variable its backend reads
# (`OPENAI_API_KEY`, `DEEPSEEK_API_KEY`, `VLLM_API_KEY`), and the book build refuses any parameter
# whose name looks like a key.

# %% tags=["parameters"]
# Judges: registry names or .gguf paths, comma-separated.
models = "local,e5-zeroshot,e5-crossfit"
langs = "en,zh"
# Prompt variant: original, verbose or minimal (protocol §4).
prompt = "original"
# Evaluation pairs per language (the first ones of the data); 0 = all.
limit = 12
# Directory holding mind_en.jsonl and mind_zh.jsonl. None: $MIND_DATA_DIR, else the embedded MIND sample.
data_dir = None
# Where the caches are written (<out>/<model>/<prompt>/<lang>.jsonl). The default is a scratch
# folder, so that a test run never touches the committed full-sample caches in data/caches.
out = "_build/caches"
# The committed caches this run is compared with.
reference_caches = "data/caches"

# %%
from tefcore.chapters.parameters import check_parameters

check_parameters("04_extraction")  # a misspelt -p name fails here, naming the parameters above

from tefcore.chapters import presentation as pres
from tefcore.chapters.datacard import data_markdown
from tefcore.chapters.experiments import posterior_summary
from tefcore.chapters.provenance import run_labels
from tefcore.chapters.runs import load_runs, parse_list, repo_path
from tefcore.judges.registry import resolve_model
from tefcore.mind.load import evaluation_pairs, load_posts
from tefcore.mind.release import describe_data

model_list, lang_list = parse_list(models), parse_list(langs)
specs = {m: resolve_model(m) for m in model_list}
names = [s.name for s in specs.values()]

all_pairs = {lang: evaluation_pairs(load_posts(lang, data_dir)) for lang in lang_list}
pairs = {lang: p[:limit] if limit else p for lang, p in all_pairs.items()}
# a limited run writes under <out>/limit-<n>/, never mixed with (or mistaken for) a complete cache
out_dir = repo_path(out) / (f"limit-{limit}" if limit else "")

# %% tags=["hide-input"]
display(Markdown(data_markdown(describe_data(data_dir, lang_list)) + " This run scores "
                 + "; ".join(f"{len(pairs[x]):,} of its {len(all_pairs[x]):,} {pres.LANG_LABELS[x]} pairs"
                             for x in lang_list) + "."))
display(Markdown(pres.judge_table(names).to_markdown()))

# %% [markdown]
# ## Running the extraction
#
# For each judge and language, `run_extraction` segments each post (reference rule, protocol §3),
# builds the Direct prompt and one prompt per sentence, scores them, and appends one record per pair
# to the cache, with the run's provenance: model file and its SHA-256, chat template and the system turn
# the model saw, prompt template hash, reading, segmentation rule, library versions. A cache that already
# holds a pair under the same provenance is resumed, not recomputed (a stale cache in the scratch folder
# `_build/`, left by an older version of a judge, is set aside as `*.stale`; anywhere else a cache of
# another provenance is an error).
#
# With a `limit`, only the first pairs of each language are given to the judge, and the caches go to
# `<out>/limit-<n>/`. This matters for the two e5 judges: the zero-shot judge sets its temperature
# from the sentences it is given, and the cross-fitted judge is trained on the posts it is given (with
# a dozen posts, most of its folds hold one class only and it falls back to the fold's prior). A
# limited run is a smoke test of the pipeline; the committed caches were made with `limit 0`.

# %% tags=["nbval-ignore-output"]
ex4.run_judges(names, pairs, out_dir, prompt, scratch=repo_path("_build")).round(2)

# %% [markdown]
# The timing table above is the only output of this chapter that depends on the machine. A run that
# resumes a complete cache scores nothing and shows zero prompts. What the judges wrote is read back
# from the caches, and every row of ours from here on is labelled from its cache's provenance: judge,
# engine, hardware and data.

# %%
runs = load_runs(names, prompt, lang_list, out_dir)
labels = run_labels(runs)
frame = runs.frame

# %% [markdown]
# ## How each number was obtained
#
# Every probability in a cache records its *source*: `logprobs` when both letters were found in the
# answer distribution, `partial` when only one was (the other bounded by the probability left
# outside the list), `generated_text` (only under the reference release's reading), `invalid` when no
# letter could be read (stored as NaN, never as 0.5), and `embedding` for the e5 judges. The local
# backend reads the logits over the whole vocabulary, so it never misses a letter. The shares are
# percentages of the answers counted in the last column.

# %%
pres.format_columns(ex4.source_table(frame, labels))

# %% [markdown]
# ## C+S mass (LLM judges)
#
# The mass is the probability the judge put on a well-formed answer (any spelling of C or S). A
# judge that follows the instruction puts nearly all of it there; a low mass means that P(change)
# was renormalised from a small remainder and deserves less trust. The e5 judges have no mass.

# %%
llm_models = [s.name for s in specs.values() if s.reads_logprobs]
pres.format_columns(ex4.mass_table(frame, llm_models, labels), digits=3, count=0)

# %% tags=["hide-input", "nbval-ignore-output"]
if llm_models:
    ex4.mass_figure(frame, llm_models, labels).show()

# %% [markdown]
# ## Sentence probabilities and TEF weights
#
# The left panels show every sentence's P(change), the right ones its TEF weight
# $w(p) = 1 - H(p)/\log 2$: zero for a coin flip, one for a certain answer. TEF can only gain over the
# votes when some sentences are decisive (weight near one) and others are not (chapters 1 and 2).

# %% tags=["hide-input", "nbval-ignore-output"]
ex4.probability_figure(frame).show()

# %% [markdown]
# The same in numbers: the spread of the sentence probabilities, the mean and median weight, the share
# of decisive sentences ($w \ge 0.5$, that is $p \ge 0.89$ or $p \le 0.11$), and the share of posts whose
# sentences all lean the same way (where MV, SV and TEF cannot disagree):

# %%
summary = posterior_summary(runs).drop(columns=["prompt"]).set_index(["model", "lang"]).rename(index=labels, level=0)
pres.format_columns(summary.rename(index=pres.LANG_LABELS, level=1).rename_axis(["judge", "language"]), digits=3)

# %% [markdown]
# ## The embedded LLM answers nearly the same thing to every text
#
# SmolLM2-135M is a tiny model trained for English. Asked the paper's prompt, it gives almost every
# text nearly the same P(change): a letter bias, not a judgement of the text. The table compares the
# spread of its answers with the spread of the gold sides, and shows which side it would pick. Chinese
# is outside what the model was trained on, which makes its Chinese answers even less informative. Its
# runs exercise the paper's pipeline end to end (prompt, chat template, letter reading, cache, fusion)
# on any machine; they say nothing about the paper's accuracy. The e5 judges are the CPU detectors in
# this book that carry signal about the texts, the cross-fitted probe most of all (chapter 5).

# %%
ex4.letter_bias(frame, "local").round(3)

# %% tags=["hide-input"]
display(Markdown(ex4.bias_markdown(frame, "local", labels)
                 or "The embedded LLM (`local`) is not among the judges of this run."))

# %% [markdown]
# ## Agreement with the committed caches
#
# The repository holds caches for the whole MIND sample under `data/caches`, made with `limit 0`. A run
# is compared with a committed cache only when both have the same provenance: the same model file, chat
# rendering, prompt template, reading and segmentation, and for the e5 judges the same data behind
# their temperature or fit. Two caches of different provenance are different experiments, so the
# comparison says which fields differ and compares nothing. This is the case for the e5 judges after a
# limited run (a dozen pairs give other temperatures and other fits than the whole sample), and for any
# cache written under an older rendering of the prompt.
#
# When the provenance is the same (this library's version may differ: the library must not change a
# judge's numbers silently), the local LLM is deterministic: same model file, same prompt, same pairs
# give the same numbers, up to floating-point round-off (the JSON cache keeps every float exactly). The
# chapter then asserts it, and the table shows the largest difference found.

# %%
reference = load_runs(names, prompt, lang_list, reference_caches)
agreement = ex4.reference_agreement(runs, reference)
display(Markdown(agreement.notes_markdown))
pres.format_columns(agreement.table, digits=6)

# %% tags=["hide-input"]
checked = ex4.assert_reproduced(agreement)
display(Markdown("\n".join(f"* {line}" for line in checked) or "* Nothing to assert: no deterministic judge "
                 "of this run has a committed cache of the same provenance."))
