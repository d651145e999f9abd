"""Tests of the paper's tables (data/paper/*.csv) and of the arithmetic the paper states about them.

The claims built on this arithmetic are tested as rows of the claims ledger in tests/test_claims.py.

Where a statement holds, the recomputed value is asserted against the paper's number within 0.05 (the
rounding of a one-decimal table). Where it does not, the test asserts the value the tables actually
give, so that the discrepancy is documented and any change to the CSV files shows up.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tefpaper import tables as paper
from tefpaper.tables import (
    ROUNDING_TOLERANCE,
    ablation_drops,
    ablation_versus_soft_vote,
    average_gain,
    best_or_tied,
    dimension_averages,
    efficiency_summary,
    gain_by_group,
    load_table,
    load_tables,
    prompt_robustness_summary,
    shortfalls,
    strongest_baseline_gain,
    table1_from_table3,
    table4_average_check,
    typesetting_check,
    voting_versus_direct,
)

TOL = ROUNDING_TOLERANCE + 1e-9
PAPER_TEX = Path(__file__).resolve().parents[1].parent / "shared" / "paper" / "tef-paper.tex"


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    return load_tables()


@pytest.fixture(scope="module")
def t3(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    return tables["table3"]


@pytest.fixture(scope="module")
def t4(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    return tables["table4"]


# --------------------------------------------------------------------------------------------------
# the files
# --------------------------------------------------------------------------------------------------
def test_table_shapes(tables: dict[str, pd.DataFrame]) -> None:
    assert tables["table1"].shape == (30, 5)
    assert tables["table2"].shape == (18, 5)
    assert tables["table3"].shape == (480, 7)
    assert tables["table4"].shape == (168, 7)
    t3 = tables["table3"]
    assert set(t3["model"]) == set(paper.MODELS)
    assert set(t3["method"]) == {"direct", "majority_vote", "soft_vote", "tef"}
    assert set(t3["typeset"]) == {"bold", "underline", "none"}
    assert not t3.duplicated(["model", "lang", "dimension", "method", "metric"]).any()
    assert t3["value"].between(0, 100).all()


def test_known_numbers(t3: pd.DataFrame, t4: pd.DataFrame) -> None:
    def v(frame: pd.DataFrame, **key: str) -> float:
        mask = np.logical_and.reduce([frame[k] == x for k, x in key.items()])
        assert mask.sum() == 1
        return float(frame.loc[mask, "value"].iloc[0])

    assert (
        v(t3, model="qwen2.5-7b", lang="zh", dimension="Culture", method="tef", metric="accuracy")
        == 72.1
    )
    assert (
        v(
            t3,
            model="gpt-4o-mini",
            lang="en",
            dimension="Environment",
            method="tef",
            metric="macro_f1",
        )
        == 72.4
    )
    assert (
        v(
            t4,
            model="deepseek-v3.2",
            lang="en",
            dimension="Average",
            method="tef_without_entropy",
            metric="accuracy",
        )
        == 60.3
    )


def test_load_table_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown table"):
        load_table("table9")
    with pytest.raises(ValueError, match="not found"):
        load_table("table1", tmp_path)
    (tmp_path / "table1_prompt_robustness.csv").write_text("model,prompt\nx,y\n")
    with pytest.raises(ValueError, match="lacks column"):
        load_table("table1", tmp_path)


def _latex_rows(tex: str, label: str, stop: str) -> list[list[str]]:
    start = tex.index(f"\\label{{{label}}}")
    body = tex[start : tex.index(stop, start)]
    body = body[body.index("\\midrule") :]
    return [
        [c.strip() for c in line.split("\\\\")[0].split("&")]
        for line in body.splitlines()
        if "&" in line
    ]


def _number(cell: str) -> tuple[float, str]:
    mark = "bold" if "\\textbf" in cell else "underline" if "\\underline" in cell else "none"
    return float(re.search(r"\d+(?:\.\d+)?", cell).group(0)), mark


@pytest.mark.skipif(not PAPER_TEX.is_file(), reason=f"paper source not found at {PAPER_TEX}")
def test_csv_matches_latex(
    t3: pd.DataFrame, t4: pd.DataFrame, tables: dict[str, pd.DataFrame]
) -> None:
    """Every number of the CSV files is the number printed in the paper (re-read from the LaTeX)."""
    tex = PAPER_TEX.read_text(encoding="utf-8")
    order = ["Culture", "Economy", "Society", "Politics", "Technology", "Environment"]
    names = {v: k for k, v in paper.MODEL_LABELS.items()}
    methods = {
        "Direct": "direct",
        "MV": "majority_vote",
        "SV": "soft_vote",
        "Ours": "tef",
        "w/o Entropy": "tef_without_entropy",
        "w/o Log-Odds": "tef_without_log_odds",
    }

    def method(cell: str) -> str:
        return methods[re.sub(r"\\textbf\{(.*)\}", r"\1", cell).strip()]

    got3, model = [], None
    for row in _latex_rows(tex, "tab:main", "\\bottomrule"):
        m = re.search(r"\{\*\}\{(.+?)\}", row[0])
        model = names[m.group(1)] if m else model
        for k, cell in enumerate(row[2:14] + row[15:27]):
            value, mark = _number(cell)
            got3.append(
                (
                    model,
                    "zh" if k < 12 else "en",
                    order[(k % 12) // 2],
                    method(row[1]),
                    "accuracy" if k % 2 == 0 else "macro_f1",
                    value,
                    mark,
                )
            )
    expect3 = pd.DataFrame(got3, columns=t3.columns)
    pd.testing.assert_frame_equal(t3.reset_index(drop=True), expect3)

    got4, model, lang = [], None, None
    for row in _latex_rows(tex, "tab:ablation", "\\bottomrule"):
        m = re.search(r"\{(Qwen2\.5-7B|DeepSeek-V3\.2)\}", row[0])
        model = names[m.group(1)] if m else model
        lang = "zh" if "Chinese" in row[1] else "en" if "English" in row[1] else lang
        for k, cell in enumerate(row[3:17]):
            value, mark = _number(cell)
            got4.append(
                (
                    model,
                    lang,
                    (order + ["Average"])[k // 2],
                    method(row[2]),
                    "accuracy" if k % 2 == 0 else "macro_f1",
                    value,
                    mark,
                )
            )
    pd.testing.assert_frame_equal(t4.reset_index(drop=True), pd.DataFrame(got4, columns=t4.columns))

    t1 = tables["table1"].set_index(["model", "prompt", "method"])["value"]
    for row in _latex_rows(tex, "tab:prompt", "\\bottomrule"):
        for k, cell in enumerate(row[1:7]):
            key = (
                names[row[0]],
                ("original", "verbose", "minimal")[k % 3],
                "strongest_baseline" if k < 3 else "tef",
            )
            assert t1[key] == float(cell)
    t2 = tables["table2"].set_index(["model", "method", "quantity"])["value"]
    model = None
    for row in _latex_rows(tex, "tab:efficiency", "\\bottomrule"):
        m = re.search(r"\{\*\}\{(.+?)\}", row[0])
        model = names[m.group(1)] if m else model
        meth = {"Direct": "direct", "Voting": "voting", "Ours": "tef"}[
            re.sub(r"\\textbf\{(.*)\}", r"\1", row[1])
        ]
        for quantity, cell in zip(("tokens", "ttft", "cost"), row[2:5], strict=False):
            assert t2[(model, meth, quantity)] == float(cell)


# --------------------------------------------------------------------------------------------------
# Table 3: the average gain (4.5 / 4.6)
# --------------------------------------------------------------------------------------------------
def test_average_gain_model_language_level_reproduces_paper(t3: pd.DataFrame) -> None:
    g = average_gain(t3, level="model_lang")
    assert g["accuracy"] == pytest.approx(4.5, abs=TOL)
    assert g["macro_f1"] == pytest.approx(4.6, abs=TOL)
    assert g["accuracy"] == pytest.approx(4.465, abs=1e-9)
    assert g["macro_f1"] == pytest.approx(4.618333, abs=1e-6)


def test_average_gain_other_definitions_do_not(t3: pd.DataFrame) -> None:
    # per dimension ("cell"): neither number is reproduced
    cell = average_gain(t3, level="cell")
    assert cell["accuracy"] == pytest.approx(3.91, abs=1e-9)
    assert cell["macro_f1"] == pytest.approx(4.23, abs=1e-9)
    # per model, languages pooled: accuracy yes, macro-F1 no (4.7)
    model = average_gain(t3, level="model")
    assert model["accuracy"] == pytest.approx(4.5, abs=TOL)
    assert model["macro_f1"] == pytest.approx(4.691667, abs=1e-6)
    assert abs(model["macro_f1"] - 4.6) > ROUNDING_TOLERANCE
    # against one fixed baseline for all cells: none reproduces both
    for base in ("direct", "majority_vote", "soft_vote"):
        g = average_gain(t3, level="model_lang", baselines=[base])
        assert not (abs(g["accuracy"] - 4.5) <= TOL and abs(g["macro_f1"] - 4.6) <= TOL)
    assert average_gain(t3, level="cell", baselines=["direct"])["accuracy"] == pytest.approx(
        4.765, abs=1e-9
    )


def test_strongest_baseline_gain_table(t3: pd.DataFrame) -> None:
    ml = strongest_baseline_gain(t3, level="model_lang")
    assert ml.shape[0] == 20
    row = ml.loc[("qwen2.5-7b", "zh", "accuracy")]
    assert row["strongest_baseline"] == "direct"
    assert row["baseline"] == pytest.approx(62.25)
    assert row["tef"] == pytest.approx(71.25)
    assert row["gain"] == pytest.approx(9.0)
    # TEF is ahead on average for every model and language, in both metrics
    assert (ml["gain"] > 0).all()
    assert ml["gain"].min() == pytest.approx(0.933333, abs=1e-6)
    with pytest.raises(ValueError, match="unknown level"):
        strongest_baseline_gain(t3, level="lang")


# --------------------------------------------------------------------------------------------------
# Table 3: 116 of 120, at most 2.6 behind, voting vs Direct, where gains concentrate
# --------------------------------------------------------------------------------------------------
def test_best_or_tied_116_of_120(t3: pd.DataFrame) -> None:
    assert best_or_tied(t3) == (116, 120)


def test_never_trails_by_more_than_2_6(t3: pd.DataFrame) -> None:
    lost = shortfalls(t3)
    assert len(lost) == 4
    assert lost["shortfall"].max() == pytest.approx(2.6, abs=1e-9)
    assert lost.index[0] == ("llama3-8b", "zh", "Environment", "accuracy")
    assert set(lost.index.get_level_values("model")) == {"llama3-8b", "gpt-4o-mini"}


def test_voting_does_not_consistently_beat_direct(t3: pd.DataFrame) -> None:
    vd = voting_versus_direct(t3)
    assert vd.loc["majority_vote", "better"] == 30
    assert vd.loc["soft_vote", "better"] == 40
    assert (
        vd.loc["majority_vote", "mean_difference"] < 0
        and vd.loc["soft_vote", "mean_difference"] < 0
    )


def test_gains_concentrate(t3: pd.DataFrame) -> None:
    by_model = gain_by_group(t3, ["model"])
    assert list(by_model.index[:2]) == ["qwen2.5-7b", "llama3-8b"]
    by_ld = gain_by_group(t3, ["lang", "dimension"])
    assert list(by_ld.xs("zh", level="lang").index[:2]) == ["Culture", "Politics"]
    assert by_ld.xs("en", level="lang").index[0] == "Environment"
    assert by_ld[("zh", "Environment")] == pytest.approx(0.0, abs=1e-9)


def test_typesetting_marks(t3: pd.DataFrame) -> None:
    dense = typesetting_check(t3, ranking="dense")
    comp = typesetting_check(t3, ranking="competition")
    # bold always marks the best value
    assert not ((dense["typeset"] == "bold") | (dense["expected"] == "bold")).any()
    # underlines: documented deviations from the caption's rule
    keys = ["model", "lang", "dimension", "metric"]
    d = set(map(tuple, dense[keys].to_numpy()))
    c = set(map(tuple, comp[keys].to_numpy()))
    assert (len(d), len(c), len(d & c)) == (13, 17, 10)
    wrong = dense[(dense["typeset"] == "underline")]
    assert set(zip(wrong["model"], wrong["dimension"], wrong["method"], strict=False)) == {
        ("qwen2.5-7b", "Technology", "soft_vote"),
        ("deepseek-v3.2", "Environment", "soft_vote"),
    }
    with pytest.raises(ValueError, match="ranking"):
        typesetting_check(t3, ranking="olympic")


# --------------------------------------------------------------------------------------------------
# Table 4
# --------------------------------------------------------------------------------------------------
def test_table4_averages_recomputed(t4: pd.DataFrame) -> None:
    check = table4_average_check(t4)
    assert check.shape[0] == 24
    assert check["consistent"].all()
    assert (check["difference"].abs() <= TOL).all()
    assert check.loc[("qwen2.5-7b", "zh", "tef", "accuracy"), "recomputed"] == pytest.approx(71.25)
    assert check.loc[("deepseek-v3.2", "en", "tef", "accuracy"), "recomputed"] == pytest.approx(
        67.233333, abs=1e-6
    )


def test_table4_tef_rows_equal_table3(t3: pd.DataFrame, t4: pd.DataFrame) -> None:
    a = t4[(t4["method"] == "tef") & (t4["dimension"] != "Average")].drop(columns="typeset")
    b = t3[t3["method"] == "tef"].drop(columns="typeset")
    merged = a.merge(b, on=["model", "lang", "dimension", "method", "metric"])
    assert merged.shape[0] == 48
    assert (merged["value_x"] == merged["value_y"]).all()


def test_ablation_drops_22_9_and_23_8(t4: pd.DataFrame) -> None:
    drops = ablation_drops(t4)
    at = ("deepseek-v3.2", "en", "Environment", "accuracy")
    assert drops.loc[at, "drop_without_entropy"] == pytest.approx(22.9, abs=TOL)
    assert drops.loc[at, "drop_without_log_odds"] == pytest.approx(23.8, abs=TOL)
    acc = drops.xs("accuracy", level="metric")
    assert acc["drop_without_entropy"].idxmax() == at[:3]
    assert acc["drop_without_log_odds"].idxmax() == at[:3]
    # no ablation ever beats full TEF in the table
    assert (drops[["drop_without_entropy", "drop_without_log_odds"]] >= 0).all().all()


def test_ablation_relative_to_soft_vote(t3: pd.DataFrame, t4: pd.DataFrame) -> None:
    vs = ablation_versus_soft_vote(t3, t4)
    ds = vs.loc["deepseek-v3.2"]
    assert (ds["margin_tef_without_entropy"] < 0).all() and (
        ds["margin_tef_without_log_odds"] < 0
    ).all()
    qw = vs.loc["qwen2.5-7b"]
    kept = qw[["retained_tef_without_entropy", "retained_tef_without_log_odds"]]
    assert (kept > 0.5).all().all()
    assert kept.to_numpy().min() == pytest.approx(0.77, abs=0.01)


def test_dimension_averages_validation(t3: pd.DataFrame) -> None:
    avg = dimension_averages(t3)
    assert avg.shape == (20, 4)
    with pytest.raises(ValueError, match="6 dimensions"):
        dimension_averages(t3[t3["dimension"] != "Culture"])


# --------------------------------------------------------------------------------------------------
# Table 1 and Table 2
# --------------------------------------------------------------------------------------------------
def test_table1_original_consistent_with_table3(tables: dict[str, pd.DataFrame]) -> None:
    rec = table1_from_table3(tables["table3"])
    t1 = tables["table1"]
    orig = t1[t1["prompt"] == "original"].pivot_table(
        index="model", columns="method", values="value"
    )
    for model in paper.MODELS:
        assert rec.loc[model, "strongest_baseline"] == pytest.approx(
            orig.loc[model, "strongest_baseline"], abs=TOL
        )
        assert rec.loc[model, "tef"] == pytest.approx(orig.loc[model, "tef"], abs=TOL)
    assert rec["strongest_method"].tolist() == [
        "direct",
        "direct",
        "direct",
        "soft_vote",
        "soft_vote",
    ]
    # Table 1's margins average to the headline accuracy gain as well
    assert prompt_robustness_summary(t1)["margin_original"].mean() == pytest.approx(4.46, abs=1e-9)


def test_prompt_robustness(tables: dict[str, pd.DataFrame]) -> None:
    pr = prompt_robustness_summary(tables["table1"])
    assert (pr[["margin_original", "margin_verbose", "margin_minimal"]] > 0).all().all()
    for p in ("verbose", "minimal"):
        assert (pr[f"drop_tef_{p}"] <= pr[f"drop_strongest_baseline_{p}"] + 1e-9).all()
    assert pr.loc["qwen2.5-7b", "drop_tef_minimal"] == pytest.approx(1.6)


def test_efficiency(tables: dict[str, pd.DataFrame]) -> None:
    eff = efficiency_summary(tables["table2"])
    assert eff["tokens_equal"].all()
    assert eff.loc["qwen2.5-7b", "ttft_tef_minus_voting"] == pytest.approx(1.4)
    assert eff.loc["llama3-8b", "ttft_tef_minus_voting"] == pytest.approx(2.1)
    assert eff.loc["qwen2.5-7b", "cost_ratio_voting"] == pytest.approx(3.0)
    assert eff.loc["llama3-8b", "cost_ratio_voting"] == pytest.approx(2.8)
    assert eff["token_ratio"].round(1).tolist() == [5.4, 5.2]
