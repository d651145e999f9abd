"""The checks of the paper's results: its text against its Tables 1-4, the tables read as a reviewer reads
them (floors, noise, consistency, tokens), and the rows about one model's numbers checked on its caches.

Each function is registered for its claim of ``claims.yaml`` (:func:`tefpaper.evidence.check`). A row
about a paper model's results returns ``None`` without a cache of that model (the ledger then gives the
command), and is checked on the caches, kind ``run``, when they are at hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from tefcore.evaluate import ABSTAIN, BASELINES, METRICS, predict_pairs
from tefcore.fusion import RULE_LABELS
from tefcore.metrics import expected_calibration_error, overconfidence_gap
from tefcore.mind.load import evaluation_pairs
from tefcore.mind.prompts import build_prompt
from tefcore.mind.release import FULL_RELEASE
from tefpaper import review
from tefpaper import tables as paper
from tefpaper.evidence import Evidence, Verdict, check, close_to, fmt
from tefpaper.runs import against_paper
from tefpaper.tables import SLACK

# --------------------------------------------------------------------------------------------------
# headline numbers (Table 3)
# --------------------------------------------------------------------------------------------------
def _gain(metric: str, stated: float) -> Callable[[Evidence], Verdict]:
    def verdict(ev: Evidence) -> Verdict:
        got = paper.average_gain(ev.table(3), level="model_lang")[metric]
        return Verdict(
            fmt(got, 3),
            close_to(got, stated),
            "the strongest of Direct, MV and SV chosen per model and language after averaging the six "
            "dimensions, the ten gains then averaged",
        )

    return verdict


check("gain-accuracy")(_gain("accuracy", 4.5))
check("gain-macro-f1")(_gain("macro_f1", 4.6))


@check("gain-per-cell")
def _gain_per_cell(ev: Evidence) -> Verdict:
    cell = paper.average_gain(ev.table(3), level="cell")
    model = paper.average_gain(ev.table(3), level="model")
    return Verdict(
        f"{fmt(cell['accuracy'], 2)} / {fmt(cell['macro_f1'], 2)}",
        close_to(cell["accuracy"], 4.5) and close_to(cell["macro_f1"], 4.6),
        "the strongest baseline chosen per (model, language, dimension) cell instead; per model with "
        f"both languages pooled (as Table 1 does): {fmt(model['accuracy'], 3)} / {fmt(model['macro_f1'], 3)}",
    )


@check("gain-table1")
def _gain_table1(ev: Evidence) -> Verdict:
    margin = float(paper.prompt_robustness_summary(ev.table(1))["margin_original"].mean())
    return Verdict(fmt(margin, 2), close_to(margin, 4.5), "mean of Ours − Strongest baseline, Original column")


@check("best-every-model")
def _best_every_model(ev: Evidence) -> Verdict:
    ml = paper.strongest_baseline_gain(ev.table(3), level="model_lang")
    n = int((ml["gain"] > 0).sum())
    return Verdict(
        f"{n} of {len(ml)}",
        n == len(ml) == 20,
        "Average accuracy and macro-F1 per model and language (5 × 2 × 2); smallest margin "
        f"{fmt(ml['gain'].min(), 2)} ({', '.join(map(str, ml['gain'].idxmin()))})",
    )


@check("best-or-tied")
def _best_or_tied(ev: Evidence) -> Verdict:
    won, total = paper.best_or_tied(ev.table(3))
    lost = paper.shortfalls(ev.table(3))
    return Verdict(
        f"{won} of {total}",
        (won, total) == (116, 120),
        "TEF trails in: " + "; ".join(f"{' '.join(k)} by {fmt(s)}" for k, s in lost["shortfall"].items()),
    )


@check("max-shortfall")
def _shortfall(ev: Evidence) -> Verdict:
    lost = paper.shortfalls(ev.table(3))
    worst = float(lost["shortfall"].max()) if len(lost) else 0.0
    where = " ".join(lost["shortfall"].idxmax()) if len(lost) else "nowhere"
    return Verdict(fmt(worst), worst <= 2.6 + SLACK, f"largest shortfall: {where}")


@check("voting-vs-direct")
def _voting_direct(ev: Evidence) -> Verdict:
    vd = paper.voting_versus_direct(ev.table(3)).rename(index={"majority_vote": "MV", "soft_vote": "SV"})
    return Verdict(
        f"MV {vd.at['MV', 'better']}/120, SV {vd.at['SV', 'better']}/120 better",
        bool((vd["better"] < 120).all() and (vd["worse"] > 0).all()),
        "cells where voting beats / ties / trails Direct: "
        + ", ".join(f"{v.Index} {v.better}/{v.tied}/{v.worse}" for v in vd.itertuples())
        + "; mean difference " + ", ".join(f"{v.Index} {fmt(v.mean_difference, 2)}" for v in vd.itertuples())
        + " points",
    )


@check("gains-models")
def _gains_models(ev: Evidence) -> Verdict:
    by_model = paper.gain_by_group(ev.table(3), ["model"])
    top = list(by_model.index[:2])
    return Verdict(
        ", ".join(paper.MODEL_LABELS[m] for m in top),
        set(top) == {"qwen2.5-7b", "llama3-8b"},
        "largest mean cell-level accuracy gains: "
        + ", ".join(f"{paper.MODEL_LABELS[m]} {fmt(v, 2)}" for m, v in by_model.items()),
    )


@check("gains-dimensions")
def _gains_dimensions(ev: Evidence) -> Verdict:
    by = paper.gain_by_group(ev.table(3), ["lang", "dimension"])
    zh, en = list(by.xs("zh", level="lang").index[:2]), list(by.xs("en", level="lang").index[:1])
    return Verdict(
        f"zh {', '.join(zh)}; en {', '.join(en)}",
        set(zh) == {"Culture", "Politics"} and en == ["Environment"],
        "largest mean cell-level accuracy gains per language: "
        + "; ".join(f"{lang} {d} {fmt(v, 2)}" for (lang, d), v in list(by.items())[:4]),
    )


@check("direct-strong")
def _direct_strong(ev: Evidence) -> Verdict:
    gains = paper.strongest_baseline_gain(ev.table(3), level="cell").xs("accuracy", level="metric")
    direct = paper.main_results_wide(ev.table(3)).xs("accuracy", level="metric")["direct"]
    strong = direct.reindex(gains.index) >= 80.0
    inside, outside = float(gains["gain"][strong].mean()), float(gains["gain"][~strong].mean())
    return Verdict(
        f"{fmt(inside, 2)} vs {fmt(outside, 2)} points",
        abs(inside) < 1.0 and outside > 4 * abs(inside),
        f"read as: mean accuracy gain over the strongest baseline in the {int(strong.sum())} cells where "
        f"Direct reaches 80 % against the {int((~strong).sum())} others",
    )


# --------------------------------------------------------------------------------------------------
# Table 3 marks
# --------------------------------------------------------------------------------------------------
def _marked_cells(ev: Evidence, ranking: str) -> set[tuple[str, ...]]:
    check = paper.typesetting_check(ev.table(3), ranking=ranking)
    return set(map(tuple, check[["model", "lang", "dimension", "metric"]].to_numpy()))


@check("table3-bold")
def _bold(ev: Evidence) -> Verdict:
    dense = paper.typesetting_check(ev.table(3), ranking="dense")
    wrong = int(((dense["typeset"] == "bold") | (dense["expected"] == "bold")).sum())
    return Verdict(f"{120 - wrong} of 120 cells", wrong == 0, "bold against the ranking of each cell's numbers")


@check("table3-underline")
def _underline(ev: Evidence) -> Verdict:
    dense, comp = _marked_cells(ev, "dense"), _marked_cells(ev, "competition")
    neither = sorted(dense & comp)
    return Verdict(
        f"{len(neither)} cells fit neither",
        not neither,
        f"underlines differ from dense ranking in {len(dense)} cells and from competition ranking (ties "
        f"for best leave no second) in {len(comp)}; neither fits: " + "; ".join(" ".join(c) for c in neither),
    )


# --------------------------------------------------------------------------------------------------
# Table 4
# --------------------------------------------------------------------------------------------------
@check("table4-averages")
def _t4_averages(ev: Evidence) -> Verdict:
    avg = paper.table4_average_check(ev.table(4))
    qwen = avg.loc[("qwen2.5-7b", "zh", "tef", "accuracy")]
    return Verdict(
        f"{int(avg['consistent'].sum())} of {len(avg)}",
        bool(avg["consistent"].all()),
        f"printed Average against the mean of the six dimensions; largest |difference| "
        f"{fmt(avg['difference'].abs().max(), 3)} (Qwen2.5-7B zh TEF accuracy: printed "
        f"{fmt(qwen['printed'])}, mean {fmt(qwen['recomputed'], 2)})",
    )


@check("table4-tef-rows")
def _t4_equals_t3(ev: Evidence) -> Verdict:
    keys = ["model", "lang", "dimension", "method", "metric"]
    ours = ev.table(4)[(ev.table(4)["method"] == "tef") & (ev.table(4)["dimension"] != "Average")]
    merged = ours.merge(ev.table(3)[ev.table(3)["method"] == "tef"], on=keys, suffixes=("_4", "_3"))
    diff = float((merged["value_4"] - merged["value_3"]).abs().max())
    return Verdict(
        f"{len(merged)} numbers, max |Δ| {fmt(diff, 1)}",
        len(merged) == 48 and diff <= SLACK,
        "Table 4's full-TEF rows against Table 3's TEF rows",
    )


@check("ablation-drop")
def _largest_drop(ev: Evidence) -> Verdict:
    drops = paper.ablation_drops(ev.table(4)).xs("accuracy", level="metric")
    at = ("deepseek-v3.2", "en", "Environment")
    d_ent, d_lo = (float(drops.loc[at, c]) for c in ("drop_without_entropy", "drop_without_log_odds"))
    largest = drops[["drop_without_entropy", "drop_without_log_odds"]].idxmax()
    return Verdict(
        f"{fmt(d_ent)} / {fmt(d_lo)}",
        close_to(d_ent, 22.9) and close_to(d_lo, 23.8) and all(ix == at for ix in largest),
        "TEF minus each ablation, DeepSeek-V3.2 English Environment accuracy; the largest drops of "
        "Table 4 are at " + "; ".join(f"{k.removeprefix('drop_')}: {' '.join(v)}" for k, v in largest.items()),
    )


@check("ablation-deepseek")
def _deepseek_below_sv(ev: Evidence) -> Verdict:
    ds = paper.ablation_versus_soft_vote(ev.table(3), ev.table(4)).loc["deepseek-v3.2"]
    cols = ["margin_tef_without_entropy", "margin_tef_without_log_odds"]
    below = {m: int((ds.xs(m, level="metric")[cols] < 0).to_numpy().sum()) for m in METRICS}
    acc = ds.xs("accuracy", level="metric")
    return Verdict(
        f"{below['accuracy']} of 4 below",
        all(n == 4 for n in below.values()),
        f"below Soft Vote in {below['macro_f1']} of 4 in macro-F1 too; Average accuracy of each ablation "
        "minus Soft Vote's (Table 3), zh / en: "
        + ", ".join(f"{c.removeprefix('margin_')} {fmt(acc.loc['zh', c], 2)} / {fmt(acc.loc['en', c], 2)}"
                    for c in cols),
    )


@check("ablation-qwen")
def _qwen_retains(ev: Evidence) -> Verdict:
    qw = paper.ablation_versus_soft_vote(ev.table(3), ev.table(4)).loc["qwen2.5-7b"]
    kept = qw[["retained_tef_without_entropy", "retained_tef_without_log_odds"]].to_numpy()
    return Verdict(
        f"{100 * kept.min():.0f}–{100 * kept.max():.0f} %",
        bool((kept > 0.5).all()),
        "share of TEF's Average margin over Soft Vote that each ablation keeps, per language and "
        "metric; read 'most' as more than half",
    )


@check("ablation-below-tef")
def _ablations_below_tef(ev: Evidence) -> Verdict:
    drops = paper.ablation_drops(ev.table(4))[["drop_without_entropy", "drop_without_log_odds"]].to_numpy()
    ok = int((drops >= -SLACK).sum())
    return Verdict(f"{ok} of {drops.size}", ok == drops.size, "cells where full TEF >= the ablation")


# --------------------------------------------------------------------------------------------------
# Table 1
# --------------------------------------------------------------------------------------------------
@check("table1-original")
def _t1_from_t3(ev: Evidence) -> Verdict:
    rec = paper.table1_from_table3(ev.table(3))
    orig = ev.table(1)[ev.table(1)["prompt"] == "original"].pivot(index="model", columns="method", values="value")
    diff = (orig[["strongest_baseline", "tef"]] - rec[["strongest_baseline", "tef"]]).abs().to_numpy()
    return Verdict(
        f"10 numbers, max |Δ| {fmt(np.nanmax(diff), 3)}",
        bool(np.isfinite(diff).sum() == 10 and np.nanmax(diff) <= paper.ROUNDING_TOLERANCE + SLACK),
        "Table 3's accuracy averaged over dimensions and both languages, strongest baseline chosen "
        "after averaging: " + ", ".join(f"{paper.MODEL_LABELS[m]} {rec.loc[m, 'strongest_method']}"
                                        for m in rec.index),
    )


@check("prompt-best")
def _prompt_best(ev: Evidence) -> Verdict:
    m = paper.prompt_robustness_summary(ev.table(1))[[f"margin_{p}" for p in ("original", "verbose", "minimal")]]
    m = m.to_numpy()
    return Verdict(
        f"{int((m > 0).sum())} of {m.size}",
        bool((m > 0).all()) and m.size == 15,
        f"Ours − Strongest baseline per model and prompt: {fmt(m.min())} to {fmt(m.max())} points",
    )


@check("prompt-least")
def _prompt_least(ev: Evidence) -> Verdict:
    pr = paper.prompt_robustness_summary(ev.table(1))
    less = [pr[f"drop_tef_{p}"] <= pr[f"drop_strongest_baseline_{p}"] + SLACK for p in ("verbose", "minimal")]
    n = int(sum(s.sum() for s in less))
    return Verdict(
        f"{n} of 10",
        n == 10,
        "loss from the original prompt, TEF against the strongest baseline (the only other column "
        "Table 1 prints), 5 models × 2 perturbed prompts",
    )


# --------------------------------------------------------------------------------------------------
# Table 2
# --------------------------------------------------------------------------------------------------
@check("tokens-identical")
def _same_tokens(ev: Evidence) -> Verdict:
    eff = paper.efficiency_summary(ev.table(2))
    return Verdict(
        f"{int(eff['tokens_equal'].sum())} of {len(eff)} models",
        bool(eff["tokens_equal"].all()),
        "Tokens (M) of Ours against Voting in Table 2",
    )


@check("ttft-two-ms")
def _ttft(ev: Evidence) -> Verdict:
    dt = paper.efficiency_summary(ev.table(2))["ttft_tef_minus_voting"]
    return Verdict(
        " / ".join(f"{fmt(v)} ms" for v in dt),
        bool((dt.abs() <= 2.5).all()),
        "TTFT of Ours minus Voting (" + ", ".join(paper.MODEL_LABELS[m] for m in dt.index)
        + "); 'about two' read as at most 2.5 ms",
    )


@check("cost-three-times")
def _cost(ev: Evidence) -> Verdict:
    eff = paper.efficiency_summary(ev.table(2))
    cr = eff[["cost_ratio_voting", "cost_ratio_tef"]].to_numpy()
    return Verdict(
        f"{fmt(cr.min(), 2)}–{fmt(cr.max(), 2)}×",
        bool(((cr >= 2.5) & (cr <= 3.5)).all()),
        "cost of Voting and Ours over Direct's; 'roughly three' read as 2.5-3.5×; their tokens are "
        f"{fmt(eff['token_ratio'].min())}-{fmt(eff['token_ratio'].max())}× Direct's",
    )


@check("overhead-pays")
def _overhead_pays(ev: Evidence) -> Verdict:
    vd = paper.voting_versus_direct(ev.table(3), ("majority_vote", "soft_vote", "tef"))
    better = vd["better"]
    return Verdict(
        f"TEF {better['tef']}, SV {better['soft_vote']}, MV {better['majority_vote']} of 120",
        bool(better["tef"] >= 90 and max(better["soft_vote"], better["majority_vote"]) <= 60),
        "cells of Table 3 where each sentence-level rule beats Direct (trails it: "
        + ", ".join(f"{m} {v}" for m, v in vd["worse"].items())
        + "); read 'consistently' as in at least 3 of 4 cells, and 'only' as the voting rules in at most half",
    )


# --------------------------------------------------------------------------------------------------
# the tables read as a reviewer reads them (tefpaper.review)
# --------------------------------------------------------------------------------------------------
def _cell_name(row: pd.Series) -> str:
    return f"{paper.MODEL_LABELS[row['model']]} {row['lang']} {row['dimension']}"


@check("table3-floors")
def _floors(ev: Evidence) -> Verdict:
    f = review.floors(ev.table(3))
    below = f[f["below"]].groupby("method").size()
    return Verdict(
        f"{int(below.sum())} of {len(f)} below",
        not below.sum(),
        "printed accuracy against the majority-class floor of its cell (always answering the larger side; "
        "pairs per side counted from the release's files, not printed by the paper); below per method: "
        + ", ".join(f"{RULE_LABELS[m]} {int(below.get(m, 0))}" for m in BASELINES + ("tef",))
        + f"; {int((f['high'] < f['floor']).sum())} of them lie below even with their sampling noise",
    )


@check("table3-noise")
def _noise(ev: Evidence) -> Verdict:
    nz = review.noise(ev.table(3))
    return Verdict(
        f"{int(nz['inside'].sum())} of {int(nz['win'].sum())} wins inside",
        not nz["inside"].any(),
        "accuracy cells where TEF beats the strongest of Direct, MV and SV, and those where that baseline "
        f"lies inside TEF's 95 % Wilson interval on the cell's pairs (n = {int(nz['n'].min())} to "
        f"{int(nz['n'].max()):,}, counted from the release's files); a paired test would be sharper but needs "
        "the per-post predictions, which the paper does not release",
    )


@check("table3-confusion")
def _confusion(ev: Evidence) -> Verdict:
    c = review.confusion_check(ev.table(3))
    bad = c[~c["consistent"]]
    worst = bad.dropna(subset=["reachable"]).sort_values("gap").iloc[-1]
    return Verdict(
        f"{len(bad)} of {len(c)} fit no matrix",
        bad.empty,
        "printed (accuracy, macro-F1) pairs that no confusion matrix on the cell's pairs of the release gives "
        f"within rounding, in {bad.groupby(['model', 'lang', 'dimension']).ngroups} cells; "
        f"{int(bad['reachable'].isna().sum())} accuracies are no k/n at all for that n (e.g. "
        f"{_no_k(bad)}); largest F1 gap: {_cell_name(worst)} {RULE_LABELS[worst['method']]}, accuracy "
        f"{fmt(worst['accuracy'])} allows macro-F1 {fmt(worst['reachable'], 2)}, printed {fmt(worst['macro_f1'])}. "
        "A question for the paper: were these computed on other pairs (unreadable answers dropped, the "
        "release's two-sided pairs kept)?",
    )


def _no_k(bad: pd.DataFrame) -> str:
    row = bad[bad["reachable"].isna()].iloc[0]
    n = int(review.cell_counts().loc[(row["lang"], row["dimension"]), "n"])
    return f"{_cell_name(row)} {RULE_LABELS[row['method']]} {fmt(row['accuracy'])} on {n} pairs"


@check("table3-same-posteriors")
def _same_posteriors(ev: Evidence) -> Verdict:
    s = review.sentence_rules(ev.table(3), ev.table(4))
    q = s[s["question"]].sort_values("required", ascending=False)
    rules = [r for r in review.SENTENCE_RULES if r in s.columns]
    cases = "; ".join(
        f"{_cell_name(r)}: {RULE_LABELS[r[rules].astype(float).idxmin()]} {fmt(r['lowest'])} vs "
        f"{RULE_LABELS[r[rules].astype(float).idxmax()]} {fmt(r['highest'])}, floor {fmt(r['floor'])}, needs "
        f">= {fmt(r['required'])} % of posts with disagreeing sentences" for _, r in q.iterrows())
    return Verdict(
        f"{len(q)} questions",
        q.empty,
        "sentence rules decide alike on a post whose sentences all lie on one side, so the spread of a cell's "
        "sentence-rule accuracies needs at least that share of posts with disagreeing sentences; questions "
        "(one sentence rule below the majority floor, another above it, both beyond their noise): " + cases,
    )


@check("table2-tokens")
def _tokens(ev: Evidence) -> Verdict:
    t2 = ev.table(2)
    tokens = t2[t2["quantity"] == "tokens"].pivot(index="model", columns="method", values="value") * 1e6
    tokens = tokens.reindex([m for m in paper.MODELS if m in tokens.index])  # the paper's order, as the claim's number
    direct = sum(int(FULL_RELEASE[lang]["pairs"]) for lang in ("zh", "en"))
    sentence = sum(FULL_RELEASE[lang]["pairs"] * FULL_RELEASE[lang]["mean_sentences"] for lang in ("zh", "en"))
    pairs = evaluation_pairs(ev.posts["en"])
    words = np.mean([review.prompt_words(build_prompt(p.text, p.dimension, "en")) for p in pairs])
    bare = min(review.prompt_words(build_prompt(".", d, "en")) for d in {p.dimension for p in pairs})
    needed = FULL_RELEASE["en"]["pairs"] * words
    estimate = "" if ev.dataset == "full MIND release" else f" (mean of the {ev.dataset}: an estimate)"
    return Verdict(
        " / ".join(f"{tokens.loc[m, 'direct'] / direct:.0f}" for m in tokens.index) + " tokens per Direct query",
        bool((tokens["direct"] >= needed).all()),
        f"Table 2's totals over the release's {direct:,} Direct and about {sentence:,.0f} sentence queries give "
        + ", ".join(f"{paper.MODEL_LABELS[m]} {tokens.loc[m, 'direct'] / direct:.1f} and "
                    f"{tokens.loc[m, 'voting'] / sentence:.1f}" for m in tokens.index)
        + f" tokens per query; the bare English prompt alone has {bare} words, each at least one token of "
        f"Qwen2.5's or LLaMA 3's tokenizer, and an English Direct prompt {words:.0f} words{estimate}: the "
        f"{int(FULL_RELEASE['en']['pairs']):,} English Direct queries alone need at least {needed / 1e6:.2f} M "
        "tokens, more than Table 2's total for both languages",
    )


# --------------------------------------------------------------------------------------------------
# one model's numbers, checked on its caches when a run of ours made them
# --------------------------------------------------------------------------------------------------
def _on_run(model: str, table: int, methods: Sequence[str]) -> Callable[[Evidence], Verdict | None]:
    def verdict(ev: Evidence) -> Verdict | None:
        run = ev.run(model)
        if run is None:
            return None
        cmp = against_paper(run.scores(), ev.table(table), model, methods)
        acc = cmp[cmp["metric"] == "accuracy"]
        return Verdict(
            f"{int(acc['inside'].sum())} of {len(acc)} within noise",
            bool(acc["inside"].all()) and len(acc) > 0,
            f"checked on {run.label}: the paper's accuracies inside the 95 % Wilson interval of ours; largest "
            f"|difference| {fmt(cmp['difference'].abs().max())} points (macro-F1 "
            f"{fmt(cmp.loc[cmp['metric'] == 'macro_f1', 'difference'].abs().max())})",
            kind="run",
        )
    return verdict


for _model in paper.MODELS:
    check(f"table3-{_model}")(_on_run(_model, 3, BASELINES + ("tef",)))
for _model in ("qwen2.5-7b", "deepseek-v3.2"):
    check(f"table4-{_model}")(_on_run(_model, 4, ("tef_without_entropy", "tef_without_log_odds")))


def _on_calibration(fn: Callable[[pd.DataFrame, str], Verdict]) -> Callable[[Evidence], Verdict | None]:
    """A check of ``fn(table, run label)`` on the ECE and overconfidence gap (percent) of Direct, MV, SV and TEF
    per language of a Qwen2.5-7B run of ours (``None`` without one)."""
    def verdict(ev: Evidence) -> Verdict | None:
        run = ev.run("qwen2.5-7b")
        if run is None:
            return None
        pred = predict_pairs(run.frame, rules=BASELINES + ("tef",))
        pred = pred[pred["prediction"] != ABSTAIN]
        rows = [(lang, rule, 100 * expected_calibration_error(g["confidence"], g["correct"]),
                 100 * overconfidence_gap(g["confidence"], g["correct"]))
                for (lang, rule), g in pred.groupby(["lang", "rule"])]
        return fn(pd.DataFrame(rows, columns=["lang", "rule", "ece", "gap"]), run.label)
    return verdict


@check("calibration-tef")
@_on_calibration
def _calibration_tef(cal: pd.DataFrame, label: str) -> Verdict:
    lowest = {m: cal.loc[cal.groupby("lang")[m].idxmin(), "rule"].tolist() for m in ("ece", "gap")}
    return Verdict(
        "lowest ECE: " + ", ".join(f"{lang} {RULE_LABELS[r]}" for lang, r in zip(sorted(set(cal['lang'])), lowest["ece"])),
        all(r == "tef" for m in lowest for r in lowest[m]),
        f"checked on {label}: ECE (10 equal-width bins) and confidence minus accuracy per rule and language, "
        "confidence as the book defines it (the paper defines none): "
        + "; ".join(f"{r.lang} {RULE_LABELS[r.rule]} {fmt(r.ece)} / {fmt(r.gap)}" for r in cal.itertuples()),
        kind="run",
    )


@check("calibration-baselines")
@_on_calibration
def _calibration_baselines(cal: pd.DataFrame, label: str) -> Verdict:
    base = cal[cal["rule"].isin(BASELINES)]
    return Verdict(
        f"{int((base['gap'] > 0).sum())} of {len(base)} overconfident",
        bool((base["gap"] > 0).all()),
        f"checked on {label}: confidence minus accuracy of Direct, MV and SV per language: "
        + "; ".join(f"{r.lang} {RULE_LABELS[r.rule]} {fmt(r.gap)}" for r in base.itertuples()),
        kind="run",
    )
