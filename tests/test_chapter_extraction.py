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
    expected_extract = plan("qwen2.5-7b", ("original",), data_dir="data/mind-full", reading="reference",
                            chapters=()).step("extract")
    expected_08 = command_for_chapter("08", "qwen2.5-7b", data_dir="data/mind-full", reading="reference")
    monkeypatch.chdir(tmp_path)  # a kernel runs in _build/executed/notebooks, not in the project
    assert cmds.paper_commands("qwen2.5-7b", chapters=("08",)) == f"```bash\n{expected_08}\n```"
    assert "-p 08.data_dir=data/mind-full" in expected_08
    text = cmds.paper_commands("qwen2.5-7b")
    lines = text.splitlines()
    assert lines[0] == "```bash" and lines[-1] == "```"
    assert lines[1] == reproduce_command("qwen2.5-7b", ("original",), data_dir="data/mind-full", reading="reference")
    assert lines[2] == expected_extract.command()
    assert "--data-dir data/mind-full --out data/caches" in lines[2]


def test_chapter_4_prints_the_gpu_commands_with_the_reference_reading(monkeypatch: pytest.MonkeyPatch,
                                                                       repo_root: Path) -> None:
    monkeypatch.setenv("TEF_PROJECT_ROOT", str(repo_root))
    monkeypatch.chdir(repo_root)
    assert cmds.paper_commands("qwen2.5-7b", chapters=("08",)).count("--reading reference") == 2  # chapter 8's too
    lines = cmds.paper_commands("qwen2.5-7b", reading="reference").splitlines()[1:-1]
    assert lines[0] == reproduce_command("qwen2.5-7b", ("original",), data_dir="data/mind-full", reading="reference")
    assert len(lines) == 2 and all(line.endswith("--reading reference") for line in lines)
    source = (repo_root / "notebooks" / "04_extraction.py").read_text(encoding="utf-8")
    assert 'paper_commands("qwen2.5-7b", reading="reference")' in source


# --- what the reader sees --------------------------------------------------------------------------------
def test_the_tables_name_judges_languages_and_columns_and_say_yes_or_no() -> None:
    import pandas as pd

    checks = pd.DataFrame({"judge": ["local", "e5-zeroshot"], "prompt": ["original"] * 2, "lang": ["zh", "en"],
                           "pairs": [1, 24], "max |Δ|": [0.0712, float("nan")], "verdict": ["differs: x", "not checked"]})
    table = ch04.check_table(checks, {"local": "SmolLM2"})
    assert list(table.index.names) == ["judge", "prompt", "language"]
    assert list(table.columns) == ["pairs re-extracted", "largest difference", "verdict"]
    assert table.index[0] == ("SmolLM2", "original", "Chinese") and table.iloc[:, 1].tolist() == ["7.1e-02", "–"]
    effects = pd.DataFrame({"cell changes": [False]}, index=pd.MultiIndex.from_tuples([("local", "zh", "tef")],
                                                                                      names=["judge", "lang", "rule"]))
    assert ch04.shown(effects, {"local": "SmolLM2"}).iloc[0, 0] == "no"


def test_the_check_paragraph_puts_no_verb_after_a_count() -> None:
    """A glued count followed by a verb reads wrong for one of the counts ("1 differ", "1 are"); the chapter's
    paragraph names each count after a colon instead."""
    import re

    source = (Path(__file__).resolve().parents[1] / "notebooks" / "04_extraction.py").read_text(encoding="utf-8")
    prose = " ".join(line[2:] for line in source.splitlines() if line.startswith("# "))
    verb = re.compile(r"\{glue:text\}`n_\w+`\s+(?:is|are|was|were|differs?|reproduces?|has|have)\b")
    assert verb.findall(prose) == []
    assert "{glue:text}`n_differs` (" in prose and "{glue:text}`tolerance`" in prose


def test_the_emulation_numbers_read_without_nan_when_nothing_was_emulated() -> None:
    import pandas as pd

    empty = pd.DataFrame(columns=["emulated", "judge", "lang", "max |Δ|", "causes", "checked", "reproduced",
                                  "verdict"])
    numbers = ch04.emulation_numbers(empty, [])
    assert numbers == {"emulated": "none in this build", "n_emulated": 0, "n_emulated_same": 0,
                       "worst_emulated": "–", "n_emulated_named": 0, "emulated_named": "none"}


# --- the appendix and the protocol page -----------------------------------------------------------------
PAPER_MODELS = ("qwen2.5-7b", "llama3-8b", "qwen3-14b", "deepseek-v3.2", "gpt-4o-mini")


def test_every_command_of_the_appendix_that_reruns_a_paper_model_reads_as_the_reference_release() -> None:
    page = (Path(__file__).resolve().parents[1] / "book" / "running.md").read_text(encoding="utf-8")
    runs = [line for line in page.splitlines() if line.lstrip("`").startswith(("tef reproduce", "tef extract"))
            and any(model in line for model in PAPER_MODELS)]
    assert len(runs) >= 8
    assert [line for line in runs if "--reading reference" not in line] == []
    assert "that is how the paper's numbers were made" not in page  # the paper does not state its reading


def test_every_rule_of_the_protocol_page_says_whose_it_is() -> None:
    import re

    page = (Path(__file__).resolve().parents[1] / "book" / "protocol.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", page, flags=re.M)[1:]
    assert len(sections) == 9
    for section in sections:
        body = section.split("\n", 1)[1]
        paragraphs = [p for p in body.split("\n\n") if p.strip() and not p.lstrip().startswith("<a ")]
        for paragraph in paragraphs:
            marks = re.findall(r"\(\*\*(\w+)\*\*", paragraph)
            assert marks, f"protocol {section.split(chr(10))[0]}: a paragraph marks no rule as paper, release or book"
            assert set(marks) <= {"paper", "release", "book"}, marks


def test_the_check_speaks_in_words_and_counts_carry_separators() -> None:
    """The verdict column names the recorded input in words, not by its header key; counts read 3,546; the
    sentence summary is cut into two tables, each of which a reader can see whole, together all the columns."""
    import pandas as pd

    checks = pd.DataFrame({"judge": ["local"], "prompt": ["original"], "lang": ["zh"], "pairs": [3546],
                           "max |Δ|": [0.0712], "verdict": ["differs: system_prompt, engine_build"]})
    table = ch04.check_table(checks, {"local": "SmolLM2"})
    assert table.iloc[0].tolist() == ["3,546", "7.1e-02", "differs: the recorded system turn, the engine build"]
    assert checks["verdict"].iloc[0] == "differs: system_prompt, engine_build"  # what the check computes stays
    parts = [column for part in ch04.SUMMARY_PARTS for column in part]
    assert sorted(parts) == sorted(ch04.SUMMARY_LABELS) and all(len(part) <= 6 for part in ch04.SUMMARY_PARTS)
    assert ch04.in_words(1) == "one" and ch04.in_words(3) == "three"
