"""``tef evaluate`` scores the gold the data give now, not the copy a cache stored at extraction: a label
corrected afterwards is said in one line, and the scores follow it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from tefcore.cli import main
from tefcore.judges.base import ScoreRequest

TASK = """name: tone
data: posts.csv
language: en
dimensions:
  Tone:
    sides:
      calm: A calm, even voice.
      angry: An angry, raised voice.
"""


class FirstSideJudge:
    """Gives every text the first side (calm), so that accuracy is the share of calm gold."""

    name = "first-side"
    reading = "summed"

    def provenance(self) -> dict[str, str]:
        return {"backend": "first-side", "model": "first-side"}

    def prepare(self, pairs: object, **options: object) -> None:
        pass

    def score(self, requests: Sequence[ScoreRequest]) -> list:
        from tefcore.judges.e5 import embedding_score

        return [embedding_score(0.8) for _ in requests]


def _write_data(folder: Path, gold: Sequence[str]) -> None:
    rows = ["id,text,Tone"] + [f'p{i},"Post {i}: we should talk about it. Then decide.",{g}' for i, g in enumerate(gold)]
    (folder / "posts.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def _accuracy(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[float, str]:
    assert main([*argv, "--rules", "direct", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    row = next(r for r in json.loads(out) if r["dimension"] == "Tone")
    return row["accuracy"], err


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    import tefcore.judges

    monkeypatch.setattr(tefcore.judges, "make_backend", lambda *spec_and_options: FirstSideJudge())
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / "task.yaml").write_text(TASK, encoding="utf-8")
    _write_data(folder, ["calm"] * 4 + ["angry"] * 6)
    out = tmp_path / "caches"
    assert main(["extract", "--task", str(folder / "task.yaml"), "--model", "e5-zeroshot", "--out", str(out),
                 "--no-progress"]) == 0
    capsys.readouterr()
    (path,) = out.rglob("*.jsonl")
    return path


def test_a_gold_label_corrected_after_extraction_is_said_in_one_line_and_scored(
        cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = tmp_path / "study" / "task.yaml"
    stored, err = _accuracy(["evaluate", "--cache", str(cache), "--task", str(task)], capsys)
    assert stored == pytest.approx(40.0) and "gold side" not in err  # the data agree with the cache
    _write_data(tmp_path / "study", ["calm"] * 6 + ["angry"] * 4)  # p4, p5 corrected to calm
    corrected, err = _accuracy(["evaluate", "--cache", str(cache), "--task", str(task)], capsys)
    (line,) = [x for x in err.splitlines() if "gold side" in x]
    assert "2 of 10 pairs" in line and "'p4', Tone: 'angry' in the cache, 'calm' in the data" in line
    assert line.endswith("scored against the data's") and corrected == pytest.approx(60.0)
    without, err = _accuracy(["evaluate", "--cache", str(cache)], capsys)  # no data named: the stored gold
    assert without == pytest.approx(40.0) and "gold side" not in err


def test_a_label_removed_from_the_data_leaves_its_pair_out_and_another_task_is_refused(
        cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = tmp_path / "study" / "task.yaml"
    _write_data(tmp_path / "study", ["calm"] * 4 + ["angry"] * 5 + [""])  # p9 no longer labelled
    assert main(["evaluate", "--cache", str(cache), "--task", str(task), "--rules", "direct", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert "1 of 10 pairs" in err and "None in the data" in err
    assert {r["n"] for r in json.loads(out)} == {9}
    other = tmp_path / "other"
    other.mkdir()
    (other / "task.yaml").write_text(TASK.replace("name: tone", "name: mood"), encoding="utf-8")
    _write_data(other, ["calm"] * 10)
    assert main(["evaluate", "--cache", str(cache), "--task", str(other / "task.yaml")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "is a cache of task 'tone'" in line and "not of task 'mood'" in line


def test_a_mind_cache_is_scored_against_the_gold_of_its_data_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from test_extract import FakeJudge

    from tefcore.extraction.run import run_extraction
    from tefcore.mind.load import DATA_DIR_ENV, evaluation_pairs, load_posts, resolve_data_dir

    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    pairs = evaluation_pairs(load_posts("en"))[:8]
    cache = tmp_path / "en.jsonl"
    run_extraction(FakeJudge(), pairs, cache, variant="original", progress=False)
    first = pairs[0]
    other = {"change": "stability", "stability": "change"}[first.side]
    lines = (resolve_data_dir(None) / "mind_en.jsonl").read_text(encoding="utf-8").splitlines()
    posts = [json.loads(x) for x in lines if x.strip()]
    swap = next(x for q in posts for x in q["labels"] if x["dimension"] == first.dimension and x["side"] == other)
    for post in posts:
        if post["id"] == first.post_id:  # a corrected label: an orientation of the other side
            post["labels"] = [dict(swap) if x["dimension"] == first.dimension else x for x in post["labels"]]
    corrected = tmp_path / "mind"
    corrected.mkdir()
    (corrected / "mind_en.jsonl").write_text("\n".join(json.dumps(p, ensure_ascii=False) for p in posts) + "\n",
                                             encoding="utf-8")
    assert main(["evaluate", "--cache", str(cache)]) == 0  # the embedded sample agrees with the cache
    assert "gold side" not in capsys.readouterr().err
    for argv, env in ((["--data-dir", str(corrected)], None), ([], str(corrected))):
        if env:
            monkeypatch.setenv(DATA_DIR_ENV, env)
        assert main(["evaluate", "--cache", str(cache), *argv]) == 0
        (line,) = [x for x in capsys.readouterr().err.splitlines() if "gold side" in x]
        assert "1 of 8 pairs" in line and f"{first.post_id!r}, {first.dimension}: {first.side!r} in the cache" in line
