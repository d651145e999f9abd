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
# *sentence* of the pair's post, with the same single-token prompt, so they issue exactly the same
# queries: whatever separates them happens after the answers are in, in a few arithmetic operations per
# sentence. The paper's Table 2 puts numbers on this for two of its open models served with vLLM on
# RTX 3090 GPUs: total tokens and cost over the twelve (language × dimension) subsets, and mean time to
# first token (TTFT) per request.
#
# This chapter does three things.
#
# 1. It reads Table 2 against the size of the full release: tokens per query, and the GPU hours and
#    hourly price that the stated costs imply. These are the book's estimates from the paper's numbers,
#    and the tables say so.
# 2. It measures the same quantities for the judge at hand, by default the embedded SmolLM2-135M on
#    this machine's CPU: prompt tokens counted with the model's own tokenizer and chat template, time
#    to first token on a sample of requests, and the time the fusion rules themselves take.
# 3. It puts both side by side. The GPU numbers are the paper's; ours are CPU numbers from this run.
#    They answer the same questions on very different hardware and model sizes, so the comparison is
#    between *ratios* (sentence-level over Direct, TEF over voting), never between absolute times:
#    nothing here reproduces the RTX 3090 figures.
#
# To time a vLLM model the way the paper did (client-side, streaming requests to an OpenAI-compatible
# server), the command below starts `vllm serve` on a GPU box and rebuilds this chapter against it. It is
# generated from the chapter's own parameters; the request key is read from the environment variable
# `VLLM_API_KEY` (any string for a server without authentication), never from a parameter.

# %% tags=["hide-input"]
from companion.figures import setup_notebook

setup_notebook()
from IPython.display import Markdown, display

from chapters.prose import ledger_markdown
from companion.commands import paper_commands

display(Markdown(paper_commands("qwen2.5-7b", chapters=("08",))))

# %% [markdown]
# The rows of the claims ledger that this chapter examines (Table 2 and the efficiency paragraph of the
# paper); each link leads to the row, its check and its verdict:

# %% tags=["hide-input"]
display(Markdown(ledger_markdown("08_efficiency")))

# %% tags=["parameters"]
# The LLM judge whose tokenizer counts the prompts and which is timed: a registry name or a .gguf path.
model = "local"
langs = "en,zh"
prompt = "original"
# Directory holding mind_en.jsonl and mind_zh.jsonl. None: $MIND_DATA_DIR, else the embedded MIND sample.
data_dir = None
# Requests of each kind (Direct, sentence) whose time to first token is measured.
ttft_sample = 40
# Local judge only: "warm" (shared prompt prefix cached, as in the extraction) and/or "cold".
ttft_modes = "warm"
seed = 0
# Price of one machine hour in USD. None: the RTX 3090 rate that the paper's Table 2 implies.
price_per_hour = None
# An OpenAI-compatible endpoint (e.g. `vllm serve`) to time with streaming requests; "" times the
# judge in this process.
endpoint = ""
# The model name the endpoint serves ("" keeps the registry's: the model's Hugging Face id).
endpoint_model = ""

# %%
from tefbook.parameters import check_parameters

check_parameters("08_efficiency")  # a misspelt -p name fails here, naming the parameters above

import numpy as np

from chapters import ch08 as eff
from chapters.prose import data_markdown
from companion.labels import LANG_LABELS
from companion.provenance import run_label
from companion.runs import parse_list
from companion.tables import bold_best, format_columns
from tefcore.mind.load import evaluation_pairs, load_posts
from tefcore.mind.release import describe_data
from tefcore.paper.tables import MODEL_LABELS, efficiency_summary, load_table

lang_list = parse_list(langs)
spec = eff.judge_spec(model, endpoint, endpoint_model)
data = describe_data(data_dir, lang_list)
pairs = [p for lang in lang_list for p in evaluation_pairs(load_posts(lang, data_dir))]
queries = eff.query_table(pairs, variant=prompt)

# %% tags=["hide-input"]
display(Markdown(data_markdown(data) + f" The judge is **{spec.display_name or spec.name}** "
                 f"(`{spec.name}`, {spec.backend} backend), asked the `{prompt}` prompt."))

# %% [markdown]
# ## The paper's Table 2
#
# As published (tokens in millions, TTFT in milliseconds, cost in US dollars). "Voting" stands for MV
# and SV, which issue the same queries. Every number of this table is the paper's, measured on GPUs.

# %%
table2 = load_table("table2")
eff.paper_table(table2)

# %% [markdown]
# What the paper says about it: TEF's token count equals the voting methods' (same queries), its
# TTFT differs from theirs by about two milliseconds, and the sentence-level methods cost roughly three
# times as much as Direct. The ratios recomputed from the table, one row per model:

# %%
format_columns(eff.paper_ratios(table2), digits=2)

# %% [markdown]
# ## Reading Table 2 per query
#
# The table gives totals but not the number of queries behind them, so we supply it from the size of
# the full release (protocol §2): one Direct query per evaluation pair, and one sentence query per
# sentence of each pair's post, about pairs × mean sentences per post under the reference rule (the
# per-pair mean is not published; on the sample it is close to the per-post mean, chapter 3).
#
# Two readings follow.
#
# * **Tokens per query.** Dividing the token totals by the query counts gives the tokens per query of
#   each model. They come out smaller than the paper's prompt takes without any text (instruction,
#   dimension and both sides' positions: see the count of our prompt below), and a whole post takes
#   hardly more than a single sentence. Table 2's token column therefore cannot be the prompt tokens of
#   these queries. What it counts is not stated; we report our own counts below and keep the paper's
#   column as printed.
# * **Cost.** If the GPU served the queries one after another and each lasted about its time to first
#   token (the answer is a single token), the busy time is queries × TTFT, and the stated cost divided
#   by it gives an hourly price. All rows give nearly the same price, which supports this reading;
#   their median is the default `price_per_hour` of this chapter.
#
# These rows are the book's estimates, derived from the paper's numbers; they are labelled so.

# %%
workload = eff.paper_workload(table2, *eff.full_release_queries())
rate = float(workload["implied_usd_per_hour"].median()) if price_per_hour is None else float(price_per_hour)
format_columns(eff.paper_reading(workload), digits=1, **{"busy hours": 3, "$ per hour": 2, "queries": 0})

# %% tags=["hide-input"]
display(Markdown(eff.reading_markdown(workload) + f" The price used below is ${rate:.2f} per hour"
                 + (" (the paper's implied rate)." if price_per_hour is None else " (parameter `price_per_hour`).")))

# %% [markdown]
# ## Our workload: queries and prompt tokens per subset
#
# Every query of the data at hand is built by the extraction code (`tefcore.judges.run.build_requests`)
# and counted with the judge's own tokenizer, as the judge receives it: one user turn of the model's chat
# template with the generation prompt and, where the template has one, its default system turn (the
# reference rendering of protocol §4: Qwen2.5's and SmolLM2's templates add one, and it is part of what
# the model reads). The twelve subsets are the (language × dimension) cells of the paper's tables.

# %%
counted = eff.count_tokens(queries, eff.token_counter(spec))
totals = eff.token_totals(counted)
format_columns(totals.assign(lang=totals["lang"].map(LANG_LABELS | {"all": "all"})).set_index(["lang", "dimension"]),
               digits=2)

# %% tags=["hide-input"]
display(Markdown(eff.overhead_markdown(eff.prompt_overhead(spec, lang_list, prompt), spec)))
eff.token_figure(totals, spec.display_name or spec.name).show()

# %% [markdown]
# The sentence-level methods send several times as many tokens as Direct: every sentence query repeats
# the whole instruction. MV, SV and TEF send *the same* queries, so their token counts are identical by
# construction. Scaled to the size of the full release (tokens per query measured here, queries of the
# full release as above), our counts compare with Table 2's token column as follows:

# %%
estimate = eff.full_release_estimate(counted)
format_columns(estimate.assign(lang=estimate["lang"].map(LANG_LABELS | {"all": "all"})).set_index(["lang", "kind"]))

# %% tags=["hide-input"]
display(Markdown(eff.token_ratio_markdown(estimate, table2, spec.display_name or spec.name)))

# %% [markdown]
# ## Time to first token
#
# We time `ttft_sample` Direct requests and as many sentence requests, drawn at random (seed `seed`)
# from the queries above and sent one at a time, grouped by language and dimension. The local judge is
# configured as in the registry: it runs `workers` independent llama.cpp contexts of
# `n_threads / workers` threads each, so a single request is computed by one context while the others
# could serve other requests. For the embedded judge the "first token" is the distribution of the answer
# token, which is all the backend reads, so the time of one scoring call is its time to first token. The
# instruction shared by all prompts of a (language, dimension) is put in the KV cache before the first
# timed request of the group (by an untimed request around a placeholder text), so only each request's
# own text and the closing lines are evaluated: the way the extraction loop runs, and the way a server
# with prefix caching (vLLM's default) serves these prompts. `ttft_modes="warm,cold"` also times every
# prompt from an empty cache.
#
# The numbers of this section depend on the machine and on what else runs on it.

# %% tags=["nbval-ignore-output"]
timing = eff.time_judge(spec, eff.timing_sample(queries, ttft_sample, seed), parse_list(ttft_modes))
ttft = eff.summarise_latency(timing.timed, by=("mode", "kind", "lang"))
print("setting:", timing.setting)
format_columns(ttft.assign(lang=ttft["lang"].map(LANG_LABELS)).set_index(["mode", "kind", "lang"]))

# %% tags=["hide-input", "nbval-ignore-output"]
display(Markdown(eff.ttft_markdown(timing)))
eff.ttft_figure(timing.timed).show()

# %% [markdown]
# A Direct prompt carries the whole post and a sentence prompt one sentence, so a sentence request
# has fewer tokens to process before its first token; the paper's TTFT column goes the same way (its
# voting rows are faster than its Direct rows for both models). A tokenizer trained mostly on English
# (SmolLM2's) spends many more tokens on a Chinese text than on an English one of the same content
# (tokens per query in the tables above). The times of this section also depend on what else the machine
# is doing while they are measured.
#
# ## The cost of the fusion itself
#
# Once the sentence answers are in, each rule reduces them to one decision per pair. We time
# `tefcore.fusion.fuse_many` over every pair of the data at hand at once. The values are drawn at
# random: the arithmetic does not depend on them, only on the number of sentences per pair, which is
# the real one.

# %% tags=["nbval-ignore-output"]
sent = queries[queries["kind"] == "sentence"]
p = np.random.default_rng(seed).uniform(size=len(sent))
fusion = eff.time_fusion(p, sent["pair"].to_numpy(), rules=("majority_vote", "soft_vote", "tef"))
format_columns(fusion.assign(ms=fusion["seconds"] * 1e3).set_index("rule")[["documents", "sentences", "ms", "us_per_document"]], digits=3)

# %% tags=["hide-input", "nbval-ignore-output"]
display(Markdown(eff.fusion_markdown(fusion, timing)))

# %% [markdown]
# TEF costs a few more floating-point operations per sentence than a vote (an entropy and a clipped
# log-odds): against the time of a single model query it is nothing. Any difference between TEF's and the voting methods' time to first token, such as
# the one of Table 2 (the ledger rows above), cannot come from the fusion, since the fusion only starts
# after the last answer has arrived and the queries are the same.
#
# ## Side by side
#
# Busy hours are queries × mean TTFT (plus the fusion time for the sentence-level rows), as in our
# reading of Table 2, divided for our rows by the number of requests the local judge serves at once
# (its workers); cost is busy hours × price. Our rows use the warm-prefix times (how the extraction
# runs; the mean over the sample's mix of languages), count hours of this CPU machine, and price them at
# the rate above only to show the scale. The paper's rows hold only the paper's own numbers, GPU-hours
# on RTX 3090s; the queries and busy hours it does not print stay empty. Our row label is read from the
# judge's provenance. Bold marks the lowest value of each column within each source.

# %% tags=["nbval-ignore-output"]
total = totals.iloc[-1]
mean_ms = timing.mean_ms()
ours = eff.method_costs(int(total["direct_queries"]), int(total["sentence_queries"]), int(total["direct_tokens"]),
                        int(total["sentence_tokens"]), float(mean_ms["direct"]), float(mean_ms["sentence"]),
                        dict(zip(fusion["rule"], fusion["seconds"])), rate, concurrency=timing.concurrency)
label = run_label(timing.provenance, data=data.kind)
side = eff.side_by_side(table2, ours, label)
bold_best(side, lower=set(side.columns), by="source",
          digits={"queries": 0, "tokens (M)": 2, "TTFT (ms)": 1, "fusion (ms)": 3, "busy hours": 3, "cost ($)": 2})

# %% tags=["hide-input", "nbval-ignore-output"]
hours = ours.set_index("method")["busy_hours"]
display(Markdown(f"{label}: sentence-level over Direct busy time {hours['voting'] / hours['direct']:.2f}, "
                 f"TEF over voting {hours['tef'] / hours['voting']:.6f}. The paper's cost of voting over Direct: "
                 + ", ".join(f"{MODEL_LABELS[m]} {r:.2f}" for m, r in efficiency_summary(table2)["cost_ratio_voting"].items())
                 + f" (requests served at once in our run: {timing.concurrency})."))

# %% [markdown]
# ## What holds
#
# * **Same queries, same tokens.** TEF, MV and SV send identical queries; the token column cannot
#   differ between them, in the paper or here.
# * **The fusion is free.** Fusing every pair of the data at hand at once takes less time than a single
#   model query (the fusion section above); the cost of a sentence-level method is its queries.
# * **Sentence-level methods cost more than Direct.** By how much is the number of sentence queries
#   per pair times the ratio of a sentence query's time to a Direct query's. The paper reports about
#   three times the cost. Our ratio (printed above) comes from our own query times; with the shared
#   instruction kept in the cache, a sentence query only processes its sentence, so it should take less
#   time than a Direct query, which processes the whole post (the times above say by how much here).
# * **Not reproduced: the paper's token totals.** They amount to fewer tokens per query than the
#   paper's prompt itself, so they cannot be prompt tokens of these queries (see "Reading Table 2 per
#   query").
#
# The e5 judges of chapters 4-7 and 9 read no prompt: they embed the bare text (a post for Direct, a
# sentence otherwise) with multilingual-e5-small, so their cost is one embedding per text, and the
# same reasoning applies: the sentence-level rules share one set of embeddings and differ only in the
# fusion.
