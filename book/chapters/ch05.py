"""Chapter 5 (main results): what only that chapter uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from companion.labels import LANG_LABELS, judge_label, paper_label, row_label, short_label
from companion.plots import judge_language_lines
from companion.results import (
    METRIC_NAMES,
    average_intervals,
    below_floor,
    in_run_order,
    predict_runs,
    score_runs,
    versus_best_baseline,
)
from companion.runs import Runs, frame_of, run_keys
from companion.tables import format_cell, format_interval, format_p
from tefcore import evaluate
from tefcore.evaluate import (
    BASELINES,
    flatten_sentences,
    iter_groups,
    sort_table,
)
from tefcore.fusion import RULE_LABELS


def versus_table(vs: pd.DataFrame, labels: Mapping[str, str] | None = None, n_boot: int | None = None) -> pd.DataFrame:
    """:func:`versus_best_baseline` as a chapter shows it, numbers as text.

    Returns
    -------
    DataFrame
        Index ``(run, lang, metric)``; columns ``strongest`` (the paper's name of the best baseline),
        ``baseline``, ``TEF``, ``TEF - baseline`` (with its paired-bootstrap interval), ``p (bootstrap)``,
        ``b`` and ``c`` (pairs only TEF / only the baseline gets right) and ``p (McNemar)``.
    """
    vs = in_run_order(vs, ["metric"])
    out = pd.DataFrame({
        "run": vs["model"].map(lambda m: row_label(m, labels)), "lang": vs["lang"],
        "metric": vs["metric"].map(lambda m: METRIC_NAMES.get(m, m)),
        "strongest": vs["b"].map(RULE_LABELS), "baseline": vs["baseline"].map(format_cell),
        "TEF": vs["tef"].map(format_cell),
        "TEF - baseline": [format_interval(d, lo, hi, signed=True)
                           for d, lo, hi in zip(vs["difference"], vs["low"], vs["high"])],
        "p (bootstrap)": [format_p(p, n_boot) for p in vs["p_bootstrap"]],
        "b": vs["mcnemar_b"], "c": vs["mcnemar_c"], "p (McNemar)": [format_p(p) for p in vs["p_mcnemar"]],
    })
    return out.set_index(["run", "lang", "metric"])


def gain_facts(vs: pd.DataFrame, labels: Mapping[str, str] | None = None, metric: str = "accuracy") -> dict[str, Any]:
    """The numbers a chapter's prose quotes about TEF against the strongest baseline, for one metric.

    Returns
    -------
    dict
        ``cells`` (run-language cells), ``gain_min`` and ``gain_max`` (points), ``n_above``, ``n_below``
        and ``n_crossing`` (cells whose 95 % interval lies above zero, below zero, or crosses it) and
        ``above`` / ``below`` (those cells named, or ``"none"``).
    """
    m = vs[vs["metric"] == metric]
    up, down = m[m["low"] > 0], m[m["high"] < 0]

    def named(frame: pd.DataFrame) -> str:
        return "; ".join(f"{row_label(r['model'], labels)}, {LANG_LABELS.get(r['lang'], r['lang'])}"
                         for _, r in frame.iterrows()) or "none"

    if len(up) == 0:
        verdict = ("In none of our cells is TEF clearly ahead of the strongest baseline: on these judges and "
                   "these pairs TEF does not beat the best of Direct, MV and SV.")
    elif len(up) == len(m):
        verdict = "TEF is clearly ahead of the strongest baseline in every cell of ours."
    else:
        verdict = (f"TEF is clearly ahead of the strongest baseline in {len(up)} of {len(m)} cells of ours, "
                   "not in the others.")
    return {"cells": len(m), "gain_min": float(m["difference"].min()), "gain_max": float(m["difference"].max()),
            "n_above": len(up), "n_below": len(down), "n_crossing": len(m) - len(up) - len(down),
            "above": named(up), "below": named(down), "verdict": verdict}


def paper_gain_table(table3: pd.DataFrame) -> pd.DataFrame:
    """The paper's TEF minus its strongest baseline on the Average, per model and language (Table 3).

    Returns
    -------
    DataFrame
        Index ``(run, lang)`` (``"paper: <model>"``, the paper's model order, Chinese first); columns
        ``strongest`` (accuracy's best baseline) and the gain in ``accuracy`` and ``macro-F1`` (points).
    """
    from tefcore.paper import tables as paper

    g = paper.strongest_baseline_gain(table3, level="model_lang").reset_index()
    g = sort_table(g, ["model", "lang"], {"model": paper.MODELS, "lang": ["zh", "en"]})
    wide = g.pivot_table(index=["model", "lang"], columns="metric", values="gain", sort=False)
    best = g[g["metric"] == "accuracy"].set_index(["model", "lang"])["strongest_baseline"]
    out = pd.DataFrame({"strongest": best.reindex(wide.index).map(RULE_LABELS),
                        **{METRIC_NAMES[m]: wide[m] for m in ("accuracy", "macro_f1")}})
    out.index = pd.MultiIndex.from_tuples([(paper_label(m), lang) for m, lang in out.index], names=["run", "lang"])
    return out


def gain_markdown(vs: pd.DataFrame, labels: Mapping[str, str] | None = None, metric: str = "accuracy") -> str:
    """One bullet per run and language: TEF's Average, the strongest baseline's, and the paired difference."""
    lines = []
    for _, r in vs[vs["metric"] == metric].iterrows():
        diff = format_interval(r["difference"], r["low"], r["high"], signed=True)
        verdict = ("TEF ahead" if r["low"] > 0 else "the baseline ahead" if r["high"] < 0
                   else "no difference the interval can tell")
        lines.append(f"* {row_label(r['model'], labels)}, {LANG_LABELS.get(r['lang'], r['lang'])}: TEF "
                     f"{format_cell(r['tef'])} against {RULE_LABELS[r['b']]} {format_cell(r['baseline'])}, "
                     f"difference {diff} points: {verdict}.")
    return "\n".join(lines)


def floor_markdown(table: pd.DataFrame, reference: pd.DataFrame, labels: Mapping[str, str] | None = None) -> str:
    """Which of our results fall below the majority-class floor (Average accuracy), as Markdown.

    One bullet per run and language with at least one rule below the floor: the rules and their
    Average accuracy against the floor; one sentence when no result is below it.
    """
    below = below_floor(table, reference)
    avg = table[table["dimension"] == evaluate.AVERAGE]
    if below.empty:
        return ("Every Average accuracy of ours clears the majority-class floor of its language "
                f"({len(avg)} judge-language-rule cells).")
    lines = []
    keys = [*run_keys(below), "lang"]
    for key, g in iter_groups(below, keys):
        rules = ", ".join(f"{RULE_LABELS[r]} {format_cell(v)}" for r, v in zip(g["rule"], g["accuracy"]))
        n_rules = int(((avg["model"] == key["model"]) & (avg["lang"] == key["lang"])).sum())
        lines.append(f"* {row_label(key['model'], labels)}, {LANG_LABELS.get(key['lang'], key['lang'])}: "
                     f"{len(g)} of {n_rules} rules below the floor of {format_cell(g['floor'].iloc[0])} ({rules})")
    return (f"{len(below)} of the {len(avg)} Average accuracies of ours fall **below the majority-class "
            "floor** of their language:\n\n" + "\n".join(lines))


def has_invalid(runs: Runs | pd.DataFrame) -> bool:
    """Whether any whole-post or sentence answer of the runs could not be read (is NaN)."""
    df = frame_of(runs)
    if df.empty:
        return False
    flat = flatten_sentences(df["sentences"])[0]
    return bool(df["direct"].isna().any() or np.isnan(flat).any())


def policy_table(runs: Runs | pd.DataFrame, rules: Sequence[str], labels: Mapping[str, str] | None = None,
                 metrics_: Sequence[str] = ("accuracy", "macro_f1")) -> pd.DataFrame:
    """The Averages of each rule under both invalid-answer policies, side by side.

    Returns
    -------
    DataFrame
        Index ``(run, lang, policy)`` with policies ``drop`` and ``reference``
        (:data:`tefcore.evaluate.INVALID_POLICIES`); columns ``(metric, method)``.
    """
    parts = [score_runs(predict_runs(runs, rules=rules, invalid=policy)).assign(policy=policy)
             for policy in evaluate.INVALID_POLICIES]
    both = pd.concat(parts, ignore_index=True)
    both = both[both["dimension"] == evaluate.AVERAGE]
    both = both.assign(run=both["model"].map(lambda m: row_label(m, labels)), method=both["rule"].map(RULE_LABELS))
    wide = both.pivot_table(index=["run", "lang", "policy"], columns="method", values=list(metrics_), sort=False)
    return wide[[(m, RULE_LABELS[r]) for m in metrics_ for r in rules if (m, RULE_LABELS[r]) in wide.columns]]


def effects_table(effects: pd.DataFrame, labels: Mapping[str, str] | None = None,
                  n_boot: int | None = None) -> pd.DataFrame:
    """:func:`chapters.ch05.judge_versus_rule` as a chapter shows it: both effects in one table.

    One row per language, metric and judge setting; under each rule, the setting's Average minus the
    reference setting's (the first judge, which reads ``reference``), and in the last column TEF minus
    the strongest baseline under that setting. Each cell is the paired difference in points with its
    95 % bootstrap interval and the bootstrap p-value.

    Returns
    -------
    DataFrame
        Index ``(lang, metric, judge)`` (judges by the judge part of their labels,
        :func:`companion.labels.short_label`); columns ``<rule> vs reference`` and
        ``TEF - strongest baseline``.
    """
    def cell(r: pd.Series) -> str:
        p = format_p(r["p_bootstrap"], n_boot)
        p = p if p.startswith("<") else f"={p}"
        return f"{format_interval(r['difference'], r['low'], r['high'], signed=True)} p{p}"

    out = effects.assign(
        cell=effects.apply(cell, axis=1),
        metric=effects["metric"].map(lambda m: METRIC_NAMES.get(m, m)),
        judge=effects["judge"].map(lambda m: short_label(row_label(m, labels))),
        column=[f"{RULE_LABELS.get(r, r)} vs reference" if e == "judge" else "TEF - strongest baseline"
                for e, r in zip(effects["effect"], effects["rule"])])
    reference = effects.loc[effects["effect"] == "judge", "versus"]
    order = list(dict.fromkeys([*reference, *effects["judge"]]))
    wide = out.pivot_table(index=["lang", "metric", "judge"], columns="column", values="cell", aggfunc="first",
                           sort=False)
    wide = wide.reindex(pd.MultiIndex.from_tuples(
        [(lang, m, short_label(row_label(j, labels))) for lang in pd.unique(out["lang"])
         for m in pd.unique(out["metric"]) for j in order], names=["lang", "metric", "judge"]))
    rules = dict.fromkeys(effects.loc[effects["effect"] == "judge", "rule"])
    cols = [c for c in [*(f"{RULE_LABELS.get(r, r)} vs reference" for r in rules), "TEF - strongest baseline"]
            if c in wide.columns]
    wide = wide[cols]
    wide.columns.name = None
    first = wide.index.get_level_values("judge") == short_label(row_label(order[0], labels))
    wide.loc[first, [c for c in cols if c.endswith("vs reference")]] = "reference"
    return wide


def effect_markdown(effects: pd.DataFrame, metric: str = "accuracy") -> str:
    """Per language, the largest judge effect beside the largest rule effect, in words (Markdown bullets)."""
    lines = []
    m = effects[effects["metric"] == metric]
    for lang, g in m.groupby("lang", sort=False):
        judge, rule = g[g["effect"] == "judge"], g[g["effect"] == "rule"]
        if judge.empty or rule.empty:
            continue
        j = judge.loc[judge["difference"].abs().idxmax()]
        r = rule.loc[rule["difference"].abs().idxmax()]
        lines.append(
            f"* {LANG_LABELS.get(lang, lang)}: the judge's setting moves a rule's Average {metric} by up to "
            f"{format_cell(abs(j['difference']))} points ({RULE_LABELS.get(j['rule'], j['rule'])}, `{j['judge']}` "
            f"against `{j['versus']}`); the fusion rule, TEF against the strongest baseline under one setting, "
            f"by at most {format_cell(abs(r['difference']))} points (`{r['judge']}`).")
    return "\n".join(lines)


SENSITIVITY_JUDGES: tuple[str, ...] = ("e5-crossfit-raw", "e5-crossfit-std", "e5-crossfit")
"""The cross-fitted judge's settings, from the first one to the tuned default (registry names)."""


SENSITIVITY_RULES: tuple[str, ...] = (*BASELINES, "tef")
"""Direct, Majority Vote, Soft Vote and TEF."""


_EFFECT_COLUMNS = ["effect", "lang", "metric", "judge", "rule", "versus", "difference", "low", "high",
                   "p_bootstrap", "p_mcnemar", "n"]


def _select(pred: pd.DataFrame, judges: Sequence[str], rules: Sequence[str]) -> pd.DataFrame:
    """The rows of ``judges`` and ``rules``; every judge must be present."""
    missing = [j for j in judges if j not in set(pred["model"])]
    if missing:
        raise ValueError(f"no predictions for judge(s) {missing}; present: {sorted(set(pred['model']))}")
    return pred[pred["model"].isin(list(judges)) & pred["rule"].isin(list(rules))]


def judge_intervals(
    pred: pd.DataFrame,
    judges: Sequence[str] = SENSITIVITY_JUDGES,
    rules: Sequence[str] = SENSITIVITY_RULES,
    **options: Any,
) -> pd.DataFrame:
    """The Average of each rule under each judge, with its bootstrap interval.

    Parameters
    ----------
    pred : DataFrame
        :func:`companion.results.predict_runs` output holding every judge of ``judges``.
    judges : sequence of str
        Registry names, in the order of the rows.
    rules : sequence of str
        Rules kept.
    **options
        Options of :func:`companion.results.average_intervals` (``metrics_``, ``n_boot``,
        ``level``, ``random_state``).

    Returns
    -------
    DataFrame
        ``model, prompt, lang, rule, metric, estimate, low, high, n``, judges in ``judges`` order.

    Examples
    --------
    >>> pred = pd.DataFrame({"model": ["a", "a", "b", "b"], "post_id": ["p1", "p2"] * 2, "lang": "en",
    ...                      "dimension": "Economy", "side": "change", "rule": "tef",
    ...                      "prediction": ["change", "stability", "change", "change"]})
    >>> judge_intervals(pred, ["b", "a"], ["tef"], metrics_=["accuracy"], n_boot=50)[["model", "estimate"]]
      model  estimate
    0     b     100.0
    1     a      50.0
    """
    cis = average_intervals(_select(pred, judges, rules), rules=list(rules), **options)
    by = [c for c in ("model", "prompt", "lang", "rule", "metric") if c in cis.columns]
    return sort_table(cis, by, {"model": list(judges), "rule": list(rules)})


def judge_comparisons(
    pred: pd.DataFrame,
    a: str,
    b: str,
    rules: Sequence[str] = SENSITIVITY_RULES,
    **options: Any,
) -> pd.DataFrame:
    r"""Judge ``a`` against judge ``b`` under each rule, per language, on the same pairs.

    The difference of the Averages, :math:`\bar s_a(r) - \bar s_b(r)` for rule :math:`r`, with the
    stratified paired bootstrap and McNemar's test of :func:`tefcore.evaluate.paired_comparisons`
    (which compares two values of a ``rule`` column; here the two values are judges, and the rules
    are groups).

    Parameters
    ----------
    pred : DataFrame
        :func:`companion.results.predict_runs` output holding both judges.
    a, b : str
        The judge under test and the judge it is compared with (registry names).
    rules : sequence of str
        The rules under which they are compared.
    **options
        Options of :func:`tefcore.evaluate.paired_comparisons` (``metric``, ``n_boot``, ``level``,
        ``random_state``).

    Returns
    -------
    DataFrame
        ``[prompt,] lang, rule, a, b, metric, difference, low, high, p_bootstrap, mcnemar_b, mcnemar_c,
        p_mcnemar, n``; ``difference`` is in points, positive when ``a`` is better.

    Raises
    ------
    ValueError
        When a judge is absent, or the two judges are not scored on the same pairs.

    Examples
    --------
    >>> pred = pd.DataFrame({"model": ["a", "a", "b", "b"], "post_id": ["p1", "p2"] * 2, "lang": "en",
    ...                      "dimension": "Economy", "side": "change", "rule": "tef",
    ...                      "prediction": ["change", "change", "change", "stability"]})
    >>> pred["correct"] = pred["prediction"] == pred["side"]
    >>> judge_comparisons(pred, "a", "b", ["tef"], n_boot=50)[["lang", "rule", "difference", "mcnemar_b"]]
      lang rule  difference  mcnemar_b
    0   en  tef        50.0          1
    """
    data = _select(pred, (a, b), rules).rename(columns={"rule": "_rule"}).rename(columns={"model": "rule"})
    by = [c for c in ("prompt", "lang") if c in data.columns] + ["_rule"]
    out = evaluate.paired_comparisons(data, a, b, by=by, **options)
    return out.rename(columns={"_rule": "rule"})


def _judge_effects(pred: pd.DataFrame, judges: Sequence[str], rules: Sequence[str], metric: str,
                   **options: Any) -> pd.DataFrame:
    """Every judge after the first against the first, under each rule."""
    rows = [judge_comparisons(pred, j, judges[0], rules, metric=metric, **options) for j in judges[1:]]
    out = pd.concat(rows, ignore_index=True)
    return out.rename(columns={"a": "judge", "b": "versus"}).assign(effect="judge")


def _rule_effects(pred: pd.DataFrame, judges: Sequence[str], metric: str, **options: Any) -> pd.DataFrame:
    """TEF against the strongest baseline under each judge."""
    out = versus_best_baseline(_select(pred, judges, SENSITIVITY_RULES), metrics_=[metric], **options)
    return out.rename(columns={"model": "judge", "a": "rule", "b": "versus"}).assign(effect="rule")


def judge_versus_rule(
    pred: pd.DataFrame,
    judges: Sequence[str] = SENSITIVITY_JUDGES,
    rules: Sequence[str] = SENSITIVITY_RULES,
    *,
    metrics_: Sequence[str] = ("accuracy", "macro_f1"),
    n_boot: int = 1000,
    random_state: int = 0,
) -> pd.DataFrame:
    """How much the judge's setting matters, beside how much the fusion rule does, per language.

    Two kinds of rows, each a paired difference of Averages with its bootstrap interval and p-values:

    * ``effect = "judge"``: each judge after the first against the first (``versus``), under each rule
      of ``rules`` (:func:`judge_comparisons`);
    * ``effect = "rule"``: TEF against the strongest baseline (``versus``) under each judge
      (:func:`companion.results.versus_best_baseline`).

    Parameters
    ----------
    pred : DataFrame
        :func:`companion.results.predict_runs` output holding every judge of ``judges``
        under every rule of :data:`SENSITIVITY_RULES` (one prompt).
    judges : sequence of str
        The first is the reference of the judge effects (default: raw vectors, ``C = 1``).
    rules : sequence of str
        Rules of the judge effects.
    metrics_ : sequence of {"accuracy", "macro_f1"}
    n_boot, random_state
        Bootstrap settings (the same draws for every comparison of a language).

    Returns
    -------
    DataFrame
        ``effect, lang, metric, judge, rule, versus, difference, low, high, p_bootstrap, p_mcnemar, n``.
    """
    if len(judges) < 2:
        raise ValueError(f"judge_versus_rule needs at least two judges, got {list(judges)}")
    if "prompt" in pred.columns and pred["prompt"].nunique() > 1:
        raise ValueError(f"judge_versus_rule takes the runs of one prompt, got {sorted(set(pred['prompt']))}")
    options = {"n_boot": n_boot, "random_state": random_state}
    parts = [part for metric in metrics_ for part in (_judge_effects(pred, judges, rules, metric, **options),
                                                      _rule_effects(pred, judges, metric, **options))]
    out = pd.concat(parts, ignore_index=True)[_EFFECT_COLUMNS]
    return sort_table(out, ["lang", "metric", "effect", "judge", "rule"],
                      {"effect": ["judge", "rule"], "judge": list(judges), "rule": list(rules)})


def rule_bars_figure(table: pd.DataFrame, reference: pd.DataFrame, labels: Mapping[str, str], rules: Sequence[str],
                     langs: Sequence[str]) -> Any:
    """Per-dimension accuracy of each rule, one panel per judge and language, the majority-class rate as
    black ticks.

    Parameters
    ----------
    table : DataFrame
        :func:`companion.results.score_runs` output.
    reference : DataFrame
        :func:`companion.results.majority_rate` of the same pairs.
    labels : mapping
        Registry name -> row label.
    rules, langs : sequence of str
    """
    import plotly.express as px
    import plotly.graph_objects as go

    per_dim = table[(table["dimension"] != "Average") & table["rule"].isin(list(rules))].copy()
    per_dim["judge"] = per_dim["model"].map(lambda m: short_label(labels.get(m, judge_label(m))))
    per_dim["method"] = per_dim["rule"].map(RULE_LABELS)
    judges = list(pd.unique(per_dim["judge"]))
    fig = px.bar(per_dim, x="dimension", y="accuracy", color="method", barmode="group", facet_row="judge",
                 facet_col="lang", height=260 * len(judges) + 80,
                 category_orders={"method": [RULE_LABELS[r] for r in rules], "lang": list(langs), "judge": judges},
                 labels={"accuracy": "accuracy (%)", "dimension": ""},
                 title="Per-dimension accuracy of each rule; black ticks: majority-class rate")
    floor = reference[reference["dimension"] != "Average"]
    for j in range(len(judges)):
        for i, lang in enumerate(langs):
            m = floor[floor["lang"] == lang]
            fig.add_trace(go.Scatter(x=m["dimension"], y=m["accuracy"], mode="markers", showlegend=i + j == 0,
                                     name="majority class", marker={"symbol": "line-ew-open", "size": 26,
                                                                    "color": "black", "line": {"width": 2}}),
                          row=len(judges) - j, col=i + 1)
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    return fig


def sweep_figure(sweep: pd.DataFrame, labels: Mapping[str, str], langs: Sequence[str],
                 factors: Sequence[float]) -> Any:
    """TEF's gain over the best baseline (with intervals) and the mean sentence weight against the
    re-tempering factor t (:func:`companion.calibration.temperature_sweep`), one column per language."""
    def gain_style(s: pd.DataFrame) -> dict[str, Any]:
        return {"error_y": {"type": "data", "array": s["high"] - s["gain"], "arrayminus": s["gain"] - s["low"]},
                "hovertext": s["best_baseline"].map(RULE_LABELS)}

    fig = judge_language_lines(sweep, "t", langs, labels,
                                [("gain", "TEF - best baseline", gain_style),
                                 ("mean_weight", "mean sentence weight", {"line": {"dash": "dot"}})],
                                vertical_spacing=0.08, row_heights=[0.65, 0.35])
    for i in range(len(langs)):
        fig.add_hline(y=0, line={"color": "grey", "width": 1}, row=1, col=i + 1)
    fig.update_xaxes(type="log", tickvals=list(factors), ticktext=[f"{t:g}" for t in factors])
    fig.update_xaxes(title_text="t (log scale): < 1 sharper, > 1 flatter", row=2)
    fig.update_yaxes(title_text="accuracy points", row=1, col=1)
    fig.update_yaxes(title_text="mean w", row=2, col=1)
    fig.update_layout(height=620, legend={"orientation": "h", "y": -0.15},
                      title="TEF's gain over the best baseline as the detector is made sharper or flatter")
    return fig
