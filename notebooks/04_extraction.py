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
#   distribution went to a well-formed answer. On a CPU the default is **SmolLM2-135M-Instruct**, a
#   GGUF file shipped inside a PyPI wheel and run with llama.cpp. On a GPU box any registry name
#   (`qwen2.5-7b`, `llama3-8b`, `qwen3-14b`) runs the paper's models with vLLM, and `deepseek-v3.2` or
#   `gpt-4o-mini` call an OpenAI-compatible API. A path to any `.gguf` file also works.
# * **e5-zeroshot** compares each text's multilingual-e5-small embedding with a description of each
#   side's two positions; no prompt, no training labels.
# * **e5-crossfit** is a logistic regression on post embeddings, fitted per language and dimension
#   with cross-fitting over posts, so that no post is scored by a model that saw its label.
#
# The full run of the paper's setting on a GPU box, writing the caches that chapters 5-9 read:
#
# ```bash
# jupytext --to ipynb notebooks/04_extraction.py
# papermill notebooks/04_extraction.ipynb out.ipynb -p models qwen2.5-7b -p limit 0 -p out data/caches
# ```
#
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

import warnings

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from IPython.display import display
from plotly.subplots import make_subplots
from tqdm import TqdmWarning

warnings.filterwarnings("ignore", category=TqdmWarning)  # no ipywidgets here: tqdm prints text

from tefcore.chapters import experiments as ex
from tefcore.chapters import presentation as pres
from tefcore.chapters import runs as rn
from tefcore.judges import Backend, make_backend
from tefcore.judges.cache import ProvenanceMismatch
from tefcore.mind.load import evaluation_pairs, load_posts
from tefcore.judges.run import cache_path, run_extraction
from tefcore.fusion import weights
from tefcore.chapters.figures import setup_notebook
from tefcore.judges.registry import LLM_BACKENDS, ModelSpec, resolve_model

_ = setup_notebook()
LANG_NAMES = {"zh": "Chinese", "en": "English"}
model_list, lang_list = rn.parse_list(models), rn.parse_list(langs)
# A limited run writes under <out>/limit-<n>/, so that it is never mixed with (or mistaken for) a
# complete cache of the same judge.
out_dir = rn.repo_path(out) if not limit else rn.repo_path(out) / f"limit-{limit}"
SCRATCH = rn.repo_path("_build").resolve()
all_pairs = {lang: evaluation_pairs(load_posts(lang, data_dir)) for lang in lang_list}
pairs = {lang: p[:limit] if limit else p for lang, p in all_pairs.items()}
specs = {m: resolve_model(m) for m in model_list}
in_scope = pd.DataFrame([(p.post_id, p.dimension) for x in lang_list for p in pairs[x]],
                        columns=["post_id", "dimension"])


def extract(judge: Backend, spec: ModelSpec, lang: str) -> dict[str, object]:
    """Run tefcore.judges.run for one judge and language; return a row of the run table."""
    path = cache_path(out_dir, spec.name, prompt, lang)
    try:
        report = run_extraction(judge, pairs[lang], path, variant=prompt, progress=False)
    except ProvenanceMismatch:
        if SCRATCH not in path.resolve().parents:
            raise  # a cache outside the scratch folder is never moved
        path.replace(path.with_name(path.name + ".stale"))  # left by an older version of the judge
        report = run_extraction(judge, pairs[lang], path, variant=prompt, progress=False)
    return {"judge": pres.judge_label(spec.name), "language": LANG_NAMES[lang], "pairs": report.pairs_done,
            "prompts scored": report.prompts, "seconds": report.seconds, "prompts/s": report.prompts_per_second}


print({LANG_NAMES[x]: f"{len(pairs[x])} of {len(all_pairs[x])} pairs" for x in lang_list})
pres.judge_table([s.name for s in specs.values()])

# %% [markdown]
# ## Running the extraction
#
# For each judge and language, `run_extraction` segments each post (reference rule, protocol §3),
# builds the Direct prompt and one prompt per sentence, scores them, and appends one record per pair
# to the cache, with the run's provenance (model file and its SHA-256, prompt template hash,
# segmentation rule, library versions). A cache that already holds a pair under the same provenance
# is resumed, not recomputed (a stale cache in the scratch folder `_build/`, left by an older version
# of a judge, is set aside as `*.stale`; anywhere else a cache of another provenance is an error).
#
# With a `limit`, only the first pairs of each language are given to the judge, and the caches go to
# `<out>/limit-<n>/`. This matters for the two e5 judges: the zero-shot judge sets its temperature
# from the sentences it is given, and the cross-fitted judge is trained on the posts it is given (with
# a dozen posts, most of its folds hold one class only and it falls back to the fold's prior). A
# limited run is a smoke test of the pipeline; the committed caches were made with `limit 0`.

# %%
reports = []
for spec in specs.values():
    judge = make_backend(spec)
    reports += [extract(judge, spec, lang) for lang in lang_list]
    del judge
runs = rn.load_runs([s.name for s in specs.values()], prompt, lang_list, out_dir)
runs = rn.Runs(runs.frame.merge(in_scope, on=["post_id", "dimension"]), runs.provenance, runs.missing)
for note in runs.missing:
    print("note:", note)
print("pairs read back:", {f"{m}/{LANG_NAMES[x]}": int(n) for m, x, n in
                           runs.provenance[["model", "lang", "n_pairs"]].itertuples(index=False)})

# %% tags=["nbval-ignore-output"]
pd.DataFrame(reports).set_index(["judge", "language"]).round(2)

# %% [markdown]
# The timing table above is the only output of this chapter that depends on the machine. A run that
# resumes a complete cache scores nothing and shows zero prompts.
#
# ## How each number was obtained
#
# Every probability in a cache records its *source*: `logprobs` when both letters were found in the
# answer distribution, `partial` when only one was (the other bounded by the probability left
# outside the list), `generated_text` (only under the reference release's reading), `invalid` when no
# letter could be read (stored as NaN, never as 0.5), and `embedding` for the e5 judges. The local
# backend reads the logits over the whole vocabulary, so it never misses a letter.

# %%
frame = runs.frame
flat = frame[["model", "lang", "sentence_sources", "sentence_masses", "sentences"]].explode(
    ["sentence_sources", "sentence_masses", "sentences"])
sources = pd.concat([
    frame[["model", "lang", "direct_source"]].rename(columns={"direct_source": "source"}).assign(kind="Direct"),
    flat[["model", "lang", "sentence_sources"]].rename(columns={"sentence_sources": "source"}).assign(kind="sentences"),
])
shares = (sources.groupby(["model", "lang", "kind"], sort=False)["source"].value_counts(normalize=True)
          .mul(100).unstack(fill_value=0.0))
counts = sources.groupby(["model", "lang", "kind"], sort=False).size().rename("numbers")
source_table = shares.join(counts).reset_index()
source_table["model"] = source_table["model"].map(pres.judge_label)
source_table["lang"] = source_table["lang"].map(LANG_NAMES)
source_table.set_index(["model", "lang", "kind"]).round(1)

# %% [markdown]
# ## C+S mass (LLM judges)
#
# The mass is the probability the judge put on a well-formed answer (any spelling of C or S). A
# judge that follows the instruction puts nearly all of it there; a low mass means that P(change)
# was renormalised from a small remainder and deserves less trust. SmolLM2 gives the two letters well
# under half of its answer distribution, and less in Chinese than in English: another sign that it
# does not really follow the instruction. The e5 judges have no mass.

# %%
llm_models = [m for m, s in specs.items() if s.backend in LLM_BACKENDS]
masses = pd.concat([
    frame[["model", "lang", "direct_mass"]].rename(columns={"direct_mass": "mass"}).assign(kind="Direct"),
    flat[["model", "lang", "sentence_masses"]].rename(columns={"sentence_masses": "mass"}).assign(kind="sentences"),
])
masses = masses[masses["model"].isin([specs[m].name for m in llm_models])].astype({"mass": float})
if len(masses):
    mass_table = masses.groupby(["model", "lang", "kind"], sort=False)["mass"].describe(
        percentiles=[0.05, 0.5, 0.95])[["count", "mean", "5%", "50%", "95%", "min"]]
    display(mass_table.rename(index=LANG_NAMES, level=1).rename(index=pres.judge_label, level=0).round(3))
else:
    print("no LLM judge in this run")

# %% tags=["hide-input"]
if len(masses):
    fig = go.Figure()
    for (model_name, lang), g in masses.groupby(["model", "lang"], sort=False):
        fig.add_histogram(x=g["mass"], name=f"{pres.judge_label(model_name)} · {LANG_NAMES[lang]}",
                          xbins=dict(start=0, end=1.0001, size=0.02), opacity=0.7)
    fig.update_layout(title="C+S mass of every answer (Direct and sentences)", barmode="overlay",
                      xaxis_title="P(C) + P(S)", yaxis_title="answers", height=380,
                      legend=dict(orientation="h", y=-0.25))
    fig.show()

# %% [markdown]
# ## Sentence probabilities and TEF weights
#
# The left panel shows every sentence's P(change), the right one its TEF weight
# $w(p) = 1 - H(p)/\log 2$: zero for a coin flip, one for a certain answer. TEF can only gain over the
# votes when some sentences are decisive (weight near one) and others are not (chapters 1 and 2).

# %% tags=["hide-input"]
sent = flat.dropna(subset=["sentences"]).astype({"sentences": float})
sent["weight"] = weights(sent["sentences"].to_numpy())
judges = list(pd.unique(sent["model"]))
fig = make_subplots(rows=len(judges), cols=2, shared_xaxes=True, vertical_spacing=0.06, horizontal_spacing=0.08,
                    subplot_titles=[f"{pres.judge_label(m)}: {what}" for m in judges
                                    for what in ("sentence P(change)", "TEF weight w(p)")])
LANG_COLORS = {"en": "#4e79a7", "zh": "#e15759"}
for row, model_name in enumerate(judges, start=1):
    for lang, g in sent[sent["model"] == model_name].groupby("lang", sort=False):
        for col, column in ((1, "sentences"), (2, "weight")):
            fig.add_histogram(x=g[column], name=LANG_NAMES[lang], legendgroup=lang,
                              showlegend=row == 1 and col == 1, marker_color=LANG_COLORS[lang], opacity=0.6,
                              histnorm="percent", xbins=dict(start=0, end=1.0001, size=0.025), row=row, col=col)
fig.update_yaxes(title_text="% of sentences", col=1)
fig.update_xaxes(range=[0, 1])
fig.update_annotations(font_size=12)
fig.update_layout(barmode="overlay", height=260 * len(judges) + 120, title="What the judges said about each sentence",
                  legend=dict(orientation="h", y=-0.08))
fig.show()

# %%
summary = ex.posterior_summary(runs)
summary.insert(0, "judge", summary.pop("model").map(pres.judge_label))
summary["lang"] = summary["lang"].map(LANG_NAMES)
summary.drop(columns=["prompt"]).set_index(["judge", "lang"]).round(3)

# %% [markdown]
# ## The embedded LLM answers nearly the same thing to every text
#
# SmolLM2-135M is a tiny model trained for English. Asked the paper's prompt, it gives almost every
# text nearly the same P(change): a letter bias, not a judgement of the text. The table compares the
# spread of its answers with the spread of the gold sides, and shows which side it would pick.
# Chinese is outside what the model was trained on, which makes its Chinese answers even less
# informative. Its runs exercise the paper's pipeline end to end (prompt, chat template, letter
# reading, cache, fusion) on any machine; they say nothing about the paper's accuracy. The e5 judges
# are the CPU detectors in this book that carry signal about the texts.

# %%
if "local" in [s.name for s in specs.values()]:
    loc = frame[frame["model"] == "local"]
    loc_sent = sent[sent["model"] == "local"]
    bias = pd.DataFrame({
        "pairs": loc.groupby("lang")["direct"].size(),
        "Direct P(change) mean": loc.groupby("lang")["direct"].mean(),
        "Direct P(change) std": loc.groupby("lang")["direct"].std(),
        "sentence P(change) mean": loc_sent.groupby("lang")["sentences"].mean(),
        "sentence P(change) std": loc_sent.groupby("lang")["sentences"].std(),
        "Direct answers 'change' %": loc.groupby("lang")["direct"].apply(lambda s: 100 * (s >= 0.5).mean()),
        "gold 'change' %": loc.groupby("lang")["side"].apply(lambda s: 100 * (s == "change").mean()),
    }).rename(index=LANG_NAMES)
    display(bias.round(3))
else:
    print("the embedded LLM ('local') is not among the judges of this run")

# %% [markdown]
# ## Agreement with the committed caches
#
# The repository holds caches for the whole MIND sample under `data/caches`, made with `limit 0`.
# For each judge we look up the pairs of this run there and compare the numbers. The local LLM is
# deterministic: same model file, same prompt, same pairs give the same numbers, bit for bit up to
# the rounding of the JSON file. The e5 judges agree only when they saw the same data: the zero-shot
# temperature and the cross-fitted models depend on the pairs given to the judge, so a limited run
# gives other numbers than the full one (for the zero-shot judge, whose temperature only rescales the
# log-odds, the order of the sentences within a language and dimension stays the same).

# %%
ref = rn.load_runs([s.name for s in specs.values()], prompt, lang_list, reference_caches)
if ref.frame.empty:
    print(f"no committed caches under {reference_caches}")
else:
    keys = ["model", "lang", "post_id", "dimension"]
    both = frame.merge(ref.frame, on=keys, suffixes=("", "_ref"))
    same_shape = both["sentences"].map(len) == both["sentences_ref"].map(len)
    rows = []
    for (model_name, lang), g in both.groupby(["model", "lang"], sort=False):
        ok = g[same_shape.loc[g.index]]
        s_new = np.concatenate([np.asarray(x, float) for x in ok["sentences"]]) if len(ok) else np.empty(0)
        s_ref = np.concatenate([np.asarray(x, float) for x in ok["sentences_ref"]]) if len(ok) else np.empty(0)
        d = np.abs(g["direct"].to_numpy(float) - g["direct_ref"].to_numpy(float))
        rows.append({"judge": pres.judge_label(model_name), "lang": LANG_NAMES[lang], "pairs compared": len(g),
                     "same sentence count": int(len(ok)),
                     "max |Δ Direct|": float(np.nanmax(d)) if d.size else np.nan,
                     "max |Δ sentence|": float(np.nanmax(np.abs(s_new - s_ref))) if s_new.size else np.nan})
    agreement = pd.DataFrame(rows).set_index(["judge", "lang"])
    display(agreement.round(6))
    local_label = pres.judge_label("local")
    if local_label in agreement.index.get_level_values("judge"):
        local_rows = agreement.xs(local_label, level="judge")
        assert (local_rows["max |Δ Direct|"] <= 1e-9).all() and (local_rows["max |Δ sentence|"] <= 1e-9).all(), \
            "the local judge is deterministic: its numbers must equal the committed cache's"
        print(f"{local_label}: identical to the committed cache on all {int(local_rows['pairs compared'].sum())} "
              "compared pairs")
