"""The ``tef`` command line: one-line errors with exit code 2, Ctrl-C with 130, every subcommand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import tefcore.cli as cli
import tefcore.judges
from tefcore.extraction.run import ExtractionInterrupted, ExtractionReport, run_extraction
from tefcore.mind.schema import DIMENSIONS


def synthetic_mind(folder: Path, n: int = 4, lang: str = "en") -> Path:
    """A small schema-valid MIND file with our own texts."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        dim = DIMENSIONS[i % 3]
        sub = dim.subcategories[0]
        side = "change" if i % 2 == 0 else "stability"
        pos = sub.change if side == "change" else sub.stability
        text = f"Post {i} argues a point about {dim.name.lower()}. It gives two reasons. Both are clear enough."
        lines.append(json.dumps({"id": f"{lang}-single-t{i}", "lang": lang, "event": "COL", "text": text,
                                 "labels": [{"dimension": dim.name, "subcategory": sub.name,
                                             "orientation": pos.name, "side": side}]}))
    (folder / f"mind_{lang}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv, message", [
    (["extract", "--model", "gpt-5"], "unknown model 'gpt-5'; known models: local"),
    (["extract", "--model", "local", "--data-dir", "/nonexistent/mind"],
     "mind_en.jsonl and mind_zh.jsonl not found in /nonexistent/mind (from --data-dir); point --data-dir"),
    (["extract", "--model", "/nonexistent/model.gguf"], "GGUF model file /nonexistent/model.gguf not found"),
    (["extract", "--model", "e5-zeroshot", "--reading", "reference"], "--reading applies to LLM judges"),
    (["evaluate", "--cache", "/nonexistent/cache.jsonl"], "cache /nonexistent/cache.jsonl not found (--cache)"),
    (["extract", "--model", "e5-zeroshot", "--n-ctx", "512"], "--n-ctx applies to llama.cpp judges"),
])
def test_user_errors_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("tef: error: ") and message in err


@pytest.mark.parametrize("argv, message", [
    (["extract", "--model", "local", "--limit", "-3"], "expected a non-negative integer"),
    (["extract", "--model", "local", "--prompt", "short"], "invalid choice: 'short'"),
    (["extract"], "the following arguments are required: --model"),
    (["extract", "--model", "local", "--n-ctx", "8"], "--n-ctx: expected at least 16 tokens, got 8"),
    (["evaluate", "--cache", "x", "--format", "xml"], "invalid choice: 'xml'"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_arguments_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and message in err


def test_missing_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data = synthetic_mind(tmp_path / "mind")
    code, _, err = run(["extract", "--model", "gpt-4o-mini", "--lang", "en", "--data-dir", str(data),
                        "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and err.count("\n") == 1 and "OPENAI_API_KEY" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.jsonl"))


def test_no_traceback_from_the_console_script(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "tefcore.cli", "extract", "--model", "nope"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]


def test_internal_bugs_are_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> int:
        raise KeyError("a bug")

    monkeypatch.setattr(cli, "_cmd_models", broken)
    with pytest.raises(KeyError):
        cli.main(["models"])


class FakeJudge:
    name = "fake"
    reading = "summed"

    def provenance(self) -> dict[str, Any]:
        return {"backend": "fake", "model": "fake"}

    def prepare(self, pairs: Any, **options: Any) -> None:
        pass

    def score(self, requests: Any) -> list[Any]:
        from tefcore.judges.base import Score

        # Culture texts lean to change, everything else to stability
        return [Score(0.9 if r.dimension == "Politics" else 0.2, 0.9, "logprobs", logprobs=(-0.1, -2.0)) for r in requests]


def test_extract_and_evaluate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(tefcore.judges, "make_backend", lambda *spec_and_options: FakeJudge())
    data = synthetic_mind(tmp_path / "mind", n=6)
    argv = ["extract", "--model", "local", "--lang", "en", "--prompt", "original", "minimal",
            "--data-dir", str(data), "--out", str(tmp_path / "out"), "--no-progress"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert (tmp_path / "out/local/original/en.jsonl").is_file() and (tmp_path / "out/local/minimal/en.jsonl").is_file()
    assert "6/6 pairs (6 new, 0 already there)" in out and "logprobs 100.0%" in out
    code, out, _ = run(["evaluate", "--cache", str(tmp_path / "out/local/original")], capsys)
    assert code == 0
    assert "judge fake, prompt original, language en: 6 pairs, 0 invalid sentences" in out
    # the judge says change for Politics only: one of two right in each dimension (accuracy 50, macro-F1
    # 1/3), every rule alike, so each value is the best of its column; two pairs per dimension: all marked
    rows = [line.split() for line in out.splitlines()[3:15]]
    assert [row[-4:] for row in rows] == [["(50.0*)"] * 4] * 6 + [["(33.3*)"] * 4] * 6
    assert [" ".join(row[:-4]) for row in rows] == [
        "Acc Direct", "MV", "SV", "TEF", "w/o Entropy", "w/o Log-Odds"] + [
        "F1 Direct", "MV", "SV", "TEF", "w/o Entropy", "w/o Log-Odds"]
    assert out.splitlines()[2].split() == ["Cul.", "Eco.", "Pol.", "Avg."]
    assert out.splitlines()[15].split() == ["n", "2", "2", "2", "6"]


def test_ctrl_c_says_how_to_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    import tefcore.extraction.run as extract

    def interrupted(*args: Any, **kwargs: Any) -> ExtractionReport:
        raise ExtractionInterrupted(ExtractionReport(Path(args[2]), pairs_in_scope=6, pairs_skipped=1,
                                                     pairs_written=2, interrupted=True))

    monkeypatch.setattr(tefcore.judges, "make_backend", lambda *spec_and_options: FakeJudge())
    monkeypatch.setattr(extract, "run_extraction", interrupted)
    data = synthetic_mind(tmp_path / "mind my data", n=6)
    argv = ["extract", "--model", "local", "--lang", "en", "--data-dir", str(data), "--out", str(tmp_path / "o")]
    code, _, err = run(argv, capsys)
    assert code == 130
    assert "interrupted: 3 of 6 en pairs" in err and "no partial record" in err
    assert f"tef extract --model local --lang en --data-dir '{data}' --out {tmp_path / 'o'}" in err


def test_models_lists_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["models"], capsys)
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()[:-1]]
    assert names[:3] == ["local", "qwen2.5-7b", "llama3-8b"] and "deepseek-v3.2" in names


def test_book_and_download_dispatch(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    import tefcore.mind.release

    seen: dict[str, Any] = {}
    monkeypatch.setattr(subprocess, "call", lambda argv: seen.setdefault("book", argv[1:]) and 0)
    monkeypatch.setattr(tefcore.mind.release, "download_release",
                        lambda dest, langs, force=False: seen.setdefault("dl", (dest, langs, force)) and
                        {"en": (Path(dest) / "mind_en.jsonl", "ab" * 32)})
    assert cli.main(["book", "--list", "--chapters", "01"]) == 0
    assert seen["book"] == ["-m", "tefbook", "--list", "--chapters", "01"]
    code, out, _ = run(["download", "--dest", "/tmp/x", "--lang", "en"], capsys)
    assert code == 0 and seen["dl"] == (Path("/tmp/x"), ["en"], False) and "sha256=" + "ab" * 32 in out


def test_book_reproduce_and_claims_run_the_book_tools_in_a_subprocess(monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util
    import subprocess

    seen: list[list[str]] = []
    monkeypatch.setattr(subprocess, "call", lambda argv: seen.append(argv[1:]) or 0)
    assert cli.main(["reproduce", "qwen2.5-7b", "--dry-run"]) == 0
    assert cli.main(["claims", "--format", "csv"]) == 0
    assert seen == [["-m", "tefbook", "reproduce", "qwen2.5-7b", "--dry-run"], ["-m", "tefpaper", "--format", "csv"]]
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("tefbook", "tefpaper") else real(name, *a))
    for command in (["book"], ["reproduce", "qwen2.5-7b"], ["claims"]):
        assert cli.main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "pip install -e ./book" in err, err
    assert len(seen) == 2  # nothing was run without the book tools


def test_resumed_cli_run_adds_only_missing_pairs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from tefcore.mind.load import evaluation_pairs, load_posts

    data = synthetic_mind(tmp_path / "mind", n=6)
    out = tmp_path / "out" / "local" / "original" / "en.jsonl"
    run_extraction(FakeJudge(), evaluation_pairs(load_posts("en", data)), out, variant="original",
                   limit=2, progress=False)
    monkeypatch.setattr(tefcore.judges, "make_backend", lambda *spec_and_options: FakeJudge())
    code, text, _ = run(["extract", "--model", "local", "--lang", "en", "--data-dir", str(data),
                         "--out", str(tmp_path / "out"), "--no-progress"], capsys)
    assert code == 0 and "6/6 pairs (4 new, 2 already there)" in text


# -- evaluate: tables a person can read, and formats for programs ------------------------------------
def test_evaluate_fits_100_columns_with_counts_and_marks(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tefcore.extraction.cache import read_cache

    code, out, _ = run(["evaluate", "--cache", str(repo_root / "data/caches/e5-zeroshot/original")], capsys)
    assert code == 0 and max(map(len, out.splitlines())) <= 100
    lines = out.splitlines()
    for lang in ("en", "zh"):
        frame, _ = read_cache(repo_root / f"data/caches/e5-zeroshot/original/{lang}.jsonl")
        at = next(i for i, line in enumerate(lines) if line.endswith(f"original/{lang}.jsonl"))
        assert f"language {lang}: {len(frame):,} pairs" in lines[at + 1]
        assert lines[at + 2].split() == ["Cul.", "Eco.", "Soc.", "Pol.", "Tech.", "Env.", "Avg."]
        counts = frame["dimension"].value_counts()
        expected = [str(counts[d]) for d in ("Culture", "Economy", "Society", "Politics", "Technology",
                                             "Environment")] + [str(len(frame))]
        assert lines[at + 15].split() == ["n", *expected]
        table = [line.split()[-7:] for line in lines[at + 3:at + 15]]
        for block in (table[:6], table[6:]):  # accuracy, then macro-F1: one best (or a tie) per column
            assert all(any(row[c].endswith("*") for row in block) for c in range(7))
            for c in range(7):  # the best among the rules that are not blind ("!": one side for every text)
                best = max(float(row[c].strip("()*")) for row in block if "!" not in row[c])
                assert all(row[c].endswith("*") == ("!" not in row[c] and float(row[c].strip("()*")) == best)
                           for row in block)
    assert "(x) fewer than 20 pairs" in out


def test_evaluate_formats_hold_the_same_numbers(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    import pandas as pd

    cache = str(repo_root / "data/caches/e5-zeroshot/original/en.jsonl")
    outs = {fmt: run(["evaluate", "--cache", cache, "--format", fmt], capsys)[1] for fmt in cli.FORMATS}
    csv = pd.read_csv(io.StringIO(outs["csv"]))
    assert len(csv) == 6 * 7 and set(csv["lang"]) == {"en"} and set(csv["judge"]) == {"e5-zeroshot"}
    assert pd.DataFrame(json.loads(outs["json"]))[["rule", "dimension", "n", "accuracy"]].equals(
        csv[["rule", "dimension", "n", "accuracy"]])
    tef_avg = csv[(csv["rule"] == "tef") & (csv["dimension"] == "Average")]["accuracy"].item()
    tef_avg_cul = csv[(csv["rule"] == "tef") & (csv["dimension"] == "Culture")]["accuracy"].item()
    row = outs["text"].splitlines()[6].split()  # TEF's row of the accuracy block ("*": the best rule of a column)
    assert [row[0], row[1].strip("*")] == ["TEF", f"{tef_avg_cul:.1f}"]
    assert outs["text"].splitlines()[6].split()[-1].strip("*!") == f"{tef_avg:.1f}"
    assert "| Acc | TEF" in outs["markdown"].replace("  ", " ") and f"{tef_avg:.1f}" in outs["markdown"]


def test_evaluate_marks_small_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(tefcore.judges, "make_backend", lambda *spec_and_options: FakeJudge())
    data = synthetic_mind(tmp_path / "mind", n=45)  # 15 pairs per dimension, 45 in all
    assert run(["extract", "--model", "local", "--lang", "en", "--data-dir", str(data), "--out",
                str(tmp_path / "out"), "--no-progress"], capsys)[0] == 0
    out = run(["evaluate", "--cache", str(tmp_path / "out"), "--rules", "tef"], capsys)[1]
    from tefcore.mind.load import evaluation_pairs, load_posts

    pairs = evaluation_pairs(load_posts("en", data))
    hit = {d: [p.side == ("change" if d == "Politics" else "stability") for p in pairs if p.dimension == d]
           for d in ("Culture", "Economy", "Politics")}  # the fake judge's answers, in the table's order
    assert [len(h) for h in hit.values()] == [15, 15, 15]
    acc = next(line for line in out.splitlines() if line.startswith("Acc")).split()
    # one side per dimension for every text: blind ("!"), never the best ("*"); 15 pairs: in parentheses
    assert acc[2:5] == [f"({100 * sum(h) / 15:.1f}!)" for h in hit.values()]
    assert acc[5] == f"{sum(100 * sum(h) / 15 for h in hit.values()) / 3:.1f}!"  # 45 pairs: not in parentheses


def test_evaluate_a_cache_without_pairs(tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    header = (repo_root / "data/caches/e5-zeroshot/original/en.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "empty.jsonl").write_text(header + "\n", encoding="utf-8")
    code, out, err = run(["evaluate", "--cache", str(tmp_path / "empty.jsonl")], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"tef: error: nothing to evaluate: {tmp_path / 'empty.jsonl'} holds no scored pair")
    (tmp_path / "full.jsonl").write_bytes((repo_root / "data/caches/e5-zeroshot/original/en.jsonl").read_bytes())
    code, out, err = run(["evaluate", "--cache", str(tmp_path)], capsys)
    assert code == 0 and "full.jsonl" in out and "empty.jsonl" not in out
    assert err.endswith(f"tef: warning: {tmp_path / 'empty.jsonl'} holds no scored pair (only a header); left out\n")


def test_download_offline_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    import urllib.error
    import urllib.request

    def offline(*args: Any, **kwargs: Any) -> Any:
        raise urllib.error.URLError(OSError(-3, "Temporary failure in name resolution"))

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    code, out, err = run(["download", "--dest", str(tmp_path / "new" / "full")], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("tef: error: cannot download https://raw.githubusercontent.com/Kzczc/ICASSP2027-TEF/")
    assert "Temporary failure in name resolution (is the network reachable?)" in err
    assert not (tmp_path / "new").exists()  # no partial file, and no empty folder left behind
    (tmp_path / "mine").mkdir()
    assert run(["download", "--dest", str(tmp_path / "mine")], capsys)[0] == 2
    assert (tmp_path / "mine").is_dir()  # a folder that was there stays


def test_relative_paths_mean_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(tefcore.judges, "make_backend", lambda *spec_and_options: FakeJudge())
    monkeypatch.delenv("MIND_DATA_DIR", raising=False)
    synthetic_mind(tmp_path / "work" / "my data", n=3)
    monkeypatch.chdir(tmp_path / "work")
    code, out, _ = run(["extract", "--model", "local", "--lang", "en", "--data-dir", "my data", "--out", "caches",
                        "--no-progress"], capsys)
    assert code == 0 and (tmp_path / "work/caches/local/original/en.jsonl").is_file()
    assert out.startswith(f"{tmp_path / 'work/caches/local/original/en.jsonl'}: 3/3 pairs")
    monkeypatch.setenv("MIND_DATA_DIR", "my data")
    code, out, _ = run(["extract", "--model", "local", "--lang", "en", "--out", "caches", "--no-progress"], capsys)
    assert code == 0 and "3/3 pairs (0 new, 3 already there)" in out
    code, out, _ = run(["evaluate", "--cache", "caches"], capsys)
    assert code == 0 and out.startswith("caches/local/original/en.jsonl\njudge fake")  # relative to the cwd


def test_default_data_is_the_embedded_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    from tefcore.mind.load import sample_dir

    monkeypatch.delenv("MIND_DATA_DIR", raising=False)
    pairs = cli._load_pairs(["en"], None)
    assert len(pairs["en"]) == 605 and cli._data_dir(None, ["en", "zh"]) == sample_dir()


@pytest.mark.parametrize("command", ["extract", "evaluate", "download", "models", "fuse", "init", "validate"])
def test_help_says_what_is_read_and_written(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main([command, "--help"])
    text = capsys.readouterr().out
    assert stop.value.code == 0
    assert "Reads" in text and ("writes" in text or "Writes" in text)
    example = text.split("example:\n", 1)[1].strip()
    assert example.startswith(f"tef {command}") and "\n" not in example


# -- a long post does not stop a run (the embedded model) ---------------------------------------------
@pytest.mark.slow
def test_prompts_longer_than_the_context_are_invalid_and_the_run_finishes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("llama_cpp",
                        reason="llama-cpp-python is not installed (bash scripts/setup.sh --local-llm adds it)")
    from tefcore.extraction.cache import read_cache

    data = synthetic_mind(tmp_path / "mind", n=2)
    code, out, err = run(["extract", "--model", "local", "--lang", "en", "--prompt", "minimal", "--n-ctx", "32",
                          "--data-dir", str(data), "--out", str(tmp_path / "out"), "--no-progress"], capsys)
    assert code == 0 and "2/2 pairs (2 new, 0 already there)" in out and "invalid 100.0%" in out
    assert "answer(s) recorded as invalid: prompt longer than the context (n_ctx=32 tokens); raise --n-ctx" in err
    frame, prov = read_cache(tmp_path / "out/local/minimal/en.jsonl")
    assert prov["n_ctx"] == 32 and set(frame["direct_source"]) == {"invalid"} and frame["direct"].isna().all()


# -- a run that scored nothing leaves no cache behind; the speed counts the judge's preparation --------
class SlowToPrepare(FakeJudge):
    name = "slow"

    def prepare(self, pairs: Any, **options: Any) -> None:
        import time

        time.sleep(0.3)  # a fitted judge embeds and fits here


class Refusing(FakeJudge):
    def score(self, requests: Any) -> list[Any]:
        raise ValueError("the judge refused the first chunk")


class InterruptedAtOnce(FakeJudge):
    def score(self, requests: Any) -> list[Any]:
        raise KeyboardInterrupt


@pytest.mark.parametrize("judge, code", [(Refusing, 2), (InterruptedAtOnce, 130)])
def test_a_run_that_scored_nothing_leaves_no_cache(judge: type, code: int, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(tefcore.judges, "make_backend", lambda *spec_and_options: judge())
    data = synthetic_mind(tmp_path / "mind", n=3)
    argv = ["extract", "--model", "local", "--lang", "en", "--data-dir", str(data), "--out", str(tmp_path / "out"),
            "--no-progress"]
    assert run(argv, capsys)[0] == code
    assert not list((tmp_path / "out").rglob("*.jsonl"))
    monkeypatch.setattr(tefcore.judges, "make_backend", lambda *spec_and_options: FakeJudge())  # a cache with pairs stays
    assert run(argv, capsys)[0] == 0 and (tmp_path / "out/local/original/en.jsonl").is_file()


def test_speed_is_the_loops_and_the_preparation_is_said_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import math
    import time

    class Embedding(SlowToPrepare):
        def score(self, requests: Any) -> list[Any]:
            from tefcore.judges.base import Score

            time.sleep(0.1)
            return [Score(0.5, math.nan, "embedding") for _ in requests]

    monkeypatch.setattr(tefcore.judges, "make_backend", lambda *spec_and_options: Embedding())
    data = synthetic_mind(tmp_path / "mind", n=3)
    code, out, _ = run(["extract", "--model", "local", "--lang", "en", "--data-dir", str(data), "--out",
                        str(tmp_path / "out"), "--no-progress"], capsys)
    assert code == 0 and "mean C+S mass n/a" in out and "embedding 100.0%" in out
    seconds = float(out.split(" prompts in ")[1].split(" s ")[0])
    rate = float(out.split(" s (")[1].split("/s")[0])
    prompts = int(out.split(" prompts in ")[0].rsplit(" ", 1)[1])
    prepared = float(out.split("after ")[1].split(" s preparing the judge")[0])
    # the rate is the progress bar's: prompts over the loop's time; the preparation is said beside it
    assert seconds >= 0.1 and rate == pytest.approx(prompts / seconds, rel=0.2)
    assert prepared >= 0.3
