"""Bad input never becomes a wrong number: a malformed text or data file is refused in one line that names the
file and its row or line, a text has a bounded length, and the work of `tef extract --limit` is bounded too."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tefcore.cli import main
from tefcore.evaluate import AVERAGE
from tefcore.mind.load import MindFormatError, read_mind_file
from tefcore.tasks.load import MAX_TEXT_CHARS, RESERVED_DIMENSIONS

TASK = """name: study
data: {data}
language: en
dimensions:
  Housing:
    sides:
      supply: Build more homes; relax zoning.
      preservation: Protect neighbourhoods from densification.
"""


def task_folder(tmp: Path, data: str, content: bytes | str, task: str = TASK) -> Path:
    """A task named ``study`` in ``tmp/study`` whose data file ``data`` holds ``content``."""
    folder = tmp / "study"
    folder.mkdir(exist_ok=True)
    raw = content.encode("utf-8") if isinstance(content, str) else content
    (folder / data).write_bytes(raw)
    (folder / "task.yaml").write_text(task.format(data=data), encoding="utf-8")
    return folder / "task.yaml"


def validate(task: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["validate", str(task)])
    out, err = capsys.readouterr()
    return code, err


def jsonl(*texts: object) -> str:
    return "".join(json.dumps({"id": f"p{i}", "text": t}) + "\n" for i, t in enumerate(texts, start=1))


# --- CSV rows with a field too many ------------------------------------------------------------------
def test_a_csv_whose_rows_hold_an_unquoted_comma_is_refused_not_read_shifted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # every row has one field more than the header: pandas made the ids the index and the texts the ids
    monkeypatch.chdir(tmp_path)
    task = task_folder(tmp_path, "posts.csv", "id,text\np1,Build homes, now.\np2,Keep the old streets, please.\n")
    code, err = validate(task, capsys)
    assert code == 1 and "Traceback" not in err
    assert err.splitlines() == [
        "tef: error: study/posts.csv, row 1: 3 fields where the header has 2 (quote a field that holds a comma)",
        "tef: error: study/posts.csv, row 2: 3 fields where the header has 2 (quote a field that holds a comma)"]


def test_a_csv_row_with_a_field_too_few_is_refused_and_quoted_commas_are_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    task = task_folder(tmp_path, "posts.csv", 'id,text,Housing\np1,"Build homes, now.",supply\np2\n')
    code, err = validate(task, capsys)
    assert code == 1 and err == ("tef: error: study/posts.csv, row 2: 1 fields where the header has 3 "
                                 "(quote a field that holds a comma)\n")
    task = task_folder(tmp_path, "posts.csv", 'id,text,Housing\np1,"Build homes, now.",supply\n\np2,"Stop.",\n')
    code, err = validate(task, capsys)
    assert code == 0 and err == ""


# --- texts that are not strings ---------------------------------------------------------------------
@pytest.mark.parametrize(("value", "kind"), [(42, "a number (42)"), (1.5, "a number (1.5)"), (True, "true or false"),
                                             (["Build", "homes"], "a list"), ({"a": "b"}, "an object")],
                         ids=["int", "float", "bool", "list", "object"])
def test_a_json_lines_text_that_is_not_a_string_is_refused(
        value: object, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    task = task_folder(tmp_path, "posts.jsonl", jsonl("Build more homes.", value))
    code, err = validate(task, capsys)
    assert code == 1 and err == f"tef: error: study/posts.jsonl, line 2, column 'text': the text is {kind}, not a string\n"


@pytest.mark.parametrize(("column", "kind"), [([b"Build more homes.", b"Keep the streets."], "binary data"),
                                              ([["Build", "homes"], ["Keep"]], "a list"), ([1.5, 2.5], "a number (1.5)")],
                         ids=["binary", "list", "float"])
def test_a_parquet_text_that_is_not_a_string_is_refused(
        column: list[object], kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    task = task_folder(tmp_path, "posts.parquet", b"")
    pd.DataFrame({"id": ["p1", "p2"], "text": column}).to_parquet(task.parent / "posts.parquet")
    code, err = validate(task, capsys)
    assert code == 1 and err.splitlines()[0] == (
        f"tef: error: study/posts.parquet, row 1, column 'text': the text is {kind}, not a string")


# --- a lone surrogate, an overlong text, a reserved dimension ------------------------------------------
def test_a_lone_surrogate_in_a_json_lines_text_is_refused_naming_the_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    content = jsonl("Build more homes.") + '{"id": "p2", "text": "Keep \\ud800 the streets."}\n'
    task = task_folder(tmp_path, "posts.jsonl", content)
    code, err = validate(task, capsys)
    assert code == 1 and err == ("tef: error: study/posts.jsonl, line 2, column 'text': the text holds a lone "
                                 "surrogate (not valid Unicode)\n")
    code = main(["extract", "--task", "study/task.yaml", "--model", "e5-zeroshot", "--out", "out"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and "line 2, column 'text'" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("data", ["posts.jsonl", "posts.csv"])
def test_a_text_longer_than_the_bound_is_refused_naming_the_row(
        data: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    long = "Build more homes. " * (MAX_TEXT_CHARS // 18 + 1)
    content = jsonl("Short.", long) if data.endswith("jsonl") else f"id,text\np1,Short.\np2,{long}\n"
    task = task_folder(tmp_path, data, content)
    code, err = validate(task, capsys)
    where = "line 2" if data.endswith("jsonl") else "row 2"
    assert code == 1 and err == (f"tef: error: study/{data}, {where}, column 'text': a text of {len(long):,} "
                                 f"characters; the bound is 200,000 (split it into several rows)\n")
    exact = "x" * MAX_TEXT_CHARS  # the bound itself is allowed
    task = task_folder(tmp_path, data, jsonl(exact) if data.endswith("jsonl") else f"id,text\np1,{exact}\n")
    assert validate(task, capsys)[0] == 0


def test_a_mind_post_longer_than_the_bound_is_refused_naming_the_line(tmp_path: Path) -> None:
    record = {"id": "en-single-1", "lang": "en", "event": "COL", "text": "x" * (MAX_TEXT_CHARS + 1),
              "labels": [{"dimension": "Economy", "subcategory": "Economic Models", "orientation": "Interventionist",
                          "side": "stability"}]}
    path = tmp_path / "mind_en.jsonl"
    short = dict(record, id="en-single-0", text="A short post.")
    path.write_text(json.dumps(short) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(MindFormatError) as bad:
        read_mind_file(path)
    assert bad.value.line == 2 and str(bad.value) == (
        f"{path}:2: record: field 'text' holds 200,001 characters; the bound is 200,000 "
        "(tefcore.tasks.load.MAX_TEXT_CHARS)")


def test_a_dimension_named_like_the_average_row_is_refused_at_validation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert AVERAGE in RESERVED_DIMENSIONS
    monkeypatch.chdir(tmp_path)
    task = task_folder(tmp_path, "posts.csv", "id,text\np1,Build more homes.\n",
                       TASK.replace("  Housing:", "  Average:"))
    code, err = validate(task, capsys)
    assert code == 1 and err == ("tef: error: study/task.yaml: dimension 'Average' is a reserved name (`tef evaluate` "
                                 "gives the mean over the dimensions that row); rename it\n")


# --- inside a cache -----------------------------------------------------------------------------------
CACHE = Path(__file__).resolve().parents[1] / "data" / "caches" / "e5-zeroshot" / "original" / "en.jsonl"


def damaged_cache(tmp: Path, edit: object = None, header: object = None) -> Path:
    """The header and first two pairs of a committed cache, ``edit(record)`` applied to the second pair
    (line 3) and ``header(provenance)`` to the header's provenance (its provenance_id left as it was)."""
    with CACHE.open(encoding="utf-8") as handle:
        records = [json.loads(next(handle)) for _ in range(3)]
    if edit is not None:
        edit(records[2])
    if header is not None:
        header(records[0]["provenance"])
    path = tmp / "en.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def evaluate(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["evaluate", "--cache", str(path)])
    return code, capsys.readouterr().err


BAD_RECORDS = {
    "gold side banana": (lambda r: r.update(side="banana"),
                         "gold side \"banana\" is not a side of 'Economy' (change, stability)"),
    "post_id null": (lambda r: r.update(post_id=None), "field 'post_id' is null, not a non-empty string"),
    "direct abc": (lambda r: r.update(direct="abc"), "field 'direct' holds \"abc\", not a number or null"),
    "sentence abc": (lambda r: r["sentences"].__setitem__(0, "abc"),
                     "field 'sentences' holds \"abc\", not a number or null"),
    "mass true": (lambda r: r.update(direct_mass=True), "field 'direct_mass' holds true, not a number or null"),
    "direct_probs alone": (lambda r: r.update(direct_probs=[0.5, 0.3, 0.2]),
                           "record has 'direct_probs' without 'sentence_probs'"),
}


@pytest.mark.parametrize("case", sorted(BAD_RECORDS), ids=str)
def test_a_bad_value_inside_a_cache_record_is_one_line_naming_file_and_line(
        case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit, message = BAD_RECORDS[case]
    path = damaged_cache(tmp_path, edit)
    code, err = evaluate(path, capsys)
    assert code != 0 and err == f"tef: error: {path}, line 3: {message}\n"


@pytest.mark.parametrize("field", ["judge", "temperature"])
def test_an_edited_header_is_refused_by_evaluate_and_by_a_resume(
        field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tefcore.extraction.cache import CacheError, CacheWriter

    path = damaged_cache(tmp_path, header=lambda prov: prov.update({field: "gpt-4o-mini" if field == "judge" else 9.9}))
    code, err = evaluate(path, capsys)
    expected = (f"{path}, line 1: the header's provenance is not the one its provenance_id was made from (edited "
                "after the run?); its records cannot be told apart from another run's: extract again into another --out")
    assert code != 0 and err == f"tef: error: {expected}\n"
    edited = json.loads(path.read_text(encoding="utf-8").splitlines()[0])["provenance"]
    with pytest.raises(CacheError) as bad:  # a run whose provenance is the edited one: never "differs in: " alone
        CacheWriter(path, edited)
    assert str(bad.value) == expected


# --- bounded work ---------------------------------------------------------------------------------------
def test_the_e5_embedder_sends_bounded_batches_to_the_engine() -> None:
    from tefcore.judges.e5_engine import BATCH_CHARS, E5Embedder

    calls: list[list[str]] = []

    class Engine:
        def query(self, texts: list[str]) -> list[list[float]]:
            calls.append(list(texts))
            return [[1.0] * 384 for _ in texts]

    embedder = E5Embedder(batch_size=64)
    embedder._model = Engine()
    texts = [f"{i} " + "x" * (MAX_TEXT_CHARS - 10) for i in range(3)] + [f"short {i}." for i in range(100)]
    assert embedder.embed(texts).shape == (103, 384)
    assert sorted(map(len, calls)) == [1, 1, 1, 36, 64]  # each long text alone: one engine call holds it at most
    assert all(len(c) == 1 or sum(map(len, c)) <= BATCH_CHARS for c in calls)


@pytest.mark.slow
def test_extract_with_a_limit_on_a_100k_row_task_writes_its_first_record_within_a_minute_in_bounded_memory(
        tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    rows = 100_000
    text = "Rents keep rising in the city. We should build more homes near the station. " * 6  # ~460 characters
    lines = "".join(f'p{i},"{i} {text}"\n' for i in range(rows))
    task = task_folder(tmp_path, "posts.csv", "id,text\n" + lines)
    assert (task.parent / "posts.csv").stat().st_size > 45e6
    out = tmp_path / "out"
    cache = out / "e5-zeroshot" / "original" / "en.jsonl"
    command = ["/usr/bin/time", "-v", sys.executable, "-m", "tefcore.cli", "extract", "--task", str(task),
               "--model", "e5-zeroshot", "--limit", "10", "--out", str(out), "--no-progress"]
    started = time.monotonic()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as run:
        first = None
        while first is None and time.monotonic() - started < 60 and run.poll() is None:
            if cache.is_file() and len(cache.read_bytes().splitlines()) >= 2:
                first = time.monotonic() - started
            time.sleep(0.5)
        if first is None and run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)  # time and the extraction under it
        _, err = run.communicate(timeout=600)
    first = first if first is not None else time.monotonic() - started  # a run that ended between two looks
    assert first < 60 and run.returncode == 0, err[-2000:]
    assert len(cache.read_text(encoding="utf-8").splitlines()) == 11
    peak_kb = int(next(line for line in err.splitlines() if "Maximum resident set size" in line).split()[-1])
    print(f"first record after {first:.1f} s; peak memory {peak_kb / 1024:.0f} MB")
    assert peak_kb < 2 * 1024 * 1024, f"peak memory {peak_kb / 1024:.0f} MB"


# --- partial caches and stale gold -----------------------------------------------------------------------
def test_an_interrupted_cache_is_evaluated_with_one_line_saying_it_is_partial(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from test_extract import FakeJudge, make_pairs

    from tefcore.extraction.run import run_extraction

    out = tmp_path / "en.jsonl"
    run_extraction(FakeJudge(), make_pairs(), out, variant="original", limit=4, progress=False)
    code = main(["evaluate", "--cache", str(out)])
    err = capsys.readouterr().err
    assert code == 0 and err.splitlines()[0] == (
        f"tef: warning: {out} holds 4 of its data's 6 pairs (an extraction that stopped, or ran with --limit); "
        "its `tef extract` again finishes it")
    run_extraction(FakeJudge(), make_pairs(), out, variant="original", progress=False)
    assert main(["evaluate", "--cache", str(out)]) == 0 and "holds" not in capsys.readouterr().err


def test_a_resume_whose_data_s_gold_differs_from_the_cache_s_says_so_in_one_line(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import dataclasses
    import logging

    from test_extract import FakeJudge, make_pairs

    from tefcore.extraction.run import run_extraction

    out = tmp_path / "en.jsonl"
    pairs = make_pairs()
    run_extraction(FakeJudge(), pairs, out, variant="original", progress=False)
    corrected = [dataclasses.replace(pairs[0], side="change"), *pairs[1:]]
    assert pairs[0].side == "stability"
    with caplog.at_level(logging.WARNING):
        report = run_extraction(FakeJudge(), corrected, out, variant="original", progress=False)
    assert report.pairs_written == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [f"{out}: the data's gold side differs from the cache's on 1 pair(s) (first: post "
                        f"'{pairs[0].post_id}', {pairs[0].dimension}: 'stability' in the cache, 'change' in the "
                        "data); tef evaluate with --task (a task) or --data-dir (MIND) scores the data's"]
