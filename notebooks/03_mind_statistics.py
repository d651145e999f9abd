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
# out.
#
# This chapter recomputes the data card from the data directory it is given, so that the numbers of
# every later chapter can be traced to their denominators. The counts published for the full release
# (protocol §2) stand beside ours; with the full release the chapter asserts them, and with a sample it
# shows how far the sample drifts from them. It also sets the paper's description of MIND against what
# the released files can show: some of it they confirm, some only the full release can, and some no
# release file can.

# %% tags=["parameters"]
# Directory holding mind_en.jsonl and mind_zh.jsonl. None: $MIND_DATA_DIR, else the embedded MIND sample.
data_dir = None

# %%
from tefbook.parameters import check_parameters

check_parameters("03_mind_statistics")  # a misspelt -p name fails here, naming the parameters above

from IPython.display import Markdown, display

from chapters import ch03, prose
from companion.figures import setup_notebook
from companion.tables import format_columns

setup_notebook()
card = ch03.load_card(data_dir)

# %% tags=["hide-input"]
display(Markdown(prose.data_markdown(card.description)))

# %% [markdown]
# ## Posts, labels and evaluation pairs
#
# The table puts the data card of the data at hand next to the counts published for the full release.
# Lengths are characters for Chinese and white-space separated words for English. "Sentences per post"
# uses the reference segmentation rule of protocol §3, the one behind the paper's numbers, and, on the
# last line, this project's improved rule. The improved rule loses no text: it merges short pieces into
# their neighbours instead of dropping them, and does not cut after abbreviations such as "U.S.". The
# full release has no published figure for it.

# %%
ch03.card_table(card)

# %% tags=["hide-input"]
display(Markdown(ch03.full_release_markdown(card)))

# %% [markdown]
# When the data directory is the embedded sample (the default), these are the numbers of a **cluster
# sample**: evenly spaced windows of each release file, every record lying wholly inside a window kept
# verbatim and in release order (`data/mind/README.md` gives the details). Because the release files are
# ordered by annotation file and by event, a window holds runs of posts about the same event. The sample
# covers every event and both annotation files, yet its per-dimension proportions are not those of the
# full release, as the next tables show.
#
# ## What the release can and cannot confirm
#
# The paper describes MIND in a few sentences (Sec. 4 and its Fig. 3): its size, the languages and
# dimensions, the public events it covers, where and when the posts were collected, how they were
# annotated, and that LLM agents balanced and edited the corpus. Each of those statements is a row of the
# claims ledger (chapter 11). The list below checks each one against the data at hand and says which of
# three kinds it is: confirmed by these files; a published count of the full release, which only the full
# release can confirm; or a statement about the collection and annotation process that no release
# file records (there are no dates, sources, annotators or marks of synthetic and edited posts in the
# records).

# %% tags=["hide-input"]
display(Markdown(ch03.confirm_markdown(ch03.release_claims(data_dir))))

# %% [markdown]
# ## Pairs per dimension
#
# The paper's tables list the dimensions in the order Culture, Economy, Society, Politics, Technology,
# Environment; so does this one. "change %" is the share of change-oriented targets, which is also the
# accuracy of a judge that always answers "change"; "share %" is the dimension's share of the language's
# pairs. Each rate stands beside the counts it is computed from.

# %%
format_columns(ch03.dimension_table(card))

# %% tags=["hide-input"]
ch03.share_figure(card).show()

# %% [markdown]
# ## Public events
#
# Each record carries the code of the public event its post was collected around (protocol §2). The
# release does not spell the codes out; the posts of RU are about the Russia–Ukraine war and those of GPT
# about generative AI, the two events the paper names. The paper anchors the keyword search of each value
# dimension to high-search-volume events, so an event feeds some dimensions much more than others, and
# events differ in the side their posts take.

# %%
format_columns(ch03.event_table(card))

# %% tags=["hide-input"]
display(Markdown(ch03.event_markdown(card)))

# %% [markdown]
# Pairs per event and dimension show which dimensions each event feeds:

# %%
ch03.event_dimension_table(card)

# %% [markdown]
# ## Labels per orientation (the paper's Fig. 3)
#
# The paper's statistics figure is a radial bar chart with one bar per orientation: colours mark the
# dimension and the two bars of a subcategory stand side by side, change-oriented first (solid), then
# stability-oriented (hatched). Hover over a bar for its names and count. The counts are labels, not
# evaluation pairs: a post labelled twice in one dimension counts twice. The paper's figure prints no
# numbers, so it cannot be compared number by number; the figure below is drawn from the data at hand.

# %% tags=["hide-input"]
ch03.orientation_figure(card).show()

# %% [markdown]
# The same counts as a table, one row per subcategory, so that they can be read and compared exactly:

# %%
ch03.orientation_table(card)

# %% [markdown]
# ## Dimensions per post
#
# A post labelled in several dimensions yields several evaluation pairs, and its sentences are scored
# once per pair, with the prompt of that dimension. The number of dimensions per post therefore
# multiplies the cost of every method (chapter 8).

# %%
ch03.dimensions_per_post(card)

# %% [markdown]
# ## Post lengths
#
# Chinese lengths are characters, English lengths are words; the dashed line is each language's mean.

# %% tags=["hide-input"]
ch03.length_figure(card).show()

# %%
format_columns(ch03.length_table(card))

# %% [markdown]
# ## Sentences per post under the two segmentation rules
#
# Each sentence is one query to the judge for MV, SV and TEF, so this distribution is the workload of
# the sentence-level methods. The reference rule (protocol §3) drops every piece shorter than ten
# characters, so a few characters of some posts never reach the judge ("coverage" below); the
# improved rule keeps all of them. Counts stand beside their shares.

# %%
format_columns(ch03.segmentation_table(card), digits=2)

# %% tags=["hide-input"]
ch03.sentences_figure(card).show()

# %% [markdown]
# ## What this means for the later chapters
#
# Every accuracy in this book is a per-dimension accuracy over evaluation pairs, and its Average is the
# unweighted mean over the six dimensions, as in the paper's tables. The tables above give the
# denominators. Two consequences on the data at hand:

# %% tags=["hide-input"]
display(Markdown(ch03.floor_markdown(card)))

# %% [markdown]
# A judge whose Average accuracy does not clear the constant answer's has learnt nothing usable about
# the side; the result chapters state this floor beside every table of ours. Small cells have wide
# bootstrap intervals, and a per-dimension difference between two rules on a few dozen pairs is within
# the noise. The sentence-level methods send as many queries per pair as the post has sentences; chapter
# 8 counts their tokens.
