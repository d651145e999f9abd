"""The published full-release counts and the per-post statistics (tefcore.mind.release)."""

from __future__ import annotations

import math

import pytest
from mind_fixtures import posts

import pandas as pd
from tefbook.chapters.ch03 import check_full_release, post_table
from tefbook.chapters.ch08 import query_table
from tefcore.mind.load import evaluation_pairs
from tefcore.mind.release import FULL_RELEASE, FULL_RELEASE_PAIRS, data_card, is_full_release, pair_counts
from tefcore.mind.schema import TABLE_ORDER


def full_release_pairs() -> pd.DataFrame:
    """The published pair counts in the form check_full_release takes (lang, dimension, change, stability)."""
    return pd.DataFrame([(lang, dim, *FULL_RELEASE_PAIRS[lang][dim]) for lang in ("zh", "en") for dim in TABLE_ORDER],
                        columns=["lang", "dimension", "change", "stability"])


# --- the full release ---------------------------------------------------------------------------
def test_is_full_release() -> None:
    assert is_full_release({"zh": 5474, "en": 2884})
    assert not is_full_release({"zh": 649, "en": 381})
    assert not is_full_release({"zh": 5474})


def _published_cards() -> dict:
    return {lang: {**{k: int(v) for k, v in FULL_RELEASE[lang].items() if k not in ("mean_length",
                                                                                     "mean_sentences")},
                   "mean_length": FULL_RELEASE[lang]["mean_length"] + 0.01,
                   "mean_sentences": FULL_RELEASE[lang]["mean_sentences"] - 0.001}
            for lang in ("zh", "en")}


def test_check_full_release_accepts_the_published_counts_and_names_a_difference() -> None:
    pairs = full_release_pairs()
    table = check_full_release(_published_cards(), pairs)
    assert table["ok"].all() and len(table) == 2 * (6 + 12)
    broken = pairs.copy()
    broken.loc[(broken["lang"] == "en") & (broken["dimension"] == "Politics"), "change"] = 658
    with pytest.raises(AssertionError, match="en Politics change: published 659, recomputed 658"):
        check_full_release(_published_cards(), broken)
    cards = _published_cards()
    cards["zh"]["excluded_pairs"] = 207
    with pytest.raises(AssertionError, match="zh excluded_pairs"):
        check_full_release(cards, pairs)


# --- workload -----------------------------------------------------------------------------------
def test_post_table_counts_sentences_and_coverage() -> None:
    table = post_table(posts()).set_index("post_id")
    first = table.loc["en-single-1"]
    assert first["length"] == 8 and first["n_labels"] == 2 and first["n_dimensions"] == 2
    assert first["n_pairs"] == 2
    assert first["sentences_reference"] == 2 and first["sentences_improved"] == 2
    # 43 non-space characters; the reference rule drops "Why?" (4 of them)
    assert math.isclose(first["covered_reference"], 39 / 43)
    assert first["covered_improved"] == 1.0
    assert table.loc["en-single-2", "n_pairs"] == 0
    assert table.loc["zh-single-3", "length"] == 27 and table.loc["zh-single-3", "sentences_reference"] == 2
    with pytest.raises(ValueError, match="unknown segmentation rule"):
        post_table(posts(), rules=("nltk",))


def test_post_table_agrees_with_the_data_card(mind_posts: dict) -> None:
    for lang, items in mind_posts.items():
        table = post_table(items)
        card = data_card(items)
        assert math.isclose(table["sentences_reference"].mean(), card["mean_sentences"])
        assert math.isclose(table["length"].mean(), card["mean_length"])
        assert table["n_pairs"].sum() == card["pairs"]
        assert table["covered_improved"].min() == 1.0
        counts = pair_counts(evaluation_pairs(items))
        q = query_table(evaluation_pairs(items))
        assert (q["kind"] == "direct").sum() == counts["total"].sum()
