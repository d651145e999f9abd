"""The evaluation tables of ``tef evaluate``: one cache scored (its score table with the judge and prompt in
front, the blind rules and, on request, intervals and tests against the strongest baseline), and the scores
of every cache printed as compact text, Markdown, csv or json, with the paper's short names, a ``*`` on the
best value of each column, ``!`` on a blind rule and parentheses on a score from few pairs. The numbers come
from :mod:`tefcore.evaluate` and :mod:`tefcore.inference`; this module only chooses and presents them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tefcore.evaluate import ABSTAIN, AVERAGE, METRIC_LABELS, predict_pairs, score_table, sort_table
from tefcore.explain import source_pairs
from tefcore.extraction.cache import header_pairs, read_cache_file
from tefcore.fusion import RULE_LABELS, RULE_NAMES
from tefcore.inference import BLIND_SHARE, baseline_tests, blind_message, blind_rows, interval_table
from tefcore.mind.schema import ABBREVIATIONS, TABLE_ORDER
from tefcore.tasks import Task, recorded_sides

__all__ = ["FEW_PAIRS", "evaluate_file", "format_scores", "records", "shown"]

FEW_PAIRS = 20
"""``tef evaluate`` marks a score computed on fewer pairs than this: a rate of one or two pairs means little."""


def _gold_from_data(frame: pd.DataFrame, prov: dict[str, Any], path: Path, data_dir: Path | None = None,
                    task: Task | None = None) -> pd.DataFrame:
    """The cache's pairs with the gold side the data give now, said in one line on stderr where it is not the
    gold the cache stored (a label corrected after the extraction): the data are the truth, the cache only
    their copy.

    The data are a task's (``task``, for a cache of that task) or MIND's (``data_dir``; without it the folder
    ``tef extract`` reads by default, $MIND_DATA_DIR or the embedded sample, when it holds every pair of the
    cache). A pair the data no longer label is left out. A task's cache without ``task`` keeps the stored gold.
    The data are found as :func:`tefcore.explain.source_pairs` finds them for ``tef explain``.
    """
    if prov.get("task") and not isinstance(task, Task):
        return frame
    try:
        pairs, _, source = source_pairs(prov, None if prov.get("task") else data_dir, task, shown(str(path)))
    except (OSError, ValueError):
        if prov.get("task") or data_dir is not None:
            raise
        return frame  # no default MIND data to compare with
    gold = {(p.post_id, p.lang, p.dimension): p.side for p in pairs}
    keys = list(zip(frame["post_id"], frame["lang"], frame["dimension"]))
    if not prov.get("task") and data_dir is None and not all(k in gold for k in keys):
        return frame  # the default MIND folder is not the one this cache was made from
    now = pd.Series([gold.get(k) for k in keys], index=frame.index, dtype=object)
    differ = ~((now == frame["side"]) | (now.isna() & frame["side"].isna()))
    if differ.any():
        first = frame[differ].iloc[0]
        print(f"tef: warning: {shown(str(path))}: the gold side of {int(differ.sum()):,} of {len(frame):,} pairs is "
              f"not the cache's in {shown(source)} (first: {first['post_id']!r}, {first['dimension']}: "
              f"{first['side']!r} in the cache, {now[differ].iloc[0]!r} in the data); scored against the data's",
              file=sys.stderr)
    return frame.assign(side=now)[now.notna()]


def evaluate_file(path: Path, rules: Sequence[str] | None, invalid: str, intervals: bool = False, *,
                  data_dir: Path | None = None, task: Task | None = None) -> Any:
    """Score one cache: its :func:`~tefcore.evaluate.score_table` with the cache's judge and prompt in front,
    ``blind`` (:func:`~tefcore.inference.blind_rows`, said on stderr) and, with ``intervals``, the bootstrap
    intervals and tests against the strongest baseline.

    Returns ``None`` for a cache that holds no pair (a header alone). A task's: its pairs with gold, its sides;
    a dimension without any readable answer (a judge that skipped it) is left out, said on stderr. The gold is
    the data's (:func:`_gold_from_data`, with MIND's ``data_dir`` or the ``task``), the cache's where its data
    cannot be read.
    """
    frame, prov = read_cache_file(path)
    if frame.empty:
        return None
    frame = _gold_from_data(frame, prov, path, data_dir, task)
    asked = header_pairs(path)
    if asked is not None and len(frame) < asked:
        print(f"tef: warning: {shown(str(path))} holds {len(frame):,} of its data's {asked:,} pairs (an extraction "
              "that stopped, or ran with --limit); its `tef extract` again finishes it", file=sys.stderr)
    sides = recorded_sides(prov)
    if sides is not None and (frame := frame[frame["side"].notna()]).empty:
        raise ValueError(f"{shown(str(path))}: task {prov['task']!r} has no gold side; tef fuse prints its decisions")
    pred = predict_pairs(frame, rules=rules, invalid=invalid, classes=sides)
    dead = pred.groupby("dimension", sort=False)["prediction"].agg(lambda s: bool((s == ABSTAIN).all()))
    for dim in dead[dead].index:
        print(f"tef: warning: {shown(str(path))}: {dim} has no readable answer (skipped by the judge); left out",
              file=sys.stderr)
    pred = pred[~pred["dimension"].map(dead)].reset_index(drop=True)
    if pred.empty:  # every dimension skipped: said above, nothing to score
        return pd.DataFrame()
    orders = {"dimension": prov.get("dimensions", TABLE_ORDER)}
    table = score_table(pred, orders=orders, classes=sides)
    blind = blind_rows(pred, warn=False)
    for lang, rows in blind.groupby("lang", sort=False):
        print(f"tef: warning: {shown(str(path))}, {lang}: {blind_message(rows.drop(columns='lang'))}", file=sys.stderr)
    cells = set(zip(blind["lang"], blind["rule"], blind["dimension"]))
    table["blind"] = [(lang, rule, dim) in cells or (dim == AVERAGE and any((lang, rule, d) in cells for d in dead.index))
                      for lang, rule, dim in zip(table["lang"], table["rule"], table["dimension"])]
    if intervals:
        keys = ["lang", "rule", "dimension"]
        table = table.merge(interval_table(pred, classes=sides, orders=orders).drop(
            columns=["n", "accuracy", "macro_f1"]), on=keys, how="left").merge(
            baseline_tests(pred).rename(columns={"low": "difference_low", "high": "difference_high"})
            .drop(columns="n"), on=keys, how="left")
    invalid_sentences = pred.drop_duplicates(["post_id", "dimension"]).groupby("lang")["n_invalid"].sum()
    front = pd.DataFrame({"cache": str(path), "judge": prov.get("judge", prov.get("model")),
                          "prompt": prov.get("prompt_variant")}, index=table.index)
    return pd.concat([front, table], axis=1).assign(
        invalid_sentences=table["lang"].map(invalid_sentences).astype(int))


def _marked(grid: Any, n: Any, blind: Any = None) -> Any:
    """One decimal; ``*`` on the best value of each column (ties included) among the cells not ``blind``, which
    get ``!``; parentheses when n < FEW_PAIRS."""
    shown = grid.round(1)
    text = shown.map(lambda v: "-" if v != v else f"{v:.1f}")
    if blind is not None:
        text, shown = text.where(~blind, text + "!"), shown.where(~blind)
    text = text.where(~shown.eq(shown.max(axis=0), axis=1), text + "*")
    few = (n < FEW_PAIRS).to_numpy()
    return text.where(~few[None, :].repeat(len(text), axis=0), "(" + text + ")")


def _score_display(table: Any) -> Any:
    """One language's scores as ``tef evaluate`` prints them: strings, rules as rows, dimensions as columns.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`tefcore.evaluate.score_table` rows of one language, the ``Average`` among the dimensions.

    Returns
    -------
    pandas.DataFrame
        Rows (metric, rule) and ``n`` (pairs), columns the dimensions, all with the paper's short names; a
        ``*`` on the best value of each column, parentheses on values from fewer than :data:`FEW_PAIRS` pairs.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"rule": ["direct", "direct", "direct", "tef", "tef", "tef"],
    ...                   "dimension": ["Economy", "Culture", "Average"] * 2, "n": [40, 8, 48] * 2,
    ...                   "accuracy": [70.0, 50.0, 60.0, 75.0, 50.0, 62.5],
    ...                   "macro_f1": [65.0, 40.0, 52.5, 74.0, 45.0, 59.5]})
    >>> print(_score_display(t).to_string())
                   Cul.   Eco.   Avg.
    Acc Direct  (50.0*)   70.0   60.0
        TEF     (50.0*)  75.0*  62.5*
    F1  Direct   (40.0)   65.0   52.5
        TEF     (45.0*)  74.0*  59.5*
    n                 8     40     48
    """
    by_dim = sort_table(table.drop_duplicates("dimension"), ["dimension"], {"dimension": TABLE_ORDER})
    n = by_dim.set_index("dimension")["n"]  # MIND's in the paper's order, a task's as the table has them
    dims = n.index.tolist()
    rules = [r for r in RULE_NAMES if r in set(table["rule"])]
    blind = (table.pivot(index="rule", columns="dimension", values="blind").reindex(index=rules, columns=dims)
             .fillna(False).astype(bool) if "blind" in table.columns else None)
    blocks = {METRIC_LABELS[metric]: _marked(table.pivot(index="rule", columns="dimension", values=metric)
                                              .reindex(index=rules, columns=dims), n, blind)
              for metric in ("accuracy", "macro_f1")}
    shown = pd.concat(blocks).rename(index=RULE_LABELS)
    shown.loc[("n", ""), :] = n.astype(int).astype(str).to_numpy()
    shown.columns = [ABBREVIATIONS.get(d, "Avg." if d == AVERAGE else d) for d in dims]  # a task's names in full
    shown.index.names = [None, None]
    shown.columns.name = None
    return shown


def shown(path: str) -> str:
    """A path as short as it can be said: relative to the working directory when it lies inside it."""
    here, target = Path.cwd(), Path(path)
    return str(target.relative_to(here)) if target.is_relative_to(here) else str(target)


def _heading(part: Any) -> str:
    """Two lines: the cache, then ``judge J, prompt P, language L: N pairs, K invalid sentences``."""
    first = part.iloc[0]
    return (f"{shown(first['cache'])}\njudge {first['judge']}, prompt {first['prompt']}, language {first['lang']}: "
            f"{int(part['n'].max()):,} pairs, {int(first['invalid_sentences']):,} invalid sentences")


def records(frame: Any, fmt: str) -> str:
    """A table as csv, or as a JSON list of objects with every float bit kept and non-ASCII text as it is."""
    if fmt == "csv":
        return frame.to_csv(index=False).rstrip("\n")
    return json.dumps(json.loads(frame.to_json(orient="records", double_precision=15)), ensure_ascii=False, indent=1)


def _interval_lines(part: Any) -> str:
    """``--intervals``: each rule's 95% accuracy interval per dimension, then each rule against the strongest
    baseline (the difference in points, its interval, the bootstrap's and McNemar's p-values)."""
    rules, cells = [r for r in RULE_NAMES if r in set(part["rule"])], part.set_index(["rule", "dimension"])
    dims = sort_table(part.drop_duplicates("dimension"), ["dimension"], {"dimension": TABLE_ORDER})["dimension"]
    grid = pd.DataFrame({ABBREVIATIONS.get(d, "Avg." if d == AVERAGE else d):
                         [f"{cells.loc[(r, d), 'accuracy_low']:.1f}-{cells.loc[(r, d), 'accuracy_high']:.1f}"
                          for r in rules] for d in dims}, index=[RULE_LABELS[r] for r in rules])
    lines = [f"Acc, 95% interval (bootstrap of the texts):\n{grid.to_string()}"]
    tests = part[part["baseline"].notna()]
    if len(tests):
        lines.append("against the strongest baseline (Acc, points; p: paired bootstrap, McNemar):")
        lines += [f"  {row['dimension']:<12} {RULE_LABELS[row['rule']]} - {RULE_LABELS[row['baseline']]}: "
                  f"{row['difference']:+.1f} [{row['difference_low']:+.1f}, {row['difference_high']:+.1f}], "
                  f"p {row['p_bootstrap']:.2f}, {row['p_mcnemar']:.2f}" for _, row in tests.iterrows()]
    return "\n".join(lines)


def format_scores(results: Any, fmt: str, invalid: str) -> str:
    """The scores of every cache as ``--format`` asks: compact text tables, Markdown, csv or json."""
    if fmt in ("csv", "json"):
        return records(results, fmt)
    legend = (f"Acc = accuracy, F1 = macro-F1, in %; n = pairs per dimension; * best of its column;\n"
              f"(x) fewer than {FEW_PAIRS} pairs; unreadable answers: {invalid} (--invalid);\n"
              f"! one side for >= {100 * BLIND_SHARE:g}% of the texts (Avg.: on a dimension), never *")
    blocks = []
    for _, part in results.groupby(["cache", "lang"], sort=False):
        shown = _score_display(part)
        if fmt == "markdown":
            blocks.append(_heading(part).replace("\n", ": ", 1) + "\n\n" + shown.rename_axis(["", "rule"]).reset_index()
                          .to_markdown(index=False, colalign=("left", "left", *["right"] * shown.shape[1])))
        else:
            blocks.append(f"{_heading(part)}\n{shown.to_string()}")
        if "accuracy_low" in part.columns:
            blocks[-1] += "\n\n" + _interval_lines(part)
    return "\n\n".join([*blocks, legend if fmt == "text" else legend.replace("\n", " ").replace("*", "\\*")])
