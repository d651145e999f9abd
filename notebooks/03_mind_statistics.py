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
# # The MIND data card
#
# MIND is the benchmark of the paper: social-media posts in Chinese and English, each annotated with
# one or more *value orientations*. An orientation is a position on one subcategory of one of six value
# dimensions, and every subcategory opposes a change-oriented position to a stability-oriented one
# (protocol §1). What the experiments classify is not a post but an **evaluation pair**: a post together
# with one of its dimensions, whose target is the side (change or stability) that all of the post's
# labels in that dimension agree on. Pairs whose labels fall on both sides have no target and are left
# out (protocol §2).
#
# This chapter counts the data it is given, so that every later number can be traced to its
# denominator, and sets the paper's description of MIND against what the released files show.
#
# **What the paper prints, and what it does not.** About the data the paper prints the number of posts
# (8,358: 5,474 Chinese and 2,884 English), the six dimensions, the two languages and, in its Fig. 3, a
# radial chart of labels per orientation without numbers. Every other count of the full release on this
# page (labels, evaluation pairs, excluded pairs, mean length, sentences per post, pairs per dimension
# and side) was **counted from the release's files** for the protocol (§2), not taken from the paper, and
# is labelled so.

# %% tags=["parameters"]
# Directory holding mind_en.jsonl and mind_zh.jsonl. None: $MIND_DATA_DIR, else the embedded MIND sample.
data_dir = None

# %% tags=["hide-input"]
from tefbook.parameters import check_parameters

check_parameters("03_mind_statistics")  # a misspelt -p name fails here, naming the parameters above

import warnings

import pandas as pd
from IPython.display import HTML, Markdown, display
from myst_nb import glue

from tefbook.chapters import ch03
from tefbook.companion.figures import setup_notebook
from tefbook.companion.labels import LANG_LABELS
from tefpaper.ledger import chapter_claims, claim_link
from tefbook.companion.tables import format_cell, format_columns, round_half_up

setup_notebook()
warnings.filterwarnings("ignore", category=pd.errors.PerformanceWarning)  # .loc on the unsorted (lang, what) index
glue("link_agents", Markdown(claim_link("mind-agents")), display=False)

# %% [markdown]
# ## The data at hand
#
# `describe_data` says which data a directory holds (the embedded sample, the full release, or other
# data in the MIND format) with its counts and the SHA-256 of each file; `load_posts` reads and checks
# every record, and `evaluation_pairs` applies the rule above.

# %%
from tefcore.mind.load import evaluation_pairs, excluded_pairs, load_posts
from tefcore.mind.release import FULL_RELEASE, FULL_RELEASE_PAIRS, describe_data

data = describe_data(data_dir)
langs = [lang for lang in ("zh", "en") if lang in data.posts]  # the paper's order: Chinese first
posts = {lang: load_posts(lang, data.directory) for lang in langs}
pairs = {lang: evaluation_pairs(posts[lang]) for lang in langs}
at_hand_data = ch03.data_frame(data).set_index("lang").loc[langs]
at_hand_data["share of the full release's posts %"] = [100 * data.posts[lang] / FULL_RELEASE[lang]["posts"]
                                                       for lang in langs]
ch03.data_table(at_hand_data)

# %% tags=["hide-input"]
glue("data_kind", data.kind, display=False)
glue("sample", data.kind == "MIND sample", display=False)
for lang in langs:
    glue(f"posts_{lang}", data.posts[lang], display=False)
    glue(f"release_posts_{lang}", FULL_RELEASE[lang]["posts"], display=False)
    glue(f"share_{lang}", round_half_up(at_hand_data.loc[lang, "share of the full release's posts %"], 1),
         display=False)

# %% [markdown]
# These are the **{glue:text}`data_kind`**: {glue:text}`posts_zh:,` Chinese posts
# ({glue:text}`share_zh:.1f` % of the full release's {glue:text}`release_posts_zh:,`) and
# {glue:text}`posts_en:,` English ones ({glue:text}`share_en:.1f` % of {glue:text}`release_posts_en:,`).
# The embedded sample is a **cluster sample**: evenly spaced windows of each release file, every record lying wholly inside a window kept verbatim and in release
# order (`data/mind/README.md`). The release files are ordered by annotation file and by event, so a
# window holds runs of posts about the same event; the sample covers every event and both annotation
# files, yet its proportions are not those of the full release, as the tables below show.
#
# ## Posts, labels and evaluation pairs
#
# One row per post with its length (characters for Chinese, white-space separated words for English),
# its labels and pairs, and its sentences under the reference segmentation rule of protocol §3 (the
# rule behind the paper's experiments) and under this project's improved rule, which loses no text (it
# merges short pieces into their neighbours instead of dropping them and does not cut after "U.S.").
# The card counts them, language by language.

# %%
table = pd.concat([ch03.post_table(posts[lang]) for lang in langs], ignore_index=True)
card = pd.DataFrame({lang: {
    "posts": len(posts[lang]),
    "labels": sum(len(post.labels) for post in posts[lang]),
    "evaluation pairs": len(pairs[lang]),
    "excluded (two-sided) pairs": len(excluded_pairs(posts[lang])),
    "mean length": table.loc[table["lang"] == lang, "length"].mean(),
    "sentences per post (reference rule)": table.loc[table["lang"] == lang, "sentences_reference"].mean(),
    "sentences per post (improved rule)": table.loc[table["lang"] == lang, "sentences_improved"].mean(),
} for lang in langs})
counted = pd.DataFrame({lang: {"posts": f["posts"], "labels": f["labels"], "evaluation pairs": f["pairs"],
                               "excluded (two-sided) pairs": f["excluded_pairs"], "mean length": f["mean_length"],
                               "sentences per post (reference rule)": f["mean_sentences"]}
                        for lang, f in FULL_RELEASE.items()}).reindex(card.index)

# %% tags=["hide-input"]
ch03.card_table(card, counted, langs)

# %% [markdown]
# The middle column of each language holds the counts of the full release's files (protocol §2); the
# last holds what the paper itself prints, the number of posts and nothing else. On the full release
# (`tef download --dest data/mind-full`, then `-p 03.data_dir=data/mind-full`) the chapter checks
# every count of the middle columns and the pairs per dimension and side below with
# `ch03.check_full_release`, and stops, naming each count, if one differs:

# %%
from tefcore.mind.release import data_card, pair_counts

if data.kind == "full MIND release":
    by_side = pd.concat([pair_counts(pairs[lang]).reset_index().assign(lang=lang) for lang in langs])
    checked = ch03.check_full_release({lang: data_card(posts[lang]) for lang in langs}, by_side)
    print(f"full release: all {len(checked)} counts equal")
else:
    print(f"{data.kind}: the full release's counts are not checked here")

# %% [markdown]
# ## How long is a "long" post?
#
# The paper's title speaks of long-text value measurement, and its introduction of "long social media
# posts [that] mix background, quotations, and concessions, with only a few stance-bearing sentences".
# What a fusion rule can do depends on how many sentences it fuses, so the question matters: the
# sentence-level rules can only differ from one another on a post with several sentences, and TEF's
# argument (a few decisive sentences among many noncommittal ones) needs many.

# %%
lengths = table.groupby("lang")["length"].describe(percentiles=[0.1, 0.5, 0.9]).loc[langs]
lengths["coefficient of variation"] = lengths["std"] / lengths["mean"]
sentences = table.groupby("lang")["sentences_reference"].describe(percentiles=[0.1, 0.5, 0.9]).loc[langs]
sentences["posts with at most 3 sentences %"] = table.groupby("lang")["sentences_reference"].apply(
    lambda n: 100 * float((n <= 3).mean())).loc[langs]

# %% tags=["hide-input"]
ch03.glue_lengths(lengths, sentences, langs)
display(*ch03.length_tables(lengths, sentences))

# %% [markdown]
# The median English post has {glue:text}`len_median_en:.0f` words and {glue:text}`sent_median_en:.0f`
# sentences under the reference rule, the longest {glue:text}`len_max_en:.0f` words; the median
# Chinese post has {glue:text}`len_median_zh:.0f` characters and {glue:text}`sent_median_zh:.0f`
# sentences, the longest {glue:text}`len_max_zh:.0f` characters. These are paragraphs: no post of the
# data at hand has more than {glue:text}`sent_max_en:.0f` English or {glue:text}`sent_max_zh:.0f`
# Chinese sentences, and {glue:text}`sent_few_en:.1f` % of the English and {glue:text}`sent_few_zh:.1f` %
# of the Chinese posts have three or fewer. "Long" holds against a single sentence, which is the
# comparison the paper draws; it does not hold in the sense of documents of many paragraphs, where a
# handful of decisive sentences among dozens of others would give TEF the most room. The lengths are
# also unusually even for social media, whose lengths usually have a long tail: the standard
# deviation is {glue:text}`len_cv_en:.2f` (English) and {glue:text}`len_cv_zh:.2f` (Chinese) of the
# mean, and the shortest English post has {glue:text}`len_min_en:.0f` words. The section on Stage III
# below comes back to this.

# %% tags=["hide-input"]
ch03.length_figure(table, langs).show()

# %% [markdown]
# ## Sentences per post under the two segmentation rules
#
# Each sentence is one query to the judge for MV, SV and TEF, so this distribution is the workload of
# the sentence-level methods. The reference rule drops every piece shorter than ten characters, so a
# few characters of some posts never reach the judge ("coverage" below: the share of a post's non-space
# characters that its sentences contain); the improved rule keeps all of them.

# %%
by_rule = table.melt(id_vars=["lang"], value_vars=["sentences_reference", "sentences_improved"],
                     var_name="rule", value_name="sentences")
coverage = pd.DataFrame({
    (lang, rule): {"mean sentences": table.loc[table["lang"] == lang, f"sentences_{rule}"].mean(),
                   "single-sentence posts %": 100 * (table.loc[table["lang"] == lang, f"sentences_{rule}"] == 1).mean(),
                   "mean coverage %": 100 * table.loc[table["lang"] == lang, f"covered_{rule}"].mean(),
                   "posts losing text %": 100 * (table.loc[table["lang"] == lang, f"covered_{rule}"] < 1).mean()}
    for lang in langs for rule in ("reference", "improved")}).T.rename_axis(["language", "segmentation rule"])
format_columns(coverage.rename(index=LANG_LABELS, level=0), 2)

# %% tags=["hide-input"]
ch03.sentences_figure(by_rule, langs).show()

# %% [markdown]
# ## Pairs per dimension
#
# The paper's tables list the dimensions in the order Culture, Economy, Society, Politics, Technology,
# Environment; so does this one. "majority %" is the share of the more frequent side: the accuracy of a
# judge that always answers it, the **majority-class floor** that chapters 5 to 7 set beside every
# accuracy (one definition for the whole book, `majority_rate`; its Average over the dimensions,
# `majority_floor`, closes each language). The full release's columns are the counts of its files.

# %% tags=["full-width"]
from tefbook.companion.results import majority_floor, majority_rate
from tefcore.mind.schema import TABLE_ORDER

rows = {"data at hand": pd.DataFrame([(p.post_id, lang, p.dimension, p.side) for lang in langs for p in pairs[lang]],
                                     columns=["post_id", "lang", "dimension", "side"]),
        "full release, counted": ch03.pair_rows(FULL_RELEASE_PAIRS, langs)}  # one row per pair of its counts
floor = {what: majority_rate(r) for what, r in rows.items()}  # per dimension: the share of its larger side
floors = pd.DataFrame({what: majority_floor(r) for what, r in rows.items()})  # their Average over dimensions
dims = ch03.dimension_counts(rows, floor, langs)
ch03.dimension_table(dims, floors)

# %% [markdown]
# The floor the prose below quotes, language by language, from the data at hand's column: the Average
# row, and the lowest and highest dimension.

# %%
at_hand = dims.xs("data at hand", level="what")
by_lang = at_hand["majority %"].dropna().groupby(level="lang")  # the dimensions with pairs
quoted = pd.DataFrame({"floor": floors["data at hand"], "lowest": by_lang.min(), "lowest in": by_lang.idxmin().str[1],
                       "highest": by_lang.max(), "highest in": by_lang.idxmax().str[1]}).loc[langs]
smallest = at_hand["pairs"][at_hand["pairs"] > 0].groupby(level="lang")
quoted["smallest"], quoted["its pairs"] = smallest.idxmin().str[1], smallest.min()
format_columns(quoted.rename(index=LANG_LABELS).rename_axis(index="language"), 1)

# %% tags=["hide-input"]
ch03.glue_floors(quoted)

# %% [markdown]
# On the data at hand, always answering the more frequent side scores {glue:text}`floor_en:.1f` % on
# the Average over the six English dimensions (from {glue:text}`floor_min_en:.1f` % in
# {glue:text}`floor_min_dim_en` to {glue:text}`floor_max_en:.1f` % in {glue:text}`floor_max_dim_en`) and
# {glue:text}`floor_zh:.1f` % over the Chinese ones (from {glue:text}`floor_min_zh:.1f` % in
# {glue:text}`floor_min_dim_zh` to {glue:text}`floor_max_zh:.1f` % in {glue:text}`floor_max_dim_zh`).
# A judge whose Average accuracy does not clear this floor has learnt nothing usable about the side.
# The smallest cells are English {glue:text}`small_dim_en` ({glue:text}`small_n_en` pairs) and Chinese
# {glue:text}`small_dim_zh` ({glue:text}`small_n_zh`): a difference of a few points between two rules
# there is within the noise (chapter 5 gives the intervals).

# %% tags=["hide-input"]
ch03.share_figure(dims, langs).show()

# %% [markdown]
# ## Public events
#
# Each record carries the code of the public event its post was collected around (protocol §2). The
# release does not spell the codes out; the posts of RU are about the Russia–Ukraine war and those of
# GPT about generative AI, the two events the paper names. Keyword search was anchored to events per
# dimension (paper, Stage I), so an event feeds some dimensions much more than others, and events
# differ in the side their posts take:

# %%
pair_rows = pd.DataFrame([(lang, p.post_id, p.dimension, p.side) for lang in langs for p in pairs[lang]],
                         columns=["lang", "post_id", "dimension", "side"])
pair_rows = pair_rows.merge(table[["post_id", "event"]], on="post_id")
events = pair_rows.pivot_table(index="event", columns="lang", values="side", aggfunc=[
    "size", lambda s: 100 * float((s == "change").mean())], fill_value=0)  # pairs, change %
ch03.event_table(events, langs)

# %% [markdown]
# Pairs per event and dimension, one table per language:

# %%
by_event = pd.crosstab([pair_rows["lang"], pair_rows["event"]], pair_rows["dimension"]).reindex(
    columns=list(TABLE_ORDER), fill_value=0)
for lang in langs:
    display(by_event.loc[lang].rename_axis(index=f"{LANG_LABELS[lang]}: event", columns=None))

# %% [markdown]
# ## Labels per orientation (the paper's Fig. 3)
#
# The paper's statistics figure is a radial bar chart with one bar per orientation: colours mark the
# dimension and the two bars of a subcategory stand side by side. Below, the key names the colour of
# each dimension; the change-oriented bar of a subcategory is solid and the stability-oriented one
# hatched. Hover over a bar for its names and count. The counts are labels, not evaluation pairs: a
# post labelled twice in one dimension counts twice. The paper's figure prints no numbers, so it cannot
# be compared number by number; the figure is drawn from the data at hand.

# %%
labels = pd.concat([ch03.label_counts(posts[lang]).assign(lang=lang) for lang in langs], ignore_index=True)
ch03.orientation_table(labels, langs)

# %% tags=["hide-input"]
ch03.orientation_figure(labels, langs).show()

# %% [markdown]
# ## Stage III: posts written or edited by LLM agents
#
# First, how balanced are the sides? The dimension of each language whose larger side has the largest
# share of its pairs, in the full release's counts:

# %%
release = dims.xs("full release, counted", level="what")
lopsided = release.loc[release.groupby(level="lang")["majority %"].idxmax()]
lopsided[["change", "stability", "majority %"]].rename(index=LANG_LABELS, level="lang").rename_axis(
    index=["language", "dimension"], columns=None).map(format_cell)

# %% tags=["hide-input"]
ch03.glue_lopsided(lopsided)

# %% [markdown]
#
# The paper's last construction stage (Stage III, "agent-driven data evolution") changes the corpus in
# two ways: a *balancing agent* generates synthetic posts where a category is underrepresented, and,
# for "low-confidence or ambiguous samples", a *semantic-edit agent* revises the text "to make the
# labeled orientation explicit". Only verified samples are kept. This raises questions about what the
# benchmark measures, which the release cannot answer, because no record says whether its text was
# collected, generated or edited:
#
# * **Whose orientation is the label?** An edited post states the orientation its label names because
#   an agent made it do so. Agreement with such a label measures, in part, agreement with the agent's
#   reading of the category, and a judge that is itself an LLM may find agent-written statements easier
#   than what people post.
# * **What is being balanced?** "Balancing" adds posts where a *category* is underrepresented, yet the
#   sides of a dimension are far from balanced in the full release's counts (the most lopsided
#   dimension of each language, from the table of pairs above: Chinese {glue:text}`lop_dim_zh`,
#   {glue:text}`lop_change_zh:,` change against {glue:text}`lop_stability_zh:,` stability pairs, and
#   English {glue:text}`lop_dim_en`, {glue:text}`lop_change_en:,` against {glue:text}`lop_stability_en:,`).
#   Which categories the agent balanced, and how many posts it wrote, is not said.
# * **Where are the hard cases?** Ambiguous texts, the ones an annotator found hard, were rewritten
#   to be explicit. TEF's case is about posts whose few decisive sentences sit among uncertain ones;
#   an edit that makes the orientation explicit may add exactly such a decisive sentence, or remove the
#   ambiguity TEF is meant to handle. Either way, results on edited posts need not carry over to posts
#   as people write them.
#
# The even lengths measured above (no very short and no very long post, where social media usually
# have both) are what one would also expect from generated or edited text, but they prove nothing: a
# length filter in Stage I would give the same. A reviewer would ask the authors for the share of
# generated and edited posts, and for the main results on collected posts alone. The claims ledger
# records these statements as not checkable from the release ({glue:md}`link_agents`).

# %% [markdown]
# ## Dimensions per post
#
# A post labelled in several dimensions yields several evaluation pairs, and its sentences are scored
# once per pair, with the prompt of that dimension: the number of dimensions per post multiplies the
# cost of every method (chapter 8).

# %%
table.pivot_table(index="n_dimensions", columns="lang", values="post_id", aggfunc="count", fill_value=0)[
    langs].rename(columns=LANG_LABELS).rename_axis(index="dimensions per post", columns=None)

# %% [markdown]
# ## What the release can and cannot confirm
#
# The paper describes MIND in a few sentences (Sec. 4 and its Fig. 3): its size, languages and
# dimensions, the events, where and when the posts were collected, how they were annotated, and the
# agents of Stage III. Each statement is a row of the claims ledger (chapter 11), checked on the data at
# hand; its kind of evidence says whether the files can confirm it, whether only the full release can,
# or whether no release file can (there are no dates, sources, annotators or marks of synthetic and
# edited posts in the records). Two rows read differently from the tables above. The events row
# counts posts, while the events table counts evaluation pairs (one per dimension a post is labelled
# in), so its numbers are smaller. The row on pairs per dimension compares the data at hand with the
# full release's count for every language, dimension and side: on a sample of the release none of
# them can be equal, and that is expected, not a fault; on the full release all of them should be.

# %% tags=["hide-input"]
display(HTML(chapter_claims("03_mind_statistics", data_dir=data_dir)))
