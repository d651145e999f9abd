"""The ``tef`` command line: one-line errors with exit code 2, Ctrl-C with 130, every subcommand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import tefcore.cli as cli
from tefcore.judges.run import ExtractionInterrupted, ExtractionReport, run_extraction
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
    (["extract", "--model", "local", "--data-dir", "/nonexistent/mind"], "MIND file /nonexistent/mind/mind_en.jsonl not found"),
    (["extract", "--model", "/nonexistent/model.gguf"], "GGUF model file /nonexistent/model.gguf not found"),
    (["extract", "--model", "e5-zeroshot", "--reading", "reference"], "--reading applies to LLM judges"),
    (["evaluate", "--cache", "/nonexistent/cache.jsonl"], "cache file /nonexistent/cache.jsonl not found"),
])
def test_user_errors_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("tef: error: ") and message in err


@pytest.mark.parametrize("argv, message", [
    (["extract", "--model", "local", "--limit", "-3"], "expected a non-negative integer"),
    (["extract", "--model", "local", "--prompt", "short"], "invalid choice: 'short'"),
    (["extract"], "the following arguments are required: --model"),
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

    monkeypatch.setattr(cli, "cmd_models", broken)
    with pytest.raises(KeyError):
        cli.main(["models"])


class FakeJudge:
    name = "fake"
    reading = "summed"

    def provenance(self) -> dict[str, Any]:
        return {"backend": "fake", "model": "fake"}

    def prepare(self, pairs: Any) -> None:
        pass

    def score(self, requests: Any) -> list[Any]:
        from tefcore.judges.base import Score

        # Culture texts lean to change, everything else to stability
        return [Score(0.9 if r.dimension == "Politics" else 0.2, -0.1, -2.0, 0.9, "logprobs") for r in requests]


def test_extract_and_evaluate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli, "_judge", lambda spec, reading: FakeJudge())
    data = synthetic_mind(tmp_path / "mind", n=6)
    argv = ["extract", "--model", "local", "--lang", "en", "--prompt", "original", "minimal",
            "--data-dir", str(data), "--out", str(tmp_path / "out"), "--no-progress"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert (tmp_path / "out/local/original/en.jsonl").is_file() and (tmp_path / "out/local/minimal/en.jsonl").is_file()
    assert "6/6 pairs (6 new, 0 already there)" in out and "logprobs 100.0%" in out
    code, out, _ = run(["evaluate", "--cache", str(tmp_path / "out/local/original")], capsys)
    assert code == 0 and "judge=fake prompt=original pairs=6 invalid sentences=0" in out
    # the judge says change for Politics only: one of two right in each dimension, macro-F1 1/3
    rows = [line.split() for line in out.splitlines() if line.split()[-1:] == ["33.3"]]
    assert len(rows) == 6 and all(r[-8:] == ["50.0", "33.3"] * 4 for r in rows)  # 3 dimensions + Average
    assert "TEF" in out and "MV" in out and "Direct" in out


def test_ctrl_c_says_how_to_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    import tefcore.judges.run as extract

    def interrupted(*args: Any, **kwargs: Any) -> ExtractionReport:
        raise ExtractionInterrupted(ExtractionReport(Path(args[2]), pairs_in_scope=6, pairs_skipped=1,
                                                     pairs_written=2, interrupted=True))

    monkeypatch.setattr(cli, "_judge", lambda spec, reading: FakeJudge())
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
    assert code == 0 and seen["dl"] == ("/tmp/x", ["en"], False) and "sha256=" + "ab" * 32 in out


def test_resumed_cli_run_adds_only_missing_pairs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from tefcore.mind.load import evaluation_pairs, load_posts

    data = synthetic_mind(tmp_path / "mind", n=6)
    out = tmp_path / "out" / "local" / "original" / "en.jsonl"
    run_extraction(FakeJudge(), evaluation_pairs(load_posts("en", data)), out, variant="original",
                   limit=2, progress=False)
    monkeypatch.setattr(cli, "_judge", lambda spec, reading: FakeJudge())
    code, text, _ = run(["extract", "--model", "local", "--lang", "en", "--data-dir", str(data),
                         "--out", str(tmp_path / "out"), "--no-progress"], capsys)
    assert code == 0 and "6/6 pairs (4 new, 2 already there)" in text
