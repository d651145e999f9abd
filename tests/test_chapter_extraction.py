"""Chapter 4's plumbing (chapters.ch04): the check against the committed caches compares only
caches of the same provenance, and asserts the deterministic judge there; the tables count what the caches hold."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from chapters import ch04
from companion import commands as cmds
from companion.runs import Runs
from tefbook.commands import command_for_chapter, plan, reproduce_command
from tefcore.judges.cache import provenance_id

REFERENCE_PROVENANCE: dict[str, Any] = {
    "backend": "llama_cpp", "model": "local", "model_file": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "system_prompt": "template default (reference rendering)", "reading": "summed", "n_ctx": 4096,
    "lang": "en", "prompt_variant": "original", "tefcore_version": "0.2.0", "started_at": "2026-01-01T00:00:00",
}


def _runs(sentences: list[list[float]], direct: list[float], model: str = "local", **changes: Any) -> Runs:
    """One judge's cache of two English pairs, with its provenance row (as load_runs builds it)."""
    prov = {**REFERENCE_PROVENANCE, **changes}
    n = len(direct)
    frame = pd.DataFrame({
        "model": model, "prompt": "original", "post_id": [f"en-single-{i}" for i in range(n)], "lang": "en",
        "dimension": "Economy", "side": ["change", "stability"][:n], "direct": direct,
        "direct_source": "logprobs", "direct_mass": [0.4] * n, "sentences": sentences,
        "sentence_sources": [["logprobs"] * len(s) for s in sentences],
        "sentence_masses": [[0.3] * len(s) for s in sentences],
    })
    row = {**{("model_id" if k == "model" else ("recorded_lang" if k == "lang" else k)): v for k, v in prov.items()},
           "model": model, "prompt": "original", "lang": "en", "path": "x.jsonl", "n_pairs": n,
           "provenance_id": provenance_id(prov)}
    return Runs(frame, pd.DataFrame([row]))


SENTENCES, DIRECT = [[0.8, 0.7], [0.9]], [0.81, 0.77]


# --- only caches of the same provenance are compared ------------------------------------------------
def test_same_provenance_same_numbers_is_asserted_identical() -> None:
    agreement = ch04.reference_agreement(_runs(SENTENCES, DIRECT), _runs(SENTENCES, DIRECT))
    row = agreement.table.loc[("SmolLM2-135M (CPU)", "English")]
    assert bool(row["same provenance"]) and row["pairs compared"] == 2 and row["same sentence count"] == 2
    assert row["max |Δ Direct|"] == 0.0 and row["max |Δ sentence|"] == 0.0
    assert ch04.assert_reproduced(agreement) == [
        "SmolLM2-135M (CPU), English: identical to the committed cache on all 2 compared pairs."]


def test_same_provenance_other_numbers_fails_the_chapter() -> None:
    moved = [[0.8, 0.7 + 1e-6], [0.9]]
    agreement = ch04.reference_agreement(_runs(moved, DIRECT), _runs(SENTENCES, DIRECT))
    assert agreement.table["max |Δ sentence|"].iloc[0] == pytest.approx(1e-6)
    with pytest.raises(AssertionError, match=r"deterministic.*max \|Δ\| 1e-06"):
        ch04.assert_reproduced(agreement)


def test_an_answer_invalid_in_one_cache_only_is_a_difference() -> None:
    agreement = ch04.reference_agreement(_runs(SENTENCES, [math.nan, 0.77]), _runs(SENTENCES, DIRECT))
    assert agreement.table["max |Δ Direct|"].iloc[0] == math.inf
    with pytest.raises(AssertionError):
        ch04.assert_reproduced(agreement)


def test_another_provenance_is_named_and_nothing_is_compared() -> None:
    old = _runs([[0.1, 0.2], [0.3]], [0.5, 0.5], system_prompt="none (template default removed)")
    agreement = ch04.reference_agreement(_runs(SENTENCES, DIRECT), old)
    row = agreement.table.iloc[0]
    assert not bool(row["same provenance"]) and row["pairs compared"] == 0 and np.isnan(row["max |Δ Direct|"])
    assert agreement.notes == [
        "SmolLM2-135M (CPU), English: the committed cache has another provenance (system_prompt: "
        "'template default (reference rendering)' ≠ 'none (template default removed)'), so nothing is compared."]
    assert ch04.assert_reproduced(agreement) == []  # nothing to assert, and no failure


def test_a_library_version_alone_does_not_hide_a_change_of_numbers() -> None:
    old = _runs(SENTENCES, DIRECT, tefcore_version="0.1.0")
    agreement = ch04.reference_agreement(_runs(SENTENCES, DIRECT), old)
    assert "(only the library version differs: tefcore_version: '0.2.0' ≠ '0.1.0'); 2 pairs compared" \
        in agreement.notes[0]
    assert len(ch04.assert_reproduced(agreement)) == 1
    changed = ch04.reference_agreement(_runs(SENTENCES, [0.9, 0.77]), old)
    with pytest.raises(AssertionError):
        ch04.assert_reproduced(changed)


def test_time_fields_do_not_make_another_provenance() -> None:
    later = _runs(SENTENCES, DIRECT, started_at="2027-05-05T00:00:00", hardware={"class": "CPU"})
    agreement = ch04.reference_agreement(later, _runs(SENTENCES, DIRECT))
    assert bool(agreement.table["same provenance"].iloc[0]) and "library version" not in agreement.notes[0]
    assert ch04.provenance_differences({"started_at": "a", "hardware.class": "GPU"}, {"started_at": "b"}) == []


def test_a_non_deterministic_judge_is_compared_but_not_asserted() -> None:
    agreement = ch04.reference_agreement(_runs(SENTENCES, [0.2, 0.3], model="e5-zeroshot"),
                                        _runs(SENTENCES, DIRECT, model="e5-zeroshot"))
    assert agreement.table["max |Δ Direct|"].iloc[0] == pytest.approx(0.61)
    assert ch04.assert_reproduced(agreement) == []


def test_a_judge_without_committed_cache_is_said_so() -> None:
    empty = Runs(pd.DataFrame(columns=["model", "lang"]), pd.DataFrame(columns=["model", "lang"]))
    agreement = ch04.reference_agreement(_runs(SENTENCES, DIRECT), empty)
    assert agreement.notes == ["SmolLM2-135M (CPU), English: no committed cache."] and agreement.table.empty


def test_provenance_differences_group_nested_fields() -> None:
    ours = {"temperature.en/Culture": 0.1, "temperature.en/Economy": 0.2, "n_ctx": 2048, "path": "a"}
    theirs = {"temperature.en/Culture": 0.3, "temperature.en/Economy": 0.4, "n_ctx": 4096, "path": "b"}
    assert ch04.provenance_differences(ours, theirs) == ["n_ctx: 2048 ≠ 4096", "temperature (2 entries)"]
    assert ch04.provenance_differences(ours, theirs, limit=1) == ["n_ctx: 2048 ≠ 4096", "and 1 more"]


# --- what the caches hold -------------------------------------------------------------------------------
def test_sentence_frame_and_source_table_count_every_answer() -> None:
    runs = _runs([[0.5, math.nan], [0.9]], DIRECT)
    runs.frame.at[0, "sentence_sources"] = ["logprobs", "invalid"]
    sent = ch04.sentence_frame(runs.frame)
    assert sent["pair"].tolist() == [0, 0, 1] and np.isnan(sent["weight"][1]) and sent["weight"][0] == 0.0
    table = ch04.source_table(runs.frame)
    row = table.loc[("SmolLM2-135M (CPU)", "English", "sentences")]
    assert row["answers"] == 3 and row["invalid"] == pytest.approx(100 / 3)
    assert table.loc[("SmolLM2-135M (CPU)", "English", "Direct"), "logprobs"] == 100.0


def test_mass_table_and_letter_bias() -> None:
    runs = _runs(SENTENCES, DIRECT)
    masses = ch04.mass_table(runs.frame, ["local"])
    assert masses.loc[("SmolLM2-135M (CPU)", "English", "sentences"), "count"] == 3
    assert ch04.mass_table(runs.frame, ["e5-zeroshot"]).empty
    bias = ch04.letter_bias(runs.frame)
    assert bias.loc["English", "Direct P(change) mean"] == pytest.approx(0.79)
    assert bias.loc["English", "Direct answers 'change' %"] == 100.0 and bias.loc["English", "gold 'change' %"] == 50.0
    text = ch04.bias_markdown(runs.frame)
    assert "answers change for 100.0 % of the pairs, while 50.0 % of the gold targets are change" in text
    assert "C and S together get 0.40" in text
    assert ch04.bias_markdown(runs.frame, "e5-crossfit") == ""


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
