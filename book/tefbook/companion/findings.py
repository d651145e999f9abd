"""What the book found, as the front page opens with it: one Markdown table computed when the book is built.

Four questions, each answered by the same functions the chapters call, on the same data, so that the front
page and the chapters cannot disagree:

* TEF against the strongest baseline on the CPU judges (chapter 5: :func:`tefbook.companion.results.versus_best_baseline`
  on the committed caches), and in how many judge-language cells the difference lies beyond the noise;
* the claims ledger's counts, the paper's claims apart from a reader's checks (chapter 11);
* what a reviewer's reading of the paper's tables finds (chapters 5 and 8: :mod:`tefpaper.review`), and the
  premise each finding rests on;
* what only a GPU run can settle (the ledger's GPU rows).

The Sphinx extension ``book/_ext/tef_findings.py`` puts :func:`findings_markdown` on the front page.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tefpaper import review
from tefpaper import tables as paper
from tefpaper.evidence import HOLDS, KINDS, NOT_CHECKED, NOT_HOLD, WHOSE
from tefpaper.ledger import evaluate_ledger, whose_counts

#: The CPU judges of chapter 5, as its parameters cell names them.
CPU_JUDGES: tuple[str, ...] = ("e5-crossfit", "e5-zeroshot", "local")
_CHAPTER = "../notebooks/{}.html"  # the front page lives in book/, the chapters in notebooks/


def cpu_versus(cache_dir: str | Path = "data/caches", models: Sequence[str] = CPU_JUDGES, n_boot: int = 1000,
               seed: int = 0) -> pd.DataFrame:
    """Chapter 5's comparison of TEF with the strongest baseline (accuracy, original prompt, both languages),
    with a ``verdict`` column: ``"TEF ahead"``, ``"baseline ahead"`` or ``"within noise"`` (the paired
    bootstrap's 95 % interval of the difference of Averages against zero)."""
    from tefbook.companion.results import predict_runs, versus_best_baseline
    from tefbook.companion.runs import chapter_runs

    runs = chapter_runs(list(models), "original", ["zh", "en"], cache_dir)
    pred = predict_runs(runs, rules=["direct", "majority_vote", "soft_vote", "tef"], invalid="drop")
    vs = versus_best_baseline(pred, metrics_=("accuracy",), n_boot=n_boot, random_state=seed)
    return vs.assign(verdict=np.select([vs["low"] > 0, vs["high"] < 0], ["TEF ahead", "baseline ahead"],
                                       "within noise"))


def _link(stem: str, text: str) -> str:
    """A link to a chapter's page as raw HTML, as the introduction writes them (a partial build leaves some out)."""
    return f'<a href="{_CHAPTER.format(stem)}">{text}</a>'


def _cpu_row(vs: pd.DataFrame) -> tuple[str, str, str]:
    counts = vs["verdict"].value_counts()
    found = (f"TEF minus the strongest baseline: {vs['difference'].min():+.1f} to {vs['difference'].max():+.1f} "
             f"accuracy points over {len(vs)} judge-language cells; TEF ahead beyond the noise in "
             f"{counts.get('TEF ahead', 0)}, behind in {counts.get('baseline ahead', 0)}, within the noise in "
             f"{counts.get('within noise', 0)}")
    return (f"TEF against the strongest baseline, CPU judges ({_link('05_main_results', 'ch. 5')})", found,
            "none: our judges on the embedded MIND sample; a statement about these judges, not the paper's")


def _ledger_row(ledger: pd.DataFrame) -> tuple[str, str, str]:
    whose = whose_counts(ledger)
    paper_row, reader_row = whose.loc[WHOSE["paper"]], whose.loc[WHOSE["reader"]]
    holds = ledger[(ledger["verdict"] == HOLDS)]["kind"].value_counts()
    found = (f"{paper_row['all']} claims of the paper: {paper_row[HOLDS]} hold, {paper_row[NOT_HOLD]} do not, "
             f"{paper_row[NOT_CHECKED]} not checked here; {reader_row['all']} reader's checks of its tables: "
             f"{reader_row[HOLDS]} pass, {reader_row[NOT_HOLD]} do not. What holds is arithmetic on the paper's "
             f"tables ({holds.get(KINDS['tables'], 0)}), formula and simulation checks "
             f"({holds.get(KINDS['formula'], 0)}) and counts of the MIND files ({holds.get(KINDS['data'], 0)}); "
             f"{int((ledger['kind'] == KINDS['run']).sum())} rows rest on a run of the paper's models")
    return (f"The claims ledger ({_link('11_claims_ledger', 'ch. 11')})", found,
            "the paper's printed tables and formulas; no LLM output")


def _review_rows() -> list[tuple[str, str, str]]:
    t3 = paper.load_table("table3")
    confusion, floors, noise = review.confusion_check(t3), review.floors(t3), review.noise(t3)
    misfit, no_k = int((~confusion["consistent"]).sum()), int(confusion["reachable"].isna().sum())
    premise = (f"the paper scored the release's pairs, which the paper does not print; {misfit} of its "
               f"{len(confusion)} (accuracy, macro-F1) pairs fit no confusion matrix on those counts and {no_k} "
               "accuracies are no fraction k/n, so the premise is in doubt")
    return [
        (f"Table 3 against its majority-class floors ({_link('05_main_results', 'ch. 5')})",
         f"if the premise holds, {int(floors['below'].sum())} of {len(floors)} printed accuracies lie below the "
         f"floor of their cell, {int(floors.loc[floors['method'] == 'tef', 'below'].sum())} of them TEF's", premise),
        (f"Table 3: TEF's wins and the sampling noise ({_link('05_main_results', 'ch. 5')})",
         f"TEF ahead of the strongest baseline in {int(noise['win'].sum())} of {len(noise)} accuracy cells "
         f"(no premise); if the premise holds, {int(noise['inside'].sum())} of these wins lie inside the noise of "
         "TEF's accuracy",
         "the wins: none; the noise: the same premise"),
    ]


def _gpu_row(ledger: pd.DataFrame) -> tuple[str, str, str]:
    gpu = ledger[ledger["kind"] == KINDS["gpu"]]
    cannot = int((ledger["kind"] == KINDS["cannot"]).sum())
    return ("What only a GPU run can settle",
            f"{len(gpu)} ledger rows: the accuracies of Qwen2.5-7B, LLaMA3-8B and Qwen3-14B (Table 3), the reading of the answer token, the "
            f"ablation of Qwen2.5-7B (Table 4), the three prompts (Table 1), the efficiency on GPUs "
            f"(Table 2) and the calibration figure; each chapter prints its `tef reproduce` command. {cannot} "
            "more rows cannot be checked from the release (the API models may have changed, the data's "
            "collection is not in it)",
            "a GPU with vLLM and the full MIND release, reading the answer token as the reference release does")


def findings_frame(cache_dir: str | Path = "data/caches") -> pd.DataFrame:
    """The front page's findings: one row per question, columns ``question``, ``found`` and ``premise``;
    ``frame.attrs["summary"]`` says them in one paragraph."""
    ledger, vs = evaluate_ledger(), cpu_versus(cache_dir)
    rows = [_cpu_row(vs), _ledger_row(ledger), *_review_rows(), _gpu_row(ledger)]
    frame = pd.DataFrame(rows, columns=["question", "found", "premise"])
    ahead, paper_claims = int((vs["verdict"] == "TEF ahead").sum()), ledger[ledger["whose"] == WHOSE["paper"]]
    frame.attrs["summary"] = (
        f"In short: on the judges that run on a CPU, TEF is ahead of the strongest baseline beyond the noise in "
        f"{ahead} of {len(vs)} cells. None of the {int((paper_claims['verdict'] == HOLDS).sum())} claims of the paper "
        "that hold rests on a run of its LLMs: they are its arithmetic, its formulas and its data card. The reviewer's readings of Table 3 hold only if the paper "
        "scored the pairs its release holds, which its own numbers put in doubt. The paper's accuracies "
        "themselves wait for a GPU run." if not (ledger["kind"] == KINDS["run"]).any() else
        f"In short: on the judges that run on a CPU, TEF is ahead of the strongest baseline beyond the noise in "
        f"{ahead} of {len(vs)} cells; the ledger's rows reproduced by a run of the paper's models say how its "
        "LLM results fare.")
    return frame


def findings_markdown(cache_dir: str | Path = "data/caches") -> str:
    """:func:`findings_frame` as a Markdown table (``|`` in a cell escaped) and its summary, for the front page."""
    frame = findings_frame(cache_dir)
    lines = ["| What was asked | What the book found | On what premise |", "| --- | --- | --- |"]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |"
              for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n\n" + frame.attrs["summary"]
