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
# * **w/o Entropy** — every $w_i = 1$: the decision is the sign of $\sum_i \ell(p_i)$, the naive
#   Bayes sum of chapter 1 without tempering;
# * **w/o Log-Odds** — the entropy-weighted mean of the probabilities,
#   $m_w = \sum_i w_i p_i / \sum_i w_i$, compared with 0.5.
#
# Table 4 of the paper reports both ablations for Qwen2.5-7B and DeepSeek-V3.2. Its text says
# that on Qwen2.5-7B both variants keep most of TEF's gain over Soft Vote, that on DeepSeek-V3.2
# both fall below Soft Vote on average, and that the largest drop (about 23 points) is on
# DeepSeek-V3.2's English Environment dimension. This chapter runs the same ablation on our CPU
# judges, with paired tests, beside the paper's rows.

# %% tags=["parameters"]
models = "local,e5-zeroshot,e5-crossfit"  # judges (registry names), comma-separated
prompt = "original"  # prompt variant of the caches
langs = "zh,en"  # languages, in table order
cache_dir = "data/caches"  # root of <model>/<prompt>/<lang>.jsonl
n_boot = 1000  # bootstrap replicates
invalid = "drop"  # handling of unreadable answers: "drop" or "reference"
paper_models = "qwen2.5-7b,deepseek-v3.2"  # the paper's ablated models
seed = 0  # bootstrap seed

# %%
from tefcore.chapters.parameters import check_parameters

check_parameters("06_ablation")  # a misspelt -p name fails here, naming the parameters above

import pandas as pd
from IPython.display import Markdown, display

from tefcore.chapters import experiments as ex
from tefcore.chapters import paper
from tefcore.chapters import presentation as pres
from tefcore.chapters import runs as rn
from tefcore.chapters.presentation import RULE_LABELS
from tefcore.chapters.figures import setup_notebook

setup_notebook()
pd.set_option("display.float_format", "{:.1f}".format)
pd.set_option("display.max_columns", 40)
pd.set_option("display.width", 200)

ABLATION = ["tef", "tef_without_entropy", "tef_without_log_odds"]
RULES = ["soft_vote", *ABLATION]
lang_list = rn.parse_list(langs)
runs = rn.chapter_runs(models, prompt, lang_list, cache_dir)
display(Markdown(runs.notes_markdown))
display(pres.judge_table(runs.models))
pred = ex.predict_runs(runs, rules=RULES, invalid=invalid)
table = ex.score_runs(pred)

# %% [markdown]
# ## Table 4, ours beside the paper's
#
# Rows labelled **ours, CPU judge** are computed here on the MIND sample; rows labelled
# **paper, GPU/API LLMs** are the paper's Table 4 (its printed Average). Soft Vote is not part of
# the paper's Table 4; our rows include it because the paper's text measures the ablations
# against it (its Soft Vote numbers are in Table 3 and in chapter 5).

# %% tags=["full-width"]
t4 = paper.load_table("table4")
wide = ex.side_by_side(table, t4, rules=RULES, paper_models=rn.parse_list(paper_models), langs=lang_list)
for lang_name in wide.index.get_level_values("language").unique():
    display(Markdown(f"**{lang_name}**"))
    display(wide.xs(lang_name, level="language").dropna(how="all"))

# %% [markdown]
# ## Averages with intervals

# %% tags=["full-width"]
cis = ex.labelled_intervals(ex.average_intervals(pred, n_boot=n_boot, random_state=seed))
display(ex.interval_table(cis, RULES))

# %% tags=["hide-input", "full-width"]
fig = pres.dot_interval_figure(cis, x="method", y="estimate", low="low", high="high", color="lang", row="judge",
                               col="metric", x_order=[RULE_LABELS[r] for r in RULES], color_order=lang_list,
                               y_title="Average (%)",
                               title="Full TEF, its two ablations and Soft Vote: Average with 95% bootstrap intervals")
fig.show()

# %% [markdown]
# ## Paired comparisons: full TEF against each ablation
#
# Same pairs, same resampling: a positive difference means the component that was removed helped.
# McNemar's b counts pairs only full TEF gets right, c pairs only the ablation gets right.

# %% tags=["full-width"]
rows = []
for ablation in ABLATION[1:]:
    for metric in ("accuracy", "macro_f1"):
        rows.append(ex.compare_runs(pred, "tef", ablation, metric=metric, n_boot=n_boot, random_state=seed))
cmp = pd.concat(rows, ignore_index=True)
cmp["judge"] = cmp["model"].map(pres.judge_label)
cmp["removed"] = cmp["b"].map({"tef_without_entropy": "entropy weighting", "tef_without_log_odds": "log-odds"})
cmp["TEF - ablation"] = [pres.format_interval(d, lo, hi, signed=True)
                         for d, lo, hi in zip(cmp["difference"], cmp["low"], cmp["high"])]
cmp_show = cmp.assign(p_bootstrap=[pres.format_p(p, n_boot) for p in cmp["p_bootstrap"]],
                      p_mcnemar=[pres.format_p(p) for p in cmp["p_mcnemar"]])
display(cmp_show.set_index(["judge", "lang", "removed", "metric"])[
    ["TEF - ablation", "p_bootstrap", "mcnemar_b", "mcnemar_c", "p_mcnemar"]])

# %% [markdown]
# ## Against Soft Vote, as the paper reads it
#
# The paper measures each ablation by how much of TEF's margin over Soft Vote it keeps. The table
# gives the Average accuracy margin over Soft Vote of TEF and of each ablation, ours and the
# paper's (the paper's from its Tables 3 and 4).

# %%
avg = table[table["dimension"] == "Average"].pivot_table(index=["model", "lang"], columns="rule",
                                                           values="accuracy", sort=False).reset_index()
ours_margin = pd.DataFrame({"source": "ours, CPU judge", "judge": avg["model"].map(pres.judge_label),
                            "lang": avg["lang"],
                            **{RULE_LABELS[r]: avg[r] - avg["soft_vote"] for r in ABLATION}})
t3 = paper.load_table("table3")
pv = paper.ablation_versus_soft_vote(t3, t4).xs("accuracy", level="metric").reset_index()
pv = pv.sort_values(["model", "lang"], key=lambda c: c.map(
    {m: i for i, m in enumerate(paper.MODELS)} if c.name == "model" else {"zh": 0, "en": 1}))
paper_margin = pd.DataFrame({"source": "paper, GPU/API LLMs", "judge": pv["model"].map(paper.MODEL_LABELS),
                             "lang": pv["lang"],
                             **{RULE_LABELS[r]: pv[f"margin_{r}"] for r in ABLATION}})
margins = pd.concat([ours_margin, paper_margin], ignore_index=True).set_index(["source", "judge", "lang"])
display(margins)

# %% [markdown]
# ## What to expect, and why
#
# For a binary decision the three variants differ only in how they weigh the *same* sentence
# answers:
#
# * TEF's score is $\sum_i w(p_i)\,\ell(p_i)$. Near $p = 0.5$, $w(p) \approx \ell^2/(8\log 2)$, so a
#   sentence's contribution grows like $\ell^3$: lukewarm answers count almost nothing.
# * w/o Entropy sums $\ell(p_i)$: lukewarm answers count in proportion to their log-odds, and a
#   single answer near 0 or 1 can be worth up to $M = 10$.
# * w/o Log-Odds averages $p_i$ with weights $w_i$: no answer can be worth more than its weight, so
#   a decisive sentence cannot outvote many moderate ones the way it can under TEF.
#
# When a judge's sentence probabilities all lie in a narrow band on one side of 0.5 (SmolLM2), the
# three scores have the same sign on almost every post, and the ablation changes almost nothing. When the
# judge's decisive answers are trustworthy, the two components help in the way the paper
# describes. When they are not (a detector that is sure for the wrong reasons), emphasising them
# can hurt, and an ablation can score *higher* than full TEF: the paired intervals above say which
# of these our judges are.
