r"""The evidence view: which sentences decided a text, written as Eq. 3 per sentence.

TEF scores side :math:`c` of a text by :math:`\operatorname{Score}(c) = \sum_i w(\mathbf p_i)\,\ell(p_i^{(c)})`,
so every sentence adds one term per side, its *contribution* :math:`w_i \ell_i^{(c)}`. :func:`explain` lays
those terms out, one row per sentence in text order: the sentence, its probability of every side, its weight
:math:`w_i` (:func:`~tefcore.fusion.entropy_weight`), its clipped log-odds :math:`\ell_i^{(c)}`
(:func:`~tefcore.fusion.clipped_log_odds`), its contribution to every side and its *share* of the decision,
beside what Direct, Majority Vote, Soft Vote and TEF decide (:func:`tefcore.evaluate.predict_pairs`).
The contributions of a text add up to the score :func:`~tefcore.fusion.fuse_many` gives it.

**Share.** TEF decides :math:`\hat c` against the runner-up :math:`r` (the other side when :math:`K = 2`) by
the margin :math:`\sum_i m_i`, :math:`m_i = w_i(\ell_i^{(\hat c)} - \ell_i^{(r)})`. A sentence's share is
:math:`m_i / \sum_j |m_j|`: positive for a sentence that pushes towards the decision, negative against it,
the absolute shares of a text summing to one (all zero when no sentence carries evidence).

**Disagreement.** The share of the six pairs of the four rules (Direct, MV, SV, TEF) that decide
differently: 0 when all agree, 1/2 for three against one, 2/3 for two against two, 1 when all differ (a rule
that abstains, having no readable answer, is left out of the pairs).

An unreadable sentence (a NaN answer) is left out of every rule, as ``invalid="drop"`` does in
:mod:`tefcore.evaluate`: its row stays, with weight NaN and contributions 0. Sentence texts come from the
segmentation the cache's provenance records (:func:`_cache_sentences`); a data file that changed since the
extraction is :class:`DataChanged`, one line, instead of wrong sentences.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import textwrap
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tefcore.evaluate import ABSTAIN, _probabilities, _unreadable, predict_pairs
from tefcore.extraction.cache import read_cache
from tefcore.fusion import CLASSES, CLIP, EPS, RULE_LABELS, clipped_log_odds, entropy_weight
from tefcore.hashing import text_sha256
from tefcore.mind.load import evaluation_pairs, load_posts, mind_filename, resolve_data_dir
from tefcore.tasks.segment import MIN_LENGTH, split_sentences
from tefcore.tasks import load_task, recorded_sides

__all__ = ["DataChanged", "explain", "explain_cache",
           "explain_file", "render", "select", "source_pairs"]

_EXPLAIN_RULES: tuple[str, ...] = ("direct", "majority_vote", "soft_vote", "tef")
"""The rules whose decisions the view shows beside the sentences."""
_EXPLAIN_FORMATS: tuple[str, ...] = ("text", "csv", "json", "html")
"""Output formats of :func:`render` (and ``tef explain --format``)."""
SIDE_COLOURS: tuple[tuple[int, int, int], ...] = (
    (217, 95, 2), (27, 120, 178), (26, 152, 80), (152, 78, 163), (200, 30, 90), (120, 120, 20))
"""RGB of each side in class order (the first side orange, the second blue, ...), cycled beyond six."""
_TEXT_KEYS: list[str] = ["lang", "id", "dimension", "gold"]
"""The columns that name a text of the view (with ``cache`` when a folder of caches was read)."""


class DataChanged(ValueError):
    """The texts no longer match what the cache scored (another sentence count or text hash); one line."""


# ---- the view of one group of texts that share their sides ----------------------------------------------
def _evidence(p: np.ndarray, K: int, eps: float, M: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sentence: the (n, K) probabilities, weights and clipped log-odds, as :mod:`tefcore.fusion` reads
    them (K = 2: the first side's column, the second's log-odds its negation); NaN rows for unreadable ones."""
    bad = _unreadable(p)
    clean = np.where(bad[:, None] if p.ndim == 2 else bad, 0.5 if K == 2 else 1.0 / K, p)
    w = entropy_weight(clean)
    if K == 2:
        first = clean if clean.ndim == 1 else clean[:, 0]
        ell_first = clipped_log_odds(first, eps=eps, M=M)
        probs, ell = np.column_stack([first, 1.0 - first]), np.column_stack([ell_first, -ell_first])
    else:
        probs, ell = clean, clipped_log_odds(clean, eps=eps, M=M)
    probs[bad], ell[bad] = np.nan, np.nan
    w[bad] = np.nan
    return probs, w, ell


def _shares(contribution: np.ndarray, decided: np.ndarray, scores: np.ndarray, doc: np.ndarray,
            starts: np.ndarray) -> np.ndarray:
    """Each sentence's signed share of its text's margin between the decided side and the runner-up."""
    n_docs, K = scores.shape
    rivals = np.where(np.arange(K) == np.maximum(decided, 0)[:, None], -np.inf, np.nan_to_num(scores, nan=-np.inf))
    runner_up = np.argmax(rivals, axis=1)
    rows = np.arange(len(doc))
    part = contribution[rows, np.maximum(decided, 0)[doc]] - contribution[rows, runner_up[doc]]
    part[decided[doc] < 0] = 0.0  # an abstention decides nothing
    total = np.add.reduceat(np.abs(part), starts)[doc]
    return np.divide(part, total, out=np.zeros_like(part), where=total > 0.0)


def _disagreement(decided: np.ndarray) -> np.ndarray:
    """The share of the pairs of rules (columns) whose decisions differ, per text (rows); a rule that
    abstains is in no pair."""
    differ, counted = np.zeros(decided.shape[0]), np.zeros(decided.shape[0])
    for a, b in combinations(range(decided.shape[1]), 2):
        both = (decided[:, a] != ABSTAIN) & (decided[:, b] != ABSTAIN)
        counted += both
        differ += both & (decided[:, a] != decided[:, b])
    return np.divide(differ, counted, out=np.zeros_like(differ), where=counted > 0)


def _group_view(df: pd.DataFrame, classes: Sequence[str], texts: Sequence[Sequence[str]] | None,
                eps: float, M: float) -> pd.DataFrame:
    """:func:`explain_cache` of pairs that share their sides ``classes`` (rows of ``df`` in order)."""
    K, df = len(classes), df.reset_index(drop=True)
    _, flat, doc = _probabilities(df, K)
    probs, w, ell = _evidence(flat, K, eps, M)
    contribution = np.nan_to_num(w[:, None] * ell, nan=0.0)
    pred = predict_pairs(df, list(_EXPLAIN_RULES), classes={d: classes for d in df["dimension"].unique()},
                         scores=True)
    n = len(df)
    decision = pred["prediction"].to_numpy().reshape(len(_EXPLAIN_RULES), n).T
    confidence = pred["confidence"].to_numpy(dtype=float).reshape(len(_EXPLAIN_RULES), n).T
    tef_scores = np.array([[s[c] for c in classes] for s in pred["scores"].iloc[-n:]], dtype=float)
    side_index = {c: k for k, c in enumerate(classes)}
    decided = np.array([side_index.get(d, -1) for d in decision[:, -1]])
    starts = np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])
    out = {"cache": df["cache"].to_numpy()[doc]} if "cache" in df.columns else {}
    out.update({"lang": df["lang"].to_numpy()[doc], "id": df["post_id"].to_numpy()[doc],
                "dimension": df["dimension"].to_numpy()[doc], "gold": df["side"].to_numpy()[doc]})
    for r, rule in enumerate(_EXPLAIN_RULES):
        out[rule], out[f"{rule}_confidence"] = decision[doc, r], confidence[doc, r]
    out.update({f"tef_score_{c}": tef_scores[doc, k] for k, c in enumerate(classes)})
    out["disagreement"] = _disagreement(decision)[doc]
    out["sentence"] = np.arange(len(doc)) - starts[doc] + 1
    out["text"] = np.concatenate([np.asarray(t, dtype=object) for t in texts]) if texts is not None \
        else np.full(len(doc), "", dtype=object)
    out.update({f"p_{c}": probs[:, k] for k, c in enumerate(classes)})
    out["weight"] = w
    out.update({f"log_odds_{c}": ell[:, k] for k, c in enumerate(classes)})
    out.update({f"contribution_{c}": contribution[:, k] for k, c in enumerate(classes)})
    out["share"] = _shares(contribution, decided, tef_scores, doc, starts)
    strongest = np.argmax(contribution, axis=1)
    out["leans"] = np.where(np.abs(contribution).max(axis=1) > 0.0, np.asarray(classes, dtype=object)[strongest], "")
    return pd.DataFrame(out)


def _check_texts(df: pd.DataFrame, texts: Sequence[Sequence[str]] | None) -> None:
    """Sentence texts, when given, must match the cache's sentence counts, pair by pair."""
    if texts is None:
        return
    if len(texts) != len(df):
        raise ValueError(f"texts has {len(texts)} entries for {len(df)} pairs (one list of sentences per pair)")
    for i, (sent, found) in enumerate(zip(df["sentences"], texts)):
        if len(sent) != len(found):
            raise DataChanged(f"pair {df['post_id'].iloc[i]!r} ({df['dimension'].iloc[i]}): {len(found)} sentence "
                              f"texts for the cache's {len(sent)} probabilities")


def explain_cache(frame: pd.DataFrame, texts: Sequence[Sequence[str]] | None = None, *,
                  classes: Mapping[str, Sequence[str]] | None = None, eps: float = EPS,
                  M: float = CLIP) -> pd.DataFrame:
    """The evidence view of every pair of a cache: one row per sentence, texts in the frame's order.

    Parameters
    ----------
    frame : DataFrame
        A cache (:func:`tefcore.extraction.cache.read_cache`): ``post_id, lang, dimension, side, direct,
        sentences`` (and ``direct_probs, sentence_probs`` for a dimension with K > 2 sides).
    texts : sequence of sequences of str, optional
        Each pair's sentences (:func:`_cache_sentences`); empty texts when omitted.
    classes : mapping of str to sequence of str, optional
        The sides per dimension (:func:`tefcore.tasks.recorded_sides`); default MIND's for every dimension.
    eps, M : float
        The clips of :func:`~tefcore.fusion.clipped_log_odds`.

    Returns
    -------
    DataFrame
        Per sentence: the text's keys (``cache`` when present, ``lang, id, dimension, gold``), each rule's
        decision and confidence (``direct``, ``majority_vote``, ``soft_vote``, ``tef`` and ``*_confidence``),
        TEF's score of every side ``tef_score_<side>``, ``disagreement``, then the sentence: ``sentence``
        (1, 2, ...), ``text``, ``p_<side>``, ``weight``, ``log_odds_<side>``, ``contribution_<side>``,
        ``share`` and ``leans`` (the side its evidence favours most). Side columns are NaN where a side is not
        one of the pair's dimension.

    Examples
    --------
    >>> cache = pd.DataFrame({"post_id": ["a"], "lang": ["en"], "dimension": ["Economy"], "side": ["stability"],
    ...                       "direct": [0.6], "sentences": [[0.02, 0.55, 0.55, 0.55, 0.55]]})
    >>> view = explain_cache(cache)
    >>> view[["sentence", "weight", "contribution_change", "share"]].round(3)
       sentence  weight  contribution_change  share
    0         1   0.859               -3.341  0.998
    1         2   0.007                0.001 -0.000
    2         3   0.007                0.001 -0.000
    3         4   0.007                0.001 -0.000
    4         5   0.007                0.001 -0.000
    >>> view.loc[0, ["direct", "majority_vote", "soft_vote", "tef"]].tolist(), round(float(view.loc[0, "disagreement"]), 3)
    (['change', 'change', 'stability', 'stability'], 0.667)
    """
    frame = frame.reset_index(drop=True)
    _check_texts(frame, texts)
    classes = dict(classes) if classes is not None else {d: CLASSES for d in frame["dimension"].unique()}
    missing = sorted(set(frame["dimension"]) - set(classes))
    if missing:
        raise ValueError(f"no sides given for dimension(s) {missing}")
    parts, order = [], []
    for sides, rows in frame.groupby(frame["dimension"].map(lambda d: tuple(classes[d])), sort=False).groups.items():
        rows = np.asarray(rows)
        part = _group_view(frame.loc[rows], sides, None if texts is None else [texts[i] for i in rows], eps, M)
        parts.append(part.assign(_pair=np.repeat(rows, frame.loc[rows, "sentences"].map(len).to_numpy())))
        order.append(rows)
    out = pd.concat(parts, ignore_index=True).sort_values(["_pair", "sentence"], kind="stable")
    front = [c for c in out.columns if not c.startswith(("p_", "log_odds_", "contribution_", "tef_score_"))]
    sides = list(dict.fromkeys(s for d in frame["dimension"].unique() for s in classes[d]))
    at = front.index("disagreement")
    cols = (front[:at] + [f"tef_score_{s}" for s in sides] + front[at:front.index("weight")]
            + [f"p_{s}" for s in sides] + ["weight"] + [f"log_odds_{s}" for s in sides]
            + [f"contribution_{s}" for s in sides] + ["share", "leans"])
    return out.drop(columns="_pair").reset_index(drop=True).reindex(columns=[c for c in cols if c != "_pair"])


def explain(p: Any, sentences: Sequence[str] | None = None, *, classes: Sequence[str] | None = None,
            direct: Any = None, eps: float = EPS, M: float = CLIP) -> pd.DataFrame:
    """The evidence view of one text: each sentence's term of Eq. 3 and the rules' decisions.

    Parameters
    ----------
    p : array_like, shape (n,) or (n, K)
        The sentences' P(first side), or their distributions over K sides, in text order.
    sentences : sequence of str, optional
        The sentences' texts (as many as rows of ``p``).
    classes : sequence of str, optional
        The side names (default :data:`tefcore.fusion.CLASSES` for K = 2, ``class_0, ...`` beyond).
    direct : float or array_like, optional
        The whole text's P(first side) or distribution, for Direct (an abstention when omitted).
    eps, M : float
        The clips of :func:`~tefcore.fusion.clipped_log_odds`.

    Returns
    -------
    DataFrame
        The columns of :func:`explain_cache`; ``contribution_<side>`` sums to TEF's ``tef_score_<side>``.

    Examples
    --------
    >>> view = explain([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], ["Roads first.", "Bike lanes, please."],
    ...                classes=["car", "transit", "cycling"])
    >>> view[["text", "weight", "contribution_car", "contribution_cycling", "leans"]].round(3)
                      text  weight  contribution_car  contribution_cycling    leans
    0         Roads first.   0.270             0.229                -0.594      car
    1  Bike lanes, please.   0.418            -0.919                 0.580  cycling
    >>> view["tef"].iloc[0], bool(np.isclose(view["contribution_cycling"].sum(), view["tef_score_cycling"].iloc[0]))
    ('cycling', True)
    """
    arr = np.asarray(p, dtype=np.float64)
    K = 2 if arr.ndim == 1 else arr.shape[1]
    names = tuple(classes) if classes is not None else CLASSES if K == 2 else tuple(f"class_{k}" for k in range(K))
    if len(names) != K:
        raise ValueError(f"classes must name the {K} sides of p, got {list(names)}")
    whole = np.full(K, np.nan) if direct is None else np.reshape(np.asarray(direct, dtype=np.float64), -1)
    if K == 2:
        row = {"direct": float(whole[0]), "sentences": list(arr if arr.ndim == 1 else arr[:, 0])}
    else:
        row = {"direct": float(whole[0]), "direct_probs": list(whole), "sentences": list(arr[:, 0]),
               "sentence_probs": arr.tolist()}
    frame = pd.DataFrame([{"post_id": "text", "lang": "", "dimension": "", "side": None, **row}])
    return explain_cache(frame, None if sentences is None else [list(sentences)], classes={"": names}, eps=eps, M=M)


# ---- the sentences of a cache's texts ----------------------------------------------------------------
def _recorded_hashes(path: Path) -> dict[tuple[str, str], str]:
    """``(post_id, dimension) -> text_sha256`` of the records of one cache file that hold one."""
    found = {}
    with open(path, encoding="utf-8") as handle:
        next(handle, None)
        for line in handle:
            rec = json.loads(line)
            if "text_sha256" in rec:
                found[str(rec["post_id"]), str(rec["dimension"])] = rec["text_sha256"]
    return found


def source_pairs(provenance: Mapping[str, Any], data_dir: str | os.PathLike[str] | None,
                 task: Any, where: str) -> tuple[list[Any], dict[str, str], str]:
    """What a cache file was extracted from, as the data say it now: its evaluation pairs (with the data's
    gold side), its texts by id, and the data file (a task's data, or MIND's ``mind_<lang>.jsonl``)."""
    if provenance.get("task"):  # a task file's cache: its texts are the task's documents
        given = getattr(task, "name", None)
        if given != provenance["task"]:
            what = f"not of task {given!r} ({task.path})" if given else "give its task file with --task"
            raise ValueError(f"{where} is a cache of task {provenance['task']!r}: {what}")
        return task.pairs(), {d.id: d.text for d in task.documents}, str(task.data)
    lang = provenance["lang"]
    posts = load_posts(lang, data_dir)
    source = str(resolve_data_dir(data_dir) / mind_filename(lang))
    return evaluation_pairs(posts), {p.id: p.text for p in posts}, source


def _source_texts(provenance: Mapping[str, Any], data_dir: str | os.PathLike[str] | None,
                  task: Any, where: str) -> tuple[dict[str, str], str]:
    """The texts a cache file was extracted from, by id, and the data file they come from."""
    _, texts, source = source_pairs(provenance, data_dir, task, where)
    return texts, source


def _cache_sentences(cache: str | os.PathLike[str], frame: pd.DataFrame, provenance: Mapping[str, Any], *,
                     data_dir: str | os.PathLike[str] | None = None, task: Any = None) -> list[list[str]]:
    """The sentences of every pair of a cache, by the segmentation its provenance records.

    Parameters
    ----------
    cache : path-like
        The cache file or folder ``frame`` and ``provenance`` were read from (:func:`read_cache`).
    frame, provenance
        What :func:`read_cache` returned.
    data_dir : path-like, optional
        MIND's data folder (:func:`tefcore.mind.load.resolve_data_dir`).
    task : optional
        The task of a task's cache, as :func:`tefcore.tasks.load_task` returns it.

    Returns
    -------
    list of list of str
        One list per row of ``frame``.

    Raises
    ------
    DataChanged
        When a text is missing, hashes otherwise than the cache records, or splits into another number of
        sentences than the cache scored.
    """
    cache = Path(cache)
    files = {rel: cache / rel for rel in provenance} if "cache" in frame.columns else {None: cache}
    provs = provenance if "cache" in frame.columns else {None: provenance}
    out: list[list[str]] = [[] for _ in range(len(frame))]
    keys = frame["cache"] if "cache" in frame.columns else pd.Series([None] * len(frame))
    for rel, rows in pd.Series(range(len(frame))).groupby(keys.to_numpy(), dropna=False, sort=False):
        rel = None if pd.isna(rel) else rel
        prov, where = provs[rel], str(files[rel])
        texts, source = _source_texts(prov, data_dir, task, where)
        hashes = _recorded_hashes(files[rel])
        rule, min_length = prov.get("segmentation_rule", "reference"), prov.get("min_sentence_length", MIN_LENGTH)
        split: dict[tuple[str, str], list[str]] = {}
        for i in rows:
            pid, lang, dim = str(frame["post_id"].iat[i]), frame["lang"].iat[i], str(frame["dimension"].iat[i])
            if pid not in texts:
                raise DataChanged(f"{where}: text {pid!r} is not in {source}; point --data-dir (or --task) at the "
                                  "data it was extracted from")
            if (pid, lang) not in split:
                split[pid, lang] = split_sentences(texts[pid], lang, min_length, rule)
            recorded, now, n = hashes.get((pid, dim)), text_sha256(texts[pid]), len(frame["sentences"].iat[i])
            if recorded not in (None, now) or len(split[pid, lang]) != n:
                raise DataChanged(f"{where}: text {pid!r} in {source} changed since the extraction "
                                  f"({len(split[pid, lang])} sentences, hash {now}; the cache scored {n}, hash "
                                  f"{recorded}); point --data-dir (or --task) at the data it was extracted from")
            out[i] = split[pid, lang]
    return out


def explain_file(cache: str | os.PathLike[str], *, data_dir: str | os.PathLike[str] | None = None,
                 task: Any = None) -> pd.DataFrame:
    """Read a cache (file or folder), find its sentences and return :func:`explain_cache`'s view.

    Examples
    --------
    >>> view = explain_file("data/caches/e5-crossfit/original/en.jsonl")  # doctest: +SKIP
    """
    frame, provenance = read_cache(cache)
    if frame.empty:
        raise ValueError(f"nothing to explain: {cache} holds no scored pair")
    task = load_task(task) if isinstance(task, (str, os.PathLike)) else task
    provs = provenance.values() if "cache" in frame.columns else [provenance]
    sides: dict[str, list[str]] = {}
    for prov in provs:
        sides.update(recorded_sides(prov) or {})
    texts = _cache_sentences(cache, frame, provenance, data_dir=data_dir, task=task)
    return explain_cache(frame, texts, classes={d: sides.get(d, list(CLASSES)) for d in frame["dimension"].unique()})


def select(view: pd.DataFrame, ids: Sequence[str] | None = None, dimensions: Sequence[str] | None = None,
           disagree: bool = False) -> pd.DataFrame:
    """The whole texts of a view asked for: by id, by dimension, or those where the rules disagree (the most
    disputed first, then the most confident TEF; each text's sentences stay in order).

    Examples
    --------
    >>> view = explain_cache(pd.DataFrame({"post_id": ["a", "b"], "lang": ["en", "en"], "dimension": ["Economy"] * 2,
    ...                                    "side": ["change"] * 2, "direct": [0.6, 0.6],
    ...                                    "sentences": [[0.9, 0.8], [0.02, 0.55, 0.55]]}))
    >>> select(view, disagree=True)["id"].tolist()
    ['b', 'b', 'b']
    >>> select(view, ids=["c"])
    Traceback (most recent call last):
    ValueError: no text with id 'c' in the cache (--id); it has a, b
    """
    keep = np.ones(len(view), dtype=bool)
    for column, wanted, flag in (("id", ids, "--id"), ("dimension", dimensions, "--dimension")):
        if wanted:
            known = pd.unique(view[column].astype(str))
            absent = [w for w in wanted if w not in set(known)]
            if absent:
                shown = ", ".join(known[:5]) + (f", ... ({len(known)} in all)" if len(known) > 5 else "")
                raise ValueError(f"no text with {column} {absent[0]!r} in the cache ({flag}); it has {shown}")
            keep &= view[column].astype(str).isin(list(wanted)).to_numpy()
    if disagree:
        keep &= view["disagreement"].to_numpy() > 0.0
    chosen = view[keep]
    if not disagree:
        return chosen.reset_index(drop=True)
    number = np.cumsum(chosen["sentence"].to_numpy() == 1)
    order = np.lexsort((chosen["sentence"].to_numpy(), number, -chosen["tef_confidence"].fillna(0.0).to_numpy(),
                        -chosen["disagreement"].to_numpy()))
    return chosen.iloc[order].reset_index(drop=True)


# ---- rendering ------------------------------------------------------------------------------------------
def _texts(view: pd.DataFrame) -> list[tuple[dict[str, Any], list[str], list[dict[str, Any]]]]:
    """The view cut into its texts, in order: each text's first row, its sides and its rows (as dicts)."""
    starts = np.flatnonzero(np.r_[True, view["sentence"].to_numpy()[1:] == 1]) if len(view) else np.array([], int)
    rows = view.to_dict("records")
    sides = [c[len("tef_score_"):] for c in view.columns if c.startswith("tef_score_")]
    return [(rows[a], [s for s in sides if rows[a][f"tef_score_{s}"] == rows[a][f"tef_score_{s}"]], rows[a:b])
            for a, b in zip(starts, [*starts[1:], len(view)])]


def _decisions_line(first: Mapping[str, Any]) -> str:
    """``Direct x (0.71) | MV y (0.60) | SV ... | TEF ...``."""
    return " | ".join(f"{RULE_LABELS[r]} {first[r]}" + ("" if first[r] == ABSTAIN else f" ({first[r + '_confidence']:.2f})")
                      for r in _EXPLAIN_RULES)


def _num(x: float, digits: int = 3, signed: bool = False) -> str:
    return "-" if pd.isna(x) else f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def _percent(share: float) -> str:
    """A signed share in whole percent; a share that rounds to zero prints without a sign.

    >>> _percent(0.574), _percent(-0.002), _percent(-0.07)
    ('+57%', '0%', '-7%')
    """
    return "0%" if round(share * 100) == 0 else f"{share:+.0%}"


def _text_block(first: Mapping[str, Any], sides: list[str], text: list[dict[str, Any]], width: int) -> str:
    """One text of the terminal view: its keys, the rules' decisions, then one row per sentence."""
    gold = f"gold {first['gold'] if isinstance(first['gold'], str) else '-'}"
    head = " · ".join(str(x) for x in (first["id"], first["dimension"], gold, first.get("cache", "")) if x)
    ell_sides = sides[:1] if len(sides) == 2 else sides
    shown = [("#", [str(r["sentence"]) for r in text])]
    shown += [(f"p({s})", [_num(r[f"p_{s}"]) for r in text]) for s in sides]
    shown += [("w", [_num(r["weight"]) for r in text])]
    shown += [(f"l({s})", [_num(r[f"log_odds_{s}"], 2, True) for r in text]) for s in ell_sides]
    shown += [(f"w*l({s})", [_num(r[f"contribution_{s}"], 3, True) for r in text]) for s in ell_sides]
    shown += [("share", [_percent(r["share"]) for r in text])]
    widths = [max(len(h), *(len(v) for v in vals)) for h, vals in shown]
    lead = sum(widths) + 2 * len(widths)
    wrap = max(30, width - lead)
    rows = ["  ".join(h.rjust(w) for (h, _), w in zip(shown, widths)) + "  sentence"]
    for i, r in enumerate(text):
        cells = "  ".join(vals[i].rjust(w) for (_, vals), w in zip(shown, widths))
        lines = textwrap.wrap(str(r["text"]), wrap) or [""]
        rows += [cells + "  " + lines[0]] + [" " * lead + more for more in lines[1:]]
    total = "  ".join(f"Score({s}) = {first[f'tef_score_{s}']:+.3f}" for s in ell_sides)
    return "\n".join([head, "  " + _decisions_line(first) + f"   disagreement {first['disagreement']:.2f}",
                      *rows, f"  TEF: {total} (the sum of the w*l column)"])


def _to_text(view: pd.DataFrame, width: int | None = None) -> str:
    width = width or shutil.get_terminal_size((110, 24)).columns
    legend = ("p = probability of a side, w = TEF weight 1 - H(p)/log K, l = clipped log-odds, w*l = the "
              "sentence's contribution to Score (Eq. 3), share = its part of TEF's margin (+ for, - against)")
    blocks = [_text_block(first, sides, text, width) for first, sides, text in _texts(view)]
    return "\n\n".join([*blocks, textwrap.fill(legend, min(width, 110))])


def _to_json(view: pd.DataFrame) -> str:
    """One object per text: its keys, the rules' decisions and scores, and its sentences."""
    out = []
    for first, sides, text in _texts(view):
        item: dict[str, Any] = {k: first[k] for k in ("cache", *_TEXT_KEYS) if k in first}
        item["gold"] = item["gold"] if isinstance(item["gold"], str) else None
        item["decisions"] = {r: {"decision": first[r], "confidence": _finite(first[f"{r}_confidence"])}
                             for r in _EXPLAIN_RULES}
        item["tef_scores"] = {s: first[f"tef_score_{s}"] for s in sides}
        item["disagreement"] = first["disagreement"]
        item["sentences"] = [{"sentence": r["sentence"], "text": r["text"],
                              "p": {s: _finite(r[f"p_{s}"]) for s in sides}, "weight": _finite(r["weight"]),
                              "log_odds": {s: _finite(r[f"log_odds_{s}"]) for s in sides},
                              "contribution": {s: r[f"contribution_{s}"] for s in sides},
                              "share": r["share"], "leans": r["leans"]} for r in text]
        out.append(item)
    return json.dumps(out, ensure_ascii=False, indent=1, default=lambda x: x.item() if hasattr(x, "item") else None)


def _finite(x: Any) -> float | None:
    return None if pd.isna(x) else float(x)


_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem auto;max-width:72rem;color:#222;
padding:0 1rem}h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem;border-top:1px solid #ccc;padding-top:.8rem}
table{border-collapse:collapse;font-size:13px}td,th{padding:.15rem .5rem;text-align:left;border-bottom:1px solid #eee}
td.n{text-align:right;font-variant-numeric:tabular-nums}.text{display:flex;gap:1.5rem;align-items:flex-start}
.sentences{flex:3}.rules{flex:1;min-width:14rem}.s{padding:.1rem .25rem;border-radius:3px;margin:.1rem 0;
display:block}.s small{color:#555;font-size:11px;margin-left:.4rem}.key{display:inline-block;padding:0 .4rem;
border-radius:3px;margin-right:.5rem}.disagree{color:#a00}a{color:#1b5e9e}
"""


def _rgba(side: int, alpha: float) -> str:
    r, g, b = SIDE_COLOURS[side % len(SIDE_COLOURS)]
    return f"rgba({r},{g},{b},{alpha:.2f})"


def _html_sentences(view: pd.DataFrame, sides: list[str]) -> list[str]:
    """Every sentence as a span shaded in its side's colour, the stronger the larger its share (one pass)."""
    e = html.escape
    index = {s: i for i, s in enumerate(sides)}
    alpha = 0.08 + 0.72 * np.abs(view["share"].to_numpy())
    probs = view[[f"p_{s}" for s in sides]].to_numpy()
    out = []
    for j, (sentence, leans, share, w) in enumerate(zip(view["text"], view["leans"], view["share"], view["weight"])):
        colour = _rgba(index[leans], alpha[j]) if leans in index else "transparent"
        tip = f"w = {_num(w)}; " + "; ".join(f"p({s}) = {_num(x)}" for s, x in zip(sides, probs[j]) if x == x)
        out.append(f'<span class=s style="background:{colour}" title="{e(tip)}">{e(str(sentence))}'
                   f"<small>{e(leans or 'no evidence')} {_percent(share)}</small></span>")
    return out


def _html_text(k: int, first: Mapping[str, Any], sides: list[str], spans: list[str]) -> str:
    """One text of the report: its shaded sentences, the rules' decisions and TEF's scores beside them."""
    e = html.escape
    rules = "".join(f"<tr><td>{RULE_LABELS[r]}</td><td>{e(str(first[r]))}</td><td class=n>"
                    f"{_num(first[r + '_confidence'], 2)}</td></tr>" for r in _EXPLAIN_RULES)
    scores = "".join(f"<tr><td>TEF score</td><td>{e(s)}</td><td class=n>{first[f'tef_score_{s}']:+.3f}</td></tr>"
                     for s in sides if first[f"tef_score_{s}"] == first[f"tef_score_{s}"])
    gold = first["gold"] if isinstance(first["gold"], str) else "none"
    return (f'<h2 id="t{k}">{e(str(first["id"]))} · {e(str(first["dimension"]))} <small>gold {e(gold)}; '
            f"disagreement {first['disagreement']:.2f}</small></h2><div class=text><div class=sentences>"
            f"{''.join(spans)}</div><div class=rules><table><tr><th>rule</th><th>decides</th><th>conf.</th></tr>"
            f"{rules}{scores}</table></div></div>")


def _html_index(firsts: pd.DataFrame) -> str:
    """The texts, the most disputed first (then the most confident TEF), each linked to its section."""
    e = html.escape
    order = firsts.sort_values(["disagreement", "tef_confidence"], ascending=False, kind="stable").index
    head = "".join(f"<th>{h}</th>" for h in ["text", "dimension", "gold", *(RULE_LABELS[r] for r in _EXPLAIN_RULES),
                                            "disagreement"])
    rows = "".join(
        f"<tr><td><a href='#t{i}'>{e(str(t['id']))}</a></td><td>{e(str(t['dimension']))}</td>"
        f"<td>{e(t['gold']) if isinstance(t['gold'], str) else ''}</td>"
        + "".join(f"<td>{e(str(t[r]))}</td>" for r in _EXPLAIN_RULES) + f"<td class=n>{t['disagreement']:.2f}</td></tr>"
        for i, t in zip(order, firsts.loc[order].to_dict("records")))
    return f"<table><tr>{head}</tr>{rows}</table>"


def _to_html(view: pd.DataFrame, title: str) -> str:
    """A self-contained report: inline CSS, no script, no remote asset."""
    e = html.escape
    starts = np.flatnonzero(np.r_[True, view["sentence"].to_numpy()[1:] == 1]) if len(view) else np.array([], int)
    firsts = view.iloc[starts].reset_index(drop=True)
    sides = [c[len("tef_score_"):] for c in view.columns if c.startswith("tef_score_")]
    spans = _html_sentences(view, sides)
    ends = [*starts[1:], len(view)]
    body = "".join(_html_text(k, first, sides, spans[a:b])
                   for k, (first, a, b) in enumerate(zip(firsts.to_dict("records"), starts, ends)))
    keys = "".join(f'<span class=key style="background:{_rgba(i, 0.5)}">{e(s)}</span>' for i, s in enumerate(sides))
    return (f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{e(title)}</title><style>{_CSS}</style>"
            f"</head><body><h1>{e(title)}</h1><p>Each sentence is shaded in the colour of the side its evidence "
            f"favours, the stronger the larger its share of TEF's decision (Eq. 3: its contribution w·ℓ). "
            f"Sides: {keys}</p><h2>Texts, the most disputed first</h2><p>disagreement: the share of the pairs of "
            f"the four rules that decide differently.</p>{_html_index(firsts)}{body}</body></html>\n")


def render(view: pd.DataFrame, fmt: str = "text", *, title: str = "TEF evidence view", width: int | None = None) -> str:
    """The view of :func:`explain_cache` as a terminal table, csv, json or a self-contained HTML report.

    Parameters
    ----------
    view : DataFrame
        From :func:`explain`, :func:`explain_cache` or :func:`explain_file` (or rows of whole texts of it).
    fmt : {"text", "csv", "json", "html"}
    title : str
        The HTML report's title.
    width : int, optional
        Terminal width of the text format (default: the terminal's).

    Examples
    --------
    >>> print(render(explain([0.02, 0.55, 0.55], ["Nothing will change.", "Maybe.", "Perhaps."]),
    ...              width=100))  # doctest: +NORMALIZE_WHITESPACE
    text · gold -
      Direct abstain | MV change (0.67) | SV stability (0.63) | TEF stability (0.79)   disagreement 0.67
    #  p(change)  p(stability)      w  l(change)  w*l(change)  share  sentence
    1      0.020         0.980  0.859      -3.89       -3.341  +100%  Nothing will change.
    2      0.550         0.450  0.007      +0.20       +0.001     0%  Maybe.
    3      0.550         0.450  0.007      +0.20       +0.001     0%  Perhaps.
      TEF: Score(change) = -3.338 (the sum of the w*l column)
    <BLANKLINE>
    p = probability of a side, w = TEF weight 1 - H(p)/log K, l = clipped log-odds, w*l = the sentence's
    contribution to Score (Eq. 3), share = its part of TEF's margin (+ for, - against)
    """
    if fmt == "csv":
        return view.to_csv(index=False)
    if fmt == "json":
        return _to_json(view)
    if fmt == "html":
        return _to_html(view, title)
    if fmt == "text":
        return _to_text(view, width)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(_EXPLAIN_FORMATS)}")
