"""Tests of the claims ledger (tefpaper.ledger) and of `tef claims`.

Each recomputed value of the ledger is reached a second way where one exists: by hand from the CSV
files with the csv module (no pandas, no tefpaper.tables), or from the MIND files with json.
Every check is also shown to be able to fail: a changed table or a broken library function makes the
ledger, `assert_ledger` and `tef claims` fail.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections import defaultdict
from pathlib import Path
from statistics import mean

import numpy as np
import pandas as pd
import pytest

from tefcore import cli, information
from tefcore.mind.load import sample_dir
from tefpaper import checks, evidence
from tefpaper.__main__ import main as tef_claims
from tefpaper import ledger as claims
from tefpaper import tables as paper

ROOT = Path(__file__).resolve().parents[1]
BASELINES = ("direct", "majority_vote", "soft_vote")


@pytest.fixture(scope="module")
def ledger() -> pd.DataFrame:
    return claims.evaluate_ledger().set_index("id")


def _rows(table: str) -> list[dict[str, str]]:
    with open(paper.paper_dir() / paper.TABLE_FILES[table], newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _cells(rows: list[dict[str, str]]) -> dict[tuple[str, ...], dict[str, float]]:
    """(model, lang, dimension, metric) -> {method: value}, by hand."""
    out: dict[tuple[str, ...], dict[str, float]] = defaultdict(dict)
    for r in rows:
        out[(r["model"], r["lang"], r["dimension"], r["metric"])][r["method"]] = float(r["value"])
    return out


def _changed_tables(model: str, lang: str, dim: str, value: float) -> dict[str, pd.DataFrame]:
    """The paper's tables with one Table 3 TEF accuracy replaced."""
    tables = {k: v.copy() for k, v in paper.load_tables().items()}
    t3 = tables["table3"]
    mask = (t3["model"] == model) & (t3["lang"] == lang) & (t3["dimension"] == dim) & (
        t3["method"] == "tef") & (t3["metric"] == "accuracy")
    assert mask.sum() == 1
    t3.loc[mask, "value"] = value
    return tables


# --------------------------------------------------------------------------------------------------
# the ledger as data
# --------------------------------------------------------------------------------------------------
def test_ledger_has_forty_rows_with_unique_ids() -> None:
    ids = [c.id for c in claims.LEDGER]
    assert len(ids) >= 40
    assert len(set(ids)) == len(ids)
    assert len({claims.claim_anchor(i) for i in ids}) == len(ids)


def test_every_row_names_a_chapter_that_exists() -> None:
    for claim in claims.LEDGER:
        assert (ROOT / "notebooks" / f"{claim.chapter}.py").is_file(), claim.id


def test_rows_cover_every_section_and_kind_of_check() -> None:
    assert {c.section for c in claims.LEDGER} == set(evidence.SECTIONS)
    assert {c.kind for c in claims.LEDGER} == set(evidence.KINDS) - {"run"}  # "run" only with caches at hand
    for must in ("gain-accuracy", "gain-macro-f1", "gain-per-cell", "best-or-tied", "max-shortfall",
                 "ablation-drop", "table1-original", "table3-underline", "general-k", "k3-bayes",
                 "prop1", "prop2", "mind-posts", "gains-dimensions"):
        assert must in {c.id for c in claims.LEDGER}


def test_claim_validation() -> None:
    with pytest.raises(ValueError, match="unknown kind"):
        evidence.Claim("x", "method", "w", "words", "1", "01_derivation", "by eye")
    with pytest.raises(ValueError, match="lower-case"):
        evidence.Claim("Bad Id", "method", "w", "words", "1", "01_derivation", "tables")
    with pytest.raises(ValueError, match="unknown kind 'tables' or section 'Elsewhere'"):
        evidence.Claim("x", "Elsewhere", "w", "words", "1", "01_derivation", "tables")


def test_every_claim_has_its_check_and_every_check_its_claim() -> None:
    ids = {c.id for c in claims.LEDGER}
    assert set(evidence.CHECKS) <= ids
    unchecked = {c.id for c in claims.LEDGER if c.id not in evidence.CHECKS}
    assert all(c.kind in ("gpu", "cannot") for c in claims.LEDGER if c.id in unchecked)
    assert all(c.model or c.reason for c in claims.LEDGER if c.kind in ("gpu", "cannot"))


def test_verdicts_of_the_shipped_tables(ledger: pd.DataFrame) -> None:
    assert claims.failures(ledger.reset_index()).empty
    assert set(ledger.index[ledger["verdict"] == "does not hold"]) == {
        "k3-bayes", "gain-per-cell", "table3-underline", "table3-floors", "table3-noise", "table3-confusion",
        "table3-same-posteriors", "table2-tokens", "tempering"}
    unchecked = ledger[ledger["kind"].isin([evidence.KINDS["gpu"], evidence.KINDS["cannot"]])]
    assert (unchecked["verdict"] == "not checked").all()
    assert unchecked["note"].str.len().gt(10).all()  # each says why (or gives the command)
    gpu = ledger[ledger["kind"] == evidence.KINDS["gpu"]]
    assert gpu["note"].str.contains("tef reproduce").all()


# --------------------------------------------------------------------------------------------------
# recomputed values, reached a second way
# --------------------------------------------------------------------------------------------------
def test_average_gain_by_hand(ledger: pd.DataFrame) -> None:
    groups: dict[tuple[str, str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in _rows("table3"):
        groups[(r["model"], r["lang"], r["metric"])][r["method"]].append(float(r["value"]))
    gains = defaultdict(list)
    cell_gains = defaultdict(list)
    for (model, lang, metric), by_method in groups.items():
        avg = {m: mean(v) for m, v in by_method.items()}
        gains[metric].append(avg["tef"] - max(avg[b] for b in BASELINES))
    for (m, lang, d, metric), v in _cells(_rows("table3")).items():
        cell_gains[metric].append(v["tef"] - max(v[b] for b in BASELINES))
    assert len(gains["accuracy"]) == 10
    assert ledger.loc["gain-accuracy", "value"] == f"{mean(gains['accuracy']):.3f}" == "4.465"
    assert ledger.loc["gain-macro-f1", "value"] == f"{mean(gains['macro_f1']):.3f}" == "4.618"
    per_cell = f"{mean(cell_gains['accuracy']):.2f} / {mean(cell_gains['macro_f1']):.2f}"
    assert ledger.loc["gain-per-cell", "value"] == per_cell == "3.91 / 4.23"


def test_best_or_tied_and_shortfall_by_hand(ledger: pd.DataFrame) -> None:
    cells = _cells(_rows("table3"))
    gaps = [v["tef"] - max(v[b] for b in BASELINES) for v in cells.values()]
    won = sum(g >= -1e-9 for g in gaps)
    assert ledger.loc["best-or-tied", "value"] == f"{won} of {len(cells)}" == "116 of 120"
    assert ledger.loc["max-shortfall", "value"] == f"{-min(gaps):.1f}" == "2.6"


def test_voting_against_direct_by_hand(ledger: pd.DataFrame) -> None:
    cells = _cells(_rows("table3")).values()
    mv = sum(v["majority_vote"] > v["direct"] + 1e-9 for v in cells)
    sv = sum(v["soft_vote"] > v["direct"] + 1e-9 for v in cells)
    tef = sum(v["tef"] > v["direct"] + 1e-9 for v in cells)
    assert ledger.loc["voting-vs-direct", "value"] == f"MV {mv}/120, SV {sv}/120 better"
    assert ledger.loc["overhead-pays", "value"] == f"TEF {tef}, SV {sv}, MV {mv} of 120"
    assert (mv, sv, tef) == (30, 40, 112)


def test_underline_cells_by_hand(ledger: pd.DataFrame) -> None:
    """A cell fits a convention when its underlined numbers are exactly its second-best numbers."""
    marks: dict[tuple[str, ...], list[tuple[float, str]]] = defaultdict(list)
    for r in _rows("table3"):
        marks[(r["model"], r["lang"], r["dimension"], r["metric"])].append((float(r["value"]), r["typeset"]))
    neither = 0
    for values in marks.values():
        underlined = sorted(v for v, m in values if m == "underline")
        top = max(v for v, _ in values)
        rest = sorted({v for v, _ in values if v < top})
        dense = sorted(v for v, _ in values if rest and v == rest[-1])
        n_top = sum(v == top for v, _ in values)
        competition = dense if n_top == 1 else []
        neither += underlined not in (dense, competition)
    assert ledger.loc["table3-underline", "value"] == f"{neither} cells fit neither" == "10 cells fit neither"


def test_ablation_drops_and_averages_by_hand(ledger: pd.DataFrame) -> None:
    rows = _rows("table4")
    v = {(r["model"], r["lang"], r["dimension"], r["method"], r["metric"]): float(r["value"]) for r in rows}
    key = ("deepseek-v3.2", "en", "Environment")
    d_ent = v[(*key, "tef", "accuracy")] - v[(*key, "tef_without_entropy", "accuracy")]
    d_lo = v[(*key, "tef", "accuracy")] - v[(*key, "tef_without_log_odds", "accuracy")]
    assert ledger.loc["ablation-drop", "value"] == f"{d_ent:.1f} / {d_lo:.1f}" == "22.9 / 23.8"
    dims = {r["dimension"] for r in rows} - {"Average"}
    printed = {k[:2] + k[3:]: x for k, x in v.items() if k[2] == "Average"}
    off = [abs(x - mean(v[(m, lang, d, meth, met)] for d in dims)) for (m, lang, meth, met), x in printed.items()]
    assert len(off) == 24 and max(off) <= 0.05 + 1e-9
    assert ledger.loc["table4-averages", "value"] == "24 of 24"


def test_table1_original_by_hand(ledger: pd.DataFrame) -> None:
    acc = defaultdict(lambda: defaultdict(list))
    for r in _rows("table3"):
        if r["metric"] == "accuracy":
            acc[r["model"]][r["method"]].append(float(r["value"]))
    t1 = {(r["model"], r["method"]): float(r["value"]) for r in _rows("table1") if r["prompt"] == "original"}
    diffs = []
    for model, by_method in acc.items():
        means = {m: mean(x) for m, x in by_method.items()}
        diffs += [abs(t1[(model, "tef")] - means["tef"]),
                  abs(t1[(model, "strongest_baseline")] - max(means[b] for b in BASELINES))]
    assert ledger.loc["table1-original", "value"] == f"10 numbers, max |Δ| {max(diffs):.3f}"
    assert max(diffs) <= 0.05


def test_efficiency_by_hand(ledger: pd.DataFrame) -> None:
    v = {(r["model"], r["method"], r["quantity"]): float(r["value"]) for r in _rows("table2")}
    dt = [v[(m, "tef", "ttft")] - v[(m, "voting", "ttft")] for m in ("qwen2.5-7b", "llama3-8b")]
    assert ledger.loc["ttft-two-ms", "value"] == " / ".join(f"{x:.1f} ms" for x in dt) == "1.4 ms / 2.1 ms"


def test_data_card_of_the_sample_by_hand(ledger: pd.DataFrame) -> None:
    counts = {}
    for lang in ("zh", "en"):
        with open(sample_dir() / f"mind_{lang}.jsonl", encoding="utf-8") as fh:
            records = [json.loads(line) for line in fh if line.strip()]
        counts[lang] = (len(records), sum(len(r["labels"]) for r in records),
                        {r["event"] for r in records})
    assert ledger.loc["mind-posts", "value"] == f"{counts['zh'][0]} zh / {counts['en'][0]} en" == "649 zh / 381 en"
    assert ledger.loc["release-labels", "value"] == f"{counts['zh'][1]:,} zh / {counts['en'][1]:,} en"
    assert all({"RU", "GPT"} <= events for _, _, events in counts.values())
    assert ledger.loc["mind-events", "verdict"] == "holds"
    # the sample cannot confirm counts of the full release: not checked, and it says why
    for cid in ("mind-posts", "release-labels", "release-pairs", "release-sentences", "mind-deduplicated"):
        assert ledger.loc[cid, "verdict"] == "not checked"
        assert "needs the full release" in ledger.loc[cid, "note"]


def test_k3_example_by_hand(ledger: pd.DataFrame) -> None:
    p = np.array([[0.05, 0.15, 0.80], [0.55, 0.40, 0.05]])
    one_vs_rest = np.log(p / (1 - p)).sum(axis=0)
    bayes = np.log(p).sum(axis=0)
    assert (int(one_vs_rest.argmax()), int(bayes.argmax())) == (2, 1)
    assert ledger.loc["k3-bayes", "value"] == "Eq. 3 picks c3, Bayes c2"
    assert ledger.loc["k3-bayes", "verdict"] == "does not hold"


# --------------------------------------------------------------------------------------------------
# checks that can fail
# --------------------------------------------------------------------------------------------------
def test_a_changed_table_fails_the_ledger() -> None:
    tables = _changed_tables("qwen2.5-7b", "zh", "Culture", 30.0)
    frame = claims.evaluate_ledger(tables=tables)
    failing = set(claims.failures(frame)["id"])
    assert {"gain-accuracy", "best-or-tied", "max-shortfall", "table4-tef-rows"} <= failing
    with pytest.raises(evidence.LedgerError, match="best-or-tied"):
        claims.assert_ledger(frame)


def test_a_check_that_raises_fails() -> None:
    tables = {k: v for k, v in paper.load_tables().items() if k != "table2"}
    frame = claims.evaluate_ledger(tables=tables).set_index("id")
    assert frame.loc["ttft-two-ms", "verdict"] == "FAILS"
    assert frame.loc["ttft-two-ms", "note"].startswith("KeyError")
    assert frame.loc["best-or-tied", "verdict"] == "holds"


def test_a_broken_library_fails_the_propositions(monkeypatch: pytest.MonkeyPatch) -> None:
    right = information.additive_log_odds
    monkeypatch.setattr(checks, "additive_log_odds", lambda p, doc, prior=0.5: right(p, doc))
    frame = claims.evaluate_ledger([c for c in claims.LEDGER if c.id.startswith("prop2")]).set_index("id")
    assert frame.loc["prop2", "verdict"] == "holds"
    assert frame.loc["prop2-prior", "verdict"] == "FAILS"


def test_full_release_counts_are_checked_when_present(monkeypatch: pytest.MonkeyPatch) -> None:
    ids = ("mind-posts", "release-labels", "release-pairs", "release-excluded")
    picked = [c for c in claims.LEDGER if c.id in ids]
    monkeypatch.setattr(evidence.Evidence, "dataset", property(lambda self: evidence.FULL))
    published = claims.evaluate_ledger(picked).set_index("id")
    assert (published["verdict"] == "FAILS").all()  # the sample's counts are not the published ones
    cards = evidence.Evidence().cards
    fake = {lang: dict(checks.FULL_RELEASE[lang]) | {k: cards[lang][k] for k in
                                                  ("posts", "labels", "pairs", "excluded_pairs")}
            for lang in ("zh", "en")}
    monkeypatch.setattr(checks, "FULL_RELEASE", fake)
    matching = claims.evaluate_ledger(picked).set_index("id")
    assert (matching["verdict"] == "holds").all()


def test_custom_data_leaves_the_data_card_unchecked(tmp_path: Path) -> None:
    for lang in ("zh", "en"):
        lines = (sample_dir() / f"mind_{lang}.jsonl").read_text(encoding="utf-8").splitlines()
        (tmp_path / f"mind_{lang}.jsonl").write_text("\n".join(lines[:40]) + "\n", encoding="utf-8")
    frame = claims.evaluate_ledger([c for c in claims.LEDGER if c.section == "data"], data_dir=tmp_path)
    assert frame.attrs["dataset"] == "custom data"
    checked = frame[frame["kind"] == evidence.KINDS["data"]]
    assert (checked["verdict"] == "not checked").all()
    assert checked["note"].str.startswith("the claim is about MIND").all()
    assert checked.set_index("id").loc["mind-posts", "value"] == "40 zh / 40 en"


# --------------------------------------------------------------------------------------------------
# display
# --------------------------------------------------------------------------------------------------
def test_text_fits_100_columns_and_groups_by_section(ledger: pd.DataFrame) -> None:
    text = claims.format_ledger(ledger.reset_index())
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100
    assert [line[3:] for line in lines if line.startswith("-- ")] == list(evidence.SECTIONS.values())
    n_reader = sum(c.whose == "reader" for c in claims.LEDGER)
    n_release = sum(c.whose == "release" for c in claims.LEDGER)
    assert n_release == 6 and all(c.where.startswith("not printed by the paper") for c in claims.LEDGER
                                  if c.whose == "release")
    assert lines[-4].startswith(f"{len(claims.LEDGER) - n_reader - n_release} claims of the paper:")
    assert lines[-4].endswith("0 fail")
    assert lines[-3].startswith(f"{n_release} counts of the release the paper does not print:")
    assert lines[-2].endswith("0 FAIL")
    assert lines[-2].startswith(f"{n_reader} reader's checks of its tables: 0 pass, {n_reader} fail")
    assert lines[-1] == f"0 of the {len(claims.LEDGER)} rows reproduced by our run"
    assert lines[0].startswith("The paper's claims per kind of evidence") and lines[2].startswith("evidence")
    assert [line.split("  ")[0] for line in lines[3:10]] == [*evidence.KINDS.values(), "all"]
    assert lines[9].split()[-1] == str(len(claims.LEDGER) - n_reader - n_release)  # the paper's claims only
    floors = next(line for line in lines if line.startswith("table3-floors"))
    underline = next(line for line in lines if line.startswith("table3-underline"))
    assert floors.endswith("reader's check: fails") and underline.endswith("does not hold")


def test_other_formats(ledger: pd.DataFrame) -> None:
    frame = ledger.reset_index()
    from io import StringIO

    back = pd.read_csv(StringIO(claims.format_ledger(frame, "csv")))
    assert list(back["id"]) == [c.id for c in claims.LEDGER]
    records = json.loads(claims.format_ledger(frame, "json"))
    assert records[0]["id"] == claims.LEDGER[0].id and records[0]["holds"] is True
    assert claims.format_ledger(frame, "markdown").startswith("| evidence")
    assert "| id " in claims.format_ledger(frame, "markdown")
    with pytest.raises(ValueError, match="unknown format"):
        claims.format_ledger(frame, "yaml")


def test_claims_and_reader_checks_are_counted_apart(ledger: pd.DataFrame) -> None:
    counts = claims.whose_counts(ledger.reset_index())
    reader = {c.id for c in claims.LEDGER if c.words.startswith("(a reader's check)")}
    assert reader == {"gain-per-cell", "table3-floors", "table3-noise", "table3-confusion", "table3-same-posteriors",
                      "table2-tokens"}
    assert set(ledger.index[ledger["whose"] == evidence.WHOSE["reader"]]) == reader
    assert int(counts.loc[evidence.WHOSE["reader"], "does not hold"]) == 6
    assert int(counts.loc[evidence.WHOSE["paper"], "does not hold"]) == 3  # tempering, k3-bayes, table3-underline
    assert int(counts.loc["all", "all"]) == len(claims.LEDGER)
    shown = ledger.reset_index().apply(claims.shown_verdict, axis=1)
    assert set(shown[ledger["whose"].to_numpy() == evidence.WHOSE["reader"]]) == {"reader's check: fails"}
    assert "does not hold" not in claims.ledger_html(ledger.loc[sorted(reader)].reset_index())
    # a reader's check states its premise, and a claim of the paper has none
    assert (ledger.loc[sorted(reader), "premise"].str.len() > 10).all()
    assert (ledger.loc[~ledger.index.isin(reader), "premise"] == "").all()
    with pytest.raises(ValueError, match="states its premise"):
        evidence.Claim("x", "method", "w", "(a reader's check) y", "—", "01_derivation", "formula")


def test_html_rows_are_anchored(ledger: pd.DataFrame) -> None:
    page = claims.ledger_html(ledger.reset_index())
    for cid in ledger.index:
        assert page.count(f'id="{claims.claim_anchor(cid)}"') == 1
    assert 'href="05_main_results.html"' in page
    for key in ("soft_vote", "majority_vote", "tef_without_entropy", "macro_f1", "True", "False"):  # reader labels
        assert key not in page.split("<tbody>", 1)[1], key
    assert "<script" not in page and "&lt;" not in claims.ledger_html(ledger.reset_index().head(1))
    link = claims.claim_link("ablation-drop", "22.9 <and> 23.8")
    assert link == '<a href="11_claims_ledger.html#claims-ablation-drop">22.9 &lt;and&gt; 23.8</a>'
    with pytest.raises(ValueError, match="no claim"):
        claims.claim_link("ablation-dropped")


# --------------------------------------------------------------------------------------------------
# tef claims
# --------------------------------------------------------------------------------------------------
def test_tef_claims_exit_zero(capfd: pytest.CaptureFixture[str]) -> None:
    """``tef claims`` hands over to ``python -m tefpaper`` (the book's distribution) in a subprocess."""
    assert cli.main(["claims"]) == 0
    out = capfd.readouterr().out
    assert "116 of 120" in out and "gain-accuracy" in out
    assert max(map(len, out.splitlines())) <= 100


def test_tef_claims_fails_on_a_changed_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a copy of the tables with one number changed, through --paper-dir
    for name in paper.TABLE_FILES.values():
        shutil.copy(paper.paper_dir() / name, tmp_path / name)
    t4 = pd.read_csv(tmp_path / paper.TABLE_FILES["table4"], dtype=str, keep_default_na=False)
    mask = (t4["model"] == "deepseek-v3.2") & (t4["lang"] == "en") & (t4["dimension"] == "Environment") & (
        t4["method"] == "tef_without_entropy") & (t4["metric"] == "accuracy")
    t4.loc[mask, "value"] = "61.4"
    t4.to_csv(tmp_path / paper.TABLE_FILES["table4"], index=False)
    assert tef_claims(["--paper-dir", str(tmp_path), "--format", "csv"]) == 1
    err = capsys.readouterr().err
    assert "ablation-drop" in err and "fail" in err
    # the same through a monkeypatched table loader
    changed = _changed_tables("llama3-8b", "zh", "Environment", 70.0)
    monkeypatch.setattr(paper, "load_tables", lambda data_dir=None: changed)
    assert tef_claims([]) == 1
    assert "max-shortfall" in capsys.readouterr().err


def test_tef_claims_prints_one_claim_in_full(capsys: pytest.CaptureFixture[str]) -> None:
    assert tef_claims(["table3-floors"]) == 0  # it does not hold, as recorded: no failure
    out = capsys.readouterr().out
    fields = [line.split()[0] for line in out.splitlines() if line[:1] != " "]
    assert fields == ["claim", "words", "paper", "stated", "evidence", "chapter", "ours", "check", "premise", "verdict"]
    assert "table3-floors (reader's check)" in out and "103 of 240 below" in out and "05_main_results" in out
    assert "the paper scored the release's pairs" in out
    assert out.rstrip().endswith("reader's check: fails") and max(map(len, out.splitlines())) <= 100
    assert tef_claims(["table3-flor"]) == 2
    assert capsys.readouterr().err.startswith("tef claims: error: no claim 'table3-flor' in the ledger; did you mean")


def test_tef_claims_one_failing_claim_exits_one(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    changed = _changed_tables("llama3-8b", "zh", "Environment", 70.0)
    monkeypatch.setattr(paper, "load_tables", lambda data_dir=None: changed)
    assert tef_claims(["max-shortfall"]) == 1
    out, err = capsys.readouterr()
    assert out.rstrip().endswith("FAILS") and "max-shortfall" in err
    assert tef_claims(["gain-per-cell"]) == 0  # another claim of the same changed tables is printed, not failed


def test_tef_claims_without_the_tables_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert tef_claims(["--paper-dir", str(tmp_path / "nowhere")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"tef claims: error: table file not found: {tmp_path / 'nowhere' / paper.TABLE_FILES['table1']}\n"


def test_tef_claims_bad_format_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        tef_claims(["--format", "yaml"])
    assert stop.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_tef_claims_without_a_language_file_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(sample_dir() / "mind_en.jsonl", tmp_path / "mind_en.jsonl")
    # the data asked for by --data-dir cannot all be read: one line, exit 2 (without --data-dir only a warning)
    assert tef_claims(["--data-dir", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert err == f"tef claims: error: --data-dir {tmp_path}: no mind_zh.jsonl in {tmp_path}\n"
    frame = claims.evaluate_ledger(data_dir=tmp_path).set_index("id")
    data_rows = frame[frame["kind"] == evidence.KINDS["data"]]
    assert (data_rows["verdict"] == "not checked").all()
    assert data_rows["note"].str.contains("no mind_zh.jsonl").all()
