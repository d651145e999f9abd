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
# # Efficiency: what sentence-level fusion costs
#
# Direct asks the judge once per evaluation pair. Majority Vote, Soft Vote and TEF ask it once per
# *sentence* of the pair's post, with the same single-token prompt, so they send exactly the same
# queries: whatever separates them happens after the answers are in, in a few arithmetic operations
# per sentence. The paper's Table 2 puts numbers on this for two of its open models served with
# vLLM on RTX 3090 GPUs: total tokens and cost over the twelve (language × dimension) subsets, and
# mean time to first token (TTFT) per request.
#
# This chapter reads Table 2 against the size of the full release, counts the queries and prompt
# tokens of the data at hand with a judge's own tokenizer, and puts times to first token beside the
# paper's. The times of ours come from a **benchmark record** committed with the book
# (`benchmarks/ttft.py` wrote it; the machine it ran on is described below), so that building the
# book times nothing; `tef book -p 08.live_timing=true` times the judge again on the machine at hand.
# Our times are CPU times of a 135-million-parameter model; the comparison with the paper's GPU
# times is between *ratios* (sentence-level over Direct, TEF over voting), never between absolute
# times.

# %% tags=["parameters"]
# The LLM judge whose tokenizer counts the prompts: a registry name or a .gguf path.
model = "local"
langs = "en,zh"
prompt = "original"
# Directory holding mind_en.jsonl and mind_zh.jsonl. None: $MIND_DATA_DIR, else the embedded MIND sample.
data_dir = None
# Queries whose prompt tokens are counted, drawn at random per language and kind (0: every query).
count_sample = 400
# The committed timing record (benchmarks/ttft.py).
record = "benchmarks/records/ttft-local.json"
# Time the judge now, on this machine (ttft_sample queries of each kind); off: the record only.
live_timing = False
ttft_sample = 40
seed = 0
# An OpenAI-compatible endpoint (e.g. `vllm serve`) to time with streaming requests when live_timing.
endpoint = ""
# The model name the endpoint serves ("" keeps the registry's: the model's Hugging Face id).
endpoint_model = ""

# %% tags=["hide-input"]
from tefbook.parameters import check_parameters

check_parameters("08_efficiency")  # a misspelt -p name fails here, naming the parameters above

import json

import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown, display
from myst_nb import glue

from chapters import ch08
from companion.commands import paper_commands
from companion.figures import setup_notebook
from companion.labels import LANG_LABELS
from companion.ledger import chapter_claims
from companion.runs import parse_list, repo_path
from tefcore.paper import tables as paper

setup_notebook()
lang_list = parse_list(langs)

# %% [markdown]
# ## The paper's Table 2
#
# As published (tokens in millions, TTFT in milliseconds, cost in US dollars); "voting" stands for MV
# and SV, which issue the same queries. Every number here is the paper's, measured on GPUs. Its text
# says that TEF's token count equals the voting methods', that its TTFT differs by about two
# milliseconds, and that the sentence-level methods cost roughly three times as much as Direct. The
# ratios, recomputed from the table:

# %%
table2 = paper.load_table("table2")
display(table2.pivot_table(index=["model", "method"], columns="quantity", values="value", sort=False)
        .rename(index=paper.MODEL_LABELS, level=0))
paper.efficiency_summary(table2).rename(index=paper.MODEL_LABELS).round(2)

# %% [markdown]
# ## Reading Table 2 per query
#
# The table gives totals, not the number of queries behind them. The full release's files give it
# (counts of protocol §2, not printed by the paper): one Direct query per evaluation pair, and about
# pairs × mean sentences per post sentence queries (the per-pair mean is not published; on the sample
# it is close to the per-post mean, chapter 3). Dividing the token totals by the queries gives the
# tokens of one query; a word count of the prompt without any text is a lower bound on the tokens of
# any of these queries (the byte-level tokenizers of Qwen2.5 and LLaMA 3 never put two words in one
# token, and the chat template adds tokens of its own).

# %%
from tefcore.mind.prompts import build_prompt
from tefcore.mind.release import FULL_RELEASE
from tefcore.paper.review import prompt_words

direct_queries = sum(c["pairs"] for c in FULL_RELEASE.values())
sentence_queries = sum(c["pairs"] * c["mean_sentences"] for c in FULL_RELEASE.values())
wide = table2.pivot_table(index=["model", "method"], columns="quantity", values="value", sort=False)
queries = np.where(wide.index.get_level_values("method") == "direct", direct_queries, sentence_queries)
per_query = pd.DataFrame({"queries": queries, "tokens per query": wide["tokens"] * 1e6 / queries,
                          "GPU hours if one after another": queries * wide["ttft"] / 1e3 / 3600},
                         index=wide.index)
per_query["USD per GPU hour (implied)"] = wide["cost"] / per_query["GPU hours if one after another"]
bare = pd.Series({lang: prompt_words(build_prompt("x", "Economy", lang, prompt)) - 1 for lang in ("en", "zh")})
display(per_query.rename(index=paper.MODEL_LABELS, level=0).round(2))
bare.rename("words of the bare prompt (Economy)").to_frame()

# %% tags=["hide-input"]
direct_tokens = per_query.xs("direct", level="method")["tokens per query"]
glue("t2_direct_min", float(direct_tokens.min()), display=False)
glue("t2_direct_max", float(direct_tokens.max()), display=False)
glue("bare_en", int(bare["en"]), display=False)
rate = per_query["USD per GPU hour (implied)"]
glue("rate_min", float(rate.min()), display=False)
glue("rate_max", float(rate.max()), display=False)

# %% [markdown]
# A Direct query of Table 2 holds {glue:text}`t2_direct_min:.0f` to {glue:text}`t2_direct_max:.0f`
# tokens, yet the English prompt around the text alone has {glue:text}`bare_en` words before any post
# is inserted, and a whole post hardly more tokens than a single sentence. **Table 2's token column
# cannot be the prompt tokens of these queries**; what it counts is not stated (perhaps generated or
# text-only tokens). This is a question for the authors, recorded in the ledger; our own counts
# follow.
#
# The cost column is consistent with one reading: if the GPU served the queries one after another and
# each lasted its time to first token (the answer is a single token), the busy time is queries × TTFT,
# and every row then implies nearly the same price, {glue:text}`rate_min:.2f` to
# {glue:text}`rate_max:.2f` US dollars per GPU hour. That price is the paper's implication under this
# reading; the book applies it to nothing of its own.
#
# ## Our workload: queries and prompt tokens
#
# Every query of the data at hand is built by the extraction code (`build_requests`) and its prompt
# tokens are counted with the judge's own tokenizer and chat template, as the judge receives it: one
# user turn with the generation prompt and, where the template has one, its default system turn (the
# reference rendering of protocol §4). Counting every prompt takes a while, so by default a random
# sample of each language and kind is counted (`count_sample` queries each; 0 counts all), and the
# totals are queries × the sample's mean.

# %%
from tefcore.mind.load import evaluation_pairs, load_posts
from tefcore.mind.release import describe_data

spec = ch08.judge_spec(model, endpoint, endpoint_model)
data = describe_data(data_dir, lang_list)
pairs = [p for lang in lang_list for p in evaluation_pairs(load_posts(lang, data.directory))]
queries = ch08.query_table(pairs, variant=prompt)  # one row per query: Direct, then each sentence
counted = queries if not count_sample else queries.groupby(["lang", "kind"], group_keys=False).apply(
    lambda g: g.sample(min(count_sample, len(g)), random_state=seed))
counted = ch08.count_tokens(counted, ch08.token_counter(spec))
workload = pd.DataFrame({"queries": queries.groupby(["lang", "kind"]).size(),
                         "counted": counted.groupby(["lang", "kind"]).size(),
                         "tokens per query": counted.groupby(["lang", "kind"])["tokens"].mean()})
workload["tokens (thousands)"] = workload["queries"] * workload["tokens per query"] / 1e3
workload.rename(index=LANG_LABELS, level="lang").round(1)

# %% tags=["hide-input"]
total = workload.groupby("kind")[["queries", "tokens (thousands)"]].sum()
ratio = total.loc["sentence"] / total.loc["direct"]
glue("data_kind", data.kind, display=False)
glue("judge_name", spec.display_name or spec.name, display=False)
glue("query_ratio", float(ratio["queries"]), display=False)
glue("token_ratio", float(ratio["tokens (thousands)"]), display=False)
glue("paper_token_ratio", ", ".join(f"{paper.MODEL_LABELS[m]} {r:.2f}" for m, r in
                                    paper.efficiency_summary(table2)["token_ratio"].items()), display=False)

# %% [markdown]
# On the {glue:text}`data_kind`, with {glue:text}`judge_name`'s tokenizer, the sentence-level methods
# send {glue:text}`query_ratio:.2f` times as many queries as Direct and {glue:text}`token_ratio:.2f`
# times as many prompt tokens: every sentence query repeats the whole instruction. Table 2's ratio of
# tokens is {glue:text}`paper_token_ratio` (paper). MV, SV and TEF send the same queries, so their
# token counts are identical by construction, in the paper and here.
#
# ## Time to first token
#
# From the committed record: a random sample of Direct and sentence queries (the sample's size, the
# seed and the machine are in the record), sent one at a time to the in-process llama.cpp judge. For
# this judge the "first token" is the distribution of the answer token, which is all the backend
# reads, so the time of one scoring call is its time to first token. In the *warm* mode the
# instruction shared by the prompts of a language and dimension is in the KV cache before the first
# timed request of the group, as `tef extract` runs and as a server with prefix caching (vLLM's
# default) serves these prompts; in the *cold* mode every prompt starts from an empty cache.

# %%
measured = json.loads(repo_path(record).read_text(encoding="utf-8"))
timed = pd.DataFrame(measured["requests"])
ttft = timed.groupby(["mode", "kind", "lang"])["seconds"].describe(percentiles=[0.5, 0.9])[
    ["count", "mean", "50%", "90%"]]
ttft[["mean", "50%", "90%"]] *= 1e3  # milliseconds
ttft.rename(index=LANG_LABELS, level="lang").round(1)

# %% tags=["hide-input"]
machine = measured["machine"]
glue("rec_date", measured["date"][:10], display=False)
glue("rec_cpu", f"{machine['processor']}, {machine['cpus']} CPUs, {machine['memory_gib']} GiB", display=False)
glue("rec_load", " / ".join(f"{x:.1f}" for x in machine["load_average"]), display=False)
glue("rec_load_after", " / ".join(f"{x:.1f}" for x in machine["load_average_after"]), display=False)
glue("rec_build", measured["judge"].get("llama_cpp_cpu", "unrecorded"), display=False)
glue("rec_n", int(measured["sample"]["per_kind"]), display=False)
warm = timed[timed["mode"] == "warm"].groupby("kind")["seconds"].mean() * 1e3
glue("warm_direct", float(warm["direct"]), display=False)
glue("warm_sentence", float(warm["sentence"]), display=False)

# %% [markdown]
# The record was made on {glue:text}`rec_date` on {glue:text}`rec_cpu` (llama.cpp built for
# {glue:text}`rec_build`), {glue:text}`rec_n` queries of each kind per mode. The load average (1, 5
# and 15 minutes) was {glue:text}`rec_load` before the measurement and {glue:text}`rec_load_after`
# after it: a load near the number of CPUs means other work shared the machine, and every time above
# is longer than it would be on an idle one. Warm, a Direct request took {glue:text}`warm_direct:.0f`
# ms on average and a sentence request {glue:text}`warm_sentence:.0f` ms. A Direct prompt carries the
# whole post and a sentence prompt one sentence, so a sentence request has fewer tokens to evaluate
# before its first token; the paper's TTFT column goes the same way (its voting rows are faster than
# its Direct rows for both models).

# %% tags=["hide-input", "nbval-ignore-output"]
ch08.ttft_figure(timed).show()

# %% [markdown]
# With `live_timing=True` the chapter times the judge again here, with the same code:

# %% tags=["nbval-ignore-output"]
if live_timing:
    sample = ch08.timing_sample(queries, ttft_sample, seed)
    live = ch08.time_judge(spec, sample, ["warm"]).timed
    display((live.groupby(["kind", "lang"])["seconds"].mean() * 1e3).rename("ms, live").round(1))
else:
    print("live_timing is off: the times above are the record's")

# %% [markdown]
# ## The cost of the fusion itself
#
# Once the sentence answers are in, each rule reduces them to one decision per pair. The record timed
# `fuse_many` over every pair of the sample at once (random probabilities over the real sentence
# counts: the arithmetic does not depend on the values), best of five repeats:

# %%
fusion = pd.DataFrame(measured["fusion"]).set_index("rule")
fusion["ms for all pairs"] = fusion["seconds"] * 1e3
fusion["share of one warm sentence query"] = fusion["seconds"] * 1e3 / warm["sentence"]
fusion[["documents", "sentences", "ms for all pairs", "share of one warm sentence query"]].round(4)

# %% [markdown]
# Fusing every pair of the sample takes a small fraction of the time of one model query. Any
# difference between TEF's and the voting methods' time to first token, such as Table 2's two
# milliseconds, cannot come from the fusion: the fusion starts after the last answer has arrived, and
# the queries are the same.
#
# ## Side by side
#
# Busy hours are queries × mean TTFT, for ours the warm times of the record over the data at hand's
# queries (the mean over the record's mix of languages), for the paper its TTFT over the full
# release's queries (the reading above). Ours are hours of this CPU machine, the paper's of RTX 3090
# GPUs; the columns to compare are the ratios.

# %%
ours = pd.DataFrame({"queries": [total.loc["direct", "queries"], total.loc["sentence", "queries"]],
                     "TTFT (ms)": [warm["direct"], warm["sentence"]]}, index=["direct", "voting and TEF"])
ours["busy hours"] = ours["queries"] * ours["TTFT (ms)"] / 1e3 / 3600
ours["over Direct"] = ours["busy hours"] / ours.loc["direct", "busy hours"]
theirs = per_query.reset_index()
theirs = theirs.assign(**{"over Direct": theirs.groupby("model")["GPU hours if one after another"].transform(
    lambda h: h / h.iloc[0])}).set_index(["model", "method"])
display(ours.round(3))
theirs[["queries", "GPU hours if one after another", "over Direct"]].rename(
    index=paper.MODEL_LABELS, level=0).round(3)

# %% tags=["hide-input"]
glue("our_ratio", float(ours.loc["voting and TEF", "over Direct"]), display=False)
glue("paper_ratio", ", ".join(f"{paper.MODEL_LABELS[m]} {r:.2f}" for m, r in
                              paper.efficiency_summary(table2)["cost_ratio_voting"].items()), display=False)

# %% [markdown]
# The sentence-level methods keep our judge busy {glue:text}`our_ratio:.2f` times as long as Direct
# (record, warm, this CPU machine); the paper's cost of voting over Direct is
# {glue:text}`paper_ratio` (paper, GPUs). Both are the number of sentence queries per pair times the
# ratio of a sentence query's time to a Direct query's.
#
# ## What holds
#
# * **Same queries, same tokens.** TEF, MV and SV send identical queries; the token column cannot
#   differ between them, in the paper or here.
# * **The fusion is free.** Fusing every pair at once takes less time than a single model query; the
#   cost of a sentence-level method is its queries.
# * **Sentence-level methods cost more than Direct,** by the number of sentence queries per pair times
#   the ratio of a sentence query's time to a Direct query's.
# * **Not reproduced: the paper's token totals.** They amount to fewer tokens per query than the
#   paper's prompt itself has words.
#
# The e5 judges of chapters 4 to 7 and 9 read no prompt: they embed the bare text (a post for Direct,
# a sentence otherwise), so their cost is one embedding per text, and the sentence-level rules share
# one set of embeddings and differ only in the fusion.
#
# ## The paper's models, on a GPU
#
# To time a vLLM model as the paper did (client-side, streaming requests to an OpenAI-compatible
# server), the command below starts `vllm serve` on a GPU box and rebuilds this chapter against it
# with `live_timing` on. The request key is read from the environment variable `VLLM_API_KEY` (any
# string for a server without authentication), never from a parameter.

# %% tags=["hide-input"]
display(Markdown(paper_commands("qwen2.5-7b", chapters=("08",))))

# %% [markdown]
# The rows of the claims ledger this chapter examines, checked as the page was built:

# %% tags=["hide-input"]
display(HTML(chapter_claims("08_efficiency")))
