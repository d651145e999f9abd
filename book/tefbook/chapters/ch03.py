"""Chapter 3 (the MIND data card): the chapter's figures, and the per-post table, label counts and full-release
check that only this chapter uses. The counts are computed on the page."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tefbook.companion.labels import LANG_LABELS
from tefbook.companion.tables import round_half_up
from tefcore.mind.load import Post, evaluation_pairs, mind_filename
from tefcore.mind.release import FULL_RELEASE, FULL_RELEASE_PAIRS, DataDescription
from tefcore.mind.schema import DIMENSIONS, SIDES, TABLE_ORDER
from tefcore.tasks.segment import MIN_LENGTH, SEGMENTATION_RULES, split_sentences

DIMENSION_COLORS: dict[str, str] = dict(zip(
    TABLE_ORDER, ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#b07aa1"]))
"""One colour per dimension, shared by the chapter's figures."""

_UNITS = {"zh": "characters", "en": "words"}


def length_figure(table: pd.DataFrame, langs: Sequence[str]) -> Any:
    """Histograms of post lengths (``post_table`` rows), one panel per language, the mean dashed."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(langs), horizontal_spacing=0.1,
                        subplot_titles=[f"{LANG_LABELS[lang]} ({_UNITS[lang]})" for lang in langs])
    for col, lang in enumerate(langs, start=1):
        x = table.loc[table["lang"] == lang, "length"]
        fig.add_histogram(x=x, nbinsx=40, marker_color="#4e79a7", name="posts", showlegend=col == 1, row=1, col=col,
                          hovertemplate="%{x}: %{y} posts<extra></extra>")
        fig.add_vline(x=float(x.mean()), line_dash="dash", line_color="#e15759", row=1, col=col)
        fig.update_xaxes(title_text=f"post length ({_UNITS[lang]})", row=1, col=col)
    fig.add_scatter(x=[None], y=[None], mode="lines", line={"dash": "dash", "color": "#e15759"}, name="mean")
    fig.update_yaxes(title_text="posts", row=1, col=1)
    fig.update_layout(title="Post lengths", height=400, bargap=0.05, legend={"orientation": "h", "y": -0.25})
    return fig


def sentences_figure(by_rule: pd.DataFrame, langs: Sequence[str]) -> Any:
    """Posts per number of sentences (rows ``lang, rule, sentences``), the two rules side by side."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(langs), shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=[LANG_LABELS[lang] for lang in langs])
    for col, lang in enumerate(langs, start=1):
        for rule, color in (("sentences_reference", "#4e79a7"), ("sentences_improved", "#f28e2b")):
            name = rule.removeprefix("sentences_") + " rule"
            counts = by_rule[(by_rule["lang"] == lang) & (by_rule["rule"] == rule)]["sentences"].value_counts()
            counts = counts.sort_index()
            fig.add_bar(x=counts.index, y=counts.to_numpy(), name=name, marker_color=color, legendgroup=rule,
                        showlegend=col == 1, row=1, col=col,
                        hovertemplate="%{x} sentences: %{y} posts<extra>" + name + "</extra>")
        fig.update_xaxes(title_text="sentences per post", dtick=1, row=1, col=col)
    fig.update_yaxes(title_text="posts", row=1, col=1)
    fig.update_layout(title="Sentences per post", barmode="group", height=400,
                      legend={"orientation": "h", "y": -0.25})
    return fig


def share_figure(dims: pd.DataFrame, langs: Sequence[str]) -> Any:
    """Each dimension's share of a language's pairs, the data at hand (solid) beside the full release
    (hatched), colour by dimension; ``dims`` is the chapter's table indexed ``(lang, what, dimension)``."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=len(langs), shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=[LANG_LABELS[lang] for lang in langs])
    for col, lang in enumerate(langs, start=1):
        for what, pattern in (("data at hand", ""), ("full release, counted", "/")):
            part = dims.loc[(lang, what)]
            fig.add_bar(x=list(part.index), y=part["share %"], name=what, legendgroup=what, showlegend=col == 1,
                        offsetgroup=what, marker_pattern_shape=pattern, marker_line_color="#333",
                        marker_line_width=0.5, marker_color=[DIMENSION_COLORS[d] for d in part.index],
                        customdata=part["majority %"],
                        hovertemplate="%{x}<br>%{y:.1f} % of the pairs<br>majority side %{customdata:.1f} %"
                                      "<extra>" + what + "</extra>", row=1, col=col)
    fig.update_yaxes(title_text="share of the language's pairs (%)", row=1, col=1)
    fig.update_layout(title="Where the evaluation pairs fall<br><sup>colour: dimension · solid: data at hand · hatched: full release</sup>",
                      barmode="group", height=430, legend={"orientation": "h", "y": -0.2})
    return fig


def orientation_figure(labels: pd.DataFrame, langs: Sequence[str]) -> Any:
    """The paper's Fig. 3 for the data at hand: one radial bar per orientation, one panel per language.

    Colour marks the dimension (one legend entry each, the colour key); the change-oriented bar of a
    subcategory is solid and the stability-oriented one hatched (two grey legend entries say so).
    ``labels`` holds :func:`label_counts` rows with a ``lang`` column.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=len(langs), cols=1, specs=[[{"type": "polar"}]] * len(langs), vertical_spacing=0.07,
                        subplot_titles=[f"({c}) {LANG_LABELS[lang]}" for c, lang in zip("ab", langs)])
    for row, lang in enumerate(langs, start=1):
        d = labels[labels["lang"] == lang].reset_index(drop=True)
        theta = d["orientation"] + " "
        for dim in TABLE_ORDER:
            for side, pattern in zip(SIDES, ("", "/")):
                m = (d["dimension"] == dim) & (d["side"] == side)
                fig.add_trace(go.Barpolar(
                    r=d.loc[m, "count"], theta=theta[m], name=dim, legendgroup=dim,
                    showlegend=row == 1 and side == SIDES[0], marker_color=DIMENSION_COLORS[dim],
                    marker_pattern_shape=pattern, marker_line_color="#333", marker_line_width=0.5,
                    customdata=np.stack([d.loc[m, "subcategory"], np.full(int(m.sum()), side)], axis=1),
                    hovertemplate="%{theta}<br>" + dim + " / %{customdata[0]} (%{customdata[1]})<br>%{r} labels"
                                  "<extra></extra>"), row=row, col=1)
        fig.update_polars(angularaxis={"categoryorder": "array", "categoryarray": list(theta), "tickfont": {"size": 9},
                                       "direction": "clockwise"}, radialaxis={"tickfont": {"size": 8}, "angle": 90})
    for side, pattern in zip(SIDES, ("", "/")):  # the key of the two patterns
        fig.add_trace(go.Barpolar(r=[0], theta=[theta.iloc[0]], name=f"{side} (pattern)", marker_color="#bbbbbb",
                                  marker_pattern_shape=pattern, marker_line_color="#333", legendgroup=f"side {side}",
                                  hoverinfo="skip"), row=1, col=1)
    fig.update_layout(title="Labels per value orientation<br><sup>colour: dimension · solid: change · hatched: stability</sup>",
                      height=600 * len(langs) + 40, margin={"l": 110, "r": 110, "t": 150},
                      legend={"orientation": "h", "y": -0.03, "x": 0.5, "xanchor": "center"})
    fig.update_annotations(yshift=24)
    return fig


def card_table(card: pd.DataFrame, counted: pd.DataFrame, langs: Sequence[str]) -> pd.DataFrame:
    """The data card as printed: per language the data at hand, the full release's counts and what the
    paper prints (the number of posts only), counts with thousands separators, means with decimals.

    Examples
    --------
    >>> card = pd.DataFrame({"en": {"posts": 1200.0, "mean length": 98.25}})
    >>> card_table(card, card, ["en"])[("English", "paper prints")].tolist()
    ['2,884', '']
    """
    printed = pd.DataFrame({"zh": {"posts": 5474}, "en": {"posts": 2884}}).reindex(card.index)
    shown = pd.concat({(LANG_LABELS[lang], what): frame[lang] for lang in langs
                       for what, frame in (("data at hand", card), ("full release, counted", counted),
                                           ("paper prints", printed))}, axis=1)
    digits = {"mean length": 1, "sentences per post (reference rule)": 2, "sentences per post (improved rule)": 2}
    return shown.apply(lambda row: row.map(lambda v: "" if pd.isna(v) else f"{v:,.{digits.get(row.name, 0)}f}"),
                       axis=1)


def glue_lengths(lengths: pd.DataFrame, sentences: pd.DataFrame, langs: Sequence[str]) -> None:
    """Glue the length and sentence statistics the prose cites (``len_median_en``, ``sent_few_zh``, ...),
    rounded half up as :func:`length_tables` prints them (one decimal, two for the coefficient of
    variation, none for the shortest and the longest post)."""
    from myst_nb import glue

    for lang in langs:
        for name, frame, column in (("len_median", lengths, "50%"), ("len_min", lengths, "min"),
                                    ("len_max", lengths, "max"), ("len_cv", lengths, "coefficient of variation"),
                                    ("sent_median", sentences, "50%"), ("sent_max", sentences, "max"),
                                    ("sent_few", sentences, "posts with at most 3 sentences %")):
            digits = 2 if column == "coefficient of variation" else (0 if column in ("min", "max") else 1)
            glue(f"{name}_{lang}", round_half_up(float(frame.loc[lang, column]), digits), display=False)


def length_tables(lengths: pd.DataFrame, sentences: pd.DataFrame) -> tuple[Any, Any]:
    """The two distribution tables as shown: lengths with their units, sentences per post, no counts; the
    shortest and the longest post are whole numbers."""
    from tefbook.companion.tables import format_columns

    return (format_columns(lengths.rename(index={"zh": "Chinese (characters)", "en": "English (words)"})
                           .drop(columns="count").rename_axis(index="language"), 1, min=0, max=0,
                           **{"coefficient of variation": 2}),
            format_columns(sentences.rename(index=LANG_LABELS).drop(columns=["count", "std"])
                           .rename_axis(index="language"), 1, min=0, max=0))


def glue_floors(quoted: pd.DataFrame) -> None:
    """Glue the majority-class floor per language that the prose quotes, as the chapter's table of quoted
    values prints it (rounded half up to one decimal): ``floor_en``, ``floor_min_en``, ``floor_max_dim_en``,
    ``small_dim_zh``, ``small_n_zh``, ...

    ``quoted`` has one row per language code and the columns ``floor, lowest, lowest in, highest,
    highest in, smallest, its pairs``.
    """
    from myst_nb import glue

    names = {"floor": "floor", "lowest": "floor_min", "highest": "floor_max", "lowest in": "floor_min_dim",
             "highest in": "floor_max_dim", "smallest": "small_dim", "its pairs": "small_n"}
    for lang, row in quoted.iterrows():
        for column, name in names.items():
            value = row[column]
            if isinstance(value, (float, np.floating)):
                value = round_half_up(float(value), 1)
            elif isinstance(value, (int, np.integer)):
                value = int(value)
            glue(f"{name}_{lang}", value, display=False)


def dimension_counts(rows: Mapping[str, pd.DataFrame], floor: Mapping[str, pd.DataFrame],
                     langs: Sequence[str]) -> pd.DataFrame:
    """Per source of pairs (``what``), language and dimension: the change / stability pairs, the pairs, the
    majority-class floor (``floor``: :func:`tefbook.companion.results.majority_rate` of each source; none
    for a dimension without pairs) and the dimension's share of the language's pairs.

    Returns
    -------
    DataFrame
        Indexed ``(lang, what, dimension)``, the dimensions in the paper's order.
    """
    parts = {}
    for what, pairs in rows.items():
        out = pd.crosstab([pairs["lang"], pairs["dimension"]], pairs["side"]).reindex(
            columns=list(SIDES), fill_value=0).reindex(
            pd.MultiIndex.from_product([langs, TABLE_ORDER], names=["lang", "dimension"]), fill_value=0)
        out["pairs"] = out["change"] + out["stability"]
        out["majority %"] = floor[what].set_index(["lang", "dimension"])["accuracy"]
        out["share %"] = 100 * out["pairs"] / out.groupby(level="lang")["pairs"].transform("sum")
        parts[what] = out.rename_axis(columns=None)
    return pd.concat(parts, names=["what"]).reorder_levels(["lang", "what", "dimension"]).sort_index(
        level=["lang", "what"], sort_remaining=False)


def data_table(described: pd.DataFrame) -> pd.DataFrame:
    """The data at hand per language as printed: counts with thousands separators, the file's SHA-256
    shortened to 12 characters, the share with one decimal."""
    from tefbook.companion.tables import format_cell

    return described.assign(sha256=described["sha256"].str[:12]).drop(columns="file").rename(
        index=LANG_LABELS).rename_axis(index="language").map(format_cell)


def orientation_table(labels: pd.DataFrame, langs: Sequence[str]) -> pd.DataFrame:
    """Labels per orientation (:func:`label_counts` rows with ``lang``): one row per subcategory, a change
    and a stability column per language."""
    wide = labels.pivot_table(index=["dimension", "subcategory"], columns=["lang", "side"], values="count",
                              sort=False, fill_value=0)
    return wide[[(lang, side) for lang in langs for side in SIDES]].astype(int).rename(
        columns=LANG_LABELS, level=0).rename_axis(columns=["language", "side"])


def pair_rows(counts: Mapping[str, Mapping[str, tuple[int, int]]], langs: Sequence[str]) -> pd.DataFrame:
    """One row per evaluation pair of published counts (language -> dimension -> (change, stability)), as
    :func:`tefbook.companion.results.majority_rate` reads pairs: ``post_id`` (a running number), ``lang,
    dimension, side``.

    Examples
    --------
    >>> rows = pair_rows({"en": {"Culture": (2, 1)}}, ["en"])
    >>> rows["side"].tolist(), rows["post_id"].tolist()
    (['change', 'change', 'stability'], [0, 1, 2])
    """
    parts = [(lang, dimension, side, n) for lang in langs for dimension, sides in counts[lang].items()
             for side, n in zip(SIDES, sides)]
    repeat = np.array([n for *_, n in parts], dtype=np.int64)
    frame = pd.DataFrame([part[:3] for part in parts], columns=["lang", "dimension", "side"])
    out = frame.loc[frame.index.repeat(repeat)].reset_index(drop=True)
    return out.assign(post_id=np.arange(len(out))).loc[:, ["post_id", "lang", "dimension", "side"]]


_COUNTS = ("change", "stability", "pairs")


def _count_cell(value: Any) -> str:
    return "" if pd.isna(value) else f"{int(value):,}"


def dimension_table(dims: pd.DataFrame, floors: pd.DataFrame) -> Any:
    """The pairs per dimension as shown: the data at hand beside the full release for each count, the
    counts as integers with thousands separators, each dimension's majority-class floor and, last in
    each language, the Average row (all pairs, and the floor's unweighted mean over the dimensions,
    ``floors``: one column per ``what``, one row per language). Each dimension's share is left to the
    figure.

    Examples
    --------
    >>> idx = pd.MultiIndex.from_tuples([("en", "data at hand", "Culture")], names=["lang", "what", "dimension"])
    >>> dims = pd.DataFrame({"change": [1200], "stability": [0], "pairs": [1200], "majority %": [100.0],
    ...                      "share %": [100.0]}, index=idx)
    >>> shown = dimension_table(dims, pd.DataFrame({"data at hand": {"en": 100.0}}))
    >>> shown.loc[("English", "Culture"), ("data at hand", "change")], shown.loc[("English", "Average")].tolist()
    ('1,200', ['', '', '1,200', '100.0'])
    """
    from tefbook.companion.tables import format_columns

    average = pd.concat({(lang, what, "Average"): pd.Series(
        {"pairs": dims.loc[(lang, what), "pairs"].sum(), "majority %": floors.loc[lang, what]})
        for lang, what in dims.index.droplevel("dimension").unique()}, names=["lang", "what", "dimension"]).unstack()
    rows = pd.concat([dims.drop(columns="share %"), average]).sort_index(
        level=["lang", "what"], sort_remaining=False)
    wide = rows.unstack("what").swaplevel(axis=1).sort_index(axis=1, level=0, sort_remaining=False)
    order = list(dict.fromkeys(rows.index.get_level_values("dimension")))
    wide = wide.reindex([(lang, d) for lang in dict.fromkeys(rows.index.get_level_values("lang")) for d in order])
    wide = wide.loc[:, [(what, c) for what in dict.fromkeys(wide.columns.get_level_values(0))
                        for c in (*_COUNTS, "majority %")]]
    shown = format_columns(wide.astype(float), 1)
    for col in [c for c in shown.columns if c[1] in _COUNTS]:
        shown[col] = wide[col].map(_count_cell)
    return shown.rename(index=LANG_LABELS, level=0).rename_axis(index=["language", "dimension"], columns=[None, None])


def event_table(events: pd.DataFrame, langs: Sequence[str]) -> Any:
    """Pairs and change share per event (columns ``(size|<lambda>, lang)`` of the chapter's pivot), as
    shown: one block per language, the first language's largest event first, pairs as integers and a
    dash for the change share of an event without pairs.

    Examples
    --------
    >>> raw = pd.DataFrame({("size", "en"): [3, 5], ("<lambda>", "en"): [50.0, 20.0]}, index=["RU", "GPT"])
    >>> shown = event_table(raw, ["en"])
    >>> shown.index.tolist(), shown[("English", "pairs")].tolist()
    (['GPT', 'RU'], ['5', '3'])
    >>> event_table(pd.DataFrame({("size", "en"): [0], ("<lambda>", "en"): [0.0]}, index=["SY"]), ["en"]).iloc[0].tolist()
    ['0', '–']
    """
    from tefbook.companion.tables import format_cell

    order = events[("size", langs[0])].sort_values(ascending=False, kind="stable").index
    shown = {}
    for lang in langs:
        n = events[("size", lang)].reindex(order).astype(int)
        share = events[("<lambda>", lang)].reindex(order).astype(float)
        shown[(LANG_LABELS[lang], "pairs")] = [f"{k:,}" for k in n]
        shown[(LANG_LABELS[lang], "change %")] = [format_cell(v, 1) if k else "–" for k, v in zip(n, share)]
    return pd.DataFrame(shown, index=order)


def glue_lopsided(lopsided: pd.DataFrame) -> None:
    """Glue the most lopsided dimension of each language with its two sides (``lop_dim_en``, ...)."""
    from myst_nb import glue

    for (lang, dimension), row in lopsided.iterrows():
        glue(f"lop_dim_{lang}", dimension, display=False)
        glue(f"lop_change_{lang}", int(row["change"]), display=False)
        glue(f"lop_stability_{lang}", int(row["stability"]), display=False)


# --- the chapter's tables of posts and labels, and the full-release check -----------------------------
def data_frame(data: DataDescription) -> pd.DataFrame:
    """One row per language of :func:`tefcore.mind.release.describe_data`: ``data, lang, posts, pairs, file,
    sha256`` (full digests)."""
    return pd.DataFrame([
        {"data": data.kind, "lang": lang, "posts": data.posts[lang], "pairs": data.pairs[lang],
         "file": str(data.directory / mind_filename(lang)), "sha256": data.sha256[lang]}
        for lang in data.posts
    ])


def check_full_release(cards: Mapping[str, Mapping[str, Any]], pairs: pd.DataFrame) -> pd.DataFrame:
    """Compare recomputed counts with the published ones and raise if any differs.

    Parameters
    ----------
    cards : mapping of str to dict
        :func:`tefcore.mind.release.data_card` (reference rule) per language.
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


# --- per-post statistics --------------------------------------------------------------------------
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
        Segmentation rules (:data:`tefcore.tasks.segment.SEGMENTATION_RULES`).
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
def label_counts(posts: Iterable[Post]) -> pd.DataFrame:
    """Count labels per orientation (the bars of the paper's MIND statistics figure).

    Parameters
    ----------
    posts : iterable of Post
        Posts of any language.

    Returns
    -------
    pandas.DataFrame
        One row per orientation in schema order (24 rows, zeros included), columns
        ``dimension``, ``subcategory``, ``orientation``, ``side``, ``count``.
    """
    schema = pd.DataFrame(
        [(dim.name, sub.name, sub.position(side).name, side)
         for dim in DIMENSIONS for sub in dim.subcategories for side in SIDES],
        columns=["dimension", "subcategory", "orientation", "side"],
    )
    labels = pd.DataFrame([(label.dimension, label.subcategory, label.orientation)
                           for post in posts for label in post.labels],
                          columns=["dimension", "subcategory", "orientation"])
    counts = labels.value_counts().rename("count").reset_index()
    merged = schema.merge(counts, on=["dimension", "subcategory", "orientation"], how="left")
    merged["count"] = merged["count"].fillna(0).astype(int)
    return merged
