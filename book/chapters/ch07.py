"""Chapter 7 (prompt robustness): what only that chapter uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from companion.labels import judge_label, paper_label, row_label, short_label
from companion.results import NOT_RUN, invalid_accounting, posterior_summary, score_runs, versus_best_baseline
from companion.runs import Runs
from companion.tables import format_cell, format_interval, format_p, round_half_up
from tefcore import evaluate
from tefcore.evaluate import (
    BASELINES,
    strongest_baseline,
)
from tefcore.fusion import RULE_LABELS


def prompt_robustness(
    pred: pd.DataFrame,
    *,
    baselines: Sequence[str] = BASELINES,
    n_boot: int = 1000,
    random_state: int = 0,
    reference_prompt: str = "original",
) -> pd.DataFrame:
    r"""Table 1 of the paper for our runs (protocol §7).

    Per model and prompt variant: the mean over the languages of the Average accuracy of each rule;
    the strongest baseline is the best of ``baselines`` for that variant separately; TEF's gain over
    it with a paired bootstrap interval (pairs resampled within the language-dimension cells, the
    statistic being the mean over those cells, which equals the mean over languages of the
    per-language Average when every language has the same dimensions).

    Returns
    -------
    DataFrame
        ``model, prompt, langs, strongest_baseline, baseline, tef, gain, low, high, p_bootstrap,
        p_mcnemar``, plus ``drop_baseline`` and ``drop_tef`` (accuracy lost against
        ``reference_prompt``, NaN when that variant is absent).
    """
    if "prompt" not in pred.columns or "model" not in pred.columns:
        raise ValueError("prompt_robustness needs predictions with 'model' and 'prompt' columns")
    table = score_runs(pred[pred["rule"].isin([*baselines, "tef"])])
    avg = table[table["dimension"] == evaluate.AVERAGE]
    best = strongest_baseline(avg, ["model", "prompt"], value="accuracy", baselines=baselines)
    langs = avg.groupby(["model", "prompt"], sort=False)["lang"].agg(lambda s: ",".join(sorted(set(s))))
    out = pd.DataFrame({"langs": langs, **best.reindex(langs.index)})
    mapping = {k: v for k, v in out["strongest_baseline"].items()}
    cmp = evaluate.paired_comparisons(pred, "tef", mapping, by=["model", "prompt"], metric="accuracy",
                                      n_boot=n_boot, random_state=random_state, strata=("lang", "dimension"))
    out = out.reset_index().merge(cmp[["model", "prompt", "low", "high", "p_bootstrap", "p_mcnemar"]],
                                  on=["model", "prompt"], how="left")
    ref = out[out["prompt"] == reference_prompt].set_index("model")
    out["drop_baseline"] = out["model"].map(ref["baseline"]) - out["baseline"]
    out["drop_tef"] = out["model"].map(ref["tef"]) - out["tef"]
    return out


def prompt_coverage(runs: Runs, models: Sequence[str], prompts: Sequence[str], langs: Sequence[str]) -> pd.DataFrame:
    """Which (judge, prompt, language) caches a chapter found.

    Returns
    -------
    DataFrame
        Index ``(model, prompt)`` in the requested order, one column per language with the number of
        pairs, or :data:`NOT_RUN`; a column ``complete`` (every language present).
    """
    found = runs.provenance.set_index(["model", "prompt", "lang"])["n_pairs"] if len(runs.provenance) else \
        pd.Series(dtype=object)
    rows = []
    for model in models:
        for prompt in prompts:
            cells = {lang: int(found[(model, prompt, lang)]) if (model, prompt, lang) in found.index else NOT_RUN
                     for lang in langs}
            rows.append({"model": model, "prompt": prompt, **cells,
                         "complete": all(c != NOT_RUN for c in cells.values())})
    return pd.DataFrame(rows).set_index(["model", "prompt"])


def prompt_table(rob: pd.DataFrame, models: Sequence[str], prompts: Sequence[str],
                 labels: Mapping[str, str] | None = None, n_boot: int | None = None) -> pd.DataFrame:
    """:func:`prompt_robustness` as a chapter shows it, a row for every requested (judge, prompt).

    A variant without caches in every language reads :data:`NOT_RUN` in every column; a drop (accuracy
    lost against the reference prompt) reads :data:`NOT_RUN` when either of its two variants was not
    run, never 0.0.

    Returns
    -------
    DataFrame
        Index ``(run, prompt)``; columns ``strongest``, ``baseline``, ``TEF``, ``TEF - baseline``,
        ``p (bootstrap)``, ``p (McNemar)``, ``baseline drop``, ``TEF drop``.
    """
    have = rob.set_index(["model", "prompt"])
    rows = []
    for model in models:
        for prompt in prompts:
            row: dict[str, Any] = {"run": row_label(model, labels), "prompt": prompt}
            if (model, prompt) not in have.index:
                rows.append({**row, **dict.fromkeys(_PROMPT_COLUMNS, NOT_RUN)})
                continue
            r = have.loc[(model, prompt)]
            rows.append({**row, "strongest": RULE_LABELS[r["strongest_baseline"]],
                         "baseline": format_cell(r["baseline"]), "TEF": format_cell(r["tef"]),
                         "TEF - baseline": format_interval(r["gain"], r["low"], r["high"], signed=True),
                         "p (bootstrap)": format_p(r["p_bootstrap"], n_boot), "p (McNemar)": format_p(r["p_mcnemar"]),
                         "baseline drop": _drop(r["drop_baseline"]), "TEF drop": _drop(r["drop_tef"])})
    return pd.DataFrame(rows).set_index(["run", "prompt"])


_PROMPT_COLUMNS = ("strongest", "baseline", "TEF", "TEF - baseline", "p (bootstrap)", "p (McNemar)",
                   "baseline drop", "TEF drop")


def _drop(value: float) -> str:
    return format_cell(value, signed=True) if np.isfinite(value) else NOT_RUN


def prompt_by_language(pred: pd.DataFrame, models: Sequence[str], prompts: Sequence[str], langs: Sequence[str],
                       labels: Mapping[str, str] | None = None, *, n_boot: int = 1000,
                       random_state: int = 0) -> pd.DataFrame:
    """Per judge, prompt and language: the strongest baseline, TEF and the paired difference (Average
    accuracy), a row for every requested combination (:data:`NOT_RUN` where the cache is missing).

    Returns
    -------
    DataFrame
        Index ``(run, prompt, lang)``; columns ``strongest``, ``baseline``, ``TEF``, ``TEF - baseline``.
    """
    vs = versus_best_baseline(pred, metrics_=("accuracy",), n_boot=n_boot, random_state=random_state) \
        if len(pred) else pd.DataFrame(columns=["model", "prompt", "lang"])
    have = vs.set_index(["model", "prompt", "lang"])
    rows = []
    for model in models:
        for prompt in prompts:
            for lang in langs:
                row = {"run": row_label(model, labels), "prompt": prompt, "lang": lang}
                if (model, prompt, lang) not in have.index:
                    rows.append({**row, "strongest": NOT_RUN, "baseline": NOT_RUN, "TEF": NOT_RUN,
                                 "TEF - baseline": NOT_RUN})
                    continue
                r = have.loc[(model, prompt, lang)]
                rows.append({**row, "strongest": RULE_LABELS[r["b"]], "baseline": format_cell(r["baseline"]),
                             "TEF": format_cell(r["tef"]),
                             "TEF - baseline": format_interval(r["difference"], r["low"], r["high"], signed=True)})
    return pd.DataFrame(rows).set_index(["run", "prompt", "lang"])


def paper_prompt_facts(table1: pd.DataFrame) -> dict[str, Any]:
    """What the paper's Table 1 says about TEF's margin under the three prompts, as the text a chapter quotes.

    Returns
    -------
    dict of str to str
        ``margin_min`` / ``margin_max`` (points, over the five models and three prompts),
        ``n_models``, ``n_grows`` (models whose margin grows from original to verbose to minimal),
        ``n_shrinks`` (models whose margin under a perturbed prompt is smaller than under the original),
        ``margins`` (each model's three margins as text, e.g. ``"Qwen2.5-7B 8.7 → 9.0 → 9.4"``),
        ``n_tef_loses_less`` (of the model x perturbed-prompt cells, those where TEF loses no more than
        the strongest baseline) and ``n_drop_cells``.
    """
    from tefcore.paper import tables as paper

    pr = paper.prompt_robustness_summary(table1)
    m = pr[[f"margin_{p}" for p in ("original", "verbose", "minimal")]].map(round_half_up)
    grows = (m["margin_verbose"] > m["margin_original"]) & (m["margin_minimal"] > m["margin_verbose"])
    shrinks = (m["margin_verbose"] < m["margin_original"]) | (m["margin_minimal"] < m["margin_original"])
    less = [pr[f"drop_tef_{p}"].map(round_half_up) <= pr[f"drop_strongest_baseline_{p}"].map(round_half_up)
            for p in ("verbose", "minimal")]
    return {"margin_min": format_cell(m.to_numpy().min()), "margin_max": format_cell(m.to_numpy().max()),
            "n_models": str(len(m)), "n_grows": str(int(grows.sum())), "n_shrinks": str(int(shrinks.sum())),
            "margins": "; ".join(f"{paper.MODEL_LABELS[k]} " + " → ".join(format_cell(v) for v in row)
                                 for k, row in zip(m.index, m.to_numpy())),
            "n_tef_loses_less": str(int(sum(s.sum() for s in less))), "n_drop_cells": str(int(sum(len(s) for s in less)))}


def complete_runs(runs: Runs, langs: Sequence[str]) -> pd.DataFrame:
    """The cache rows of the (judge, prompt) runs that have a cache in every language of ``langs``."""
    prov = runs.provenance
    have = prov.groupby(["model", "prompt"], sort=False)["lang"].agg(set) if len(prov) else pd.Series(dtype=object)
    keep = [key for key, got in have.items() if set(langs) <= got]
    frame = runs.frame
    mask = pd.Series(list(zip(frame["model"], frame["prompt"])), index=frame.index).isin(keep)
    return frame[mask & frame["lang"].isin(list(langs))].reset_index(drop=True)


MARGIN_ROW = "TEF - baseline"
"""Row of a Table 1 layout with TEF's margin over the strongest baseline (shown, never ranked)."""


def table1_side_by_side(rob: pd.DataFrame, table1: pd.DataFrame, prompts_of: Mapping[str, Sequence[str]],
                        labels: Mapping[str, str] | None = None,
                        prompts: Sequence[str] = ("original", "verbose", "minimal")) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1 in the paper's layout, ours beside the paper's: per run, the strongest baseline, TEF and
    TEF's margin under each prompt (Average accuracy, mean over the languages).

    Parameters
    ----------
    rob : DataFrame
        :func:`prompt_robustness` output.
    table1 : DataFrame
        The paper's Table 1 in tidy form.
    prompts_of : mapping
        Our judges (registry names, in row order) -> the prompts that apply to them (a judge that reads
        no prompt has one); a prompt that applies but has no row in ``rob`` reads :data:`NOT_RUN`, one
        that does not apply reads ``"—"``.
    labels : mapping, optional
    prompts : sequence of str
        The columns.

    Returns
    -------
    (DataFrame, DataFrame)
        The cells (numbers or text) and the numbers that rank them, index ``(run, method)`` with methods
        ``strongest baseline``, ``TEF`` and :data:`MARGIN_ROW`; for
        :func:`companion.tables.bold_best` with ``by="run"`` and ``skip=(MARGIN_ROW,)``.
    """
    from tefcore.paper import tables as paper

    have = rob.set_index(["model", "prompt"])
    rows: list[tuple[tuple[str, str], dict[str, Any]]] = []
    for model, own in prompts_of.items():
        run = row_label(model, labels)
        for method, field in (("strongest baseline", "baseline"), ("TEF", "tef"), (MARGIN_ROW, "gain")):
            rows.append(((run, method), {p: float(have.loc[(model, p), field]) if (model, p) in have.index
                                         else NOT_RUN if p in own else "—" for p in prompts}))
    wide = table1.pivot_table(index="model", columns=["method", "prompt"], values="value", aggfunc="first")
    for model in [m for m in paper.MODELS if m in wide.index]:
        base, tef = wide.loc[model, "strongest_baseline"], wide.loc[model, "tef"]
        for method, values in (("strongest baseline", base), ("TEF", tef), (MARGIN_ROW, tef - base)):
            rows.append(((paper_label(model), method), {p: float(values[p]) for p in prompts}))
    cells = pd.DataFrame([r for _, r in rows], index=pd.MultiIndex.from_tuples([k for k, _ in rows],
                                                                             names=["run", "method"]))
    numbers = cells.apply(lambda c: pd.to_numeric(c, errors="coerce"))
    return cells.astype(object), numbers


def prompt_markdown(rob: pd.DataFrame, coverage: pd.DataFrame, models: Sequence[str], prompts: Sequence[str],
                    labels: Mapping[str, str] | None = None) -> str:
    """For each judge that reads the prompt: which variants ran in every language, and TEF's margin
    over the strongest baseline under each (Markdown bullets)."""
    lines = []
    have = rob.set_index(["model", "prompt"])
    for model in models:
        done = [p for p in prompts if (model, p) in coverage.index and coverage.loc[(model, p), "complete"]]
        missing = [p for p in prompts if p not in done]
        margins = "; ".join(
            f"{p}: {format_interval(have.loc[(model, p), 'gain'], have.loc[(model, p), 'low'], have.loc[(model, p), 'high'], signed=True)}"
            for p in done if (model, p) in have.index)
        lines.append(f"* {row_label(model, labels)}: run in every language with {', '.join(done) or 'no variant'}"
                     + (f"; {NOT_RUN}: {', '.join(missing)}" if missing else "")
                     + (f". TEF − strongest baseline (points): {margins}." if margins else "."))
    return "\n".join(lines)


def prompt_posteriors(runs: Runs, labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Per judge, prompt and language: how decisive the sentence posteriors are and how many answers
    could not be read (:func:`posterior_summary` beside :func:`invalid_accounting`), numbers as text.
    """
    keys = ["model", "prompt", "lang"]
    post = posterior_summary(runs).merge(
        invalid_accounting(runs)[[*keys, "invalid_sentence_share", "invalid_direct"]], on=keys)
    post = post.assign(run=post["model"].map(lambda m: row_label(m, labels))).set_index(["run", "prompt", "lang"])
    cols = ["sentences", "p_mean", "p_std", "mean_weight", "decisive_share", "invalid_sentence_share",
            "invalid_direct"]
    return post[cols].pipe(lambda f: f.apply(lambda c: c.map(
        lambda v: format_cell(v, 1 if c.name in ("decisive_share", "invalid_sentence_share") else 3))))


def templates_markdown(variants: Sequence[str], lang: str = "en") -> str:
    """The prompt templates of ``variants`` verbatim (protocol §4), each with the SHA-256 of both languages'
    templates, as Markdown."""
    from tefcore.mind.prompts import template, template_hash

    return "\n\n".join(f"**{v}** (template sha256: en `{template_hash('en', v)[:12]}`, zh "
                        f"`{template_hash('zh', v)[:12]}`)\n\n```text\n{template(lang, v)}\n```" for v in variants)


def prompt_figure(ours: pd.DataFrame, paper_table1: pd.DataFrame, labels: Mapping[str, str],
                  prompts: Sequence[str] = ("original", "verbose", "minimal")) -> Any:
    """Strongest baseline (dotted) and TEF (solid) under each prompt, ours beside the paper's Table 1.

    Parameters
    ----------
    ours : DataFrame
        :func:`chapters.ch07.prompt_robustness` output.
    paper_table1 : DataFrame
        The paper's Table 1 in tidy form.
    labels : mapping
        Registry name -> row label.
    """
    import plotly.express as px
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=["ours (runs of this page)", "paper (Table 1)"])
    order = {p: i for i, p in enumerate(prompts)}
    curves = [(short_label(labels.get(m, judge_label(m))), 1,
               g.sort_values("prompt", key=lambda c: c.map(order))[["prompt", "baseline", "tef"]])
              for m, g in ours.groupby("model", sort=False)]
    t1 = paper_table1.pivot_table(index=["model", "prompt"], columns="method", values="value")
    for model in pd.unique(paper_table1["model"]):
        g = t1.loc[model].reindex(list(prompts)).reset_index()
        curves.append((f"paper: {judge_label(model)}", 2,
                       g.rename(columns={"strongest_baseline": "baseline"})[["prompt", "baseline", "tef"]]))
    palette = px.colors.qualitative.Dark24
    for k, (name, col, g) in enumerate(curves):
        for field, dash in (("baseline", "dot"), ("tef", "solid")):
            fig.add_trace(go.Scatter(x=g["prompt"], y=g[field], mode="lines+markers", name=name, legendgroup=name,
                                     showlegend=field == "tef", line={"dash": dash, "color": palette[k % len(palette)]},
                                     hovertemplate=f"{name}, {'TEF' if field == 'tef' else 'strongest baseline'}"
                                                   ": %{y:.1f}<extra></extra>"), row=1, col=col)
    fig.update_yaxes(title_text="mean Average accuracy over languages (%)", row=1, col=1)
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=list(prompts), range=[-0.5, len(prompts) - 0.5])
    fig.update_layout(height=520, legend={"orientation": "h", "y": -0.2},
                      title="Strongest baseline (dotted) and TEF (solid) under three prompts")
    return fig
