"""The ledger closes the loop for a GPU user: with caches of a paper model at hand (as `tef reproduce` writes
them), the rows about that model's results are checked on them, name the run from its provenance and count
as "reproduced by our run".

No paper model runs here. The caches of these tests are a fixture labelled as what it is: the committed
probabilities of the cross-fitted e5 judge on the MIND sample, under a header that says so, placed where a
Qwen2.5-7B run would write its caches.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tefcore.extraction.cache import cache_path, provenance_id
from tefpaper.__main__ import main as tef_claims
from tefpaper.evidence import KINDS
from tefpaper.ledger import LEDGER, evaluate_ledger, reproduce_line, summary_counts
from tefpaper.runs import load_run, run_label

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_MODEL = "test fixture: e5-small cross-fit probabilities of the MIND sample, not Qwen2.5-7B"
QWEN_ROWS = ("table3-qwen2.5-7b", "table4-qwen2.5-7b", "calibration-tef", "calibration-baselines")


def _fixture(cache_dir: Path, model: str = "qwen2.5-7b", prompt: str = "original", reading: str = "summed") -> Path:
    """Write the fixture caches under ``cache_dir/<model>/<prompt>/`` as ``reading`` names them; return ``cache_dir``."""
    for lang in ("en", "zh"):
        lines = (ROOT / "data" / "caches" / "e5-crossfit" / "original" / f"{lang}.jsonl").read_text(
            encoding="utf-8").splitlines()
        provenance = {"backend": "test-fixture", "model": FIXTURE_MODEL, "engine": "none (a test fixture)",
                      "hardware": {"class": "none (a test fixture)"}, "lang": lang}
        pid = provenance_id(provenance)
        records = [{"type": "header", "provenance": provenance, "provenance_id": pid},
                   *({**json.loads(line), "provenance_id": pid} for line in lines[1:] if line.strip())]
        out = cache_path(cache_dir, model, prompt, lang, reading=reading)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    return cache_dir


@pytest.fixture(scope="module")
def flipped(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    return evaluate_ledger(cache_dir=_fixture(tmp_path_factory.mktemp("caches"))).set_index("id")


@pytest.fixture(scope="module")
def plain() -> pd.DataFrame:
    return evaluate_ledger().set_index("id")


def test_without_caches_the_rows_give_the_command(plain: pd.DataFrame) -> None:
    rows = plain.loc[list(QWEN_ROWS)]
    assert (rows["verdict"] == "not checked").all()
    assert (rows["kind"] == KINDS["gpu"]).all()
    assert rows["note"].str.contains("tef reproduce qwen2.5-7b").all()
    assert int(summary_counts(plain.reset_index()).loc[KINDS["run"], "all"]) == 0


def test_with_caches_the_rows_are_checked_on_them_and_name_the_run(flipped: pd.DataFrame) -> None:
    rows = flipped.loc[list(QWEN_ROWS)]
    assert (rows["kind"] == KINDS["run"]).all()
    assert (rows["verdict"] != "not checked").all()
    assert rows["note"].str.contains(FIXTURE_MODEL, regex=False).all()  # labelled as what it is
    assert rows["note"].str.contains("not the full release").all()
    # an e5 judge on the sample is not Qwen2.5-7B on the release: its numbers miss the paper's
    assert flipped.loc["table3-qwen2.5-7b", "verdict"] == "does not hold"
    counts = summary_counts(flipped.reset_index())
    assert int(counts.loc[KINDS["run"], "all"]) == len(QWEN_ROWS)
    # the other models' rows stay as they were
    assert flipped.loc["table3-llama3-8b", "kind"] == KINDS["gpu"]
    assert flipped.loc["table3-llama3-8b", "verdict"] == "not checked"


def test_the_run_is_scored_like_the_paper(tmp_path: Path) -> None:
    run = load_run(_fixture(tmp_path), "qwen2.5-7b")
    assert run is not None and run.label.startswith(FIXTURE_MODEL)
    scores = run.scores()
    assert set(scores["method"]) >= {"direct", "majority_vote", "soft_vote", "tef"}
    assert len(scores[scores["method"] == "tef"]) == 12  # 2 languages x 6 dimensions
    assert load_run(tmp_path, "llama3-8b") is None


def test_the_run_the_ledger_asks_for_is_found(tmp_path: Path) -> None:
    """``reproduce_line`` asks for the reference reading, which writes ``<lang>.reading-reference.jsonl``."""
    assert "--reading reference" in reproduce_line("qwen2.5-7b")
    run = load_run(_fixture(tmp_path, reading="reference"), "qwen2.5-7b")
    assert run is not None and len(run.frame) > 0
    _fixture(tmp_path / "one", reading="reference")
    (tmp_path / "one" / "qwen2.5-7b" / "original" / "zh.reading-reference.jsonl").unlink()
    assert load_run(tmp_path / "one", "qwen2.5-7b") is None  # one language alone is no run
    assert load_run(_fixture(tmp_path / "one"), "qwen2.5-7b") is not None  # the summed reading of both


def test_run_label_reads_the_provenance() -> None:
    label = run_label({"model": "Qwen/Qwen2.5-7B-Instruct", "vllm": "0.8.5", "hardware": {"class": "GPU",
                       "device": "NVIDIA A100"}}, {"zh": 10330, "en": 4621})
    assert label == "Qwen/Qwen2.5-7B-Instruct, vLLM 0.8.5, GPU, NVIDIA A100, full MIND release"


def test_tef_claims_reads_the_caches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fixture(tmp_path)
    code = tef_claims(["--cache-dir", str(tmp_path), "--format", "csv"])
    frame = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out)).set_index("id")
    assert frame.loc["table3-qwen2.5-7b", "kind"] == KINDS["run"]
    assert code == 0  # a row checked on a run holds or does not; it has no recorded verdict to fail
    assert frame.loc["table3-qwen2.5-7b", "verdict"] == "does not hold"
    assert len(frame) == len(LEDGER)
