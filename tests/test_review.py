"""The paper's tables read as a reviewer reads them (tefpaper.review), each number reached a second way:
from the CSV files with the csv module, Wilson intervals from scipy's binomial test, confusion matrices by
brute force."""

from __future__ import annotations

import csv
import math
from itertools import product

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from tefcore.mind.release import FULL_RELEASE_PAIRS
from tefpaper import review
from tefpaper import tables as paper


def _accuracies(table: str = "table3") -> list[dict[str, str]]:
    with open(paper.paper_dir() / paper.TABLE_FILES[table], newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["metric"] == "accuracy" and r["dimension"] != "Average"]


def test_floors_by_hand() -> None:
    below = 0
    for r in _accuracies():
        change, stability = FULL_RELEASE_PAIRS[r["lang"]][r["dimension"]]
        below += float(r["value"]) + 0.05 < 100 * max(change, stability) / (change + stability)
    f = review.floors(paper.load_table("table3"))
    assert (int(f["below"].sum()), len(f)) == (below, 240) == (103, 240)
    assert review.cell_counts()["n"].sum() == sum(c + s for dims in FULL_RELEASE_PAIRS.values() for c, s in dims.values())


@pytest.mark.parametrize(("change", "stability"), [(3, 1), (5, 5), (0, 7), (669, 1330)])
def test_majority_class_is_a_constant_answer_scored_by_sklearn(change: int, stability: int) -> None:
    from sklearn.metrics import accuracy_score, f1_score

    gold = ["change"] * change + ["stability"] * stability
    row = review.majority_class(pd.DataFrame({"change": [change], "stability": [stability]})).iloc[0]
    answer = [row["majority"]] * len(gold)
    assert row["majority"] == ("change" if change >= stability else "stability")
    assert row["floor"] == pytest.approx(100 * accuracy_score(gold, answer))
    assert row["floor_f1"] == pytest.approx(100 * f1_score(gold, answer, average="macro",
                                                           labels=["change", "stability"], zero_division=0))


@pytest.mark.parametrize(("k", "n"), [(0, 10), (7, 10), (1441, 1999), (137, 137), (52, 137)])
def test_wilson_interval_is_scipys(k: int, n: int) -> None:
    low, high = review.wilson_interval(100 * k / n, n)
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert (float(low), float(high)) == pytest.approx((100 * ci.low, 100 * ci.high), abs=1e-9)


def test_noise_by_hand() -> None:
    cells: dict[tuple[str, str, str], dict[str, float]] = {}
    for r in _accuracies():
        cells.setdefault((r["model"], r["lang"], r["dimension"]), {})[r["method"]] = float(r["value"])
    wins = inside = 0
    z = 1.959963984540054
    for (model, lang, dim), v in cells.items():
        n = sum(FULL_RELEASE_PAIRS[lang][dim])
        base = max(v["direct"], v["majority_vote"], v["soft_vote"])
        p = v["tef"] / 100
        low = (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)
        wins += v["tef"] > base
        inside += v["tef"] > base and base / 100 >= low
    nz = review.noise(paper.load_table("table3"))
    assert (int(nz["win"].sum()), int(nz["inside"].sum())) == (wins, inside) == (50, 26)


def test_reachable_f1_by_brute_force() -> None:
    n_c, n_s = 7, 5
    for tp, tn in product(range(n_c + 1), range(n_s + 1)):
        fp, fn = n_s - tn, n_c - tp
        f1 = 50 * ((2 * tp / (2 * tp + fp + fn) if tp else 0) + (2 * tn / (2 * tn + fp + fn) if tn else 0))
        acc = round(100 * (tp + tn) / (n_c + n_s), 1)
        assert review.reachable_f1(acc, round(f1, 1), n_c, n_s) == pytest.approx(round(f1, 1), abs=0.05)
    assert math.isnan(review.reachable_f1(50.0, 50.0, 2, 1))  # no k of 3 pairs gives 50 %


def test_confusion_check_flags_an_impossible_accuracy() -> None:
    c = review.confusion_check(paper.load_table("table3"))
    assert len(c) == 240 and not c["consistent"].all()
    env = c[(c["lang"] == "en") & (c["dimension"] == "Environment")]
    n = sum(FULL_RELEASE_PAIRS["en"]["Environment"])
    for acc, reachable in zip(env["accuracy"], env["reachable"], strict=True):
        representable = any(abs(100 * k / n - acc) <= 0.05 + 1e-9 for k in range(n + 1))
        assert math.isnan(reachable) != representable


def test_sentence_rules_questions() -> None:
    s = review.sentence_rules(paper.load_table("table3"), paper.load_table("table4")).set_index(
        ["model", "lang", "dimension"])
    qwen = s.loc[("qwen2.5-7b", "zh", "Culture")]
    assert qwen["question"] and qwen["lowest"] == 43.5 and qwen["highest"] == 72.1
    assert qwen["required"] == pytest.approx(28.6)
    assert not {"direct"} & set(s.columns)  # Direct reads the whole post: not a sentence rule
    # a cell is a question exactly when a rule's interval lies under the floor and another's above it
    row = s.loc[("qwen2.5-7b", "zh", "Culture")]
    low, high = review.wilson_interval(np.array([row["soft_vote"], row["tef"]]), row["n"])
    assert high[0] < row["floor"] < low[1]


def test_prompt_words_are_letter_runs() -> None:
    assert review.prompt_words("don't stop: 3 words, 2 digits") == 5  # don, t, stop, words, digits
    assert review.prompt_words("") == 0


def test_an_accuracy_changed_below_its_floor_is_counted() -> None:
    t3 = paper.load_table("table3")
    before = int(review.floors(t3)["below"].sum())
    mask = (t3["model"] == "deepseek-v3.2") & (t3["lang"] == "zh") & (t3["dimension"] == "Culture") & (
        t3["method"] == "tef") & (t3["metric"] == "accuracy")
    changed = t3.assign(value=np.where(mask, 10.0, t3["value"]))
    assert int(review.floors(changed)["below"].sum()) == before + 1
    assert isinstance(review.floors(changed), pd.DataFrame)


# ----------------------------------------------------------------------------- the front page's findings
def test_the_front_page_findings_are_the_chapters_numbers() -> None:
    """The findings table (tefbook.companion.findings) says what chapters 5 and 11 compute, with the premise of each
    reviewer's reading; the extension puts it in the introduction's ``{{ findings }}``."""
    import importlib.util
    from pathlib import Path
    from types import SimpleNamespace

    from tefbook.companion import findings
    from tefpaper.ledger import evaluate_ledger, whose_counts

    root = Path(__file__).resolve().parents[1]
    frame = findings.findings_frame(root / "data" / "caches").set_axis(["asked", "found", "premise", "shown"], axis=1)
    assert len(frame) == 7 and frame.notna().all().all()
    assert frame["shown"].str.match(r'<a href="\.\./notebooks/\d\d_\w+\.html(#[\w-]+)?">ch\. \d+</a>$').all()
    t3 = paper.load_table("table3")
    confusion, noise = review.confusion_check(t3), review.noise(t3)
    floor_row, noise_row = frame.iloc[2], frame.iloc[3]
    assert floor_row["found"].startswith(f"if the premise holds, {int(review.floors(t3)['below'].sum())} of 240 printed")
    assert f"{int((~confusion['consistent']).sum())} of its 240 (accuracy, macro-F1) pairs" in floor_row["premise"]
    assert noise_row["premise"] == "the wins: none; the noise: the same premise"
    assert f"{int(confusion['reachable'].isna().sum())} accuracies are no fraction" in floor_row["premise"]
    assert f"in {int(noise['win'].sum())} of 60 accuracy cells (no premise)" in noise_row["found"]
    whose = whose_counts(evaluate_ledger())
    assert frame.iloc[1]["found"].startswith(f"{whose.loc['claim of the paper', 'all']} claims of the paper: "
                                             f"{whose.loc['claim of the paper', 'holds']} hold")
    n_reader = whose.loc["reader's check", "all"]
    assert f"{n_reader} reader's checks of its tables: 0 pass" in frame.iloc[1]["found"]
    vs = findings.cpu_versus(root / "data" / "caches")
    assert f"over {len(vs)} judge-language cells" in frame.iloc[0]["found"]
    assert f"TEF ahead beyond the noise in {int((vs['verdict'] == 'TEF ahead').sum())}," in frame.iloc[0]["found"]
    # the CPU row's finding counts the judges below their floor: 4 of 6 (e5 zero-shot, SmolLM2), as chapter 5
    # finds; its premise stays a premise (the sample and our judges), with no count in it
    below = int((~vs["clears"]).sum())
    assert below == 4 and f"{below} of the {len(vs)} cells are judges below the majority-class floor" in frame.iloc[0][
        "found"] and "floor" not in frame.iloc[0]["premise"]
    # Table 1 against its floor (chapter 7's numbers) and Table 2 per query (chapter 8's reading)
    wide = paper.load_table("table1").pivot_table(index="model", columns=["method", "prompt"], values="value")
    t1_floor = review.cell_counts()["floor"].groupby("lang").mean().mean()
    assert frame.iloc[4]["found"].startswith(f"if the premise holds, {int((wide < t1_floor).to_numpy().sum())} of "
                                             "Table 1's 30 printed accuracies")
    from tefbook.chapters.ch07 import paper_numbers  # the front page and chapter 7 agree
    chapter7 = paper_numbers(paper.load_table("table1"), wide.reindex(paper.MODELS), t1_floor)
    assert {k: chapter7[k] for k in findings.table1_floor()} == findings.table1_floor()
    per_query = findings.table2_per_query().xs("direct", level="method")
    assert per_query["tokens per query"].max() < per_query["fewest possible"].min()
    assert (f"holds {per_query['tokens per query'].min():.1f} to {per_query['tokens per query'].max():.1f} tokens"
            in frame.iloc[5]["found"]) and frame.iloc[5]["premise"].startswith("one Direct query per pair")
    table = findings.findings_markdown(root / "data" / "caches")
    assert table.count("\n| ") == 8 and "nan" not in table.lower() and table.splitlines()[-1].startswith("In short")
    assert table.splitlines()[0] == "| " + " | ".join(findings.COLUMNS) + " |"

    spec = importlib.util.spec_from_file_location("tef_findings", root / "book" / "_ext" / "tef_findings.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    config = SimpleNamespace(myst_substitutions={"repository": "this repository"})
    ext.add_findings(None, config)
    assert config.myst_substitutions.pop(ext.SUBSTITUTION) == table
    assert config.myst_substitutions == {"repository": "this repository"}
    assert "\n{{ findings }}\n" in (root / "book" / "intro.md").read_text(encoding="utf-8")
