"""Tests of tefcore.chapters.runs: notebook parameters, reading the caches of several runs, grouping them."""

from __future__ import annotations

import pandas as pd
import pytest
from cache_frames import synthetic_cache

from tefcore.chapters import runs as rn


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
    monkeypatch.delenv(rn.PROJECT_ENV, raising=False)
    monkeypatch.chdir(project / "_build" / "executed")
    assert rn.repo_path("data/caches") == project / "data" / "caches"
    monkeypatch.chdir(tmp_path)
    assert rn.repo_path("data/caches") == tmp_path / "data" / "caches"
    monkeypatch.setenv(rn.PROJECT_ENV, str(project))
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
    assert runs.notes_markdown == f"* note: nope/original/en: no cache at {tmp_path}/nope/original/en.jsonl"
    with pytest.raises(FileNotFoundError, match="no cache found under .*tef extract"):
        rn.chapter_runs("nope", "original", "en", tmp_path)


def test_chapter_runs_reads_the_committed_caches_and_notes_the_absent_ones():
    runs = rn.chapter_runs("e5-zeroshot,absent-judge", "original", "en,zh", "data/caches")
    assert runs.models == ["e5-zeroshot"]
    assert runs.provenance["n_pairs"].tolist() == [605, 1215]
    assert runs.notes_markdown.count("* note: absent-judge/original/") == 2


def test_provenance_view_shortens_hashes(tmp_path):
    (tmp_path / "m" / "original").mkdir(parents=True)
    (tmp_path / "m" / "original" / "en.jsonl").write_text("x")
    meta = {"backend": "b", "weights_sha256": "a" * 64, "provenance_id": "b" * 64, "other": 1}
    runs = rn.load_runs("m", "original", "en", tmp_path, reader=lambda p: (synthetic_cache(1, 2, ("en",)), meta))
    view = rn.provenance_view(runs)
    assert view.index.names == ["model", "prompt", "lang"]
    assert view.iloc[0]["weights_sha256"] == "a" * 12 and view.iloc[0]["provenance_id"] == "b" * 12
    assert "other" not in view.columns


# ---------------------------------------------------------------------------------------------------
def test_frame_of_and_run_keys():
    frame = synthetic_cache(1, 2, ("en",)).assign(prompt="p", model="m")
    runs = rn.Runs(frame, pd.DataFrame(columns=["model", "prompt", "lang"]))
    assert rn.frame_of(runs) is frame and rn.frame_of(frame) is frame
    assert rn.run_keys(frame) == ["model", "prompt"] and rn.run_keys(frame.drop(columns="model")) == ["prompt"]
