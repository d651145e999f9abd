"""Chapter 6 (ablation): how the chapter lays out its paired comparisons. The numbers are computed on the page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tefbook.companion.labels import LANG_LABELS
from tefbook.companion.tables import paired_test_columns, plain, round_half_up
from tefcore.fusion import RULE_LABELS


def comparison_table(cmp: pd.DataFrame, names: Mapping[str, str], n_boot: int | None = None) -> Any:
    """Full TEF against each ablation (:func:`tefbook.companion.results.compare_runs` rows with the chapter's
    ``effect`` column), as text: index ``(judge, language, removed)``."""
    out = pd.DataFrame({
        "judge": cmp["model"].map(names), "language": cmp["lang"].map(LANG_LABELS),
        "ablation": cmp["b"].map(RULE_LABELS),
        **paired_test_columns(cmp, "TEF − ablation", n_boot),
        "the component": cmp["effect"]})
    return plain(out.set_index(["judge", "language", "ablation"]))


# ---- how the prose prints the numbers computed on the page -------------------------------------------
CLAIM_LINKS: dict[str, str] = {"link_qwen": "ablation-qwen", "link_deepseek": "ablation-deepseek",
                               "link_drop": "ablation-drop"}
"""The glue name of each link of the opening paragraph, and the ledger row it points to."""
FLIP_KEYS: dict[str, str] = {"entropy": "tef_without_entropy", "log_odds": "tef_without_log_odds"}
"""The glue infix of each ablation in :func:`flip_glue` (``dis_entropy``, ``dis_log_odds_tef``, ...)."""


def claim_links() -> dict[str, Any]:
    """The links of the opening paragraph to the claims ledger's rows, as Markdown to glue.

    Returns
    -------
    dict
        Glue name (``link_qwen``, ...) to a Markdown link to its row of the claims ledger.

    Examples
    --------
    >>> links = claim_links()
    >>> sorted(links), "#claims-ablation-drop" in links["link_drop"].data
    (['link_deepseek', 'link_drop', 'link_qwen'], True)
    """
    from IPython.display import Markdown

    from tefpaper.ledger import claim_link

    return {key: Markdown(claim_link(claim)) for key, claim in CLAIM_LINKS.items()}


def statement_glue(statements: pd.Series, largest: tuple[str, str, str]) -> dict[str, Any]:
    """The paper's three statements, computed on the page, as the prose prints them.

    Parameters
    ----------
    statements : Series
        In order: the least and the most of TEF's margin an ablation keeps (%), the ablation Averages
        below Soft Vote, the largest drop without entropy weighting and without the log-odds (points).
    largest : tuple of str
        The cell of the largest drop, ``(model, language, dimension)``.

    Returns
    -------
    dict
        ``qwen_kept_min``, ``qwen_kept_max`` (whole percent), ``deepseek_below``, ``drop_entropy``,
        ``drop_log_odds`` (one decimal, rounded half up) and ``drop_cell``, the cell named for the reader.

    Examples
    --------
    >>> out = statement_glue(pd.Series([61.5, 88.25, 3, 4.25, 1.0]), ("qwen2.5-7b", "zh", "Economy"))
    >>> out["qwen_kept_min"], out["drop_entropy"], out["drop_cell"]
    (62.0, 4.3, "Qwen2.5-7B's Chinese Economy")
    """
    from tefpaper.tables import MODEL_LABELS

    return dict(qwen_kept_min=round_half_up(statements.iloc[0], 0), qwen_kept_max=round_half_up(statements.iloc[1], 0),
                deepseek_below=statements.iloc[2], drop_entropy=round_half_up(statements.iloc[3]),
                drop_log_odds=round_half_up(statements.iloc[4]),
                drop_cell=f"{MODEL_LABELS[largest[0]]}'s {LANG_LABELS[largest[1]]} {largest[2]}")


def flip_glue(flips: pd.DataFrame) -> dict[str, Any]:
    """The flips of each ablation, summed over judges and languages, under the prose's glue names.

    Parameters
    ----------
    flips : DataFrame
        One row per ablation, indexed by its label (``w/o Entropy``, ``w/o Log-Odds``), with the columns
        ``decided differently``, ``TEF right`` and ``ablation right``.

    Returns
    -------
    dict
        ``dis_<key>``, ``dis_<key>_tef`` and ``dis_<key>_ablation`` for each key of :data:`FLIP_KEYS`.

    Examples
    --------
    >>> flips = pd.DataFrame({"decided differently": [9, 2], "TEF right": [5, 1], "ablation right": [4, 1]},
    ...                      index=["w/o Entropy", "w/o Log-Odds"])
    >>> {name: int(count) for name, count in flip_glue(flips).items()}  # doctest: +NORMALIZE_WHITESPACE
    {'dis_entropy': 9, 'dis_entropy_tef': 5, 'dis_entropy_ablation': 4, 'dis_log_odds': 2, 'dis_log_odds_tef': 1,
     'dis_log_odds_ablation': 1}
    """
    out: dict[str, Any] = {}
    for key, ablation in FLIP_KEYS.items():
        row = flips.loc[RULE_LABELS[ablation]]
        out.update({f"dis_{key}": row["decided differently"], f"dis_{key}_tef": row["TEF right"],
                    f"dis_{key}_ablation": row["ablation right"]})
    return out


def table4_beside(table: pd.DataFrame, t4: pd.DataFrame, runs: Any, names: Mapping[str, str],
                  rules: list[str], paper_models: list[str], langs: list[str]) -> None:
    """Display our scores beside the paper's Table 4, one table per language, bold the best rule within each judge.

    Parameters
    ----------
    table : DataFrame
        Our scores (:func:`tefcore.evaluate.score_table` by model, language, rule and dimension).
    t4 : DataFrame
        The paper's Table 4 (:func:`tefpaper.tables.load_table`).
    runs : ChapterRuns
        The page's caches (:func:`tefbook.companion.runs.chapter_runs`): their judges and pair counts.
    names : Mapping
        The judges' short names on the page.
    rules, paper_models, langs : list of str
        The rules in row order, the paper's models to set beside ours and the languages in table order.

    Notes
    -----
    The tables are displayed as :func:`tefbook.companion.tables.show_by` prints them, the rows of pair
    counts and floors first.
    """
    from tefbook.companion.results import REFERENCE_ROWS, majority_rate, side_by_side
    from tefbook.companion.tables import show_by

    wide = side_by_side(table, t4, labels={m: f"ours: {names[m]}" for m in runs.models}, reference=majority_rate(runs),
                        rules=rules, paper_models=paper_models, langs=langs)
    show_by(wide.rename_axis(index=["language", "judge", "rule"]), by="judge", skip=REFERENCE_ROWS)


# ---- real posts where the weights decide -------------------------------------------------------------
POST_KEYS: list[str] = ["id", "dimension"]
"""The columns of an evidence view (:func:`tefcore.explain.explain_cache`) that name one pair."""
POST_LABELS: tuple[str, str] = ("ev_a", "ev_b")
"""The glue prefixes of the two posts, in the order :func:`weights_decide` returns them."""
SUMMARY_LABELS: dict[str, str] = {
    "gold": "gold side", "sentences": "sentences", "majority_vote": "MV decides", "tef": "TEF decides",
    "tef_without_entropy": "w/o Entropy decides", "lean_mv": "sentences leaning to MV's side",
    "for_sentence": "for TEF: sentence", "for_p": "for TEF: p of TEF's side", "for_weight": "for TEF: weight",
    "for_share": "for TEF: share of the margin", "against_sentence": "against: sentence",
    "against_p": "against: p of MV's side", "against_weight": "against: weight",
    "against_share": "against: share of the margin", "rest_weight": "largest weight of the others"}
"""How the rows of :func:`decisive_sentences` read on the page (its columns, transposed)."""


def weights_decide(view: pd.DataFrame, max_sentences: int = 6) -> pd.DataFrame:
    """The posts of an evidence view where TEF's weights decide, one TEF gets right and one it gets wrong.

    A post qualifies when it has at most ``max_sentences`` sentences and TEF decides otherwise than both
    Majority Vote and TEF without its weights (w/o Entropy). Of those TEF gets right, the one TEF is most
    confident of comes first; of those it gets wrong, the same second.

    Parameters
    ----------
    view : DataFrame
        An evidence view of pairs with two sides (:func:`tefcore.explain.explain_file`).
    max_sentences : int
        The longest post to show.

    Returns
    -------
    DataFrame
        One row per post (its first row of the view) with ``sentences``, the number of its sentences, and
        the two ablations' decisions ``tef_without_entropy`` and ``tef_without_log_odds``.

    Examples
    --------
    >>> from tefcore.explain import explain_cache
    >>> cache = pd.DataFrame({"post_id": ["a", "b"], "lang": ["en"] * 2, "dimension": ["Economy"] * 2,
    ...                       "side": ["stability", "change"], "direct": [0.5, 0.5],
    ...                       "sentences": [[0.02, 0.75, 0.75, 0.75, 0.75]] * 2})
    >>> weights_decide(explain_cache(cache))[["id", "majority_vote", "tef_without_entropy", "tef", "gold"]]
      id majority_vote tef_without_entropy        tef       gold
    0  a        change              change  stability  stability
    1  b        change              change  stability     change
    """
    from tefcore.fusion import fuse_many

    key = view.groupby(POST_KEYS, sort=False).ngroup().to_numpy()
    first_side = next(c for c in view.columns if c.startswith("tef_score_"))[len("tef_score_"):]
    first = view[view["sentence"] == 1].reset_index(drop=True)
    first["sentences"] = np.bincount(key)
    for rule in ("tef_without_entropy", "tef_without_log_odds"):
        first[rule] = fuse_many(view[f"p_{first_side}"].to_numpy(), key, rule).prediction
    parted = first[(first["sentences"] <= max_sentences) & (first["tef"] != first["majority_vote"])
                   & (first["tef"] != first["tef_without_entropy"])]
    chosen = [parted[(parted["tef"] == parted["gold"]) == right].nlargest(1, "tef_confidence") for right in (True, False)]
    if any(c.empty for c in chosen):
        raise ValueError(f"no post of at most {max_sentences} sentences where the weights decide both ways")
    return pd.concat(chosen, ignore_index=True)


def texts_of(view: pd.DataFrame, posts: pd.DataFrame) -> pd.DataFrame:
    """The sentences of ``posts`` (rows naming ``id, dimension``) in the view, post by post in their order."""
    return posts[POST_KEYS].merge(view, on=POST_KEYS, how="left")


def decisive_sentences(chosen: pd.DataFrame, posts: pd.DataFrame) -> pd.DataFrame:
    """Per post: how many sentences lean to Majority Vote's side, the sentence with the largest share of TEF's
    margin (``for_*``) and the one with the largest share against it (``against_*``): number, probability of
    the side it pushes towards, weight and share; and the largest weight of the remaining sentences.

    Examples
    --------
    >>> from tefcore.explain import explain_cache
    >>> cache = pd.DataFrame({"post_id": ["a", "b"], "lang": ["en"] * 2, "dimension": ["Economy"] * 2,
    ...                       "side": ["stability", "change"], "direct": [0.5, 0.5],
    ...                       "sentences": [[0.02, 0.75, 0.8, 0.7, 0.75]] * 2})
    >>> view = explain_cache(cache)
    >>> out = decisive_sentences(view, weights_decide(view))
    >>> out[["lean_mv", "for_sentence", "against_sentence"]].values.tolist(), round(float(out["rest_weight"][0]), 3)
    ([[4, 1, 3], [4, 1, 3]], 0.189)
    """
    rows = []
    for (pid, dim), text in chosen.groupby(POST_KEYS, sort=False):
        post = posts[(posts["id"] == pid) & (posts["dimension"] == dim)].iloc[0]
        top, opp = text.loc[text["share"].idxmax()], text.loc[text["share"].idxmin()]
        rest = text.drop(index=[top.name, opp.name])
        rows.append({"id": pid, "dimension": dim, "gold": post["gold"], "sentences": len(text),
                     "majority_vote": post["majority_vote"], "tef": post["tef"],
                     "tef_without_entropy": post["tef_without_entropy"],
                     "lean_mv": int((text["leans"] == post["majority_vote"]).sum()),
                     **{f"{part}_{name}": value for part, s, side in (("for", top, post["tef"]),
                                                                      ("against", opp, post["majority_vote"]))
                        for name, value in (("sentence", int(s["sentence"])), ("p", float(s[f"p_{side}"])),
                                            ("weight", float(s["weight"])), ("share", float(s["share"])))},
                     "rest_weight": float(rest["weight"].max()) if len(rest) else 0.0})
    return pd.DataFrame(rows)


def evidence_numbers(summary: pd.DataFrame, chosen: pd.DataFrame) -> dict[str, Any]:
    """The glue names of :func:`decisive_sentences` for the prose, ``ev_a_*`` for the first post and
    ``ev_b_*`` for the second, with the decisive sentences' texts (``*_for_text``, ``*_against_text``);
    ``*_against_share`` is the size of the share against TEF's side (positive).

    Examples
    --------
    >>> from tefcore.explain import explain_cache
    >>> cache = pd.DataFrame({"post_id": ["a", "b"], "lang": ["en"] * 2, "dimension": ["Economy"] * 2,
    ...                       "side": ["stability", "change"], "direct": [0.5, 0.5],
    ...                       "sentences": [[0.02, 0.75, 0.8, 0.7, 0.75]] * 2})
    >>> view = explain_cache(cache, [["No.", "Maybe.", "Yes.", "Perhaps.", "Could be."]] * 2)
    >>> posts = weights_decide(view)
    >>> numbers = evidence_numbers(decisive_sentences(view, posts), view)
    >>> numbers["ev_a_tef"], numbers["ev_a_for_text"], numbers["ev_b_against_text"], numbers["ev_a_against_share"] > 0
    ('stability', 'No.', 'Yes.', True)
    """
    out: dict[str, Any] = {}
    for label, row in zip(POST_LABELS, summary.to_dict("records")):
        text = chosen[(chosen["id"] == row["id"]) & (chosen["dimension"] == row["dimension"])].set_index("sentence")
        out.update({f"{label}_{name}": abs(value) if name == "against_share" else value for name, value in row.items()})
        out.update({f"{label}_{part}_text": str(text.loc[row[f"{part}_sentence"], "text"]) for part in ("for", "against")})
    return out


def evidence_report(chosen: pd.DataFrame, title: str, height: str = "72rem") -> Any:
    """The library's HTML report of ``chosen`` (:func:`tefcore.explain.render`), framed in the page so that
    its own styles stay inside it (a ``srcdoc`` frame: no file, no request).

    Examples
    --------
    >>> from tefcore.explain import explain
    >>> page = evidence_report(explain([0.2, 0.9], ["Keep it.", "Change it!"]), "one text")
    >>> page.data.startswith("<div><iframe") and "Change it!" in page.data and "http" not in page.data
    True
    """
    import html

    from IPython.display import HTML

    from tefcore.explain import render

    report = render(chosen, "html", title=title)
    return HTML(f'<div><iframe title="{html.escape(title)}" srcdoc="{html.escape(report)}" '
                f'style="width:100%;height:{height};border:1px solid #ccc;border-radius:4px"></iframe></div>')
