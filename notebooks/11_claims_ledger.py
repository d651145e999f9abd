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
# (claims-ledger)=
# # The claims ledger
#
# The paper makes claims of several kinds: definitions and two propositions about its method,
# statistics of the MIND benchmark, and the numbers of its four tables and its calibration figure,
# with the aggregates its text draws from them. This page lists every claim that can be checked, one
# row each: the paper's words and number, what this companion finds, the kind of evidence the verdict
# rests on, and the verdict. The chapter that examines a claim in depth is linked from its row, and
# the chapters link back to the rows they discuss; every row has its own address, such as the row of
# the abstract's <a href="#claims-gain-accuracy">accuracy gain</a>. A few rows marked *a reader's
# check* hold the paper's own tables to the standard a reviewer would: its accuracies against a
# constant answer, against their sampling noise and against each other.
#
# A verdict rests on one of six kinds of evidence, and the table below counts the verdicts of each kind,
# so that *holds* is never read as *reproduced*:
#
# - **reproduced by our run**: computed on the caches of the paper's model that a run of ours made;
#   the row names the run (weights, engine, hardware, data) from the caches' provenance;
# - **counted from the MIND files**: the data card, on the MIND data this page ran on;
# - **recomputed from the paper's tables**: arithmetic on Tables 1 to 4 as printed (transcribed number
#   by number into `data/paper`), with the pair counts of the release's files where a check
#   needs the number of pairs;
# - **formula or simulation check**: `tefcore`'s rules against the paper's formulas written out again
#   with SciPy, and the propositions on simulated detectors whose exact posteriors are known;
# - **GPU command, not run here**: the claim needs the paper's models; the row gives the command, and
#   after that command has run on a machine with a GPU, this page checks the row on its caches;
# - **not checkable from the release**: the release does not carry what the claim is about; the row
#   says what is missing.
#
# A claim of the paper *holds*, *does not hold*, or is *not checked* here. A printed number holds when
# ours rounds to it at the paper's precision; where the paper's words are qualitative ("roughly three
# times", "most of the gain"), the row's note states the reading that was checked. A reader's check is
# no claim of the paper, and it is never said to "not hold": it *passes* or *fails*, and its row states
# the premise it rests on. `tef claims` prints the same rows (add `--format csv`, `markdown` or `json`
# for other programs).

# %% tags=["parameters"]
# Folder of the paper's tables (table*.csv). None: the repository's data/paper.
paper_dir = None
# MIND data directory. None: $MIND_DATA_DIR, else the embedded MIND sample.
data_dir = None
# Root of probability caches, <cache_dir>/<model>/<prompt>/<lang>.jsonl: the
# caches of a paper model found there (after `tef reproduce`) are checked.
cache_dir = "data/caches"

# %% tags=["hide-input"]
from tefbook.parameters import check_parameters

check_parameters("11_claims_ledger")  # a misspelt -p name fails here, naming the parameters above

import html

import pandas as pd
from IPython.display import HTML, display
from myst_nb import glue

from tefbook.chapters import ch11
from tefbook.companion.figures import setup_notebook
from tefbook.companion.labels import LANG_LABELS
from tefpaper.ledger import ledger_html
from tefbook.companion.runs import repo_path
from tefcore.fusion import RULE_LABELS
from tefpaper import review
from tefpaper import tables as paper
from tefpaper.evidence import FAILS, HOLDS, KINDS, NOT_CHECKED, NOT_HOLD, READER_CHECK, SECTIONS, WHOSE
from tefpaper.ledger import assert_ledger, claim_anchor, evaluate_ledger, shown_verdict, summary_counts

_ = setup_notebook()
shown: list[str] = []
STYLE = """<style>
table.claims-ledger {font-size: 0.82em; border-collapse: collapse; width: 100%; table-layout: fixed;}
table.claims-ledger th:nth-child(1) {width: 17%;} table.claims-ledger th:nth-child(2) {width: 25%;}
table.claims-ledger th:nth-child(3) {width: 10%;} table.claims-ledger th:nth-child(4) {width: 28%;}
table.claims-ledger th:nth-child(5) {width: 12%;} table.claims-ledger th:nth-child(6) {width: 8%;}
table.claims-ledger td, table.claims-ledger th {vertical-align: top; padding: 0.3em 0.45em;
  border-bottom: 1px solid #ddd; text-align: left;}
table.claims-ledger small {color: #666; font-size: 0.9em;}
table.claims-ledger code {font-size: 0.95em; overflow-wrap: anywhere;}
tr.claim-holds b {color: #1a7f37;} tr.claim-differs b {color: #b35900;}
tr.claim-unchecked b {color: #666; font-weight: normal;} tr.claim-fails b {color: #c00;}
table.claims-ledger tr:target {background: #fff6d5;}
</style>"""


def cells(frame, columns: dict[str, str]):
    """A table of paper cells as the page shows it: the paper's model names, rule labels, one decimal,
    counts with thousands separators."""
    out = frame.assign(model=frame["model"].map(paper.MODEL_LABELS), lang=frame["lang"].map(LANG_LABELS))
    if "strongest_baseline" in out:
        out["strongest_baseline"] = out["strongest_baseline"].map(RULE_LABELS)
    out = out[list(columns)].rename(columns=columns)
    counts = {c: "{:,}".format for c in out.columns if pd.api.types.is_integer_dtype(out[c])}
    return HTML(out.to_html(index=False, float_format="{:.1f}".format, formatters=counts))


def show(section: str) -> None:
    """Display the rows of one section of the ledger."""
    shown.append(SECTIONS[section])
    display(HTML(STYLE + ledger_html(ch11.labelled(ledger[ledger["section"] == SECTIONS[section]]))))


# %% [markdown]
# Every check runs now, on the data and caches named in the parameters above. The paper's own claims
# come first, counted per kind of evidence; the counts of the release's files that the paper does not
# print, and the reader's checks, are counted apart below:

# %%
ledger = evaluate_ledger(paper_dir=paper_dir, data_dir=data_dir, cache_dir=repo_path(cache_dir))
claims, release = ledger[ledger["whose"] == WHOSE["paper"]], ledger[ledger["whose"] == WHOSE["release"]]
counts = summary_counts(claims)

# %% tags=["remove-input"]
assert not counts[FAILS].any(), "a check no longer gives its recorded verdict (assert_ledger below names it)"
counts.drop(columns=FAILS).rename(index={"all": "all kinds"}, columns={"all": "claims"}).rename_axis(
    index=None, columns="the paper's claims, by evidence")

# %% tags=["remove-cell"]
total = counts.loc["all"]
glue("n_claims", int(total["all"]), display=False)
glue("n_holds", int(total[HOLDS]), display=False)
glue("n_not_hold", int(total[NOT_HOLD]), display=False)
glue("n_unchecked", int(total[NOT_CHECKED]), display=False)
glue("n_run", int(counts.loc[KINDS["run"], "all"]), display=False)
glue("n_tables_holds", int(counts.loc[KINDS["tables"], HOLDS]), display=False)
glue("n_formula_holds", int(counts.loc[KINDS["formula"], HOLDS]), display=False)
glue("n_data_holds", int(counts.loc[KINDS["data"], HOLDS]), display=False)
for name, value in ch11.release_numbers(release, ledger[ledger["whose"] != WHOSE["reader"]], ledger).items():
    glue(name, value, display=False)
glue("dataset", ledger.attrs.get("dataset", ledger.attrs.get("data_problem", "")), display=False)
failed_claims = claims[claims["verdict"] == NOT_HOLD]
assert set(failed_claims["id"]) == {"tempering", "k3-bayes", "table3-underline"}, "the prose below names them"

# %% [markdown]
# The paper makes {glue:text}`n_claims` claims that can be checked. {glue:text}`n_holds` hold,
# {glue:text}`n_not_hold` do not (the tempering statement, the Bayes reading for $K = 3$, the
# underlines of Table 3) and {glue:text}`n_unchecked` are not checked here; {glue:text}`n_run` rest
# on a run of the paper's models. What holds is arithmetic on the paper's own tables
# ({glue:text}`n_tables_holds` claims), checks of its formulas and propositions
# ({glue:text}`n_formula_holds`) and counts of the MIND files ({glue:text}`n_data_holds`): it says
# that the paper's numbers agree with each other, that its method is what it says and that its data
# are what it describes. Only the rows *reproduced by our run* say anything of its LLM results. The
# data this page ran on: {glue:text}`dataset`.
#
# Beside the paper's claims, the data card lists {glue:text}`n_release` counts of the release's files
# that the paper does not print (labels, pairs, excluded pairs, pairs per side, post length, sentences per
# post; their rows say "not printed by the paper"): the numbers the floor and noise checks rest on. On
# the data this page ran on, {glue:text}`release_state`. The paper's {glue:text}`n_claims` claims and these {glue:text}`n_release` counts make
# {glue:text}`n_rows` of the ledger's {glue:text}`n_ledger` rows; the {glue:text}`n_reader` reader's checks
# below are the others.
#
# Apart from the claims stand the reader's checks: standards a reviewer holds the paper's tables to,
# which the paper never claims to meet. Their words open with "(a reader's check)". Each rests on a
# premise that the paper's printed numbers alone do not give, and each passes or fails:

# %%
checks = ledger[ledger["whose"] == WHOSE["reader"]]
passed, failed = checks["verdict"] == HOLDS, checks["verdict"] == NOT_HOLD
on_pairs = checks["premise"].str.contains("release's")  # rests on the pair counts of the release's files

# %% tags=["remove-input"]
HTML(pd.DataFrame({
    "reader's check": [f'<a href="#{claim_anchor(i)}"><code>{i}</code></a>' for i in checks["id"]],
    "what it asks": checks["words"].str.removeprefix(READER_CHECK).str.strip().map(html.escape),
    "ours": checks["value"].map(html.escape), "premise": checks["premise"].map(html.escape),
    "result": checks.apply(shown_verdict, axis=1).map(html.escape)}).to_html(index=False, escape=False))

# %% tags=["remove-cell"]
glue("n_reader", len(checks), display=False)
glue("n_reader_pass", int(passed.sum()), display=False)
glue("n_reader_fail", int(failed.sum()), display=False)
glue("n_reader_pairs", int(on_pairs.sum()), display=False)

# %% [markdown]
# Of the {glue:text}`n_reader` reader's checks, {glue:text}`n_reader_pass` pass and
# {glue:text}`n_reader_fail` fail. {glue:text}`n_reader_pairs` of them rest on the pair counts of the
# release's files, which the paper does not print and which its own numbers put in doubt (the check
# `table3-confusion` below): a failed check is a question for the authors, not a claim of theirs that
# does not hold.

# %% [markdown]
# (claims-method)=
# ## The method
#
# The definitions of Section 3 and Algorithm 1. Each is computed twice: by `tefcore.fusion`, and by a
# few lines of SciPy that follow the paper's formula, on random posts (including probabilities of
# exactly 0, ½ and 1). The paper writes Eq. 3 for any number of classes $K$, and `tefcore` implements
# it for any $K$; but for $K > 2$ the one-vs-rest score is not the Bayes log-posterior, so the
# additive evidence scale that motivates it holds for two classes only. The row `k3-bayes` gives a
# two-sentence, three-class post on which the two pick different classes. The paper's experiments
# all have $K = 2$, where the two coincide.

# %% tags=["remove-input"]
show("method")

# %% [markdown]
# (claims-propositions)=
# ## The propositions
#
# Proposition 1 is checked with the exact mutual information of a simulated sentence, Proposition 2
# against posteriors computed from the joint Gaussian likelihood of simulated posts, a route that does
# not use the identity under test. The paper states Proposition 2 for equal priors; with unequal
# priors the sum of sentence log-odds carries the prior $N - 1$ times too many, and the row
# `prop2-prior` checks the corrected identity of chapter 1.

# %% tags=["remove-input"]
show("propositions")

# %% [markdown]
# (claims-data-card)=
# ## The MIND data card
#
# Each record of the release carries its language, an event code, its text and its labels. What the
# records do not carry (dates, sources, annotators and rounds, whether an agent generated or edited
# a post) cannot be confirmed from them. Counts of the full release can be confirmed only on the full
# release (`tef download`, then `MIND_DATA_DIR`); on the sample these rows show the sample's values
# beside the published ones. The rows whose source reads "not printed by the paper" hold counts of the
# release's files, not claims of the paper, and are counted apart from its claims above.

# %% tags=["remove-input"]
show("data")

# %% [markdown]
# (claims-headline)=
# ## The headline numbers
#
# The paper does not say at which level "the strongest baseline" is chosen. Its average gains are
# reproduced when the strongest of Direct, Majority Vote and Soft Vote is chosen per model and
# language, after averaging the six dimensions; chosen per dimension, the average gains are smaller.
# The reader's check `gain-per-cell` records that second reading, which the paper does not state; it
# is not counted among the paper's claims.

# %% tags=["remove-input"]
show("headline")

# %% [markdown]
# (claims-table3)=
# ## Table 3: the main results, and what a reviewer asks of them
#
# Table 3 marks the best method of each cell in bold and, by its caption, the second best with an
# underline; the bold marks are right in every cell, the underlines follow neither of the two usual
# conventions for ties in the cells that `table3-underline` lists. The numbers themselves need the
# models: for each open model a row gives the command, and checks the model's 48 accuracies on its
# caches once that command has run; the API models may have changed since the paper was written.
#
# Four reader's checks read the printed numbers as a reviewer would, with one more fact: how many
# evaluation pairs each cell has. The paper does not print it; the release's files give it (protocol
# §2), per language, dimension and side. That is the premise of every verdict below on floors and
# noise: the paper scored the release's pairs. The third check below tests the premise
# itself, and finds that it does not fit every printed number.
#
# **Floors.** A judge that always answers the larger side of a cell scores its *majority-class
# floor*. Each printed accuracy set beside the floor of its cell:

# %%
t3, t4 = paper.load_table("table3"), paper.load_table("table4")
floors = review.floors(t3)
below = floors[floors["below"]]
below.groupby("method").size().rename(index=RULE_LABELS).rename("accuracies below the floor").to_frame().T

# %% tags=["remove-cell"]
glue("n_below", len(below), display=False)
glue("n_accuracies", len(floors), display=False)
glue("n_tef_below", int((below["method"] == "tef").sum()), display=False)
glue("n_below_noise", int((floors["high"] < floors["floor"]).sum()), display=False)

# %% [markdown]
# If the paper scored the release's pairs, {glue:text}`n_below` of the {glue:text}`n_accuracies`
# accuracies of Table 3 lie below their floor, {glue:text}`n_tef_below` of them TEF's, and
# {glue:text}`n_below_noise` lie below it even with their sampling noise: in those cells the method
# would do worse than a constant answer. On other pairs the floors move, and so does this count.
#
# **Noise.** An accuracy measured on $n$ pairs is uncertain by about $\pm 2\sqrt{p(1-p)/n}$; the
# Wilson interval makes that exact for a proportion. TEF's win in a cell lies *inside the noise*
# when the strongest baseline's accuracy falls within TEF's 95 % interval:

# %%
noise = review.noise(t3)
inside = noise[noise["inside"]]

# %% tags=["hide-input"]
cells(inside, {"model": "model", "lang": "language", "dimension": "dimension", "strongest_baseline": "strongest baseline",
               "baseline": "its acc.", "tef": "TEF acc.", "low": "TEF 95 % low", "high": "TEF 95 % high",
               "n": "pairs"})

# %% tags=["remove-cell"]
glue("n_wins", int(noise["win"].sum()), display=False)
glue("n_inside", int(noise["inside"].sum()), display=False)

# %% [markdown]
# TEF beats the strongest baseline in {glue:text}`n_wins` of the 60 accuracy cells, which needs no
# premise; on the release's pair counts, {glue:text}`n_inside` of these wins lie inside the noise.
# Both rules read the same posts, so a
# paired test (McNemar's) would be sharper; it needs per-post predictions, which the paper does not
# release.
#
# **One confusion matrix per number.** A printed accuracy and macro-F1 of a cell come from one table
# of counts: $TP + TN$ correct answers out of the cell's $n$ pairs. The accuracy must be a fraction
# $k/n$, and the macro-F1 must be one that some split of $k$ between the two sides gives. The table
# counts, per model and language, the printed pairs of numbers that fit no such table:

# %%
confusion = review.confusion_check(t3)
misfit = confusion[~confusion["consistent"]]

# %% tags=["hide-input"]
misfit.assign(model=misfit["model"].map(paper.MODEL_LABELS), lang=misfit["lang"].map(LANG_LABELS)).pivot_table(
    index="model", columns="lang", values="method", aggfunc="count", fill_value=0).rename_axis(
    index=None, columns="pairs that fit no matrix, per language")

# %% tags=["remove-cell"]
glue("n_misfit", int((~confusion["consistent"]).sum()), display=False)
glue("n_no_k", int(confusion["reachable"].isna().sum()), display=False)

# %% [markdown]
# {glue:text}`n_misfit` of the 240 (accuracy, macro-F1) pairs fit no confusion matrix on the
# release's pairs of their cell; {glue:text}`n_no_k` accuracies are no fraction $k/n$ at all. These
# are questions, not verdicts: the paper may have scored other pairs (dropped unreadable answers, kept
# the release's pairs whose labels fall on both sides). They are also why the floor and noise counts
# above hold only under their premise. What survives without it is the arithmetic on the printed
# numbers alone: the averages, the gains, the bold marks, the wins and ties.
#
# **The same posteriors.** Majority Vote, Soft Vote, TEF and the two ablations fuse the same sentence
# posteriors, and on a post whose sentences all lie on one side they all decide for that side. Two of
# them can therefore differ only on posts whose sentences disagree, and a cell's spread of their
# accuracies needs at least that share of such posts. A cell is a question when one of them is below
# the majority floor and another above it, each beyond its noise:

# %%
same = review.sentence_rules(t3, t4)
questions = same[same["question"]].sort_values("required", ascending=False)

# %% tags=["hide-input"]
cells(questions, {"model": "model", "lang": "language", "dimension": "dimension", "floor": "majority floor",
                  "lowest": "lowest acc.", "highest": "highest acc.", "required": "posts needed (%)"})

# %% tags=["remove-cell"]
glue("n_questions", int(same["question"].sum()), display=False)

# %% [markdown]
# {glue:text}`n_questions` cells are such questions. In each, the same sentence posteriors make one
# rule worse than a constant answer and another better than it, which needs at least the share of
# posts in the last column to hold sentences on both sides, with the better rule right on all of them.
# Chapter 2's map shows how a judge whose uncertain sentences lean one way produces this; whether the
# paper's judges did is a question only their sentence posteriors can answer.

# %% tags=["remove-input"]
show("table3")

# %% [markdown]
# (claims-table4)=
# ## Table 4: the ablation
#
# Table 4 repeats Table 3's TEF rows beside the two ablations and prints an Average column; both are
# recomputed, and the ablation statements of the text are checked against Table 3's Soft Vote.

# %% tags=["remove-input"]
show("table4")

# %% [markdown]
# (claims-table1)=
# ## Table 1: prompt robustness
#
# Table 1's Original column is an average of Table 3, so it can be recomputed; the verbose and minimal
# columns need the models.

# %% tags=["remove-input"]
show("table1")

# %% [markdown]
# (claims-table2)=
# ## Table 2: efficiency
#
# Table 2 measures time and money on the paper's hardware. What its text says about the table is
# recomputed from it, and its token totals are set against the prompts every method sends (the
# protocol's templates, filled with the posts at hand): a tokenizer such as Qwen2.5's or LLaMA 3's
# never puts two words in one token, so a prompt's words bound its tokens from below.

# %% tags=["remove-input"]
show("table2")

# %% [markdown]
# (claims-calibration)=
# ## Fig. 4: calibration
#
# The calibration figure prints no numbers. The paper defines no confidence for any of the rules; for
# TEF this companion uses the reference release's softmax of the two TEF scores, at the temperature
# that release sets.

# %% tags=["remove-input"]
show("figure4")

# %% tags=["remove-cell"]
assert shown == list(SECTIONS.values()), f"sections not shown: {sorted(set(SECTIONS.values()) - set(shown))}"
assert_ledger(ledger)
