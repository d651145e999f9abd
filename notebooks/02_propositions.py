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
# # The propositions, checked by simulation
#
# The paper supports TEF with two propositions (its Section 3). Both are statements about
# idealised detectors, so they can be checked exactly where the ideal holds and probed where it
# does not. This chapter draws sentence posteriors from a generative model whose calibration and
# dependence we control (`tefcore.simulate`), checks each proposition with an `assert` whose
# measured value and tolerance are printed, shows where the additive identity breaks and what
# tempering does then, maps when TEF beats Majority and Soft Vote, and finally places two real CPU
# judges (multilingual-e5-small sentence detectors run on MIND posts) on that map.

# %% tags=["parameters"]
seed = 20251122
# sentences drawn for the calibration check and for the information estimates
n_calibration_docs = 40_000
n_information_sentences = 200_000
information_bins = 64
strengths = [0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
# documents for the additive identity and for the stress tests
n_identity_docs = 20_000
correlations = [0.0, 0.2, 0.4, 0.6]
temperatures = [0.5, 1.0, 2.0]
# the simulation study: share of decisive sentences x number of uncertain sentences
study_shares = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
study_uncertain = [1, 2, 3, 4, 6, 8, 12, 16]
study_docs = 2000
decisive_strength = 3.0
uncertain_strength = 0.5
detector_lean = 0.5
# tolerances of the checks
tol_calibration = 0.02
tol_identity = 1e-6
tol_information = 0.005
tol_slope = 0.05
# real judges (their caches are read when present)
cache_dir = "data/caches"
judges = "e5-zeroshot, e5-crossfit"
prompt = "original"
sweep_temperatures = [0.25, 0.5, 1.0, 2.0, 4.0]
sweep_bootstrap = 200

# %%
from tefcore.chapters.parameters import check_parameters

check_parameters("02_propositions")  # a misspelt -p name fails here, naming the parameters above

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from IPython.display import display
from plotly.subplots import make_subplots

from tefcore import information
from tefcore import simulate as sim
from tefcore.chapters.presentation import RULE_LABELS
from tefcore.fusion import clipped_log_odds, fuse_many, weights
from tefcore.metrics import reliability_table
from tefcore.chapters.figures import setup_notebook

_ = setup_notebook()
rng = np.random.default_rng(seed)
CHECKS: list[dict] = []
palette = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a"]


def report(name: str, measured: float, tolerance: str, passed: bool) -> bool:
    """Print one check as 'name: measured (tolerance) PASS/FAIL' and keep it for the summary."""
    CHECKS.append(
        {
            "check": name,
            "measured": f"{measured:.4g}",
            "tolerance": tolerance,
            "result": "PASS" if passed else "FAIL",
        }
    )
    print(
        f"{name}: measured {measured:.4g}; tolerance {tolerance} -> {'PASS' if passed else 'FAIL'}"
    )
    return passed


# %% [markdown]
# ## A detector whose calibration we control
#
# Each post has a side $Y$ (change with prior $\pi$) and $s = \pm 1$ its sign. Sentence $i$ carries a
# latent observation with a *strength* $\mu_i$,
#
# $$
# x_i = s\,\frac{\mu_i}{2} + \varepsilon_i,\qquad
# \varepsilon_i = \sqrt{\rho}\,z + \sqrt{1-\rho}\,e_i,\qquad z, e_i \sim \mathcal N(0,1),
# $$ (prop-model)
#
# so that $\mu_i$ is the distance between the two class means in noise standard deviations and
# $\rho$ the correlation that a noise term shared by the post's sentences creates. Whatever $\rho$,
# each sentence alone has $x_i \mid Y \sim \mathcal N(s\mu_i/2, 1)$, whose exact posterior log-odds is
# $\lambda_i = \mu_i x_i + \ell(\pi)$. The simulated judge reports
#
# $$
# p_i = \sigma\bigl(\lambda_i / T + b + \eta_i\bigr),\qquad \eta_i \sim \mathcal N(0, \tau^2),
# $$ (prop-report)
#
# and is therefore calibrated exactly when the temperature is $T = 1$, the lean $b = 0$ and the noise
# $\tau = 0$. *Decisive* sentences get strength $\mu = 3$ (right 93 % of the time alone), *uncertain*
# ones $\mu = 0.5$ (right 60 % of the time): the defaults of the parameters cell. For the model's
# exact document posterior, which the checks compare with, see the docstring of
# `tefcore.simulate.simulate_documents`.
#
# **Check 0: the simulated posteriors are calibrated.** Among sentences reported at $p$, a share
# $p$ should come from change posts. The reliability table bins the posteriors; every bin must lie
# within the tolerance of the diagonal.

# %%
calib = sim.simulate_documents(
    n_calibration_docs,
    n_decisive=1,
    n_uncertain=4,
    strength=decisive_strength,
    uncertain_strength=uncertain_strength,
    rng=rng,
)
reliability = reliability_table(calib.p, calib.sentence_is_change, n_bins=10)
worst_gap = float(reliability["gap"].abs().max())
ok = report(
    "check 0, calibration: max |observed - predicted| over 10 bins",
    worst_gap,
    f"<= {tol_calibration}",
    worst_gap <= tol_calibration,
)
assert ok
reliability.round(4)

# %% tags=["hide-input"]
fig = go.Figure()
fig.add_trace(
    go.Scatter(
        x=[0, 1],
        y=[0, 1],
        mode="lines",
        name="perfect calibration",
        line=dict(color="grey", dash="dash"),
    )
)
fig.add_trace(
    go.Scatter(
        x=reliability["mean_predicted"],
        y=reliability["observed"],
        mode="markers+lines",
        name="simulated sentences",
        marker=dict(size=9, color="#e7298a"),
        error_y=dict(type="data", array=2 * reliability["stderr"]),
        customdata=reliability["count"],
        hovertemplate="predicted %{x:.3f}<br>observed %{y:.3f}<br>%{customdata} sentences",
    )
)
fig.update_layout(
    height=420,
    template="plotly_white",
    title="Reliability of the simulated sentence posteriors",
    xaxis_title="reported P(change)",
    yaxis_title="share of change posts",
    legend=dict(orientation="h", y=-0.2),
)
fig.show()

# %% [markdown]
# ## Proposition 1: soft posteriors carry at least the information of hard labels
#
# ```{prf:proposition} Information preservation
# :label: prop-information
#
# The hard label $\hat y_i = \mathbb 1[p_i \ge 1/2]$ is a function of the sentence posterior $p_i$,
# so by the data processing inequality {cite}`cover2005elements`
# $I(Y; p_i) \ge I(Y; \hat y_i)$.
# ```
#
# For a sentence of the model {eq}`prop-model` both sides have closed forms (the hard label is a
# binary channel; $I(Y; p_i)$ is a one-dimensional integral, computed by Gauss-Hermite quadrature in
# `sim.gaussian_information`). We also estimate both from a sample of
# `n_information_sentences` sentences per strength with a plug-in estimator on binned posteriors.
# Three checks: the exact values obey the inequality at every strength; the plug-in estimates agree
# with the exact values; and the estimates obey the inequality too (one bin edge sits at $1/2$, so
# the hard label is a function of the bin and the inequality holds for the empirical distribution as
# well).

# %%
exact = sim.gaussian_information(np.asarray(strengths))
rows = []
for mu, soft, hard in zip(strengths, exact.soft, exact.hard):
    c = sim.simulate_documents(
        n_information_sentences, n_decisive=1, n_uncertain=0, strength=mu, rng=rng
    )
    rows.append(
        {
            "strength": mu,
            "I(Y;p) exact": soft,
            "I(Y;p) plug-in": information.mutual_information(c.y, c.p, bins=information_bins),
            "I(Y;ŷ) exact": hard,
            "I(Y;ŷ) plug-in": information.mutual_information(c.y, c.p >= 0.5, bins=None),
        }
    )
info = pd.DataFrame(rows).set_index("strength")
info["share lost by ŷ"] = 1 - info["I(Y;ŷ) exact"] / info["I(Y;p) exact"]

margin = float((info["I(Y;p) exact"] - info["I(Y;ŷ) exact"]).min())
assert report(
    "check 1a, exact: min over strengths of I(Y;p) - I(Y;ŷ)", margin, ">= 0", margin >= 0
)
err = float(
    max(
        (info["I(Y;p) plug-in"] - info["I(Y;p) exact"]).abs().max(),
        (info["I(Y;ŷ) plug-in"] - info["I(Y;ŷ) exact"]).abs().max(),
    )
)
assert report(
    "check 1b, plug-in vs exact: max |difference| (nats)",
    err,
    f"<= {tol_information}",
    err <= tol_information,
)
margin_hat = float((info["I(Y;p) plug-in"] - info["I(Y;ŷ) plug-in"]).min())
assert report(
    "check 1c, plug-in: min over strengths of I(Y;p) - I(Y;ŷ)",
    margin_hat,
    ">= 0",
    margin_hat >= 0,
)
info.round(4)

# %% tags=["hide-input"]
mu_grid = np.linspace(0.01, 8, 200)
curve = sim.gaussian_information(mu_grid)
fig = make_subplots(
    rows=1,
    cols=2,
    subplot_titles=(
        "mutual information with Y (nats)",
        "share of I(Y;p) that the hard label loses",
    ),
)
fig.add_trace(
    go.Scatter(
        x=mu_grid, y=curve.soft, name="I(Y; p)", line=dict(color="#e7298a", width=3)
    ),
    1,
    1,
)
fig.add_trace(
    go.Scatter(
        x=mu_grid, y=curve.hard, name="I(Y; ŷ)", line=dict(color="#1b9e77", width=3)
    ),
    1,
    1,
)
fig.add_trace(
    go.Scatter(
        x=info.index,
        y=info["I(Y;p) plug-in"],
        mode="markers",
        name="plug-in I(Y; p)",
        marker=dict(color="#e7298a", symbol="circle-open", size=10),
    ),
    1,
    1,
)
fig.add_trace(
    go.Scatter(
        x=info.index,
        y=info["I(Y;ŷ) plug-in"],
        mode="markers",
        name="plug-in I(Y; ŷ)",
        marker=dict(color="#1b9e77", symbol="circle-open", size=10),
    ),
    1,
    1,
)
fig.add_trace(
    go.Scatter(
        x=mu_grid,
        y=1 - curve.hard / curve.soft,
        name="lost share",
        line=dict(color="#7570b3", width=3),
    ),
    1,
    2,
)
fig.update_xaxes(title_text="sentence strength μ")
fig.update_yaxes(range=[0, 0.72], row=1, col=1)
fig.update_yaxes(range=[0, 0.4], tickformat=".0%", row=1, col=2)
fig.update_layout(
    height=420,
    template="plotly_white",
    hovermode="x unified",
    title="Proposition 1: what a hard vote throws away",
    legend=dict(orientation="h", y=-0.2),
)
fig.show()

# %% [markdown]
# The hard label loses about a third of a weak sentence's information, and less the more decisive
# the sentence (see the last column of the table): a sentence that is nearly always right has little
# left to say beyond its sign. Note
# what the proposition does *not* claim: it is about one sentence, not about the accuracy of a fusion
# rule, and it holds for any function of $p_i$, whether calibrated or not. A uniform temperature, for
# instance, is an invertible map of $p_i$ and leaves $I(Y; p_i)$ unchanged.
#
# ## Proposition 2: the additive log-odds identity
#
# ```{prf:proposition} Additive Bayes log-odds
# :label: prop-additive
#
# For a binary contrast with equal priors, calibrated and conditionally independent sentence
# posteriors satisfy
# $\log\frac{P(c \mid D_{1:N})}{P(\bar c \mid D_{1:N})} = \sum_{i=1}^{N} \ell(p_i)$.
# ```
#
# Chapter 1 derived it, with the prior term for unequal priors ({eq}`deriv-additive`). Here each
# simulated post's exact posterior log-odds, computed from the latent observations, is compared with
# the sum of its sentences' reported log-odds (`information.additive_log_odds`, no clipping). A second check
# looks at the sum as a probability: its calibration slope, the $\beta$ of a logistic regression of
# $Y$ on the score, is one for calibrated log-odds, below one for overconfident and above one for
# underconfident ones.

# %%
ideal = sim.simulate_documents(
    n_identity_docs,
    n_decisive=2,
    n_uncertain=4,
    strength=2.0,
    uncertain_strength=uncertain_strength,
    rng=rng,
)
summed = information.additive_log_odds(ideal.p, ideal.doc_index)
gap = float(np.max(np.abs(summed - ideal.true_log_odds)))
assert report(
    "check 2a, identity: max |sum of l(p_i) - exact log-odds|",
    gap,
    f"<= {tol_identity:g}",
    gap <= tol_identity,
)
slope = information.calibration_slope(summed, ideal.y)
assert report(
    "check 2b, calibration slope of the summed log-odds",
    slope,
    f"1 ± {tol_slope}",
    abs(slope - 1) <= tol_slope,
)

# %% [markdown]
# ## Where the identity breaks, and what tempering does
#
# Now we violate the hypotheses one at a time: sentences that share noise ($\rho > 0$) and a judge
# that is too sharp or too flat ($T \ne 1$). For each setting the table gives the mean distance
# between the summed log-odds and the exact ones, the calibration slopes of the plain sum and of TEF's
# score $\sum_i w_i \ell(p_i)$, and the accuracy of both next to the Bayes decision of the model
# (`oracle`).

# %%
stress_rows = []
settings = [("correlation", r, 1.0) for r in correlations] + [
    ("temperature", 0.0, t) for t in temperatures if t != 1.0
]
for kind, rho, temp in settings:
    c = sim.simulate_documents(
        n_identity_docs,
        n_decisive=2,
        n_uncertain=4,
        strength=2.0,
        uncertain_strength=uncertain_strength,
        correlation=rho,
        temperature=temp,
        rng=rng,
    )
    s_sum = information.additive_log_odds(c.p, c.doc_index)
    s_tef = fuse_many(c.p, c.doc_index, rule="tef").scores[:, 0]
    stress_rows.append(
        {
            "setting": f"ρ = {rho}" if kind == "correlation" else f"T = {temp}",
            "mean |sum - exact|": float(np.mean(np.abs(s_sum - c.true_log_odds))),
            "slope, sum": information.calibration_slope(s_sum, c.y),
            "slope, TEF": information.calibration_slope(s_tef, c.y),
            "accuracy, sum": float(np.mean((s_sum >= 0) == c.is_change)),
            "accuracy, TEF": float(np.mean((s_tef >= 0) == c.is_change)),
            "accuracy, oracle": float(np.mean((c.true_log_odds >= 0) == c.is_change)),
        }
    )
stress = pd.DataFrame(stress_rows).set_index("setting")
broken = stress.loc[[f"ρ = {r}" for r in correlations if r > 0], "mean |sum - exact|"]
assert report(
    "check 2c, identity fails under correlation: min mean |sum - exact| for ρ > 0",
    float(broken.min()),
    "> 0.5 (expected to fail)",
    bool((broken > 0.5).all()),
)
stress.round(3)

# %% tags=["hide-input"]
corr = stress.loc[[f"ρ = {r}" for r in correlations]]
fig = make_subplots(
    rows=1, cols=2, subplot_titles=("calibration slope (1 = calibrated)", "accuracy")
)
fig.add_trace(
    go.Scatter(
        x=correlations,
        y=corr["slope, sum"],
        name="log-odds sum",
        mode="lines+markers",
        line=dict(color="#7570b3", width=3),
    ),
    1,
    1,
)
fig.add_trace(
    go.Scatter(
        x=correlations,
        y=corr["slope, TEF"],
        name="TEF",
        mode="lines+markers",
        line=dict(color="#e7298a", width=3),
    ),
    1,
    1,
)
fig.add_hline(y=1, line=dict(color="grey", dash="dash"), row=1, col=1)
for col, name, color in (
    ("accuracy, sum", "log-odds sum", "#7570b3"),
    ("accuracy, TEF", "TEF", "#e7298a"),
    ("accuracy, oracle", "oracle", "grey"),
):
    fig.add_trace(
        go.Scatter(
            x=correlations,
            y=corr[col],
            name=name,
            mode="lines+markers",
            showlegend=False,
            line=dict(color=color, width=3, dash="dot" if name == "oracle" else None),
        ),
        1,
        2,
    )
fig.update_xaxes(title_text="correlation ρ of the sentences' noise")
fig.update_layout(
    height=420,
    template="plotly_white",
    title="Correlated sentences: the sum is overconfident",
    legend=dict(orientation="h", y=-0.2),
)
fig.show()

# %% [markdown]
# Read the table from the top. With independent, calibrated sentences the sum *is* the posterior:
# slope one, and the sign of the sum is the Bayes decision. TEF pays a small price there: its
# weights shrink the evidence (slope above one) and discard the weak but genuine evidence of the
# uncertain sentences, so its accuracy sits a little below the sum's. Shared noise changes the
# picture: the sum counts the common part of the noise once per sentence, its slope falls well below
# one (overconfidence) and its accuracy drops; TEF's weights shrink exactly the sentences that the
# shared noise pushes around near $1/2$, its slope moves towards one and it overtakes the sum. A
# uniform temperature, finally, rescales every log-odds by $1/T$: the slope of the sum becomes $T$,
# and its decisions do not change at all (a sign is scale-free); TEF's weights are not scale-free,
# but its decisions barely move either. This is the sense in which tempering is a hedge: it
# costs a little when the ideal holds and helps when the sentences are not the independent witnesses
# the identity needs.
#
# ## When does TEF beat Majority and Soft Vote?
#
# A grid of posts: along one axis the number of uncertain sentences per post, along the other the
# share of decisive sentences among all of them (each post gets on average
# $u\,q/(1-q)$ decisive sentences for $u$ uncertain ones and a share $q$; some posts get none, see
# `sim.decisive_counts`). At a fixed share, posts get longer from left to right. Each cell holds
# `study_docs` posts, and shows TEF's accuracy minus the better of MV and SV, in points. Two judges:
#
# - **calibrated**: the model above, exactly calibrated;
# - **leaning**: the same, but every reported log-odds is shifted by $b$ = `detector_lean`
#   towards change, whatever the sentence says. This is the failure we expect of an LLM that prefers
#   one answer letter: a sentence without evidence comes out at $\sigma(b) \approx 0.62$ rather
#   than $0.5$.

# %%
study_kwargs = dict(
    n_docs=study_docs, strength=decisive_strength, uncertain_strength=uncertain_strength
)
studies = {
    "calibrated": sim.fusion_study(study_shares, study_uncertain, rng=rng, **study_kwargs),
    "leaning": sim.fusion_study(
        study_shares, study_uncertain, logit_bias=detector_lean, rng=rng, **study_kwargs
    ),
}
gain_maps = {}
for name, study in studies.items():
    acc = study.pivot_table(
        index=["decisive_share", "n_uncertain"], columns="rule", values="accuracy"
    )
    gain = 100 * (acc["tef"] - acc[["majority_vote", "soft_vote"]].max(axis=1))
    gain_maps[name] = gain.unstack("n_uncertain")
summary = pd.DataFrame(
    {
        name: {
            "largest gain (points)": m.to_numpy().max(),
            "largest loss (points)": m.to_numpy().min(),
            "mean gain (points)": m.to_numpy().mean(),
        }
        for name, m in gain_maps.items()
    }
)
mean_accuracy = pd.DataFrame(
    {name: 100 * s.groupby("rule")["accuracy"].mean() for name, s in studies.items()}
)
mean_accuracy.index = [
    f"mean accuracy, {RULE_LABELS.get(r, r)}" for r in mean_accuracy.index
]
summary = pd.concat([summary, mean_accuracy])
lean_p = float(1 / (1 + np.exp(-detector_lean)))
lean_w = weights([lean_p])[0]
print(
    f"an evidence-free sentence of the leaning judge: p = {lean_p:.3f}, weight w = {lean_w:.3f}"
)
summary.round(1)

# %% tags=["hide-input"]
fig = make_subplots(
    rows=1,
    cols=2,
    subplot_titles=[f"{k} judge" for k in gain_maps],
    horizontal_spacing=0.12,
)
zmax = max(abs(m.to_numpy()).max() for m in gain_maps.values())
for col, (name, m) in enumerate(gain_maps.items(), start=1):
    fig.add_trace(
        go.Heatmap(
            z=m.to_numpy(),
            x=[str(u) for u in m.columns],
            y=[f"{q:.0%}" for q in m.index],
            text=np.round(m.to_numpy(), 1),
            texttemplate="%{text}",
            zmid=0,
            zmin=-zmax,
            zmax=zmax,
            colorscale="RdBu",
            showscale=col == 2,
            colorbar=dict(title="points"),
            hovertemplate="uncertain sentences %{x}<br>decisive share %{y}<br>TEF − best vote %{z:.1f} points<extra></extra>",
        ),
        1,
        col,
    )
    fig.update_xaxes(title_text="uncertain sentences per post", row=1, col=col)
fig.update_yaxes(title_text="share of decisive sentences", row=1, col=1)
fig.update_layout(
    height=470,
    template="plotly_white",
    title="Accuracy of TEF minus the better of MV and SV (points)",
)
fig.show()

# %%
for name, m in gain_maps.items():
    print(f"{name} judge: TEF - max(MV, SV), accuracy points")
    print(m.round(1).to_string())
    print()

# %% [markdown]
# With a calibrated judge there is little to choose between TEF and Soft Vote: both follow the
# decisive sentences, because a calibrated uncertain sentence sits close to $1/2$ where both rules
# give it little say (MV, which gives it a full vote, is the weak one; compare the mean accuracies
# in the summary table). With a judge that leans, every uncertain sentence becomes a small vote for
# change; MV and SV add these up, and in long posts with few decisive sentences they overrule the
# decisive evidence. TEF's weight of an evidence-free sentence of this judge is a few hundredths
# (printed above the summary), so the lean hardly enters its score: the gain is large in the lower
# right of the map (many uncertain sentences, few decisive ones) and vanishes where decisive
# sentences dominate. This is the
# situation the paper describes ("uncertain sentences outvote a few decisive ones"); the map shows
# it needs both ingredients, many uncertain sentences *and* a systematic lean in them.

# %% [markdown]
# ## Real detectors on the map
#
# Where do real judges sit? The caches of the two multilingual-e5-small judges on the MIND sample
# (`tefcore.judges.e5`: a zero-shot judge that compares each text with descriptions of the two
# sides, and a cross-fitted logistic regression on post embeddings, applied to each sentence) give
# real sentence posteriors. For each judge and language we count, per post, its decisive sentences
# (weight $w \ge 0.5$, i.e. $p \le 0.11$ or $p \ge 0.89$) and its uncertain ones, and we estimate the
# judge's lean $b$ from its uncertain sentences: their mean log-odds in change posts and in stability
# posts, and the midpoint of the two (a lean shifts both alike, genuine evidence pulls them apart).
# These are embedding judges on CPU, not the paper's LLMs; the section reads their caches when they
# exist and says so when they do not.

# %%
from tefcore.chapters.calibration import temperature_sweep
from tefcore.chapters.experiments import posterior_summary
from tefcore.chapters.presentation import format_interval
from tefcore.chapters.runs import load_runs, parse_list

try:
    runs = load_runs(parse_list(judges), prompt, ("en", "zh"), cache_dir)
    real = runs.frame
    for note in runs.missing:
        print("missing:", note)
except ImportError as exc:  # the cache reader is not installed in this checkout
    real = pd.DataFrame()
    print(f"cannot read caches: {exc}")
have_real = len(real) > 0
print(f"real-judge caches found: {have_real} ({len(real)} evaluation pairs)")

# %%
if have_real:
    summary_cols = [
        "sentences",
        "p_q05",
        "p_q95",
        "median_weight",
        "decisive_share",
        "median_abs_log_odds",
    ]
    display(posterior_summary(real).set_index(["model", "lang"])[summary_cols].round(3))

# %%
if have_real:
    lengths = real["sentences"].map(len).to_numpy()
    flat_p = np.concatenate([np.asarray(s, dtype=float) for s in real["sentences"]])
    pair = np.repeat(np.arange(len(real)), lengths)[~np.isnan(flat_p)]
    flat_p = flat_p[~np.isnan(flat_p)]
    # per post: decisive (w >= 0.5) and uncertain sentences
    profile = information.evidence_profile(flat_p, pair).join(real[["model", "lang", "side"]])
    placed = profile.groupby(["model", "lang"]).agg(
        posts=("n_sentences", "size"),
        sentences=("n_sentences", "sum"),
        decisive=("n_decisive", "sum"),
        uncertain_per_post=("n_uncertain", "mean"),
    )
    placed["decisive_share"] = placed["decisive"] / placed["sentences"]
    # the lean: mean clipped log-odds of the uncertain sentences, by the post's true side
    sentences = real.iloc[pair][["model", "lang", "side"]].assign(
        w=weights(flat_p), l=clipped_log_odds(flat_p)
    )
    by_side = (
        sentences[sentences["w"] < 0.5]
        .groupby(["model", "lang", "side"])["l"]
        .mean()
        .unstack("side")
    )
    placed["l, change posts"] = by_side.get("change")
    placed["l, stability posts"] = by_side.get("stability")
    placed["lean b (midpoint)"] = by_side.mean(axis=1)
    # how often a sentence points to its post's labelled side, decisive and uncertain apart
    sentences["agrees"] = (sentences["l"] >= 0) == (sentences["side"] == "change")
    agree = sentences.groupby(["model", "lang", sentences["w"] >= 0.5])["agrees"].mean()
    placed["decisive agree (%)"] = 100 * agree.xs(True, level=2)
    placed["uncertain agree (%)"] = 100 * agree.xs(False, level=2)
    display(placed.round(3))
else:
    print(
        f"No e5 caches under {cache_dir}: run `tef extract --model e5-zeroshot` and "
        "`tef extract --model e5-crossfit` to add this section's data."
    )

# %% [markdown]
# The weight distributions of the real judges next to the simulated calibrated judge of the map:

# %% tags=["hide-input"]
if have_real:
    # histograms binned here, so that the page stores 20 bars and not every sentence
    edges = np.linspace(0, 1, 21)
    hist = {"simulated (calibrated)": weights(calib.p)} | {
        f"{model} ({lang})": g["w"].to_numpy()
        for (model, lang), g in sentences.groupby(["model", "lang"])
    }
    colors = ["grey"] + palette
    fig = go.Figure()
    for k, (name, w) in enumerate(hist.items()):
        share = np.histogram(w, bins=edges)[0] / len(w)
        fig.add_trace(
            go.Bar(
                x=(edges[:-1] + edges[1:]) / 2,
                y=share,
                width=0.05,
                name=name,
                opacity=0.55,
                marker_color=colors[k % len(colors)],
            )
        )
    fig.update_layout(
        barmode="overlay",
        height=420,
        template="plotly_white",
        title="TEF weights of sentence posteriors: real judges and the simulation",
        xaxis_title="weight w(p)",
        yaxis_title="share of sentences",
        legend=dict(orientation="h", y=-0.25),
    )
    fig.show()

# %% [markdown]
# Each real judge's mean position (mean uncertain sentences per post, pooled share of decisive
# sentences), placed on the two maps (circles: English, squares: Chinese), and the simulated gain
# of the nearest grid cell:

# %% tags=["hide-input"]
if have_real:
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=[f"{k} judge" for k in gain_maps],
        horizontal_spacing=0.12,
    )
    judge_names = list(dict.fromkeys(placed.index.get_level_values("model")))
    for col, (name, m) in enumerate(gain_maps.items(), start=1):
        fig.add_trace(
            go.Heatmap(
                z=m.to_numpy(),
                x=list(m.columns),
                y=list(m.index),
                zmid=0,
                zmin=-zmax,
                zmax=zmax,
                colorscale="RdBu",
                showscale=col == 2,
                colorbar=dict(title="points"),
                hoverinfo="skip",
            ),
            1,
            col,
        )
        for (model, lang), r in placed.iterrows():
            fig.add_trace(
                go.Scatter(
                    x=[r["uncertain_per_post"]],
                    y=[r["decisive_share"]],
                    mode="markers",
                    name=f"{model} ({lang})",
                    legendgroup=f"{model}{lang}",
                    showlegend=col == 1,
                    marker=dict(
                        size=13,
                        color=palette[judge_names.index(model) % len(palette)],
                        symbol="circle" if lang == "en" else "square",
                        line=dict(color="black", width=1.5),
                    ),
                    hovertemplate=f"{model} ({lang})<br>uncertain per post %{{x:.2f}}"
                    "<br>decisive share %{y:.1%}<extra></extra>",
                ),
                1,
                col,
            )
        fig.update_xaxes(title_text="uncertain sentences per post", row=1, col=col)
        fig.update_yaxes(tickformat=".0%", row=1, col=col)
    fig.update_yaxes(title_text="share of decisive sentences", row=1, col=1)
    fig.update_layout(
        height=500,
        template="plotly_white",
        title="Real judges on the simulated map",
        legend=dict(orientation="h", y=-0.25),
    )
    fig.show()

# %%
if have_real:
    nearest = []
    for (model, lang), r in placed.iterrows():
        u = min(study_uncertain, key=lambda v: abs(v - r["uncertain_per_post"]))
        q = min(study_shares, key=lambda v: abs(v - r["decisive_share"]))
        nearest.append(
            {
                "model": model,
                "lang": lang,
                "nearest cell": f"{u} uncertain, {q:.0%} decisive",
                "simulated gain, calibrated": gain_maps["calibrated"].loc[q, u],
                "simulated gain, leaning": gain_maps["leaning"].loc[q, u],
            }
        )
    display(pd.DataFrame(nearest).set_index(["model", "lang"]).round(1))

# %% [markdown]
# ### Sharper or flatter: a temperature sweep on real posts
#
# The map says that TEF's advantage depends on how many sentences are decisive. A real judge can be
# made sharper or flatter by re-tempering its posteriors, $p \mapsto \sigma(\ell(p)/t)$ with $t < 1$
# sharper and $t > 1$ flatter (`tefcore.chapters.calibration.temperature_sweep`). Direct and MV do not move
# ($1/2$ is a fixed point), so the sweep shows how TEF and SV respond. Each entry is TEF's accuracy
# gain over the strongest of Direct, MV and SV on the dimension average, in points, with a 95 %
# paired bootstrap interval over posts (`sweep_bootstrap` replicates); the other rows give the
# share of decisive sentences and the strongest baseline at each temperature.

# %%
if have_real:
    sweep = temperature_sweep(
        real, sweep_temperatures, n_boot=sweep_bootstrap, random_state=seed % 2**32
    )
    sweep["TEF - best baseline"] = [
        format_interval(g, lo, hi, signed=True)
        for g, lo, hi in zip(sweep["gain"], sweep["low"], sweep["high"])
    ]
    sweep["decisive sentences (%)"] = sweep["decisive_share"].round(1)
    sweep["strongest baseline"] = sweep["best_baseline"].map(RULE_LABELS)
    display(
        sweep.pivot_table(
            index=["model", "lang"],
            columns="t",
            aggfunc="first",
            values=["TEF - best baseline", "strongest baseline", "decisive sentences (%)"],
        ).stack(level=0, future_stack=True)
    )

# %% tags=["hide-input"]
if have_real:
    fig = go.Figure()
    for k, ((model, lang), g) in enumerate(sweep.groupby(["model", "lang"])):
        fig.add_trace(
            go.Scatter(
                x=g["t"],
                y=g["gain"],
                mode="lines+markers",
                name=f"{model} ({lang})",
                line=dict(
                    color=palette[judge_names.index(model) % len(palette)],
                    width=3,
                    dash="solid" if lang == "en" else "dot",
                ),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=g["high"] - g["gain"],
                    arrayminus=g["gain"] - g["low"],
                    thickness=1,
                ),
                customdata=np.stack([g["best_baseline"], g["decisive_share"]], axis=1),
                hovertemplate="t = %{x}<br>gain %{y:.1f} points<br>strongest baseline "
                "%{customdata[0]}<br>decisive sentences %{customdata[1]:.1f} %",
            )
        )
    fig.add_hline(y=0, line=dict(color="grey", dash="dash"))
    fig.update_xaxes(
        type="log",
        tickvals=sweep_temperatures,
        title_text="temperature t (< 1 sharper, > 1 flatter)",
    )
    fig.update_layout(
        height=440,
        template="plotly_white",
        yaxis_title="TEF − strongest baseline (accuracy points)",
        title="TEF's gain on real posts as the judges are re-tempered",
        legend=dict(orientation="h", y=-0.25),
    )
    fig.show()

# %% [markdown]
# How to read these results against the theory. The map assumes that decisive sentences are
# *calibrated*: a sentence with weight $w \ge 0.5$ has $p \ge 0.89$ or $p \le 0.11$, so a calibrated
# judge's decisive sentences point to the post's side at least 89 % of the time. The column
# "decisive agree (%)" measures this for the real judges (a proxy: a sentence may quote the other
# side, so even a perfect judge would not reach 100 %). Where it falls far short, the decisive
# sentences are overconfident and TEF, which trusts them most, inherits their errors; the map then
# overstates what TEF can gain, whatever the judge's position on it. A judge whose sentence
# posteriors stay near $1/2$ gives TEF almost nothing to work with: its weights are near zero, TEF's
# score is a sum of near-cubes $\approx \sum_i \ell_i^3/(8\log 2)$ (chapter 1, {eq}`deriv-cubic`), and
# the rule behaves like a noisier soft vote. TEF needs what the leaning map rewards: decisive
# sentences that deserve their confidence, and uncertain ones whose errors it can afford to ignore.
# Sharpening a judge moves it up the map (more decisive sentences) but also inflates the log-odds
# of the sentences that were wrong, so the sweep, not the map alone, says whether it pays.
#
# ## Summary of the checks

# %%
pd.DataFrame(CHECKS).set_index("check")
