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
#    hourly price that the stated costs imply.
# 2. It measures the same quantities for the judge at hand, by default the embedded SmolLM2-135M on
#    this machine's CPU: prompt tokens counted with the model's own tokenizer and chat template, time
#    to first token on a sample of requests, and the time the fusion rules themselves take.
# 3. It puts both side by side. The paper's rows are GPU numbers from the paper; ours are CPU numbers
#    from this run. They answer the same questions on very different hardware and model sizes, so the
#    comparison is between *ratios* (sentence-level over Direct, TEF over voting), never between
#    absolute times: nothing here reproduces the RTX 3090 figures.
#
# To time a vLLM model the way the paper did (client-side, streaming requests to an OpenAI-compatible
# server), start `vllm serve MODEL` on a GPU box and execute the chapter with
# `-p endpoint http://127.0.0.1:8000/v1 -p endpoint_model MODEL -p model qwen2.5-7b`. The request
# goes through the `openai` backend; its key is read from the environment variable `VLLM_API_KEY`
# (any string for a server without authentication), never from a parameter.

# %% tags=["parameters"]
# The LLM judge whose tokenizer counts the prompts and which is timed: a registry name or a .gguf path.
model = "local"
langs = "en,zh"
prompt = "original"
# Directory holding mind_en.jsonl and mind_zh.jsonl. None: $MIND_DATA_DIR, else <repository>/data.
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
# The model name the endpoint serves ("" keeps the registry's vllm-serve default).
endpoint_model = ""

# %%
from tefcore.chapters.parameters import check_parameters

check_parameters("08_efficiency")  # a misspelt -p name fails here, naming the parameters above

import os
import warnings

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from tqdm import TqdmWarning

warnings.filterwarnings("ignore", category=TqdmWarning)  # no ipywidgets here: tqdm prints text

from tefcore.chapters import efficiency as eff
from tefcore.judges import make_backend
from tefcore.mind.load import evaluation_pairs, load_posts
from tefcore.chapters.paper import MODEL_LABELS, efficiency_summary, load_table
from tefcore.chapters.figures import setup_notebook
from tefcore.mind.prompts import build_prompt
from tefcore.judges.registry import resolve_model
from tefcore.mind.release import FULL_RELEASE

_ = setup_notebook()
LANG_NAMES = {"zh": "Chinese", "en": "English"}
KIND_COLORS = {"direct": "#4e79a7", "sentence": "#f28e2b"}
lang_list = [x.strip() for x in langs.split(",") if x.strip()]
spec = resolve_model(model)
if spec.backend not in ("llama_cpp", "vllm", "openai"):
    raise ValueError(f"chapter 8 times LLM judges that read a prompt; {spec.name!r} is a {spec.backend} "
                     "judge (the e5 judges embed the bare text, see the note at the end)")
pairs = [p for lang in lang_list for p in evaluation_pairs(load_posts(lang, data_dir))]
queries = eff.query_table(pairs, variant=prompt)
print(f"judge: {spec.display_name} ({spec.backend}); prompt: {prompt}; "
      f"{len(pairs):,} evaluation pairs in {', '.join(LANG_NAMES[x] for x in lang_list)}")

# %% [markdown]
# ## The paper's Table 2
#
# As published (tokens in millions, TTFT in milliseconds, cost in US dollars). "Voting" stands for MV
# and SV, which issue the same queries.

# %%
table2 = load_table("table2")
paper_wide = table2.pivot_table(index=["model", "method"], columns="quantity", values="value",
                                sort=False)[["tokens", "ttft", "cost"]]
paper_wide.index = paper_wide.index.set_levels(paper_wide.index.levels[0].map(MODEL_LABELS), level=0)
paper_wide.columns = ["tokens (M)", "TTFT (ms)", "cost ($)"]
paper_wide

# %% [markdown]
# What the paper says about it: TEF's token count equals the voting methods' (same queries), its
# TTFT differs from theirs by about two milliseconds, and the sentence-level methods cost roughly three
# times as much as Direct. The ratios recomputed from the table:

# %%
efficiency_summary(table2).rename(index=MODEL_LABELS).round(2)

# %% [markdown]
# ## Reading Table 2 per query
#
# The table gives totals but not the number of queries behind them, so we supply it from the size of
# the full release (protocol §2): one Direct query per evaluation pair (10,330 + 4,621 = 14,951), and
# one sentence query per sentence of each pair's post, about pairs × mean sentences per post under the
# reference rule (10,330 × 4.35 + 4,621 × 5.84 ≈ 71,900; the per-pair mean is not published, and on
# the sample it is within 1.5 % of the per-post mean).
#
# Two readings follow.
#
# * **Tokens per query.** Dividing the token totals by the query counts gives about 33 tokens per
#   Direct query and 38 per sentence query: fewer for a whole post than for a single sentence, and
#   fewer than the paper's prompt takes without any text (instruction, dimension and both sides'
#   positions: about a hundred tokens or more, see the count below). Table 2's token column cannot be
#   the prompt tokens of these queries. What it counts is not stated; we report our own counts below
#   and keep the paper's column as printed.
# * **Cost.** If the GPU served the queries one after another and each lasted about its time to first
#   token (the answer is a single token), the busy time is queries × TTFT, and the stated cost divided
#   by it gives an hourly price. All six rows give nearly the same price, which supports this reading;
#   their median is the default `price_per_hour` of this chapter.

# %%
direct_full = sum(FULL_RELEASE[x]["pairs"] for x in ("zh", "en"))
sentence_full = sum(FULL_RELEASE[x]["pairs"] * FULL_RELEASE[x]["mean_sentences"] for x in ("zh", "en"))
workload = eff.paper_workload(table2, direct_full, sentence_full)
implied_rate = float(workload["implied_usd_per_hour"].median())
rate = implied_rate if price_per_hour is None else float(price_per_hour)
shown = workload.assign(model=workload["model"].map(MODEL_LABELS)).set_index(["model", "method"])
shown.columns.name = None
print(f"full-release queries: Direct {direct_full:,}, sentence ≈ {sentence_full:,.0f}")
print(f"implied RTX 3090 price: median ${implied_rate:.2f} per GPU-hour "
      f"(range {workload['implied_usd_per_hour'].min():.2f}-{workload['implied_usd_per_hour'].max():.2f})")
print(f"price used below: ${rate:.2f} per hour"
      + (" (the paper's implied rate)" if price_per_hour is None else " (parameter price_per_hour)"))
shown[["queries", "tokens_per_query", "busy_hours", "implied_usd_per_hour"]].round(
    {"queries": 0, "tokens_per_query": 1, "busy_hours": 3, "implied_usd_per_hour": 3})

# %% [markdown]
# ## Our workload: queries and prompt tokens per subset
#
# Every query of the data at hand is built by the extraction code (`tefcore.judges.run.build_requests`)
# and counted with the judge's tokenizer, as the judge receives it: one user turn of the model's chat
# template with the generation prompt, no system turn (protocol §4). The twelve subsets are the
# (language × dimension) cells of the paper's tables.

# %%
if spec.backend == "llama_cpp":
    counter = eff.llama_token_counter(spec.options.get("model_path"),
                                      chat_template_kwargs=spec.options.get("chat_template_kwargs"))
elif spec.backend == "vllm":
    counter = eff.hf_token_counter(spec.options["model"], spec.options.get("chat_template_kwargs"))
else:
    counter = None  # remote APIs: their tokenizers are not available here
if counter is None:
    raise ValueError(f"no local tokenizer for {spec.name!r}; count tokens with a local or vLLM model")
counted = eff.count_tokens(queries, counter)
totals = eff.token_totals(counted)
bare = counter([build_prompt("x", "Economy", x, prompt) for x in lang_list])
print("the prompt around a one-letter text (Economy):",
      ", ".join(f"{LANG_NAMES[x]} {n} tokens" for x, n in zip(lang_list, bare)))
totals_shown = totals.assign(lang=totals["lang"].map(LANG_NAMES | {"all": "all"})).set_index(["lang", "dimension"])
totals_shown.round(2)

# %% tags=["hide-input"]
sub = totals[totals["dimension"] != "Total"]
labels = sub["lang"] + " · " + sub["dimension"]
fig = go.Figure()
for kind in ("direct", "sentence"):
    fig.add_bar(x=labels, y=sub[f"{kind}_tokens"] / 1e3, name="Direct" if kind == "direct" else
                "sentence-level (MV, SV, TEF)", marker_color=KIND_COLORS[kind],
                customdata=sub[f"{kind}_queries"],
                hovertemplate="%{x}<br>%{y:.1f}k tokens in %{customdata} queries<extra></extra>")
fig.update_layout(title=f"Prompt tokens per subset ({spec.display_name} tokenizer)", barmode="group",
                  yaxis_title="prompt tokens (thousands)", height=420, legend=dict(orientation="h", y=-0.35))
fig.show()

# %% [markdown]
# The sentence-level methods send several times as many tokens as Direct: every sentence query repeats
# the whole instruction. MV, SV and TEF send *the same* queries, so their token counts are identical by
# construction. Scaled to the size of the full release (tokens per query measured here, queries of the
# full release as above), our counts compare with Table 2's token column as follows:

# %%
estimate = eff.full_release_estimate(counted)
estimate["lang"] = estimate["lang"].map(LANG_NAMES | {"all": "all"})
ratio = (estimate.query("lang == 'all' and kind == 'sentence'")["full_tokens_m"].iloc[0]
         / estimate.query("lang == 'all' and kind == 'direct'")["full_tokens_m"].iloc[0])
paper_ratio = efficiency_summary(table2)["token_ratio"]
print(f"sentence-level / Direct tokens: ours {ratio:.2f} ({spec.display_name}), paper "
      + ", ".join(f"{MODEL_LABELS[m]} {r:.2f}" for m, r in paper_ratio.items()))
estimate.set_index(["lang", "kind"]).round(1)

# %% [markdown]
# ## Time to first token
#
# We time `ttft_sample` Direct requests and as many sentence requests, drawn at random (seed `seed`)
# from the queries above and sent one at a time, grouped by language and dimension. The local judge is
# configured as in the registry: it runs `workers` independent llama.cpp contexts of
# `n_threads / workers` threads each (two single-thread contexts on two cores by default), so a single
# request is computed by one context while the others could serve other requests. For the embedded
# judge the "first token" is the distribution of the answer token, which is all the backend reads, so
# the time of one scoring call is its time to first token. The instruction shared by all prompts of a
# (language, dimension) is put in the KV cache before the first timed request of the group (by an
# untimed request around a placeholder text), so only each request's own text and the closing lines
# are evaluated: the way the extraction loop runs, and the way a server with prefix caching (vLLM's
# default) serves these prompts. `ttft_modes="warm,cold"` also times every prompt from an empty cache.
#
# The numbers of this section depend on the machine and on what else runs on it; they are not checked
# when the book is tested.

# %% tags=["nbval-ignore-output"]
sample = pd.concat([eff.sample_queries(queries, ttft_sample, kind, seed=seed) for kind in ("direct", "sentence")],
                   ignore_index=True)
timed = []
if endpoint:
    api_spec = resolve_model("vllm-serve")
    judge = make_backend(api_spec, base_url=endpoint, **({"model": endpoint_model} if endpoint_model else {}))
    ordered = sample.sort_values(["lang", "dimension"], kind="stable").reset_index(drop=True)
    seconds = judge.measure_ttft(eff.requests_from(ordered))
    timed.append(ordered.assign(seconds=np.asarray(seconds, dtype=float), mode="streaming"))
    setting = f"streaming requests to {endpoint}"
elif spec.backend == "llama_cpp":
    for mode in [m.strip() for m in ttft_modes.split(",") if m.strip()]:
        if mode not in ("warm", "cold"):
            raise ValueError(f"ttft_modes takes 'warm' and/or 'cold', got {mode!r}")
        judge = make_backend(spec, reuse_prefix=mode == "warm")
        timed.append(eff.time_queries(lambda r: judge.score([r]), sample, warm_prefix=mode == "warm")
                     .assign(mode=mode))
        del judge
    setting = "in-process llama.cpp on this machine's CPU"
else:
    raise ValueError(f"set endpoint= to time {spec.name!r} (e.g. the URL of `vllm serve`)")
timed = pd.concat(timed, ignore_index=True)
ttft = eff.summarise_latency(timed, by=("mode", "kind", "lang"))
print("setting:", setting)
ttft.assign(lang=ttft["lang"].map(LANG_NAMES)).set_index(["mode", "kind", "lang"]).round(1)

# %% tags=["hide-input", "nbval-ignore-output"]
fig = go.Figure()
for (mode, kind, lang), g in timed.groupby(["mode", "kind", "lang"], sort=True):
    fig.add_box(y=g["seconds"] * 1e3, name=f"{kind} · {LANG_NAMES[lang]} · {mode}", boxmean=True,
                marker_color=KIND_COLORS[kind])
fig.update_layout(title="Time to first token per request (ours, this machine)", yaxis_title="ms",
                  yaxis_type="log", height=420, showlegend=False)
fig.show()

# %% [markdown]
# A Direct prompt carries the whole post and a sentence prompt one sentence, so a sentence request
# has fewer tokens to process before its first token; the paper's TTFT column goes the same way
# (14-15 ms for voting against 24-29 ms for Direct). SmolLM2's tokenizer was trained for English and
# spends far more tokens on a Chinese text than on an English one of the same content (tokens per
# query in the table above), so its Chinese requests are the slow ones.
#
# ## The cost of the fusion itself
#
# Once the sentence answers are in, each rule reduces them to one decision per pair. We time
# `tefcore.fusion.fuse_many` over every pair of the data at hand at once (the values are drawn at random:
# the arithmetic does not depend on them, only on the number of sentences per pair, which is the real
# one).

# %% tags=["nbval-ignore-output"]
sent = queries[queries["kind"] == "sentence"]
rng = np.random.default_rng(seed)
fusion = eff.time_fusion(rng.uniform(size=len(sent)), sent["pair"].to_numpy(),
                         rules=("majority_vote", "soft_vote", "tef"))
fusion_seconds = dict(zip(fusion["rule"], fusion["seconds"]))
fusion.assign(ms=fusion["seconds"] * 1e3).set_index("rule")[["documents", "sentences", "ms",
                                                              "us_per_document"]].round(3)

# %% [markdown]
# TEF costs a few more floating-point operations per sentence than a vote (an entropy and a clipped
# log-odds), which amounts to a microsecond per post or less: against the milliseconds of a single model
# query it is nothing. Any difference between TEF's and the voting methods' time to first token, such as the
# 1.4-2.1 ms of Table 2, cannot come from the fusion, since the fusion only starts after the last answer
# has arrived and the queries are the same.
#
# ## Side by side
#
# Busy hours are queries × mean TTFT (plus the fusion time for the sentence-level rows), as in our
# reading of Table 2, divided for our rows by the number of requests the local judge serves at once
# (its workers); cost is busy hours × price. Our rows use the warm-prefix times (how the
# extraction runs; the mean over the sample's mix of languages), count hours of this CPU machine, and price them at the rate above only to show the
# scale: the paper's rows are GPU-hours on RTX 3090s, ours are CPU-hours of a 2-core machine running a
# 135M-parameter model.

# %% tags=["nbval-ignore-output"]
mode = "streaming" if endpoint else ("warm" if "warm" in set(timed["mode"]) else "cold")
# requests the judge serves at once: the local judge's independent workers; an endpoint is read as the
# paper's table is, one request after another
concurrency = 1 if endpoint else max(1, min(int(spec.options.get("workers", 1)), int(spec.options.get("n_threads", 1))))
print(f"requests served at once: {concurrency}")
mean_ms = timed[timed["mode"] == mode].groupby("kind")["seconds"].mean() * 1e3
total = totals.iloc[-1]
ours = eff.method_costs(int(total["direct_queries"]), int(total["sentence_queries"]),
                        int(total["direct_tokens"]), int(total["sentence_tokens"]),
                        float(mean_ms["direct"]), float(mean_ms["sentence"]), fusion_seconds, rate,
                        concurrency=concurrency)
hardware = f"served at {endpoint}" if endpoint else f"this machine, {os.cpu_count()} CPU cores"
ours.insert(0, "source", f"ours: {spec.display_name}, {hardware}, MIND data at hand")
paper_rows = workload.assign(
    source="paper: " + workload["model"].map(MODEL_LABELS) + ", RTX 3090, full release",
    fusion_ms=np.nan, cost=workload["cost_usd"])[["source", "method", "queries", "tokens_m", "ttft_ms",
                                                  "fusion_ms", "busy_hours", "cost"]]
side = pd.concat([paper_rows, ours], ignore_index=True).set_index(["source", "method"])
HOURS, FUSION = "busy hours (paper: GPU, ours: CPU)", "fusion (ms, all pairs)"
side.columns = ["queries", "tokens (M)", "TTFT (ms)", FUSION, HOURS, "cost ($)"]
side = side.round({"tokens (M)": 3, "TTFT (ms)": 1, FUSION: 3, HOURS: 4, "cost ($)": 4})
side["queries"] = side["queries"].round().astype(int)
side[FUSION] = side[FUSION].astype(object).where(side[FUSION].notna(), "not reported")
side

# %% tags=["nbval-ignore-output"]
cost_ratio = ours.set_index("method")["busy_hours"]
print(f"ours: sentence-level / Direct busy time {cost_ratio['voting'] / cost_ratio['direct']:.2f}; "
      f"TEF / voting {cost_ratio['tef'] / cost_ratio['voting']:.6f}")
print("paper: cost ratio voting / Direct "
      + ", ".join(f"{MODEL_LABELS[m]} {r:.2f}" for m, r in efficiency_summary(table2)["cost_ratio_voting"].items()))

# %% [markdown]
# ## What holds
#
# * **Same queries, same tokens.** TEF, MV and SV send identical queries; the token column cannot
#   differ between them, in the paper or here.
# * **The fusion is free.** Fusing every pair of the data at hand at once takes about a millisecond
#   or less, TEF included, against seconds of model time per query on this CPU and milliseconds on a
#   GPU; the cost of a sentence-level method is its queries.
# * **Sentence-level methods cost more than Direct.** By how much is the number of sentence queries
#   per pair times the ratio of a sentence query's time to a Direct query's. The paper reports about
#   three times the cost. Our ratio (printed above) comes from our own query times; with the shared
#   instruction kept in the cache, a sentence query only processes its sentence, so on this CPU it is
#   much faster than a Direct query, which processes the whole post.
# * **Not reproduced: the paper's token totals.** They amount to fewer tokens per query than the
#   paper's prompt itself, so they cannot be prompt tokens of these queries (see "Reading Table 2 per
#   query").
#
# The e5 judges of chapters 4-7 and 9 read no prompt: they embed the bare text (a post for Direct, a
# sentence otherwise) with multilingual-e5-small, so their cost is one embedding per text, and the
# same reasoning applies: the sentence-level rules share one set of embeddings and differ only in the
# fusion.
