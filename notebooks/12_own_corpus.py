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
# # TEF on your own data
#
# Everything the earlier chapters did on MIND works on texts of one's own: one's own dimensions, two or
# more positions (*sides*) on each, one's own prompt if one wishes, and the same judges, caches and
# fusion rules. A *task file* says all of it. This chapter runs the whole path on a small example corpus
# that is not MIND, with the e5 zero-shot judge: it checks the task, scores every sentence, fuses the
# sentences into one decision per text and dimension, and scores the decisions where gold labels
# exist. One dimension has three sides, so the paper's rule is used in its general form,
# $\operatorname{Score}(c) = \sum_i w_i \log\frac{p_i^{(c)}}{1 - p_i^{(c)}}$ with
# $w_i = 1 - H(\mathbf p_i)/\log K$ (Eq. 3 and Algorithm 1 of the paper), for $K = 3$. That form is the
# paper's rule as written, not a Bayes rule: chapter 1 (section *More than two classes*) showed that for
# $K > 2$ the one-vs-rest score gives a class a bonus each time a sentence is sure of it, so that it
# no longer decides as Bayes' rule does under the assumptions that justify it for two sides (the claims
# ledger's row `k3-bayes`: the paper's additive evidence scale holds for the binary contrast only). With
# three sides, TEF's decisions below are Eq. 3's, not those of a Bayes-optimal fusion.
#
# **The example corpus.** *Harbour Town* (`data/examples/harbour-town/`) holds
# {glue:text}`n_docs` short comments on the plan of a fictional town, {glue:text}`n_en` in English and
# {glue:text}`n_zh` in Chinese, about its housing (two sides: *supply*, *preservation*) and its
# transport (three sides: *car*, *transit*, *cycling*). The authors of this book wrote every comment for
# this example: the town, the people and their opinions are invented, and nothing computed here says
# anything about a real place. Each comment was written to support the side its gold label names, so
# the labels are true by construction; some comments take no side on a dimension and have no label
# there. The texts are dedicated to the public domain (CC0 1.0); the folder's README says so too.

# %% tags=["parameters"]
# The task file (relative to the repository root, or absolute).
task_file = "data/examples/harbour-town/task.yaml"
# The judge: a registry name (`tef models`).
model = "e5-zeroshot"
# Where the caches go; empty: a new temporary folder.
out = ""
# The comment looked at up close, and its dimension.
example_id = "t09"
example_dimension = "Transport"

# %% tags=["hide-input"]
from tefbook.companion.figures import setup_notebook
from tefbook.parameters import check_parameters

check_parameters("12_own_corpus")  # a misspelt -p name fails here, naming the parameters above
setup_notebook()
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from tefbook.toc import project_root
from tefcore.evaluate import decisions, predict_pairs, score_table, strongest_baseline
from tefcore.explain import explain_file
from tefcore.fusion import RULE_LABELS, clipped_log_odds, entropy_weight, fuse_many
from tefcore.judges import make_backend
from tefcore.extraction.cache import cache_path, read_cache
from tefcore.extraction.run import run_extraction
from tefcore.tasks.segment import split_sentences
from tefcore.tasks import load_task, summary

os.chdir(project_root())  # paths below read as typed from the repository root
pd.set_option("display.max_colwidth", None)  # tables show whole sentences

from tefbook.chapters.ch12 import COMMANDS, commands_block, glue_numbers, k_line, shown  # the page's layout

# %% [markdown]
# ## The task file
#
# A task is a YAML file. Harbour Town's names its data (a CSV file beside it, with columns `id`,
# `lang` and `text`, and one gold column per dimension), its two dimensions with a description of each
# side, and the segmentation rule. It names no prompt, so an LLM judge would be asked the paper's
# original prompt filled from these sides; it sets no `language`, so the `lang` column gives each
# comment's language. `tef init DIR` writes a commented example of such a file to start from.

# %% tags=["hide-input"]
print(Path(task_file).read_text(encoding="utf-8"))

# %% [markdown]
# `load_task` reads the file, its data and its prompt and checks all of it before anything is scored;
# `summary` is what `tef validate` prints.

# %%
task = load_task(task_file)
print("\n".join(summary(task)))

# %% [markdown]
# Bad input stops here, with one line per problem naming the file, the line or row, and the key or
# column: a gold side that is not a side of its dimension, a missing `id` or `text` column, an empty
# text, a duplicate id, a prompt without `{text}`, a dimension with one side, a file that cannot be
# read, a language other than `en` and `zh`. Nothing is written then, no cache is begun. For example,
# a third row that repeats the first row's id `p1` gives
#
# ```text
# tef: error: my-study/posts.csv, row 3, column 'id': duplicate id 'p1' (first on row 1)
# ```
#
# The data may also be a JSON-lines file, one object per line with the id, the text and, for gold
# labels, a `labels` list of `{"dimension": ..., "side": ...}` objects as in the MIND files, or a
# Parquet file with the same columns as the CSV. A comment labelled on both sides of one dimension has
# no gold there, as protocol §2 has it for MIND.
#
# A prompt of one's own is a text file named by `prompt:`. It must hold `{text}`, where the whole
# comment or one sentence goes; `{dimension}`, `{sides}` (one line per side: its letter, its name, its
# description) and `{letters}` (`A or B`, `A, B or C`) are filled from the schema. The folder of the
# cache is named after the prompt file (`original` without one), so that two prompts never share a
# cache.
#
# An LLM judge answers with one letter per side, `A`, `B`, `C`, ... in the order the task lists the
# sides, and its probabilities are read from the answer position and renormalised over those $K$
# letters, as the protocol does for `C` and `S`. This is the prompt of one sentence on the
# three-side dimension:

# %%
print(task.prompt("Build real, separated bike lanes.", "Transport", "en"))

# %% [markdown]
# ## Scoring every sentence
#
# Every comment is scored on every dimension, labelled or not: {glue:text}`n_pairs` pairs, each one
# whole comment (for Direct) and each of its sentences (for the fusion rules). The extraction loop is
# the one the MIND chapters use; the task gives it the prompts and the sides. The e5 zero-shot judge
# reads no prompt: it compares a text's multilingual-e5-small embedding with the embedding of each
# side's description and turns the cosines $c_k$ into $p^{(k)} \propto e^{c_k/\tau}$, the temperature
# $\tau$ fixed per dimension from the sentences alone (no label is read). One cache per language.

# %%
judge = make_backend(model)
out_dir = Path(out) if out else Path(tempfile.mkdtemp(prefix="tef-own-data-"))
for lang in task.languages:
    run_extraction(judge, task.pairs(lang), cache_path(out_dir, judge.name, task.prompt_name, lang),
                   task=task, progress=False)
frame, provenance = read_cache(out_dir / judge.name / task.prompt_name)
sides = {c.dimension: list(c.sides) for c in task.dimensions}
shown(frame[["post_id", "lang", "dimension", "side", "direct"]].head(), 3, index=False,
      direct="p(first side), whole comment")

# %% [markdown]
# A Housing pair holds, like a MIND pair, the probability of the first side (`direct` for the whole
# comment, `sentences` for each sentence). A Transport pair holds three: its cache rows carry the whole
# distribution, `direct_probs` and `sentence_probs`, and its provenance records the task, its hash and
# $K$ for each dimension: {glue:text}`k_line`.
#
# ## One decision per comment and dimension
#
# No gold label is needed to decide: `decisions` fuses every pair with the rules asked for (here all
# six) and returns, per pair and rule, the decision, its confidence and the rule's score of every side.
# `tef fuse --cache ...` prints the same table. TEF's decisions on Transport, the first rows:

# %%
rules = ["direct", "majority_vote", "soft_vote", "tef", "tef_without_entropy", "tef_without_log_odds"]
table = decisions(frame, rules=rules, classes=sides)
tef_transport = table[(table["rule"] == "tef") & (table["dimension"] == "Transport")]
shown(tef_transport.set_index("id")[["lang", "decision", "confidence", "score_car", "score_transit",
                                     "score_cycling", "gold"]].head(8), 2)

# %% [markdown]
# TEF's confidence is the share its decided side gets in $\operatorname{softmax}(\operatorname{Score}/T)$
# at $T = 5$, as for MIND; with three sides it runs from $1/3$ (no evidence either way) to 1, with
# two from $1/2$. The confidences of a two-side and a three-side dimension are therefore not on the
# same footing, and neither is a vote share of Majority Vote.
#
# ## One comment up close: Eq. 3 with three sides
#
# Comment `t09` on Transport was written for *cycling*. Its sentences, the judge's distribution over
# the three sides for each, the weight $w_i = 1 - H(\mathbf p_i)/\log 3$ and each side's clipped
# log-odds $\ell_i^{(c)}$:

# %%
row = frame[(frame["post_id"] == example_id) & (frame["dimension"] == example_dimension)].iloc[0]
text = next(d.text for d in task.documents if d.id == example_id)
p = np.array(row["sentence_probs"])  # (sentences, K): one distribution per sentence
w = entropy_weight(p)  # 1 - H(p_i) / log K
ell = clipped_log_odds(p)  # log(p / (1 - p)), clipped at ±M, for every side
score = (w[:, None] * ell).sum(axis=0)  # Eq. 3: Score(c) = Σ_i w_i ℓ_i^(c)
votes = p.argmax(axis=1)  # Majority Vote counts these
up_close = pd.DataFrame(p, columns=[f"p_{s}" for s in sides[example_dimension]]).assign(
    weight=w, vote=np.array(sides[example_dimension])[votes])
up_close.insert(0, "text", split_sentences(text, row["lang"], rule=task.segmentation))
shown(up_close, 3, index=False)

# %% [markdown]
# Summing the weighted log-odds gives TEF's score of each side; `fuse_many` computes the same scores
# and breaks the ties, and Majority Vote counts the sentences' most probable sides instead:

# %%
one = np.zeros(len(p), dtype=int)  # every sentence belongs to the same comment
tef_result = fuse_many(p, one, "tef", classes=sides[example_dimension])
mv_result = fuse_many(p, one, "majority_vote", classes=sides[example_dimension])
assert np.allclose(tef_result.scores[0], score)
shown(pd.DataFrame({"Eq. 3 by hand": score, "fuse_many (TEF)": tef_result.scores[0],
                    "MV vote share": mv_result.scores[0]}, index=pd.Index(sides[example_dimension], name="side")), 3,
      side="side")

# %% [markdown]
# TEF decides *{glue:text}`ex_tef`* (confidence {glue:text}`ex_tef_conf:.2f`), Majority Vote
# *{glue:text}`ex_mv`*: {glue:text}`ex_n_mv` of the {glue:text}`ex_n` sentences have
# *{glue:text}`ex_mv`* as their most probable side, with weights of at most {glue:text}`ex_w_mv:.3f`,
# while the sentence of largest weight, {glue:text}`ex_w_max:.3f`, votes *{glue:text}`ex_vote_max`*.
# Majority Vote counts sentences; TEF counts their evidence, and a near-certain sentence outweighs two
# hesitant ones.
#
# On Transport, TEF and Majority Vote disagree on {glue:text}`n_disagree` comments. Where the comment has
# a gold side, TEF was right on {glue:text}`n_tef_right` of them and Majority Vote on
# {glue:text}`n_mv_right`:

# %%
wide = table[table["dimension"] == "Transport"].pivot(index="id", columns="rule", values="decision")
gold = table[table["dimension"] == "Transport"].drop_duplicates("id").set_index("id")["gold"]
disagree = wide[wide["tef"] != wide["majority_vote"]][["majority_vote", "tef"]].assign(gold=gold)
shown(disagree, 0)

# %% [markdown]
# ## Which sentences decided: the evidence view
#
# The computation above, one term $w_i \ell_i^{(c)}$ per sentence and side, is what `explain_file` lays
# out for every text of a cache: each sentence with its probabilities, its weight, its clipped log-odds,
# its contribution to each side's score, and its *share* of the decision, that is of the margin between
# TEF's side and the runner-up (positive for a sentence that pushes towards the decision, negative against
# it; the absolute shares of a text add up to 1). It finds the sentences in the data again by the
# segmentation the cache records, and refuses, in one line, a text that changed since it was scored.
# Beside each text it puts what Direct, Majority Vote, Soft Vote and TEF decide, and a *disagreement*: the
# share of the six pairs of these four rules that decide differently. The texts where TEF and Majority
# Vote part, the most disputed first:

# %%
view = explain_file(out_dir / judge.name / task.prompt_name, task=task)  # one row per sentence
texts = view[view["sentence"] == 1]  # each text's first row holds its decisions
disputed = texts[texts["tef"] != texts["majority_vote"]].sort_values(
    ["disagreement", "tef_confidence"], ascending=False)
shown(disputed.set_index(["id", "dimension"])[["gold", "direct", "majority_vote", "soft_vote", "tef",
                                               "disagreement"]].head(8), 2, compact=True)

# %% [markdown]
# The sentences of comment `t09` on Transport, as the view shows them: first each sentence with the
# judge's distribution and its weight, then its contributions, which add up to the scores `fuse_many`
# gave above, and its share of TEF's margin:

# %%
side_names = sides[example_dimension]
decisive = view[(view["id"] == example_id) & (view["dimension"] == example_dimension)]
contributions = decisive[[f"contribution_{s}" for s in side_names]]
assert np.allclose(contributions.sum().to_numpy(), tef_result.scores[0], rtol=0.0, atol=1e-12)
by_sentence = decisive.set_index("sentence")
shown(by_sentence[["text", *(f"p_{s}" for s in side_names), "weight"]], 3, sentence="#", compact=True)

# %% [markdown]
# Each sentence's term $w_i \ell_i^{(c)}$ for each side, its share of TEF's margin, $m_i / \sum_j |m_j|$ with
# $m_i = w_i(\ell_i^{(\hat c)} - \ell_i^{(r)})$ for TEF's side $\hat c$ and the runner-up $r$, and the side it
# leans to:

# %%
shown(by_sentence[[*contributions.columns, "share", "leans"]], 3, sentence="#", compact=True)

# %% [markdown]
# Sentence {glue:text}`ev_top` (*{glue:text}`ev_top_text`*) holds {glue:text}`ev_top_share:.0%` of TEF's
# margin for *{glue:text}`ex_tef`*; the {glue:text}`ev_n_against` sentences that lean the other way hold
# {glue:text}`ev_against:.0%` together. Majority Vote, which counts sentences, decides *{glue:text}`ex_mv`*.
# `tef explain` prints the same view in the terminal, as csv or json for scripts, or as an HTML report of
# the whole cache: every text with its sentences shaded in the colour of the side they favour, the
# stronger the larger their share, the rules' decisions beside them, and an index of the texts by
# disagreement. The report is one self-contained file that opens without a network.

# %% [markdown]
# ## Scores where gold exists
#
# {glue:text}`n_gold` of the pairs have a gold side ({glue:text}`n_gold_housing` on Housing,
# {glue:text}`n_gold_transport` on Transport). `predict_pairs` and `score_table` are the functions
# behind every table of the MIND chapters; with the task's sides they compute macro-F1 over the two
# sides of Housing and over the three of Transport. Both languages are pooled here (`tef evaluate`
# prints one table per cache, that is per language).

# %%
labelled = frame[frame["side"].notna()]
pred = predict_pairs(labelled, rules=rules, classes=sides)
scores = score_table(pred, by=["rule", "dimension"], classes=sides)
shown(scores.pivot(index="rule", columns="dimension", values=["accuracy", "macro_f1"]).loc[rules].rename(
    index=RULE_LABELS).rename_axis(columns=[None, "dimension"]), 1)

# %%
best = strongest_baseline(scores[scores["dimension"] == "Average"], by=["dimension"])
shown(best.assign(strongest_baseline=best["strongest_baseline"].map(RULE_LABELS)), 1, index=False,
      tef="TEF's accuracy (%)")

# %% [markdown]
# On the Average of the two dimensions, TEF's accuracy is {glue:text}`tef_avg:.1f` %, and the strongest
# baseline, {glue:text}`best_name`, reaches {glue:text}`best_avg:.1f` %: TEF minus the strongest baseline is
# {glue:text}`gain:+.1f` points. Macro-F1 of TEF: {glue:text}`tef_f1_housing:.1f` on Housing and
# {glue:text}`tef_f1_transport:.1f` on Transport. One comment more or less among Transport's
# {glue:text}`n_gold_transport` moves its accuracy by {glue:text}`one_pair:.1f` points, so these numbers
# show the path, not whether TEF helps on data of this kind: that takes hundreds of labelled texts, as
# the MIND chapters have, and a judge that carries enough signal.
#
# ## The same from the command line

# %% [markdown]
# On the command line the path of this page takes {glue:text}`n_commands` commands, from `tef init`,
# which writes a task to start from, to the scores where gold exists:

# %% tags=["remove-input"]
commands_block()  # the COMMANDS of the chapter module, one bash block

# %% [markdown]
# Any judge of the registry runs on a task: the embedded SmolLM2 and vLLM models and the APIs read
# one letter per side; the cross-fitted e5 judge learns a two-side dimension from its gold labels. An
# extraction resumes when run again, runs on a Ray cluster with `--engine ray`, and refuses to mix a
# cache with results of another task, prompt or judge.

# %% tags=["remove-cell"]
langs, dims = [d.lang for d in task.documents], labelled["dimension"]
average = scores[scores["dimension"] == "Average"].set_index("rule")
f1 = scores.set_index(["rule", "dimension"])["macro_f1"]
mv_side = sides[example_dimension].index(mv_result.prediction[0])
top = decisive.loc[decisive["share"].idxmax()]
glue_numbers({
    "n_docs": len(task.documents), "n_en": langs.count("en"), "n_zh": langs.count("zh"), "n_pairs": len(frame),
    "k_line": k_line(provenance), "n_commands": len(COMMANDS),
    "ex_tef": tef_result.prediction[0], "ex_tef_conf": tef_result.confidence[0], "ex_mv": mv_result.prediction[0],
    "ex_n": len(p), "ex_n_mv": (votes == mv_side).sum(), "ex_w_mv": w[votes == mv_side].max(),
    "ex_w_max": w.max(), "ex_vote_max": sides[example_dimension][votes[w.argmax()]], "n_disagree": len(disagree),
    "n_tef_right": (disagree["tef"] == disagree["gold"]).sum(),
    "n_mv_right": (disagree["majority_vote"] == disagree["gold"]).sum(),
    "n_gold": len(labelled), "n_gold_housing": (dims == "Housing").sum(), "tef_avg": average.loc["tef", "accuracy"],
    "n_gold_transport": (dims == "Transport").sum(), "best_name": RULE_LABELS[best["strongest_baseline"].iloc[0]],
    "best_avg": best["baseline"].iloc[0], "gain": best["gain"].iloc[0], "tef_f1_housing": f1["tef", "Housing"],
    "tef_f1_transport": f1["tef", "Transport"], "one_pair": 100.0 / (dims == "Transport").sum(),
    "ev_top": int(top["sentence"]), "ev_top_text": top["text"], "ev_top_share": top["share"],
    "ev_n_against": int((decisive["share"] < 0).sum()), "ev_against": -decisive.loc[decisive["share"] < 0, "share"].sum(),
})
