"""Chapter 3 (the MIND data card): what only that chapter uses."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from chapters.prose import ORDER
from companion.labels import LANG_LABELS
from tefcore.mind.load import EvaluationPair, Post, evaluation_pairs, load_posts
from tefcore.mind.release import (
    DATA_KINDS,
    FULL_RELEASE,
    DataDescription,
    check_full_release,
    data_card,
    describe_data,
    full_release_card,
    full_release_pairs,
    label_counts,
    pair_counts,
    post_table,
)
from tefcore.mind.schema import EVENT_CODES, SIDES, TABLE_ORDER

_AT_HAND, _FULL = "data at hand", "full release"


CONFIRMED, ARITHMETIC, NEEDS_FULL, CANNOT_CONFIRM, CONTRADICTED = (
    "confirmed", "consistent", "needs the full release", "cannot be confirmed from the release", "contradicted")


CHAPTER = "03_mind_statistics"
"""The chapter whose ledger rows make the data card's list of claims."""


CARD_QUANTITIES: dict[str, str] = {
    "posts": "posts", "labels": "labels", "pairs": "evaluation pairs",
    "excluded_pairs": "excluded (two-sided) pairs", "change_pairs": "change pairs",
    "stability_pairs": "stability pairs", "mean_length": "mean length",
    "mean_sentences": "sentences per post (reference rule)", "improved": "sentences per post (improved rule)",
}
"""Rows of :func:`card_table`: data-card key -> what the table calls it."""


DIMENSION_COLORS: dict[str, str] = dict(zip(
    TABLE_ORDER, ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#b07aa1"]))
"""One colour per dimension, shared by the chapter's figures."""


@dataclass(frozen=True)
class DataCard:
    """The posts of a MIND directory, read once, with what the chapter derives from them.

    Attributes
    ----------
    description : DataDescription
        Which data these are (:func:`tefcore.mind.release.describe_data`).
    posts : dict of str to list of Post
        Posts per language, in the order ``zh``, ``en`` (the languages present).
    """

    description: DataDescription
    posts: dict[str, list[Post]]

    @property
    def langs(self) -> list[str]:
        """The languages present, Chinese first as in the paper."""
        return list(self.posts)

    @property
    def full(self) -> bool:
        """Whether the directory holds the full release (its published counts)."""
        return self.description.kind == DATA_KINDS[1]

    @cached_property
    def pairs(self) -> dict[str, list[EvaluationPair]]:
        """Evaluation pairs per language."""
        return {lang: evaluation_pairs(posts) for lang, posts in self.posts.items()}

    @cached_property
    def cards(self) -> dict[str, dict[str, Any]]:
        """:func:`tefcore.mind.release.data_card` per language, under the reference segmentation."""
        return {lang: data_card(posts, rule="reference") for lang, posts in self.posts.items()}

    @cached_property
    def improved(self) -> dict[str, dict[str, Any]]:
        """The same data card under the improved segmentation rule."""
        return {lang: data_card(posts, rule="improved") for lang, posts in self.posts.items()}

    @cached_property
    def post_frame(self) -> pd.DataFrame:
        """:func:`tefcore.mind.release.post_table` of every post."""
        return post_table([post for posts in self.posts.values() for post in posts])

    @cached_property
    def pair_frame(self) -> pd.DataFrame:
        """One row per evaluation pair: ``lang, post_id, event, dimension, side``."""
        events = {post.id: post.event for posts in self.posts.values() for post in posts}
        return pd.DataFrame(
            [(p.lang, p.post_id, events[p.post_id], p.dimension, p.side)
             for pairs in self.pairs.values() for p in pairs],
            columns=["lang", "post_id", "event", "dimension", "side"])


def load_card(data_dir: str | os.PathLike[str] | None = None) -> DataCard:
    """Read a MIND directory (default ``$MIND_DATA_DIR``, else the embedded sample) into a :class:`DataCard`.

    Examples
    --------
    >>> card = load_card()
    >>> card.description.kind, card.langs, len(card.pairs["en"])
    ('MIND sample', ['zh', 'en'], 605)
    """
    description = describe_data(data_dir)
    langs = [lang for lang in ORDER if lang in description.posts]
    return DataCard(description, {lang: load_posts(lang, description.directory) for lang in langs})


def card_table(card: DataCard, formatted: bool = True) -> pd.DataFrame:
    """The data card of the data at hand next to the published card of the full release.

    Parameters
    ----------
    card : DataCard
    formatted : bool
        Give text (counts with thousands separators, lengths with one decimal, sentences with two,
        empty where the full release has no published figure) instead of numbers.

    Returns
    -------
    pandas.DataFrame
        Rows :data:`CARD_QUANTITIES`; columns ``(language, "data at hand" | "full release")``; the full
        release has no published figure for the improved rule (NaN, or empty text).

    Examples
    --------
    >>> card_table(load_card()).loc["evaluation pairs", ("English", "full release")]
    '4,621'
    """
    columns = {}
    for lang in card.langs:
        columns[(LANG_LABELS[lang], _AT_HAND)] = {**card.cards[lang], "improved": card.improved[lang]["mean_sentences"]}
        columns[(LANG_LABELS[lang], _FULL)] = full_release_card(lang)
    table = pd.DataFrame(columns).reindex(list(CARD_QUANTITIES)).apply(pd.to_numeric)
    if formatted:
        digits = {"mean_length": 1, "mean_sentences": 2, "improved": 2}
        table = table.apply(lambda row: row.map(
            lambda v: "" if pd.isna(v) else f"{v:,.{digits.get(row.name, 0)}f}"), axis=1)
    return table.rename(index=CARD_QUANTITIES)


def full_release_markdown(card: DataCard) -> str:
    """Assert the published counts on the full release; on other data, say how much of it they hold.

    Raises
    ------
    AssertionError
        When the data are the full release and a recomputed count differs from the published one.
    """
    if card.full:
        pairs = pd.concat([pair_counts(card.pairs[lang]).reset_index().assign(lang=lang) for lang in card.langs],
                          ignore_index=True)
        checked = check_full_release(card.cards, pairs)
        return (f"The data are the full release: all {len(checked)} published counts of protocol §2 "
                "(posts, labels, pairs, excluded pairs, mean length and sentences, pairs per dimension "
                "and side) are recomputed and equal.")
    shares = ", ".join(f"{card.cards[lang]['posts'] / FULL_RELEASE[lang]['posts']:.1%} of the {LANG_LABELS[lang]} "
                       "posts" for lang in card.langs)
    return (f"The data are not the full release ({shares}): the published counts are shown for "
            "comparison and asserted only when `data_dir` (or `MIND_DATA_DIR`) points to the full "
            "release (`tef download --dest data/mind-full` fetches it).")


def dimension_table(card: DataCard) -> pd.DataFrame:
    """Pairs per language and dimension, change and stability, for the data at hand and the full release.

    Returns
    -------
    pandas.DataFrame
        Index ``(language, dimension)`` in the paper's order; columns ``(what, quantity)`` with ``what``
        "data at hand" or "full release" and quantities ``change, stability, pairs, change %`` (the
        constant answer "change"'s accuracy) and ``share %`` (of the language's pairs).
    """
    published = full_release_pairs().set_index(["lang", "dimension"])
    blocks = {}
    for what in (_AT_HAND, _FULL):
        rows = []
        for lang in card.langs:
            counts = pair_counts(card.pairs[lang]) if what == _AT_HAND else published.loc[lang]
            for dim in TABLE_ORDER:
                rows.append((LANG_LABELS[lang], dim, int(counts.loc[dim, "change"]),
                             int(counts.loc[dim, "stability"])))
        frame = pd.DataFrame(rows, columns=["language", "dimension", "change", "stability"])
        frame["pairs"] = frame["change"] + frame["stability"]
        frame["change %"] = 100 * frame["change"] / frame["pairs"].where(frame["pairs"] > 0)
        frame["share %"] = 100 * frame["pairs"] / frame.groupby("language")["pairs"].transform("sum")
        blocks[what] = frame.set_index(["language", "dimension"])
    return pd.concat(blocks, axis=1)


def share_figure(card: DataCard) -> Any:
    """Bars of each dimension's share of the pairs, data at hand beside the full release, per language."""
    from plotly.subplots import make_subplots

    table = dimension_table(card)
    fig = make_subplots(rows=1, cols=len(card.langs), shared_yaxes=True,
                        subplot_titles=[LANG_LABELS[lang] for lang in card.langs])
    for col, lang in enumerate(card.langs, start=1):
        part = table.loc[LANG_LABELS[lang]]
        for what, pattern in ((_AT_HAND, ""), (_FULL, "/")):
            fig.add_bar(x=list(part.index), y=part[(what, "share %")], name=what, legendgroup=what,
                        showlegend=col == 1, offsetgroup=what, marker_pattern_shape=pattern,
                        marker_color=[DIMENSION_COLORS[d] for d in part.index], marker_line_color="#333",
                        marker_line_width=0.5, customdata=part[(what, "change %")],
                        hovertemplate="%{x}<br>%{y:.1f}% of the pairs<br>%{customdata:.1f}% change<extra>"
                                      + what + "</extra>", row=1, col=col)
    fig.update_yaxes(title_text="share of the language's pairs (%)", row=1, col=1)
    fig.update_layout(title="Where the evaluation pairs fall: data at hand against the full release",
                      barmode="group", height=420, legend={"orientation": "h", "y": -0.15})
    return fig


def _event_order(codes: pd.Series) -> list[str]:
    known = [c for c in EVENT_CODES if c in set(codes)]
    return known + sorted(set(codes) - set(EVENT_CODES))


def event_table(card: DataCard) -> pd.DataFrame:
    """Posts and evaluation pairs per public event and language, with each event's change share.

    Returns
    -------
    pandas.DataFrame
        Index: event codes in :data:`EVENT_CODES` order (others after them); columns
        ``(language, posts | pairs | change %)`` and ``("both", posts | pairs)``. A language without
        posts of an event shows 0 posts and no change share.

    Examples
    --------
    >>> table = event_table(load_card())
    >>> int(table.loc["RU", ("Chinese", "posts")]), int(table[("both", "posts")].sum())
    (196, 1030)
    """
    posts, pairs = card.post_frame, card.pair_frame
    order = _event_order(posts["event"])
    columns: dict[tuple[str, str], pd.Series] = {}
    for lang in card.langs:
        n_posts = posts[posts["lang"] == lang].groupby("event").size().reindex(order, fill_value=0)
        mine = pairs[pairs["lang"] == lang]
        n_pairs = mine.groupby("event").size().reindex(order, fill_value=0)
        change = mine[mine["side"] == SIDES[0]].groupby("event").size().reindex(order, fill_value=0)
        columns[(LANG_LABELS[lang], "posts")] = n_posts
        columns[(LANG_LABELS[lang], "pairs")] = n_pairs
        columns[(LANG_LABELS[lang], "change %")] = 100 * change / n_pairs.where(n_pairs > 0)
    columns[("both", "posts")] = posts.groupby("event").size().reindex(order, fill_value=0)
    columns[("both", "pairs")] = pairs.groupby("event").size().reindex(order, fill_value=0)
    table = pd.DataFrame(columns)
    table.index.name = "event"
    return table


def event_dimension_table(card: DataCard) -> pd.DataFrame:
    """Evaluation pairs per event (rows) and dimension (columns, the paper's order), per language.

    Returns
    -------
    pandas.DataFrame
        Index ``(language, event)``; one integer column per dimension and ``pairs`` (the row total).
    """
    pairs = card.pair_frame.assign(language=card.pair_frame["lang"].map(LANG_LABELS))
    order = _event_order(card.post_frame["event"])
    table = pd.crosstab([pairs["language"], pairs["event"]], pairs["dimension"]).reindex(columns=list(TABLE_ORDER),
                                                                                           fill_value=0)
    index = pd.MultiIndex.from_tuples([(LANG_LABELS[lang], e) for lang in card.langs for e in order
                                       if (LANG_LABELS[lang], e) in table.index], names=["language", "event"])
    table = table.reindex(index)
    table.columns.name = None
    table["pairs"] = table.sum(axis=1)
    return table


def event_markdown(card: DataCard) -> str:
    """What the event table shows, in words: the largest events per language, events of one language only,
    and how far the change share varies across events.

    Examples
    --------
    >>> "SY" in event_markdown(load_card())
    True
    """
    table = event_table(card)
    out = []
    for lang in card.langs:
        name = LANG_LABELS[lang]
        pairs = table[(name, "pairs")]
        top = pairs.sort_values(ascending=False, kind="stable").index[:2]
        share = table[(name, "change %")].dropna()
        out.append(f"In {name}, {top[0]} ({pairs[top[0]]:,} pairs) and {top[1]} ({pairs[top[1]]:,}) are the largest "
                   f"events; the share of change targets runs from {share.min():.1f} % ({share.idxmin()}) to "
                   f"{share.max():.1f} % ({share.idxmax()}).")
    only = {lang: [e for e in table.index if table.loc[e, (LANG_LABELS[lang], "posts")] > 0
                   and all(table.loc[e, (LANG_LABELS[o], "posts")] == 0 for o in card.langs if o != lang)]
            for lang in card.langs}
    singles = [f"{', '.join(events)} only in {LANG_LABELS[lang]}" for lang, events in only.items() if events]
    if singles:
        out.append("Some events appear in one language only: " + "; ".join(singles) + ".")
    return " ".join(out)


def floor_markdown(card: DataCard) -> str:
    """The constant-answer baselines and the smallest cells of the data at hand, in words.

    The majority-class rate of a dimension is the accuracy of always answering its more frequent side
    (:func:`companion.results.majority_rate`); its unweighted mean over dimensions is the
    floor that a judge's Average accuracy has to clear.
    """
    from companion.results import majority_rate

    rates = majority_rate(card.pair_frame)
    table = dimension_table(card)[_AT_HAND]
    sentences = card.post_frame.set_index("post_id")["sentences_reference"]
    per_pair = card.pair_frame.assign(n=card.pair_frame["post_id"].map(sentences)).groupby("lang")["n"].mean()
    out = []
    for lang in card.langs:
        name = LANG_LABELS[lang]
        mine = rates[rates["lang"] == lang].set_index("dimension")
        part = table.loc[name]
        small = part["pairs"].sort_values(kind="stable").index[:2]
        out.append(f"* **{name}**: always answering the more frequent side scores "
                   f"{mine.loc['Average', 'accuracy']:.1f} % accuracy on the Average over dimensions "
                   f"(from {mine.drop('Average')['accuracy'].min():.1f} % in {mine.drop('Average')['accuracy'].idxmin()} "
                   f"to {mine.drop('Average')['accuracy'].max():.1f} % in {mine.drop('Average')['accuracy'].idxmax()}). "
                   f"The smallest cells are {small[0]} ({part.loc[small[0], 'pairs']} pairs) and {small[1]} "
                   f"({part.loc[small[1], 'pairs']}). A sentence-level method sends "
                   f"{per_pair[lang]:.2f} queries per pair on average (reference rule), Direct one.")
    return "\n".join(out)


_GROUP_TITLES: dict[str, str] = {
    CONFIRMED: "What the data at hand confirm",
    ARITHMETIC: "What the paper's own numbers confirm",
    NEEDS_FULL: "What only the full release can confirm (the published counts)",
    CANNOT_CONFIRM: "What no release file can confirm",
    CONTRADICTED: "What the data at hand contradict",
}


def release_claims(data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """The data-card rows of the claims ledger, checked on a MIND directory.

    Returns
    -------
    pandas.DataFrame
        :func:`tefcore.paper.ledger.evaluate_ledger` of the claims whose chapter is :data:`CHAPTER`.
    """
    from tefcore.paper.ledger import LEDGER, evaluate_ledger

    return evaluate_ledger([c for c in LEDGER if c.chapter == CHAPTER], data_dir=data_dir)


def confirm_rows(ledger: pd.DataFrame) -> pd.DataFrame:
    """Sort evaluated ledger rows (:func:`tefcore.paper.ledger.evaluate_ledger`) by what the release says.

    Parameters
    ----------
    ledger : pandas.DataFrame
        Rows with ``kind, verdict`` (and the ledger's other columns).

    Returns
    -------
    pandas.DataFrame
        The rows with a ``status`` column: ``"confirmed"`` (the check holds on the data),
        ``"consistent"`` (it holds on the paper's own numbers), ``"contradicted"`` (it fails or does not hold), ``"cannot be confirmed from the release"`` (the release lacks the
        information) or ``"needs the full release"`` (checked only on the full release).

    Examples
    --------
    >>> rows = pd.DataFrame({"kind": ["counted from the MIND files", "not checkable from the release",
    ...                               "counted from the MIND files"], "verdict": ["holds", "not checked", "not checked"]})
    >>> confirm_rows(rows)["status"].tolist()
    ['confirmed', 'cannot be confirmed from the release', 'needs the full release']
    >>> confirm_rows(pd.DataFrame({"kind": ["recomputed from the paper's tables"], "verdict": ["holds"]}))["status"][0]
    'consistent'

    """
    from tefcore.paper.evidence import KINDS

    def status(kind: str, verdict: str) -> str:
        if kind == KINDS["cannot"]:
            return CANNOT_CONFIRM
        if verdict == "holds":
            return ARITHMETIC if kind == KINDS["tables"] else CONFIRMED
        if verdict == "not checked":
            return NEEDS_FULL
        return CONTRADICTED

    return ledger.assign(status=[status(h, v) for h, v in zip(ledger["kind"], ledger["verdict"])])


def confirm_markdown(ledger: pd.DataFrame, link: bool = True) -> str:
    """The "what the release can and cannot confirm" list: one bullet per claim, grouped by status.

    Each bullet gives the paper's words and number, our value on the data at hand and how it was
    obtained (or why it cannot be), and links to the claim's row of the ledger (chapter 11).

    Parameters
    ----------
    ledger : pandas.DataFrame
        Evaluated ledger rows (``id, words, number, value, note, how, verdict``).
    link : bool
        Link each claim to its ledger row (:func:`companion.ledger.claim_link`).
    """
    from companion.ledger import claim_link

    rows = confirm_rows(ledger)
    out = []
    for status, title in _GROUP_TITLES.items():
        group = rows[rows["status"] == status]
        if group.empty:
            continue
        out += ["", f"**{title}** ({len(group)})", ""]
        for r in group.itertuples():
            number = "" if r.number in ("—", "") else f" (paper: {r.number})"
            ours = "" if r.value in ("—", "") else f"; ours: {r.value}"
            where = claim_link(r.id, "ledger") if link else r.id
            out.append(f"* “{r.words}”{number}{ours} — {r.note} [{where}]")
    return "\n".join(out).strip()


def _labels(card: DataCard) -> pd.DataFrame:
    return pd.concat([label_counts(card.posts[lang]).assign(lang=lang) for lang in card.langs], ignore_index=True)


def orientation_table(card: DataCard) -> pd.DataFrame:
    """Labels per subcategory and side, per language: the numbers behind the radial figure.

    Returns
    -------
    pandas.DataFrame
        Index ``(dimension, subcategory)`` in schema order; integer columns ``(language, side)``.
    """
    labels = _labels(card)
    table = labels.pivot_table(index=["dimension", "subcategory"], columns=["lang", "side"], values="count",
                               sort=False, aggfunc="sum")
    table = table[[(lang, side) for lang in card.langs for side in SIDES]].astype(int)
    table.columns = pd.MultiIndex.from_tuples([(LANG_LABELS[lang], side) for lang, side in table.columns])
    return table


def orientation_figure(card: DataCard) -> Any:
    """The paper's Fig. 3 for the data at hand: one radial bar per orientation, colour by dimension,
    the change position solid and the stability position hatched, one panel per language."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    labels = _labels(card)
    fig = make_subplots(rows=len(card.langs), cols=1, specs=[[{"type": "polar"}]] * len(card.langs),
                        vertical_spacing=0.08,
                        subplot_titles=[f"({c}) {LANG_LABELS[lang]}" for c, lang in zip("ab", card.langs)])
    for row, lang in enumerate(card.langs, start=1):
        d = labels[labels["lang"] == lang].reset_index(drop=True)
        theta = d["orientation"] + " "
        for side, pattern in zip(SIDES, ("", "/")):
            m = d["side"] == side
            fig.add_trace(go.Barpolar(
                r=d.loc[m, "count"], theta=theta[m], name=side, legendgroup=side, showlegend=row == 1,
                marker_color=[DIMENSION_COLORS[x] for x in d.loc[m, "dimension"]], marker_pattern_shape=pattern,
                marker_line_color="#333", marker_line_width=0.5,
                customdata=np.stack([d.loc[m, "dimension"], d.loc[m, "subcategory"]], axis=1),
                hovertemplate="%{theta}<br>%{customdata[0]} / %{customdata[1]}<br>%{r} labels<extra></extra>",
            ), row=row, col=1)
        fig.update_polars(angularaxis={"categoryorder": "array", "categoryarray": list(theta),
                                       "tickfont": {"size": 9}, "direction": "clockwise"},
                          radialaxis={"tickfont": {"size": 8}, "angle": 90})
    fig.update_layout(title="Labels per value orientation<br><sup>colour: dimension; solid: change, "
                            "hatched: stability</sup>",
                      height=590 * len(card.langs), margin={"l": 120, "r": 120, "t": 150},
                      legend={"orientation": "h", "y": -0.04})
    fig.update_annotations(yshift=22)
    return fig


def dimensions_per_post(card: DataCard) -> pd.DataFrame:
    """Posts per number of labelled dimensions (rows), per language (columns).

    Examples
    --------
    >>> int(dimensions_per_post(load_card()).loc[1, "English"])
    192
    """
    posts = card.post_frame
    table = posts.pivot_table(index="n_dimensions", columns="lang", values="post_id", aggfunc="count",
                              fill_value=0)[card.langs].rename(columns=LANG_LABELS)
    table.index.name = "dimensions per post"
    table.columns.name = None
    return table.astype(int)


def _unit(lang: str) -> str:
    return "characters" if lang == "zh" else "words"


def length_table(card: DataCard) -> pd.DataFrame:
    """Post lengths per language (characters for Chinese, words for English): count, mean and quantiles."""
    posts = card.post_frame
    table = posts.groupby("lang")["length"].describe(percentiles=[0.1, 0.5, 0.9])
    table = table.loc[card.langs, ["count", "mean", "10%", "50%", "90%", "max"]]
    table.index = [f"{LANG_LABELS[lang]} ({_unit(lang)})" for lang in table.index]
    return table


def length_figure(card: DataCard) -> Any:
    """Histograms of post lengths per language, each with a dashed line at its mean."""
    from plotly.subplots import make_subplots

    posts = card.post_frame
    fig = make_subplots(rows=1, cols=len(card.langs),
                        subplot_titles=[f"{LANG_LABELS[lang]} ({_unit(lang)})" for lang in card.langs])
    for col, lang in enumerate(card.langs, start=1):
        x = posts.loc[posts["lang"] == lang, "length"]
        fig.add_histogram(x=x, nbinsx=40, marker_color="#4e79a7", showlegend=False, row=1, col=col,
                          hovertemplate="%{x}: %{y} posts<extra></extra>")
        fig.add_vline(x=float(x.mean()), line_dash="dash", line_color="#e15759", row=1, col=col)
    fig.update_yaxes(title_text="posts", row=1, col=1)
    fig.update_layout(title="Post lengths", height=380, bargap=0.05)
    return fig


def segmentation_table(card: DataCard) -> pd.DataFrame:
    """Sentences per post under the reference and the improved rule, and how much text reaches the judge.

    Returns
    -------
    pandas.DataFrame
        Index ``(language, rule)``; columns ``posts``, ``mean sentences``, ``median``, ``max``,
        ``single-sentence posts`` (count) and ``%``, ``mean coverage %`` (share of a post's non-space
        characters kept), ``posts losing text`` (count) and ``%``.
    """
    posts = card.post_frame
    rows = []
    for lang in card.langs:
        d = posts[posts["lang"] == lang]
        for rule in ("reference", "improved"):
            n, covered = d[f"sentences_{rule}"], d[f"covered_{rule}"]
            rows.append({"language": LANG_LABELS[lang], "rule": rule, "posts": len(d), "mean sentences": n.mean(),
                         "median": n.median(), "max": n.max(), "single-sentence posts": int((n == 1).sum()),
                         "single %": 100 * (n == 1).mean(), "mean coverage %": 100 * covered.mean(),
                         "posts losing text": int((covered < 1).sum()), "losing %": 100 * (covered < 1).mean()})
    return pd.DataFrame(rows).set_index(["language", "rule"])


def sentences_figure(card: DataCard) -> Any:
    """Posts per number of sentences, reference rule beside the improved rule, per language."""
    from plotly.subplots import make_subplots

    posts = card.post_frame
    fig = make_subplots(rows=1, cols=len(card.langs), shared_yaxes=True,
                        subplot_titles=[LANG_LABELS[lang] for lang in card.langs])
    for col, lang in enumerate(card.langs, start=1):
        d = posts[posts["lang"] == lang]
        for rule, color in (("reference", "#4e79a7"), ("improved", "#f28e2b")):
            counts = d[f"sentences_{rule}"].value_counts().sort_index()
            fig.add_bar(x=counts.index, y=counts.to_numpy(), name=f"{rule} rule", marker_color=color,
                        legendgroup=rule, showlegend=col == 1, row=1, col=col,
                        hovertemplate="%{x} sentences: %{y} posts<extra>" + rule + "</extra>")
    fig.update_xaxes(title_text="sentences per post")
    fig.update_yaxes(title_text="posts", row=1, col=1)
    fig.update_layout(title="Sentences per post", barmode="group", height=400, legend={"orientation": "h", "y": -0.2})
    return fig
