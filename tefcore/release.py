r"""The MIND release at hand against the published full release: counts and per-post statistics.

The paper's workload and the data-card chapter measure the sample (or a downloaded release) against the
counts the MIND authors published (protocol §2). This module holds those counts (:data:`FULL_RELEASE`,
:data:`FULL_RELEASE_PAIRS`), tells whether a loaded release is the full one (:func:`is_full_release`),
checks recomputed counts against them (:func:`check_full_release`) and tabulates each post's length,
labels, evaluation pairs and sentences (:func:`post_table`). A post of :math:`n` sentences costs
:math:`n` sentence-level queries per evaluation pair, one more for Direct.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tefcore.data import Post, evaluation_pairs
from tefcore.schema import LANGS, SIDES, TABLE_ORDER
from tefcore.segment import MIN_LENGTH, SEGMENTATION_RULES, split_sentences

__all__ = [
    "FULL_RELEASE",
    "FULL_RELEASE_PAIRS",
    "check_full_release",
    "full_release_card",
    "full_release_pairs",
    "is_full_release",
    "post_table",
]

# --------------------------------------------------------------------------------------------------
# the full release (protocol §2)
# --------------------------------------------------------------------------------------------------
FULL_RELEASE: dict[str, dict[str, float]] = {
    "zh": {"posts": 5474, "labels": 11762, "pairs": 10330, "excluded_pairs": 208,
           "mean_length": 138.2, "mean_sentences": 4.35},
    "en": {"posts": 2884, "labels": 4919, "pairs": 4621, "excluded_pairs": 40,
           "mean_length": 86.8, "mean_sentences": 5.84},
}
"""Published counts of the full MIND release (protocol §2), per language. ``mean_length`` is in
characters (zh) or white-space separated words (en); ``mean_sentences`` is per post under the
reference segmentation rule."""

FULL_RELEASE_PAIRS: dict[str, dict[str, tuple[int, int]]] = {
    "zh": {"Culture": (669, 1330), "Economy": (672, 715), "Society": (1323, 853),
           "Politics": (1806, 708), "Technology": (822, 634), "Environment": (531, 267)},
    "en": {"Culture": (434, 615), "Economy": (563, 539), "Society": (775, 337),
           "Politics": (659, 328), "Technology": (107, 127), "Environment": (106, 31)},
}
"""Published evaluation pairs of the full release per language and dimension: ``(change, stability)``."""


def full_release_pairs() -> pd.DataFrame:
    """The published pair counts of the full release in tidy form.

    Returns
    -------
    pandas.DataFrame
        Columns ``lang, dimension, change, stability, total``; languages zh then en, dimensions in
        :data:`~tefcore.schema.TABLE_ORDER`.
    """
    rows = [(lang, dim, *FULL_RELEASE_PAIRS[lang][dim]) for lang in ("zh", "en") for dim in TABLE_ORDER]
    frame = pd.DataFrame(rows, columns=["lang", "dimension", *SIDES])
    frame["total"] = frame["change"] + frame["stability"]
    return frame


def full_release_card(lang: str) -> dict[str, float]:
    """The published data card of one language of the full release, keyed like :func:`tefcore.data.data_card`.

    Returns
    -------
    dict
        ``posts, labels, pairs, excluded_pairs, change_pairs, stability_pairs, mean_length,
        mean_sentences`` (the change/stability totals summed from :data:`FULL_RELEASE_PAIRS`).
    """
    if lang not in FULL_RELEASE:
        raise ValueError(f"unknown language {lang!r}; expected one of {tuple(FULL_RELEASE)}")
    card = dict(FULL_RELEASE[lang])
    card["change_pairs"] = sum(c for c, _ in FULL_RELEASE_PAIRS[lang].values())
    card["stability_pairs"] = sum(s for _, s in FULL_RELEASE_PAIRS[lang].values())
    return card


def is_full_release(posts_per_lang: Mapping[str, int]) -> bool:
    """Whether the data at hand has the full release's number of posts in every language.

    Parameters
    ----------
    posts_per_lang : mapping of str to int
        Number of posts loaded per language (``{"en": 381, "zh": 649}``).
    """
    return all(int(posts_per_lang.get(lang, -1)) == int(FULL_RELEASE[lang]["posts"]) for lang in LANGS)


def check_full_release(cards: Mapping[str, Mapping[str, Any]], pairs: pd.DataFrame) -> pd.DataFrame:
    """Compare recomputed counts with the published ones and raise if any differs.

    Parameters
    ----------
    cards : mapping of str to dict
        :func:`tefcore.data.data_card` (reference rule) per language.
    pairs : pandas.DataFrame
        Recomputed pair counts with columns ``lang, dimension, change, stability``.

    Returns
    -------
    pandas.DataFrame
        One row per checked quantity: ``lang, quantity, published, recomputed, ok``. Means are
        compared at the published precision (``round(x, 2)`` for sentences, ``round(x, 1)`` for
        lengths).

    Raises
    ------
    AssertionError
        Listing every quantity that does not match.
    """
    rows = []
    for lang in ("zh", "en"):
        card, pub = cards[lang], FULL_RELEASE[lang]
        for key in ("posts", "labels", "pairs", "excluded_pairs"):
            rows.append((lang, key, pub[key], card[key]))
        rows.append((lang, "mean_length", pub["mean_length"], round(float(card["mean_length"]), 1)))
        rows.append((lang, "mean_sentences", pub["mean_sentences"], round(float(card["mean_sentences"]), 2)))
        ours = pairs[pairs["lang"] == lang].set_index("dimension")
        for dim in TABLE_ORDER:
            for i, side in enumerate(SIDES):
                got = int(ours.loc[dim, side]) if dim in ours.index else 0
                rows.append((lang, f"{dim} {side}", FULL_RELEASE_PAIRS[lang][dim][i], got))
    table = pd.DataFrame(rows, columns=["lang", "quantity", "published", "recomputed"])
    table["ok"] = np.isclose(table["published"].astype(float), table["recomputed"].astype(float),
                             rtol=0.0, atol=1e-9)
    bad = table[~table["ok"]]
    if len(bad):
        lines = "; ".join(f"{r.lang} {r.quantity}: published {r.published:g}, recomputed {r.recomputed:g}"
                          for r in bad.itertuples())
        raise AssertionError(f"{len(bad)} count(s) differ from the published full release: {lines}")
    return table


# --------------------------------------------------------------------------------------------------
# per-post statistics
# --------------------------------------------------------------------------------------------------
def _length(text: str, lang: str) -> int:
    return len(text) if lang == "zh" else len(text.split())


def _covered(text: str, sentences: Sequence[str]) -> float:
    """Share of the post's non-space characters that the sentences contain."""
    total = sum(1 for ch in text if not ch.isspace())
    kept = sum(1 for s in sentences for ch in s if not ch.isspace())
    return min(1.0, kept / total) if total else 1.0


def post_table(
    posts: Sequence[Post], rules: Sequence[str] = SEGMENTATION_RULES, min_length: int = MIN_LENGTH
) -> pd.DataFrame:
    """One row per post: its length, labels, evaluation pairs and sentences under each rule.

    The number of sentences of a post is the number of sentence-level queries each of its evaluation
    pairs costs.

    Parameters
    ----------
    posts : sequence of Post
        Posts of one or several languages.
    rules : sequence of str
        Segmentation rules (:data:`tefcore.segment.SEGMENTATION_RULES`).
    min_length : int
        Minimum sentence length of the segmenter.

    Returns
    -------
    pandas.DataFrame
        Columns ``post_id, lang, event, length`` (characters for zh, words for en), ``n_labels,
        n_dimensions, n_pairs`` and, per rule, ``sentences_<rule>`` and ``covered_<rule>`` (share of
        the post's non-space characters that reach the model).
    """
    unknown = [r for r in rules if r not in SEGMENTATION_RULES]
    if unknown:
        raise ValueError(f"unknown segmentation rule(s) {unknown}; expected some of {SEGMENTATION_RULES}")
    pairs_per_post = pd.Series([p.post_id for p in evaluation_pairs(posts)], dtype=object).value_counts()
    rows: list[dict[str, Any]] = []
    for post in posts:
        row: dict[str, Any] = {
            "post_id": post.id, "lang": post.lang, "event": post.event,
            "length": _length(post.text, post.lang), "n_labels": len(post.labels),
            "n_dimensions": len({label.dimension for label in post.labels}),
            "n_pairs": int(pairs_per_post.get(post.id, 0)),
        }
        for rule in rules:
            sentences = split_sentences(post.text, post.lang, min_length, rule)
            row[f"sentences_{rule}"] = len(sentences)
            row[f"covered_{rule}"] = _covered(post.text, sentences)
        rows.append(row)
    return pd.DataFrame(rows)
