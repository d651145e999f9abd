"""Chapter 3's data card (chapters.ch03): counts by a second route, the full-release check on a
small data set dressed up as the full release, and the list of what the release can confirm."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from chapters import ch03, prose
from companion.results import majority_rate
from tefcore.mind import release
from tefcore.mind.load import evaluation_pairs, load_posts
from tefcore.mind.schema import TABLE_ORDER

ECO = ("Economy", "Economic Models", "Free-Market", "change"), ("Economy", "Economic Models", "Interventionist", "stability")
POL = ("Politics", "Policy Orientations", "Revolutionism", "change"), ("Politics", "Policy Orientations", "Reformism", "stability")

# (id, event, text, labels as (dimension, subcategory, orientation, side))
RECORDS = {
    "zh": [
        ("zh-single-1", "RU", "市场应该决定价格和资源配置。政府不应过多干预经济运行。", [ECO[0], POL[1]]),
        ("zh-single-2", "RU", "国家必须统筹经济发展的方向。", [ECO[1]]),
        ("zh-single-3", "SY", "改革要一步一步来，不能急于求成。", [POL[1], ECO[0], ECO[1]]),
    ],
    "en": [
        ("en-single-1", "GPT", "Why? Markets decide prices. Taxes should fall now.", [ECO[0], POL[0]]),
        ("en-single-2", "COL", "The state must plan the economy and keep prices stable.", [ECO[1]]),
    ],
}


def _write(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for lang, records in RECORDS.items():
        lines = [json.dumps({"id": i, "lang": lang, "event": e, "text": t,
                             "labels": [dict(zip(("dimension", "subcategory", "orientation", "side"), lab))
                                        for lab in labels]}, ensure_ascii=False)
                 for i, e, t, labels in records]
        (folder / f"mind_{lang}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture()
def small(tmp_path: Path) -> ch03.DataCard:
    return ch03.load_card(_write(tmp_path / "mind"))


@pytest.fixture(scope="module")
def sample() -> ch03.DataCard:
    return ch03.load_card()


# --- which data ---------------------------------------------------------------------------------
def test_the_default_is_the_embedded_sample_and_the_page_says_so(sample: ch03.DataCard) -> None:
    assert sample.description.kind == "MIND sample" and not sample.full
    assert sample.langs == ["zh", "en"]
    text = prose.data_markdown(sample.description)
    assert "**the embedded MIND sample** (`data/mind`)" in text
    assert "649 posts and 1,215 evaluation pairs" in text and "381 posts and 605 evaluation pairs" in text
    assert f"{649 / 5474:.1%}" in text and "It is not the full release" in text


def test_other_data_are_custom_data(small: ch03.DataCard, tmp_path: Path) -> None:
    assert small.description.kind == "custom data"
    text = prose.data_markdown(small.description)
    assert "custom MIND-format data" in text and "3 posts and 4 evaluation pairs" in text
    assert str(tmp_path / "mind") in text  # outside the project: the path as it is


# --- counts by a second route ---------------------------------------------------------------------
def test_card_table_holds_the_data_card_and_the_published_card(sample: ch03.DataCard) -> None:
    numbers = ch03.card_table(sample, formatted=False)
    for lang, name in (("zh", "Chinese"), ("en", "English")):
        ours, published = numbers[(name, "data at hand")], numbers[(name, "full release")]
        assert ours["evaluation pairs"] == len(evaluation_pairs(load_posts(lang)))
        assert ours["posts"] == len(load_posts(lang))
        assert published["labels"] == release.FULL_RELEASE[lang]["labels"]
        assert np.isnan(published["sentences per post (improved rule)"])
    text = ch03.card_table(sample)
    assert text.loc["labels", ("Chinese", "full release")] == "11,762"
    assert text.loc["sentences per post (reference rule)", ("English", "full release")] == "5.84"
    assert text.loc["sentences per post (improved rule)", ("English", "full release")] == ""


def test_dimension_table_counts_rates_and_shares(small: ch03.DataCard) -> None:
    table = ch03.dimension_table(small)
    ours = table["data at hand"]
    # zh pairs: post 1 Economy change + Politics stability, post 2 Economy stability, post 3 Politics
    # stability (its Economy labels are two-sided: excluded)
    assert ours.loc[("Chinese", "Economy"), ["change", "stability", "pairs"]].tolist() == [1, 1, 2]
    assert ours.loc[("Chinese", "Politics"), ["change", "stability"]].tolist() == [0, 2]
    assert ours.loc[("Chinese", "Economy"), "change %"] == 50.0
    assert ours.loc[("Chinese", "Politics"), "share %"] == 50.0
    assert np.isnan(ours.loc[("Chinese", "Culture"), "change %"])  # no pairs: no rate
    shares = ours.groupby(level="language")["share %"].sum()
    assert np.allclose(shares.to_numpy(), 100.0)
    full = table["full release"]
    assert full.loc[("English", "Environment"), ["change", "stability"]].tolist() == [106, 31]
    assert list(table.index.get_level_values("dimension")[:6]) == list(TABLE_ORDER)


def test_event_table_counts_posts_pairs_and_change_shares(small: ch03.DataCard) -> None:
    table = ch03.event_table(small)
    assert list(table.index) == ["RU", "GPT", "SY", "COL"]  # protocol order, only the codes present
    assert table.loc["RU", ("Chinese", "posts")] == 2 and table.loc["RU", ("Chinese", "pairs")] == 3
    assert table.loc["RU", ("Chinese", "change %")] == pytest.approx(100 / 3)
    assert table.loc["SY", ("Chinese", "pairs")] == 1 and table.loc["SY", ("Chinese", "change %")] == 0.0
    assert table.loc["SY", ("English", "posts")] == 0 and np.isnan(table.loc["SY", ("English", "change %")])
    assert table[("both", "posts")].sum() == 5 and table[("both", "pairs")].sum() == 7
    text = ch03.event_markdown(small)
    assert "SY only in Chinese" in text and "GPT, COL only in English" in text


def test_event_tables_add_up_on_the_sample(sample: ch03.DataCard) -> None:
    table = ch03.event_table(sample)
    assert table[("Chinese", "posts")].sum() == 649 and table[("English", "pairs")].sum() == 605
    by_dim = ch03.event_dimension_table(sample)
    assert by_dim.loc["English", "pairs"].sum() == 605
    assert (by_dim[list(TABLE_ORDER)].sum(axis=1) == by_dim["pairs"]).all()
    assert by_dim.loc[("Chinese", "RU"), "pairs"] == table.loc["RU", ("Chinese", "pairs")]


def test_orientation_and_dimension_counts(small: ch03.DataCard) -> None:
    labels = ch03.orientation_table(small)
    assert labels.loc[("Economy", "Economic Models"), ("Chinese", "change")] == 2
    assert labels.loc[("Economy", "Economic Models"), ("Chinese", "stability")] == 2
    assert labels.to_numpy().sum() == sum(len(r[3]) for recs in RECORDS.values() for r in recs)
    dims = ch03.dimensions_per_post(small)
    assert dims.loc[2, "Chinese"] == 2 and dims.loc[1, "Chinese"] == 1 and dims.loc[2, "English"] == 1


def test_segmentation_table_counts_posts_losing_text(small: ch03.DataCard) -> None:
    table = ch03.segmentation_table(small)
    ref = table.loc[("English", "reference")]
    # "Why?" is dropped by the reference rule (shorter than ten characters), kept by the improved one
    assert ref["posts losing text"] == 1 and ref["losing %"] == 50.0
    assert table.loc[("English", "improved"), "posts losing text"] == 0
    assert ref["mean sentences"] == pytest.approx(1.5)


def test_floor_markdown_quotes_the_majority_rates(sample: ch03.DataCard) -> None:
    rates = majority_rate(sample.pair_frame).set_index(["lang", "dimension"])
    text = ch03.floor_markdown(sample)
    for lang, name in (("zh", "Chinese"), ("en", "English")):
        assert f"**{name}**: always answering the more frequent side scores " \
               f"{rates.loc[(lang, 'Average'), 'accuracy']:.1f} %" in text


# --- the full release -------------------------------------------------------------------------------
def _publish(monkeypatch: pytest.MonkeyPatch, card: ch03.DataCard) -> None:
    """Make the published counts those of the small data set, as if it were the full release."""
    for lang in card.langs:
        c = card.cards[lang]
        published = {k: c[k] for k in ("posts", "labels", "pairs", "excluded_pairs")}
        published |= {"mean_length": round(c["mean_length"], 1), "mean_sentences": round(c["mean_sentences"], 2)}
        monkeypatch.setitem(release.FULL_RELEASE, lang, published)
        counts = release.pair_counts(card.pairs[lang])
        monkeypatch.setitem(release.FULL_RELEASE_PAIRS, lang,
                            {d: (int(counts.loc[d, "change"]), int(counts.loc[d, "stability"])) for d in TABLE_ORDER})


def test_on_the_full_release_every_published_count_is_asserted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = _write(tmp_path / "full")
    _publish(monkeypatch, ch03.load_card(folder))
    card = ch03.load_card(folder)
    assert card.full and card.description.kind == "full MIND release"
    text = ch03.full_release_markdown(card)
    assert text.startswith("The data are the full release: all 36 published counts")  # (4 + 2 + 12) x 2
    assert "**the full MIND release**" in prose.data_markdown(card.description)


def test_a_published_count_that_differs_fails_the_chapter(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = _write(tmp_path / "full")
    _publish(monkeypatch, ch03.load_card(folder))
    monkeypatch.setitem(release.FULL_RELEASE["en"], "mean_length", 99.9)
    with pytest.raises(AssertionError, match="en mean_length: published 99.9"):
        ch03.full_release_markdown(ch03.load_card(folder))


def test_on_a_sample_the_published_counts_are_not_asserted(small: ch03.DataCard) -> None:
    text = ch03.full_release_markdown(small)
    assert text.startswith("The data are not the full release (") and "asserted only when" in text


# --- what the release can and cannot confirm --------------------------------------------------------
def test_confirm_rows_sorts_by_what_the_release_can_say() -> None:
    rows = pd.DataFrame({"kind": ["counted from the MIND files", "not checkable from the release",
                                  "counted from the MIND files", "counted from the MIND files",
                                  "recomputed from the paper's tables"],
                         "verdict": ["holds", "not checked", "not checked", "FAILS", "holds"]})
    assert ch03.confirm_rows(rows)["status"].tolist() == [
        "confirmed", "cannot be confirmed from the release", "needs the full release", "contradicted", "consistent"]


def test_the_confirm_list_covers_every_data_card_claim_of_the_ledger() -> None:
    from tefcore.paper.ledger import LEDGER

    ledger = ch03.release_claims()
    assert set(ledger["id"]) == {c.id for c in LEDGER if c.chapter == ch03.CHAPTER}
    status = ch03.confirm_rows(ledger).set_index("id")["status"]
    assert status["mind-period"] == status["mind-sources"] == "cannot be confirmed from the release"
    assert status["mind-annotation"] == status["mind-agents"] == "cannot be confirmed from the release"
    assert status["release-pairs"] == "needs the full release"  # the sample is not the full release
    assert status["mind-dimensions"] == "confirmed" and status["mind-posts-sum"] == "consistent"
    text = ch03.confirm_markdown(ledger)
    assert text.count('<a href="11_claims_ledger.html#claims-') == len(ledger)
    assert "**What no release file can confirm** (5)" in text
    assert "“posts from X, Weibo, Reddit, Zhihu, discussion forums and news feeds” (paper: 6 sources)" in text


def test_figures_draw_every_language(sample: ch03.DataCard) -> None:
    assert len(ch03.share_figure(sample).data) == 4  # two languages x (data at hand, full release)
    assert len(ch03.orientation_figure(sample).data) == 4  # two languages x two sides
    assert len(ch03.sentences_figure(sample).data) == 4
    assert len(ch03.length_figure(sample).data) == 2
