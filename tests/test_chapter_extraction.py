"""Chapter 4's reproducibility check: what it compares between a committed cache and a new run (chapters.ch04),
and the chapter itself stopping when today's code no longer reproduces a committed cache."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chapters import ch04
from companion import commands as cmds
from tefbook.build import execute_chapter
from tefbook.errors import BookError
from tefbook.toc import load_toc, select_chapters, toc_chapters
from tefbook.commands import command_for_chapter, plan, reproduce_command


# --- what is compared ---------------------------------------------------------------------------------
def test_time_stamps_and_the_fitted_pair_set_are_not_a_setting() -> None:
    old = {"backend": "e5-zeroshot", "started_at": "a", "temperature_pairs_sha256": "x",
           "temperature": {"en/Culture": 0.004, "en/Environment": 0.006}}
    new = {"backend": "e5-zeroshot", "started_at": "b", "temperature_pairs_sha256": "y",
           "temperature": {"en/Environment": 0.006 * (1 + 1e-12)}}  # one cell, round-off apart
    assert ch04.setting_differences(old, new, "en/Environment") == ()


def test_a_cell_whose_fit_differs_is_named() -> None:
    old = {"subsets": {"en/Environment": {"C_chosen": [[0.1]]}, "en/Culture": {"C_chosen": [[1.0]]}}}
    new = {"subsets": {"en/Environment": {"C_chosen": [[0.3]]}}}
    assert ch04.setting_differences(old, new, "en/Environment") == ("subsets.en/Environment.C_chosen: [[0.1]] → [[0.3]]",)


def test_only_a_recorded_setting_is_a_cause() -> None:
    fields = ch04.setting_differences(
        {"tefcore_version": "0.1.0", "system_prompt": "none (template default removed)"},
        {"tefcore_version": "0.2.0", "system_prompt": "template default (reference rendering)",
         "llama_cpp_cpu": "AVX2"}, "zh/Environment")
    assert len(fields) == 3
    (cause,) = ch04.causes(fields)
    assert cause == "system_prompt: none (template default removed) → template default (reference rendering)"


def test_every_local_cache_names_the_llama_cpp_build_that_reproduces_it(repo_root: Path) -> None:
    """The record of chapter 4's section on builds: each committed SmolLM2 cache re-scored by two builds of
    llama.cpp; the build its header names reproduces it within round-off, the other does not."""
    from tefcore.judges.cache import read_cache

    record = json.loads((repo_root / "data" / "engines" / "llama-cpp-builds.json").read_text(encoding="utf-8"))
    assert len(record["builds"]) == 2 and any("AVX512" in build for build in record["builds"])
    headers = {f"local/{p.parent.name}/{p.stem}": read_cache(p)[1]["llama_cpp_cpu"]
               for p in (repo_root / "data" / "caches" / "local").glob("*/??.jsonl")}
    for build, run in record["builds"].items():
        measured = {c["cache"]: c["max_abs_difference"] for c in run["caches"]}
        assert measured.keys() == headers.keys()
        for cache, difference in measured.items():
            assert (difference <= 1e-9) == (headers[cache] == build), (cache, build, difference)
            if headers[cache] != build:
                assert difference > 1e-3  # another build: differences in the third decimal or more
        assert max(run["settings"]["max_abs_difference_from_default"].values()) <= 1e-9


@pytest.mark.slow
def test_chapter_4_stops_when_a_committed_cache_is_no_longer_reproduced(tmp_path: Path, repo_root: Path) -> None:
    caches = tmp_path / "caches" / "e5-crossfit-raw" / "original"
    caches.mkdir(parents=True)
    shutil.copy(repo_root / "data" / "caches" / "e5-crossfit-raw" / "original" / "en.jsonl", caches / "en.jsonl")
    lines = (caches / "en.jsonl").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):  # move one probability of the smallest English cell (Environment)
        record = json.loads(line)
        if record.get("dimension") == "Environment":
            record["direct"] = min(1.0, record["direct"] + 0.01)
            lines[i] = json.dumps(record)
            break
    (caches / "en.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    chapter = select_chapters(toc_chapters(repo_root, load_toc(repo_root)), ["04"])[0][0]
    params = {"models": "e5-crossfit-raw", "langs": "en", "cache_dir": str(tmp_path / "caches"),
              "scratch": str(tmp_path / "scratch")}
    with pytest.raises(BookError, match="no longer reproduces"):
        execute_chapter(chapter, params, tmp_path / "out", project_root=repo_root)


# --- the commands are the generated ones, wherever the kernel runs -----------------------------------------
def test_paper_commands_are_the_plan_run_from_the_project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                            repo_root: Path) -> None:
    monkeypatch.setenv("TEF_PROJECT_ROOT", str(repo_root))
    monkeypatch.chdir(repo_root)
    expected_extract = plan("qwen2.5-7b", ("original",), data_dir="data/mind-full", chapters=()).step("extract")
    expected_08 = command_for_chapter("08", "qwen2.5-7b", data_dir="data/mind-full")
    monkeypatch.chdir(tmp_path)  # a kernel runs in _build/executed/notebooks, not in the project
    assert cmds.paper_commands("qwen2.5-7b", chapters=("08",)) == f"```bash\n{expected_08}\n```"
    assert "-p 08.data_dir=data/mind-full" in expected_08
    text = cmds.paper_commands("qwen2.5-7b")
    lines = text.splitlines()
    assert lines[0] == "```bash" and lines[-1] == "```"
    assert lines[1] == reproduce_command("qwen2.5-7b", ("original",), data_dir="data/mind-full")
    assert lines[2] == expected_extract.command()
    assert "--data-dir data/mind-full --out data/caches" in lines[2]
