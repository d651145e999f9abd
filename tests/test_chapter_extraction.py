"""Chapter 4's reproducibility check: what it compares between a committed cache and a new run (tefbook.chapters.ch04),
and the chapter itself stopping when today's code no longer reproduces a committed cache."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tefbook.chapters import ch04
from tefbook.companion import commands as cmds
from tefbook.build import execute_chapter
from tefbook.errors import BookError
from tefbook.toc import load_toc, select_chapters, toc_chapters
from tefbook.commands import command_for_chapter, plan, reproduce_command


# --- what is compared ---------------------------------------------------------------------------------
def test_time_stamps_outputs_and_the_fitted_pair_set_are_not_inputs() -> None:
    old = {"backend": "e5-zeroshot", "started_at": "a", "temperature_pairs_sha256": "x",
           "temperature": {"en/Culture": 0.004, "en/Environment": 0.006}, "median_abs_margin": {"en/Culture": 0.01},
           "subsets": {"en/Environment": {"C_chosen": [[0.1]]}}}
    new = {"backend": "e5-zeroshot", "started_at": "b", "temperature_pairs_sha256": "y",
           "temperature": {"en/Environment": 0.007}, "median_abs_margin": {"en/Culture": 0.02},
           "subsets": {"en/Environment": {"C_chosen": [[0.3]]}}}
    assert ch04.input_differences(old, new) == ()  # a temperature or a chosen C is what the run computed


def test_an_engine_build_and_the_numeric_environment_are_inputs() -> None:
    old = {"engine_build": {"kind": "deterministic", "library_sha256": "a"},
           "numeric_environment": {"cpu": {"features": "avx2 fma avx512f"}, "libc": "glibc 2.36"}}
    new = {"engine_build": {"kind": "shipped", "library_sha256": "b"},
           "numeric_environment": {"cpu": {"features": "avx2 fma"}, "libc": "glibc 2.36"}}
    assert ch04.input_differences(old, new) == (
        "engine_build.kind: deterministic → shipped", "engine_build.library_sha256: a → b",
        "numeric_environment.cpu.features: avx512f → –")


def test_only_a_recorded_input_is_a_cause() -> None:
    fields = ch04.input_differences(
        {"tefcore_version": "0.1.0", "system_prompt": "none (template default removed)"},
        {"tefcore_version": "0.2.0", "system_prompt": "template default (reference rendering)",
         "llama_cpp_cpu": "AVX2"})
    assert len(fields) == 3
    (cause,) = ch04.causes(fields)
    assert cause == "system_prompt: none (template default removed) → template default (reference rendering)"


def test_emulations_are_named_or_refused() -> None:
    assert ch04.selected_emulations("none") == [] and ch04.selected_emulations("all") == list(ch04.EMULATIONS)
    with pytest.raises(ValueError, match="unknown"):
        ch04.selected_emulations("one thread, a quantum computer")


@pytest.mark.slow
def test_chapter_4_stops_when_a_committed_cache_is_no_longer_reproduced(tmp_path: Path, repo_root: Path) -> None:
    caches = tmp_path / "caches" / "e5-crossfit-raw" / "original"
    caches.mkdir(parents=True)
    local = tmp_path / "caches" / "local" / "original"  # the answers the chapter shows without the embedded LLM
    local.mkdir(parents=True)
    shutil.copy(repo_root / "data" / "caches" / "local" / "original" / "en.jsonl", local / "en.jsonl")
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
