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
# paper's. The times of ours come from a **benchmark record** kept with the code
# (`benchmarks/ttft.py` measured it; the machine it ran on and how busy it was are described below),
# so that the chapter's numbers do not depend on the machine that runs it; the parameter
# `live_timing` times the judge again on the machine at hand. Our times are CPU times of a
# 135-million-parameter model; the comparison with the paper's GPU times is between *ratios*
# (sentence-level over Direct), never between absolute times.

# %% tags=["parameters"]
# The LLM judge whose tokenizer counts the prompts: a registry name or a .gguf path.
model = "local"
langs = "en,zh"
prompt = "original"
# Directory holding mind_en.jsonl and mind_zh.jsonl. None: $MIND_DATA_DIR, else the embedded MIND sample.
data_dir = None
# Queries whose prompt tokens are counted, drawn at random per language and kind (0: every query).
count_sample: "int >= 0" = 400
# The committed timing record (benchmarks/ttft.py).
record = "benchmarks/records/ttft-local.json"
# Time the judge now, on this machine (ttft_sample queries of each kind); off: the record only.
live_timing = False
ttft_sample: "int >= 1" = 40
seed: "int >= 0" = 0
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

from tefbook.chapters import ch08
from tefbook.companion.commands import paper_commands
from tefbook.companion.figures import setup_notebook
from tefbook.companion.tables import glue_all
from tefpaper.ledger import chapter_claims
from tefbook.companion.runs import parse_list, repo_path
from tefcore.fusion import RULE_LABELS
from tefpaper import tables as paper

setup_notebook()
lang_list = parse_list(langs)

# %% [markdown]
# ## The paper's Table 2
#
# As published (tokens in millions, TTFT in milliseconds, cost in US dollars); "voting" stands for MV
# and SV, which issue the same queries. Every number here is the paper's, measured on GPUs. Its text
# says that TEF's token count equals the voting methods', that its TTFT differs by about two
# milliseconds, and that the sentence-level methods cost roughly three times as much as Direct. The
# second table recomputes these from the first: whether TEF's token total equals the voting methods',
# the voting methods' tokens and the two costs over Direct's, and TEF's time to first token minus the
# voting methods'.

# %%
table2 = paper.load_table("table2")
wide = table2.pivot_table(index=["model", "method"], columns="quantity", values="value", sort=False)
display(ch08.table2_table(wide, paper.MODEL_LABELS))
ch08.summary_table(paper.efficiency_summary(table2), paper.MODEL_LABELS)  # one column per model

# %% [markdown]
# ## Reading Table 2 per query
#
# The table gives totals, not the number of queries behind them. The full release's files give it
# (counts of protocol §2, not printed by the paper): one Direct query per evaluation pair, and about
# pairs × mean sentences per post sentence queries (the per-pair mean is not published; on the sample
# it is close to the per-post mean, chapter 3). Dividing the token totals by the queries gives the
# tokens of one query.
#
# How few tokens can a query hold? The byte-level tokenizers of Qwen2.5 and LLaMA 3 split the text
# at every run of letters and at every space before they merge anything, so no token spans two words:
# the words of the prompt around the text are a lower bound on its tokens, whatever the text (the
# fewest over the six dimensions, the chat template's own tokens not counted). A Direct query also
# holds the whole post; an English post adds at least one token per white-space separated word (the
# release's mean words per post), a Chinese post is counted as adding nothing, since its characters
# may share tokens. The bound of each kind of query is then averaged over the queries of both
# languages. In the first table below, per language of the full release: its pairs (one Direct query
# each), its mean post length and sentences per post, the sentence queries (pairs × mean sentences
# per post) of protocol §2, the words of the prompt around the text (the fewest over the six
# dimensions) and the words an English post adds (its mean length; none for Chinese). In the second,
# per row of Table 2, "tokens per query" is the row's total over its queries and "fewest possible"
# the least a query of its kind can hold, averaged over both languages' queries.

# %%
from tefcore.mind.prompts import build_prompt
from tefcore.mind.release import FULL_RELEASE
from tefcore.mind.schema import TABLE_ORDER
from tefpaper.review import prompt_words

release = pd.DataFrame(FULL_RELEASE).T[["pairs", "mean_length", "mean_sentences"]]
release["sentence queries"] = release["pairs"] * release["mean_sentences"]
release["prompt words"] = [min(prompt_words(build_prompt("x", d, lang, prompt)) - 1 for d in TABLE_ORDER)
                           for lang in release.index]  # the text "x" is one word
release["post words"] = np.where(release.index == "en", release["mean_length"], 0.0)
least = pd.Series({  # the fewest tokens a query can hold, averaged over the queries of both languages
    "direct": (release["pairs"] * (release["prompt words"] + release["post words"])).sum() / release["pairs"].sum(),
    "sentence": (release["sentence queries"] * release["prompt words"]).sum() / release["sentence queries"].sum()})

kind = np.where(wide.index.get_level_values("method") == "direct", "direct", "sentence")
t2_queries = np.where(kind == "direct", release["pairs"].sum(), release["sentence queries"].sum())
per_query = pd.DataFrame({"queries": t2_queries, "tokens per query": wide["tokens"] * 1e6 / t2_queries,
                          "fewest possible": least[kind].to_numpy()}, index=wide.index)
display(ch08.release_table(release))
ch08.shown(per_query.rename(index=paper.MODEL_LABELS, level=0), 1, counts=["queries"])

# %% tags=["hide-input"]
direct_rows, sentence_rows = (per_query.xs(m, level="method")["tokens per query"] for m in ("direct", "voting"))
glue_all(**ch08.rounded({"t2_direct_min": direct_rows.min(), "t2_direct_max": direct_rows.max(),
                          "t2_sentence_min": sentence_rows.min(), "t2_sentence_max": sentence_rows.max(),
                          "least_direct": least["direct"], "least_sentence": least["sentence"]}, 1),
         words_en=int(release.loc["en", "prompt words"]), words_zh=int(release.loc["zh", "prompt words"]))

# %% [markdown]
# If the paper issued one Direct query per pair of the release's files (the premise of every "per
# query" number here; chapter 5 finds that the release's pair counts fit not every printed
# accuracy), a Direct query of Table 2 holds {glue:text}`t2_direct_min:.1f` to
# {glue:text}`t2_direct_max:.1f` tokens on average, but no Direct query of the protocol can hold
# fewer than {glue:text}`least_direct:.1f`: the English prompt has {glue:text}`words_en` words and the Chinese
# one {glue:text}`words_zh` before any text is inserted, and an English post adds its words. **Table
# 2's token column cannot be the prompt tokens of the Direct queries**; what it counts is not stated
# (perhaps generated or text-only tokens). Its sentence rows, {glue:text}`t2_sentence_min:.1f` to
# {glue:text}`t2_sentence_max:.1f` tokens per query against a floor of
# {glue:text}`least_sentence:.1f` from the prompt alone, leave almost no room for the sentences and
# the chat template.
#
# Without the premise, the question becomes how many queries Table 2's totals could pay for at the
# fewest tokens a query can hold, as a share of the release's queries:

# %%
payable = 100 * (per_query["tokens per query"] / per_query["fewest possible"]).xs("direct", level="method")
dropped = 100 - payable.max()  # the share of the release's pairs the paper must have left out, at least
ch08.shown(payable.rename(index=paper.MODEL_LABELS).rename("Direct queries paid for (% of the release's)")
           .to_frame().rename_axis("model"), 1)

# %% tags=["hide-input"]
glue_all(**ch08.rounded({"t2_payable_max": payable.max(), "t2_dropped": dropped}, 1))

# %% [markdown]
# The Direct totals pay for at most {glue:text}`t2_payable_max:.1f` % of the release's Direct
# queries. So the verdict survives unless the paper scored far fewer pairs than its release holds (at
# least {glue:text}`t2_dropped:.1f` % of them left out), which nothing in the paper says. This is a
# question for the authors, recorded in the ledger; our own counts follow.
#
# The reference release prices a local model by its GPU hours (protocol §7), so the cost column
# should follow the GPU's busy time. If the GPU served the queries one after another and each
# lasted its time to first token (the answer is a single token), the busy time is queries × TTFT.
# Over Direct, the ratio of busy times beside the ratio of Table 2's costs, and the range the cost
# ratio can take given that each printed cost is rounded to the cent:

# %%
busy = pd.Series(t2_queries * wide["ttft"].to_numpy() / 1e3 / 3600, index=wide.index)  # hours
direct_cost = wide["cost"].groupby(level="model").transform("first")
over_direct = pd.DataFrame({
    "busy time over Direct": busy / busy.groupby(level="model").transform("first"),
    "cost over Direct (paper)": wide["cost"] / direct_cost,
    "lowest (rounding)": (wide["cost"] - 0.005) / (direct_cost + 0.005),
    "highest (rounding)": (wide["cost"] + 0.005) / (direct_cost - 0.005)})
over_direct = over_direct.drop(index="direct", level="method")
over_direct["within"] = over_direct["busy time over Direct"].between(over_direct["lowest (rounding)"],
                                                                     over_direct["highest (rounding)"])
ch08.shown(over_direct.rename(index=paper.MODEL_LABELS, level=0).rename(
    columns={"within": "busy time within the rounding"}), 2)

# %% tags=["hide-input"]
outside = over_direct[~over_direct["within"]].rename(index=paper.MODEL_LABELS, level=0)
glue_all(busy_within=int(over_direct["within"].sum()), busy_rows=len(over_direct),
      busy_outside=", ".join(f"{m} {RULE_LABELS.get(r, r)}" for m, r in outside.index) or "none")

# %% [markdown]
# For {glue:text}`busy_within` of the {glue:text}`busy_rows` sentence-level rows the busy-time ratio
# lies within what the rounded costs allow (outside: {glue:text}`busy_outside`), so Table 2's cost is
# close to, but not exactly, busy time at one rate per model. The paper states neither the price of
# a GPU hour nor how the hours were counted; this chapter compares costs only as ratios and prices
# nothing of its own.
#
# ## Our workload: queries and prompt tokens
#
# Every query of the data at hand is built by the extraction code (`build_requests`) and its prompt
# tokens are counted with the judge's own tokenizer and chat template, as the judge receives it: one
# user turn with the generation prompt and, where the template has one, its default system turn (the
# reference rendering of protocol §4). Counting every prompt takes a while, so this page counts
# {glue:text}`count_what` of each language and kind, drawn with seed {glue:text}`draw_seed` (setting
# `count_sample` to 0 counts every query), and the totals are queries × the mean of those counted. In the first table, "queries" counts every query of the data
# at hand, "counted" those whose tokens were counted, "tokens per query" their mean and "tokens
# (thousands)" the estimated total; the second adds up both languages and divides the sentence queries'
# totals by Direct's.

# %%
from tefcore.mind.load import evaluation_pairs, load_posts
from tefcore.mind.release import describe_data

spec = ch08.judge_spec(model, endpoint, endpoint_model)
data = describe_data(data_dir, lang_list)
pairs = [p for lang in lang_list for p in evaluation_pairs(load_posts(lang, data.directory))]
queries = ch08.query_table(pairs, variant=prompt)  # one row per query: Direct, then each sentence
shuffled = queries.sample(frac=1, random_state=seed)  # a random order; the first count_sample of each group
counted = queries if not count_sample else shuffled.groupby(["lang", "kind"]).head(count_sample).sort_index()
counted, counted_from = ch08.prompt_tokens(counted, spec, prompt, repo_path(record))
print(counted_from or "", end="")  # where the counts come from when the judge's tokenizer is not installed
workload = pd.DataFrame({"queries": queries.groupby(["lang", "kind"]).size(),
                         "counted": counted.groupby(["lang", "kind"]).size(),
                         "tokens per query": counted.groupby(["lang", "kind"])["tokens"].mean()})
workload["tokens (thousands)"] = workload["queries"] * workload["tokens per query"] / 1e3
total = workload.groupby("kind")[["queries", "tokens (thousands)"]].sum().astype(float)
total.loc["sentence over Direct"] = total.loc["sentence"] / total.loc["direct"]
ratio = total.loc["sentence over Direct"]  # queries and prompt tokens, sentence-level over Direct
display(*ch08.workload_tables(workload, total))

# %% tags=["hide-input"]
glue_all(count_what=f"a random sample of {count_sample:,} queries" if count_sample else "every query", draw_seed=seed,
         ttft_n=ttft_sample, data_kind=data.kind, judge_name=spec.display_name or spec.name,
         **ch08.rounded({"query_ratio": ratio["queries"], "token_ratio": ratio["tokens (thousands)"]}, 2))
glue_all(paper_token_ratio=ch08.per_model(paper.efficiency_summary(table2)["token_ratio"].rename(paper.MODEL_LABELS)))

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
# default) serves these prompts; in the *cold* mode every prompt starts from an empty cache. The
# table gives, per mode, kind and language (and both languages together), the number of timed
# requests, their mean, median and 90th percentile in milliseconds.

# %%
measured = json.loads(repo_path(record).read_text(encoding="utf-8"))
timed = pd.DataFrame(measured["requests"])
both = timed.assign(lang="both")  # the two languages together, as the record's sample mixes them
ttft = pd.concat([timed, both]).groupby(["mode", "kind", "lang"])["seconds"].describe(percentiles=[0.5, 0.9])[
    ["count", "mean", "50%", "90%"]]
ttft[["mean", "50%", "90%"]] *= 1e3  # milliseconds
warm = ttft.xs(("warm", "both"), level=("mode", "lang"))["mean"]  # ms per kind of query
ch08.ttft_table(ttft)

# %% tags=["hide-input"]
glue_all(**ch08.record_facts(measured))
glue_all(**ch08.rounded({"warm_direct": warm["direct"], "warm_sentence": warm["sentence"]}, 0))

# %% [markdown]
# The record timed {glue:text}`rec_judge` (the embedded SmolLM2 judge) on {glue:text}`rec_date`, on
# {glue:text}`rec_cpu` (llama.cpp built for {glue:text}`rec_build`), {glue:text}`rec_n` queries of
# each kind per mode. The load average (1, 5 and 15 minutes) was {glue:text}`rec_load` before the
# measurement and {glue:text}`rec_load_after` after it: a load near the number of CPUs means other
# work shared the machine, and every time above is then longer than on an idle one. Warm, a Direct
# request took {glue:text}`warm_direct:.0f` ms on average and a sentence request
# {glue:text}`warm_sentence:.0f` ms. A Direct prompt carries the whole post and a sentence prompt one
# sentence, so a sentence request has fewer tokens to evaluate before its first token; the paper's
# TTFT column goes the same way (its voting rows are faster than its Direct rows for both models).

# %% tags=["hide-input", "nbval-ignore-output"]
ch08.ttft_figure(timed).show()

# %% [markdown]
# With `live_timing=True` the chapter times the judge again here, with the same code, and the
# comparison below uses those times instead of the record's. It sends {glue:text}`ttft_n` queries of each
# kind, drawn with seed {glue:text}`draw_seed`, to the in-process judge with a warm prefix cache, or, with `endpoint` set,
# streaming requests to that server, timed on the client as the paper timed its models. On a CPU
# this takes minutes (the record's {glue:text}`rec_n` queries per kind and mode took
# {glue:text}`rec_spent:.0f` s), which is why the chapter reads the record by default.

# %% tags=["nbval-ignore-output"]
ttft_ms, ttft_source = ch08.live_ttft(spec, queries, ttft_sample, seed) if live_timing else (warm, "the record, warm")
print(f"Times to first token in the comparison below: {ttft_source}.")

# %% [markdown]
# ## The cost of the fusion itself
#
# Once the sentence answers are in, each rule reduces them to one decision per pair. The record timed
# `fuse_many` over every pair of the sample at once (random probabilities over the real sentence
# counts: the arithmetic does not depend on the values), best of five repeats. The last column
# divides the mean time of one warm sentence query of the judge by the time of fusing every pair:

# %%
fusion = pd.DataFrame(measured["fusion"]).set_index("rule").rename(
    columns={"us_per_document": "µs per pair", "documents": "pairs"})
fusion["ms for all pairs"] = fusion["seconds"] * 1e3
fusion["one warm sentence query over fusing all pairs"] = warm["sentence"] / fusion["ms for all pairs"]
ch08.fusion_table(fusion, "one warm sentence query over fusing all pairs")

# %% tags=["hide-input"]
glue_all(**ch08.rounded({"fusion_slowest_ms": fusion["ms for all pairs"].max()}, 3), fusion_pairs=int(fusion["pairs"].iloc[0]),
         **ch08.rounded({"fusion_times": fusion["one warm sentence query over fusing all pairs"].min()}, 0))

# %% [markdown]
# Fusing all {glue:text}`fusion_pairs:,` pairs of the sample takes at most
# {glue:text}`fusion_slowest_ms:.3f` ms; a single sentence query of the judge takes
# {glue:text}`fusion_times:.0f` times as long. Any difference between TEF's and the voting methods'
# time to first token, such as Table 2's two milliseconds, cannot come from the fusion: the fusion
# starts after the last answer has arrived, and the queries are the same.
#
# ## Side by side, as ratios
#
# Our times are CPU times of a 135-million-parameter model, the paper's GPU times of 7- and
# 8-billion-parameter ones; only ratios compare. For each, the sentence-level methods over Direct:
# the number of queries, the prompt tokens and the mean time to first token of one query, and the
# product of queries and time, the busy time (ours over the data at hand's queries, the paper's over
# the full release's, on the premise above: one Direct query per pair of the release). Our mean times
# mix the languages as the record's sample does, the paper's as its Table 2 does; each ratio is a
# ratio of two numbers measured on the same machine in the same way. The paper's prompt tokens per
# query are left blank: Table 2's token column is not the prompts' tokens (above).

# %%
ratios = {f"ours: {spec.display_name or spec.name} ({ttft_source})": {
    "queries": ratio["queries"],
    "prompt tokens per query": ratio["tokens (thousands)"] / ratio["queries"],
    "TTFT": ttft_ms["sentence"] / ttft_ms["direct"]}}
for model, g in wide.groupby(level="model", sort=False):
    ratios[f"paper: {paper.MODEL_LABELS[model]}"] = {
        "queries": release["sentence queries"].sum() / release["pairs"].sum(), "prompt tokens per query": np.nan,
        "TTFT": g.loc[(model, "voting"), "ttft"] / g.loc[(model, "direct"), "ttft"]}
ratios = pd.DataFrame(ratios).T
ratios["busy time"] = ratios["queries"] * ratios["TTFT"]
ch08.shown(ratios, 2).replace("", "–").rename_axis("sentence-level over Direct")

# %% tags=["hide-input"]
paper_rows = ratios.iloc[1:].rename(index=lambda name: name.split(": ")[1])
glue_all(**ch08.rounded({"our_ratio": ratios["busy time"].iloc[0], "our_ttft_ratio": ratios["TTFT"].iloc[0],
                          "token_share": ratios["prompt tokens per query"].iloc[0]}, 2),
    paper_ratio=ch08.per_model(paper_rows["busy time"]), paper_ttft_ratio=ch08.per_model(paper_rows["TTFT"]))

# %% [markdown]
# The sentence-level methods keep our judge busy {glue:text}`our_ratio:.2f` times as long as Direct
# ({glue:text}`judge_name`, on this CPU machine); the paper's busy time of voting over Direct is
# {glue:text}`paper_ratio` (paper, GPUs). Here a sentence query holds {glue:text}`token_share:.2f` of
# a Direct query's prompt tokens (every sentence query repeats the whole instruction) and takes
# {glue:text}`our_ttft_ratio:.2f` of its time; in the paper a voting query takes
# {glue:text}`paper_ttft_ratio` of a Direct query's time.
#
# ## What holds
#
# * **Same queries, same tokens.** TEF, MV and SV send identical queries; the token column cannot
#   differ between them, in the paper or here.
# * **The fusion is free.** Fusing every pair of the sample at once takes less time than a single
#   query of the judge; the cost of a sentence-level method is its queries.
# * **Sentence-level methods cost more than Direct,** by the number of sentence queries per pair times
#   the ratio of a sentence query's time to a Direct query's.
# * **The cost column follows busy time, roughly.** For {glue:text}`busy_within` of the
#   {glue:text}`busy_rows` sentence-level rows the busy-time ratio lies within the range the rounded
#   costs allow; the paper states no price, and the book derives none.
# * **Ratios, not times.** Sentence-level over Direct, busy time is {glue:text}`our_ratio:.2f` for our
#   judge on this CPU and {glue:text}`paper_ratio` for the paper's models on GPUs (paper).
# * **Not reproduced: the paper's token totals.** If the paper issued one Direct query per pair of its
#   release (the premise of every per-query number above), its Direct totals come to fewer tokens per
#   query than any Direct query of the protocol holds; without the premise, they pay for at most
#   {glue:text}`t2_payable_max:.1f` % of the release's Direct queries.
#
# The e5 judges of chapters 4 to 7 and 9 read no prompt: they embed the bare text (a post for Direct,
# a sentence otherwise), so their cost is one embedding per text, and the sentence-level rules share
# one set of embeddings and differ only in the fusion.
#
# What the chapter cannot say: anything about the paper's absolute times. Those are the times of
# 7- and 8-billion-parameter models served by vLLM on GPUs, measured by a client with streaming
# requests; ours are the times of a 135-million-parameter model in this process on a shared CPU,
# whose load the record states. The ratios compare because both are properties of the workload
# (how many queries, how long each prompt is) as much as of the hardware.
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
