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
# # Calibration of the post-level confidence (paper Fig. 4)
#
# A measurement pipeline thresholds or hand-checks its least certain outputs, so the confidence
# attached to a decision matters as much as the decision. The paper's Fig. 4 compares, on
# Qwen2.5-7B, the **expected calibration error** (ECE) and the **overconfidence gap** of the four
# rules in both languages, and its text states that Direct and both voting rules are overconfident
# while TEF has the lowest ECE and the smallest gap. The figure's values are not printed in the
# paper, so only that qualitative claim can be set against ours.
#
# Each rule's confidence is defined by protocol §6:
#
# | rule | confidence of the predicted side |
# | --- | --- |
# | Direct | $\max(p, 1-p)$ of the whole-post answer |
# | Majority Vote | the winning share of sentence votes |
# | Soft Vote | $\max(m, 1-m)$ with $m$ the mean sentence probability |
# | TEF | $\sigma(2\lvert s\rvert / T)$, the softmax of the two side scores $\pm s$ at $T = 5$ |
#
# TEF's $T$ is a fixed constant of the method, not fitted to any data; its confidence is therefore
# calibrated only to the extent that $T = 5$ happens to suit the judge's evidence scale.
#
# Definitions (protocol §7): ECE uses ten equal-width confidence bins, the last closed at 1.0, pooled
# over all dimensions of a language,
# $\mathrm{ECE} = \sum_b \frac{n_b}{n}\lvert \mathrm{acc}(b) - \mathrm{conf}(b)\rvert$; the
# overconfidence gap is mean confidence minus accuracy (positive: overconfident). We add the ECE
# with ten equal-*mass* bins (less sensitive to where the bin edges fall), the Brier score and the
# log-loss of the implied P(change), and 95 % bootstrap intervals (pairs resampled within
# dimensions).

# %% tags=["parameters"]
models = "local,e5-zeroshot,e5-crossfit"  # judges (registry names), comma-separated
prompt = "original"  # prompt variant of the caches
langs = "zh,en"  # languages
cache_dir = "data/caches"  # root of <model>/<prompt>/<lang>.jsonl
n_boot = 1000  # bootstrap replicates
n_bins = 10  # confidence bins
invalid = "drop"  # handling of unreadable answers: "drop" or "reference"
seed = 0  # bootstrap seed

# %%
from tefcore.chapters.parameters import check_parameters

check_parameters("09_calibration")  # a misspelt -p name fails here, naming the parameters above

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
from IPython.display import Markdown, display
from plotly.subplots import make_subplots

from tefcore.chapters import calibration as calib
from tefcore.chapters import experiments as ex
from tefcore.chapters import presentation as pres
from tefcore.chapters import runs as rn
from tefcore.chapters.presentation import RULE_LABELS
from tefcore.chapters.figures import setup_notebook

setup_notebook()
pd.set_option("display.float_format", "{:.3f}".format)
pd.set_option("display.max_columns", 30)
pd.set_option("display.width", 200)

RULES = ["direct", "majority_vote", "soft_vote", "tef"]
lang_list = rn.parse_list(langs)
runs = rn.chapter_runs(models, prompt, lang_list, cache_dir)
display(Markdown(runs.notes_markdown))
display(pres.judge_table(runs.models))
pred = ex.predict_runs(runs, rules=RULES, invalid=invalid)
cal = calib.calibration_summary(pred, n_bins=n_bins, n_boot=n_boot, random_state=seed)
cal["judge"] = cal["model"].map(pres.judge_label)
cal["method"] = cal["rule"].map(RULE_LABELS)

# %% [markdown]
# ## ECE and overconfidence gap per rule and language
#
# `accuracy` here is over the posts a rule decided (abstentions left out, all dimensions pooled),
# the quantity the confidences are compared with; it differs slightly from the tables' Average,
# which is a mean over dimensions.

# %% tags=["full-width"]
show = cal.assign(
    ECE=[pres.format_interval(e, lo, hi, digits=3) for e, lo, hi in zip(cal["ece"], cal["ece_low"], cal["ece_high"])],
    gap=[pres.format_interval(e, lo, hi, digits=3, signed=True)
         for e, lo, hi in zip(cal["gap"], cal["gap_low"], cal["gap_high"])],
)
display(pres.format_columns(show.set_index(["judge", "lang", "method"])[
    ["n", "n_abstain", "accuracy", "confidence", "ECE", "ece_equal_mass", "gap", "brier", "nll"]],
    3, accuracy=1))

# %% tags=["hide-input", "full-width"]
long = pd.concat([
    cal.assign(measure="ECE", value=cal["ece"], lo=cal["ece_low"], hi=cal["ece_high"]),
    cal.assign(measure="overconfidence gap", value=cal["gap"], lo=cal["gap_low"], hi=cal["gap_high"]),
], ignore_index=True)
fig = pres.dot_interval_figure(long, x="method", y="value", low="lo", high="hi", color="lang", row="judge",
                               col="measure", x_order=[RULE_LABELS[r] for r in RULES], color_order=lang_list,
                               zero_line=True,
                               title="ECE and overconfidence gap (mean confidence - accuracy), 95% bootstrap intervals")
fig.show()

# %% [markdown]
# ## Which rule is best calibrated, judge by judge
#
# For each judge and language: the rule with the lowest ECE and the rule with the gap closest to
# zero (rules within 0.0005 of the best share the place), and whether the lowest ECE is clearly
# lowest (a single rule whose interval lies below every other rule's point estimate) or within the
# noise.

# %%
rows = []
for (model, lang), g in cal.groupby(["model", "lang"], sort=False):
    lowest = g[g["ece"] <= g["ece"].min() + 5e-4]  # ties at the printed precision share the place
    rest = g[~g.index.isin(lowest.index)]
    closest = g[(g["gap"].abs() <= g["gap"].abs().min() + 5e-4)]
    tef = g[g["rule"] == "tef"].iloc[0]
    rows.append({"judge": pres.judge_label(model), "lang": lang, "lowest ECE": ", ".join(lowest["method"]),
                 "ECE": lowest["ece"].min(),
                 "clearly lowest": bool(len(lowest) == 1 and len(rest)
                                        and lowest["ece_high"].iloc[0] < rest["ece"].min()),
                 "TEF's ECE": tef["ece"], "smallest |gap|": ", ".join(closest["method"]),
                 "gap": closest["gap"].iloc[0], "TEF's gap": tef["gap"]})
verdict = pd.DataFrame(rows).set_index(["judge", "lang"])
display(pres.format_columns(verdict, 3))
n_tef = int(verdict["lowest ECE"].str.split(", ").map(lambda m: "TEF" in m).sum())
n_alone = int((verdict["lowest ECE"] == "TEF").sum())
display(Markdown(f"TEF has the lowest ECE in **{n_tef} of {len(verdict)}** judge-language cells of ours "
                 f"({n_alone} of them alone, the rest tied); paper, Qwen2.5-7B: the lowest in both of its "
                 "languages."))

# %% [markdown]
# ## Reliability diagrams
#
# Each point is one confidence bin: its mean confidence (x) against the share of correct decisions
# in it (y), sized by the number of posts. Points under the diagonal are overconfident. Confidence of
# a binary decision is at least 0.5, so only the upper half of the axis is used. Hover for counts.

# %% tags=["hide-input", "full-width"]
rel = calib.reliability_by_rule(pred, n_bins=n_bins)
for model in runs.models:
    r = rel[rel["model"] == model]
    fig = make_subplots(rows=1, cols=len(lang_list), subplot_titles=[pres.LANG_LABELS.get(l, l) for l in lang_list],
                        shared_yaxes=True)
    palette = px.colors.qualitative.D3
    for i, lang in enumerate(lang_list):
        fig.add_trace(go.Scatter(x=[0.5, 1], y=[0.5, 1], mode="lines", line={"color": "grey", "dash": "dash"},
                                 name="perfect calibration", showlegend=i == 0), row=1, col=i + 1)
        for k, rule in enumerate(RULES):
            s = r[(r["lang"] == lang) & (r["rule"] == rule)]
            fig.add_trace(go.Scatter(
                x=s["mean_predicted"], y=s["observed"], mode="lines+markers", name=RULE_LABELS[rule],
                legendgroup=rule, showlegend=i == 0, line={"color": palette[k]},
                marker={"size": (6 + 30 * (s["count"] / max(1, r["count"].max())) ** 0.5).to_numpy()},
                customdata=s[["count", "bin_lower", "bin_upper"]].to_numpy(),
                hovertemplate="bin [%{customdata[1]:.1f}, %{customdata[2]:.1f}]<br>confidence %{x:.3f}<br>"
                              "accuracy %{y:.3f}<br>posts %{customdata[0]}"), row=1, col=i + 1)
    fig.update_xaxes(range=[0.48, 1.02], title_text="mean confidence in bin")
    fig.update_yaxes(range=[0, 1.02], title_text="accuracy in bin", col=1)
    fig.update_layout(height=430, title=f"Reliability: {pres.judge_label(model)}")
    fig.show()

# %% [markdown]
# ## Reading the result
#
# Each rule's confidence is built differently, and what is measured above is largely that
# construction meeting a particular judge:
#
# * **Nearly constant answers** (SmolLM2): the judge gives about the same P(change) to every text,
#   so every rule picks the same side for almost every post and its accuracy is the share of that
#   side. The confidences reflect the constant, not the evidence: Direct's is the constant itself,
#   Majority Vote's is 1 (every vote agrees), TEF's grows with the number of sentences (each adds
#   the same $w\,\ell$ to the score). None of them can track correctness, and the gap is roughly
#   confidence minus the share of the chosen side.
# * **Flat sentence posteriors** (the cross-fitted e5 judge applied to single sentences): when most
#   sentence probabilities are close to 0.5, Soft Vote's mean is close to 0.5 and TEF's score
#   $s = \sum_i w_i \ell_i$ is close to zero because most $w_i$ are, so both confidences sit near
#   0.5. Where accuracy is well above 50 %, these rules are then *under*confident (negative gap),
#   and the ECE is roughly the distance between 0.5 and the accuracy. Majority Vote is the
#   opposite case: its confidence is the share of votes, which is 1 whenever the sentences all
#   lean the same way, however slightly.
# * **Informative but miscalibrated judges** (zero-shot e5): a post with many sentences that lean
#   the same way gets a large $|s|$ and a TEF confidence near 1 whether or not the lean is right;
#   the fixed $T = 5$ then makes TEF overconfident on long posts. Soft Vote averages, so its
#   confidence stays moderate.
# * **The paper's claim** concerns one strong LLM (Qwen2.5-7B), whose sentence answers are near 0
#   or 1 and mostly right; there, shrinking uncertain sentences and summing log-odds gives
#   confidences that track accuracy better than votes do. Our verdict table says in how many of our
#   cells the same ordering holds; it is not a test of the paper's claim, which would need the
#   paper's judge.
#
# Calibration could be repaired after the fact for any rule (temperature scaling of the final
# score, fitted on held-out posts); the comparison above, like the paper's, is of the rules as
# defined, without such a fit.
