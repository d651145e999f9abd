"""Tests of the book toolchain (tefbook.toc, tefbook.parameters, tefbook.leaks and tefbook.build:
chapter selection, parameters, secrets, staging) and of the book's configuration files and
offline-assets extension. Building a whole book is in tests/test_book_secrets.py; loading it
in a browser in tests/test_book_browser.py."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import jupytext
import pytest
import yaml

from tefbook import build as book
from tefbook.build import stage_tree
from tefbook.errors import BookError
from tefbook.leaks import SecretLeakError, find_secret_leaks, guard_outputs, secret_values
from tefcore.redact import is_secret_name
from tefbook.parameters import (
    PROFILES,
    chapter_parameters,
    is_path_parameter,
    load_overrides,
    parameter_defaults,
    parse_param,
    read_chapter,
    resolve_user_paths,
    set_parameters,
)
from tefbook.toc import Chapter, filter_toc, select_chapters, toc_docnames

ROOT = Path(__file__).resolve().parents[1]
FINAL_CHAPTERS = [
    "01_derivation",
    "02_propositions",
    "03_mind_statistics",
    "04_extraction",
    "05_main_results",
    "06_ablation",
    "07_prompt_robustness",
    "08_efficiency",
    "09_calibration",
    "10_teaching_lab",
    "11_claims_ledger",
    "12_own_corpus",
]

CHAPTER_TEXT = """# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # A chapter

# %% tags=["parameters"]
limit = 8
langs = ["en", "zh"]
model: str = "local"
data_dir = None
out = str(limit)

# %%
print(limit)
"""


def _toc() -> dict:
    return {
        "format": "jb-book",
        "root": "book/intro",
        "parts": [
            {"caption": "A", "chapters": [{"file": "notebooks/01_a"}, {"file": "notebooks/02_b"}]},
            {"caption": "B", "chapters": [{"file": "notebooks/03_c"}]},
            {"caption": "C", "chapters": [{"file": "book/running"}]},
        ],
    }


def _chapters() -> list[Chapter]:
    return [
        Chapter("notebooks/01_a", Path("notebooks/01_a.py")),
        Chapter("notebooks/02_b", None),
        Chapter("notebooks/03_c", Path("notebooks/03_c.py")),
    ]


# ----------------------------------------------------------------------------- secrets


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "api_key",
        "apiKey",
        "hf_token",
        "token",
        "client_secret",
        "db_password",
        "AWS_SECRET_ACCESS_KEY",
        "private_key_path",
        "auth",
        "bearer_header",
        "key",
    ],
)
def test_secret_like_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["limit", "model", "max_tokens", "n_tokens", "langs", "prompt", "data_dir", "keyword", "monkey"]
)
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


def test_secret_values_skip_short_and_standard_variables() -> None:
    env = {
        "OPENAI_API_KEY": "sk-abcdefgh12345",
        "DEEPSEEK_API_KEY": "EMPTY",  # vLLM's placeholder: too short to search for
        "PWD": "/work/main",
        "HOME": "/root",
        "HF_TOKEN": "hf_0123456789",
    }
    assert secret_values(env) == {"OPENAI_API_KEY": "sk-abcdefgh12345", "HF_TOKEN": "hf_0123456789"}


def test_find_secret_leaks_in_raw_json_and_html_forms(tmp_path: Path) -> None:
    value = 'sk-"tricky"&<value>/42'
    (tmp_path / "raw.txt").write_text(f"x {value} y")
    (tmp_path / "nb.ipynb").write_text(json.dumps({"text": value}))
    (tmp_path / "page.html").write_text("<p>sk-&quot;tricky&quot;&amp;&lt;value&gt;/42</p>")
    (tmp_path / "clean.html").write_text("<p>nothing here</p>")
    leaks = find_secret_leaks([tmp_path], {"OPENAI_API_KEY": value})
    assert sorted(p.name for p, _ in leaks) == ["nb.ipynb", "page.html", "raw.txt"]
    assert {name for _, name in leaks} == {"OPENAI_API_KEY"}


def test_guard_outputs_deletes_and_names_variable_not_value(tmp_path: Path) -> None:
    leaked = tmp_path / "out.ipynb"
    leaked.write_text("sk-0123456789")
    clean = tmp_path / "clean.ipynb"
    clean.write_text("nothing here")
    guard_outputs([clean], "test", {"OPENAI_API_KEY": "sk-0123456789"})
    assert clean.exists()
    with pytest.raises(SecretLeakError) as info:
        guard_outputs([leaked], "test", {"OPENAI_API_KEY": "sk-0123456789"})
    assert not leaked.exists()
    assert "OPENAI_API_KEY" in str(info.value) and "sk-0123456789" not in str(info.value)


# ----------------------------------------------------------------------------- toc and chapters


def test_toc_docnames_in_reading_order() -> None:
    assert toc_docnames(_toc()) == [
        "book/intro",
        "notebooks/01_a",
        "notebooks/02_b",
        "notebooks/03_c",
        "book/running",
    ]


def test_filter_toc_keeps_pages_and_drops_empty_parts() -> None:
    kept = filter_toc(_toc(), {"notebooks/01_a"})
    assert toc_docnames(kept) == ["book/intro", "notebooks/01_a", "book/running"]
    assert [p["caption"] for p in kept["parts"]] == ["A", "C"]
    # the input is not modified
    assert len(_toc()["parts"][0]["chapters"]) == 2


def test_select_all_requires_every_source() -> None:
    with pytest.raises(BookError, match="notebooks/02_b.py"):
        select_chapters(_chapters(), None)


def test_select_existing_and_named_chapters() -> None:
    selected, skipped = select_chapters(_chapters(), ["all"])
    assert [c.name for c in selected] == ["01_a", "03_c"] and [c.name for c in skipped] == ["02_b"]
    selected, skipped = select_chapters(_chapters(), ["3", "01_a", "b"])
    assert [c.name for c in selected] == ["01_a", "03_c"] and [c.name for c in skipped] == ["02_b"]
    assert select_chapters(_chapters(), []) == ([], [])


def test_unknown_selector_names_the_chapters() -> None:
    with pytest.raises(BookError, match="01_a, 02_b, 03_c"):
        select_chapters(_chapters(), ["99"])


# ----------------------------------------------------------------------------- parameters


def test_parse_param_reads_yaml_values() -> None:
    assert parse_param("04.limit=8") == ("04", "limit", 8)
    assert parse_param("04_extraction.langs=[en, zh]") == ("04_extraction", "langs", ["en", "zh"])
    assert parse_param("extraction.model=qwen2.5-7b") == ("extraction", "model", "qwen2.5-7b")
    assert parse_param("04.data_dir=null") == ("04", "data_dir", None)


@pytest.mark.parametrize("text", ["limit=8", "04.=3", "04.li mit=3", "04.limit"])
def test_parse_param_rejects_malformed(text: str) -> None:
    with pytest.raises(BookError, match="CHAPTER.NAME=VALUE"):
        parse_param(text)


@pytest.mark.parametrize("text", ["04.api_key=sk-1", "04.openai_token=x", "04.secret=1"])
def test_parse_param_refuses_secret_names(text: str) -> None:
    with pytest.raises(BookError, match="looks like a key, token or secret"):
        parse_param(text)


def test_load_overrides_inline_and_file(tmp_path: Path) -> None:
    assert load_overrides("{04_extraction: {limit: 3}}") == {"04_extraction": {"limit": 3}}
    path = tmp_path / "p.yml"
    path.write_text("'05': {langs: [en]}\n")
    assert load_overrides(str(path)) == {"05": {"langs": ["en"]}}
    with pytest.raises(BookError, match="expected a mapping"):
        load_overrides("[1, 2]")
    with pytest.raises(BookError, match="looks like a key"):
        load_overrides("{04: {deepseek_api_key: x}}")


def test_chapter_parameters_merge_in_order() -> None:
    chapters = [Chapter("notebooks/04_extraction", Path("x.py")), Chapter("notebooks/05_main", Path("y.py"))]
    merged = chapter_parameters(
        chapters,
        chapters,
        "ci",
        {"04": {"limit": 20, "model": "e5-zeroshot"}},
        [("extraction", "limit", 5)],
    )
    # the ci profile's own value first, then the overrides' file, then -p
    assert merged == {"04_extraction": {"emulations": "all", "limit": 5, "model": "e5-zeroshot"}, "05_main": {}}
    with pytest.raises(BookError, match="unknown profile"):
        chapter_parameters(chapters, chapters, "nightly", {}, [])


def test_ci_profile_targets_real_chapters() -> None:
    for profile in PROFILES.values():
        assert set(profile) <= set(FINAL_CHAPTERS)


def test_every_profile_parameter_is_a_parameter_of_its_chapter() -> None:
    """A profile that sets a parameter a chapter no longer has stops `make book-ci` before any chapter runs."""
    for profile in PROFILES.values():
        for chapter, values in profile.items():
            notebook = jupytext.read(ROOT / "notebooks" / f"{chapter}.py")
            assert set(values) <= set(parameter_defaults(notebook)), (chapter, sorted(values))


def test_parameter_defaults_reads_literals_and_expressions() -> None:
    notebook = jupytext.reads(CHAPTER_TEXT, fmt="py:percent")
    assert parameter_defaults(notebook) == {
        "limit": 8,
        "langs": ["en", "zh"],
        "model": "local",
        "data_dir": None,
        "out": "str(limit)",
    }


def test_execute_refuses_unknown_and_secret_parameters(tmp_path: Path) -> None:
    source = tmp_path / "04_x.py"
    source.write_text(CHAPTER_TEXT)
    chapter = Chapter("notebooks/04_x", source)
    with pytest.raises(BookError, match=r"has no parameter 'limt' \(did you mean 'limit'\?\); its parameters are: limit"):
        book.execute_chapter(chapter, {"limt": 3}, tmp_path / "out")
    source.write_text(CHAPTER_TEXT.replace("data_dir = None", "api_key = None"))
    with pytest.raises(BookError, match="refusing parameter 'api_key'"):
        book.execute_chapter(chapter, {}, tmp_path / "out")
    assert not (tmp_path / "out" / "04_x.ipynb").exists()


def test_missing_kernelspec_is_a_clear_error(tmp_path: Path) -> None:
    source = tmp_path / "01_x.py"
    source.write_text("# %% tags=['parameters']\nlimit = 1\n")
    with pytest.raises(BookError, match="no kernelspec"):
        read_chapter(source)


# ----------------------------------------------------------------------------- staging


def test_stage_tree_holds_no_sources_beside_executed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "book").mkdir(parents=True)
    (root / "notebooks" / "img").mkdir(parents=True)
    (root / "_config.yml").write_text("title: t\n")
    (root / "book" / "intro.md").write_text("# Intro\n")
    (root / "notebooks" / "01_a.py").write_text("# source\n")
    (root / "notebooks" / "01_a.ipynb").write_text("{}")  # a stray paired copy
    (root / "notebooks" / "img" / "f.png").write_bytes(b"png")
    executed = tmp_path / "executed" / "01_a.ipynb"
    executed.parent.mkdir()
    executed.write_text('{"executed": true}')
    stage = stage_tree(root, tmp_path / "stage", {"root": "book/intro"}, {"notebooks/01_a": executed})
    assert sorted(p.relative_to(stage).as_posix() for p in stage.rglob("*") if p.is_file()) == [
        "_config.yml",
        "_toc.yml",
        "book/intro.md",
        "notebooks/01_a.ipynb",
        "notebooks/img/f.png",
    ]
    assert json.loads((stage / "notebooks" / "01_a.ipynb").read_text()) == {"executed": True}


# ----------------------------------------------------------------------------- config files


def test_root_toc_lists_the_final_chapters() -> None:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    names = toc_docnames(toc)
    assert names[0] == "book/intro"
    assert [n.split("/")[1] for n in names if n.startswith("notebooks/")] == FINAL_CHAPTERS
    pages = [n for n in names[1:] if n.startswith("book/")]
    assert names[-len(pages):] == pages  # the pages of book/ follow the chapters
    parts = {part["caption"]: [c["file"] for c in part["chapters"]] for part in toc["parts"]}
    assert parts["About this book"] == ["book/protocol", "book/bibliography"]
    # how to build and run the book is for maintainers: an appendix, the last part
    assert toc["parts"][-1]["caption"] == "Appendix: for maintainers"
    assert parts["Appendix: for maintainers"] == ["book/running", "book/cluster"]
    for page in ("intro", "protocol", "running", "cluster", "bibliography"):
        assert (ROOT / "book" / f"{page}.md").is_file()


def test_root_config_renders_stored_outputs_offline() -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["only_build_toc_files"] is True
    assert config["execute"]["execute_notebooks"] == "off"
    assert {"_build", ".venv", "tests", "data", "benchmarks", ".ci"} <= set(config["exclude_patterns"])
    assert config["bibtex_bibfiles"] == ["book/references.bib"]
    assert "sphinx_proof" in config["sphinx"]["extra_extensions"]
    assert config["sphinx"]["local_extensions"] == {"tef_environment": "book/_ext", "tef_findings": "book/_ext",
                                                    "tef_offline": "book/_ext", "tef_launch": "book/_ext",
                                                    "tef_equations": "book/_ext", "tef_layout": "book/_ext"}
    assert not (ROOT / "_static").exists(), "a top-level _static/ is added to every page"
    assert not list((ROOT / "book").rglob("*.js")), "no JavaScript is committed"


def test_bibliography_has_the_papers_key_references() -> None:
    text = (ROOT / "book" / "references.bib").read_text()
    keys = {
        "tefpaper",
        "bissiri2016general",
        "grunwald2017inconsistency",
        "rago1996censoring",
        "chair1986optimal",
        "varshney1997distributed",
        "cover2005elements",
        "naeini2015obtaining",
        "guo2017calibration",
        "genest1986combining",
        "tenney1981detection",
    }
    import re

    assert keys <= set(re.findall(r"@\w+\{([^,]+),", text))


# ----------------------------------------------------------------------------- tef_offline


def _load_extension():
    spec = importlib.util.spec_from_file_location("tef_offline", ROOT / "book" / "_ext" / "tef_offline.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["tef_offline"] = module
    spec.loader.exec_module(module)
    return module


def test_vega_bundle_is_scoped_and_announces_altairs_versions() -> None:
    from altair.vegalite.v6 import display

    ext = _load_extension()
    js = ext.vega_bundle_js()
    assert js.splitlines()[1] == "(function () {"
    assert "window.vegaEmbed=" in js
    debug = json.loads(js.rsplit("Object.assign(window.VEGA_DEBUG || {}, ", 1)[1].rsplit(");", 1)[0])
    assert debug == {
        "vega_version": display.VEGA_VERSION,
        "vegalite_version": display.VEGALITE_VERSION,
        "vegaembed_version": display.VEGAEMBED_VERSION,
    }


def test_stage_assets_copies_every_asset_once(tmp_path: Path) -> None:
    ext = _load_extension()
    ext.stage_assets(tmp_path)
    base = tmp_path / "tef-offline"
    for path in (
        "plotly.min.js",
        "vega-bundle.js",
        "mathjax/tex-mml-chtml.js",
        "mathjax/output/chtml/fonts/woff-v2",
        "mathjax/input/tex/extensions/ams.js",
        "mathjax/ui/menu.js",
        "mathjax/a11y/assistive-mml.js",
    ):
        assert (base / path).exists(), path
    assert (base / "plotly.min.js").stat().st_size > 3_000_000
    stamp = (base / ".stamp").read_text()
    mtime = (base / "plotly.min.js").stat().st_mtime_ns
    ext.stage_assets(tmp_path)  # unchanged versions: reused, not copied again
    assert (base / ".stamp").read_text() == stamp
    assert (base / "plotly.min.js").stat().st_mtime_ns == mtime


def test_the_front_matter_names_the_lock_and_whether_it_holds() -> None:
    spec = importlib.util.spec_from_file_location("tef_environment", ROOT / "book" / "_ext" / "tef_environment.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    config = SimpleNamespace(myst_substitutions={"repository": "this repository"})
    ext.add_environment(None, config)
    line = config.myst_substitutions.pop(ext.SUBSTITUTION)
    assert config.myst_substitutions == {"repository": "this repository"}  # the others are kept
    sha = hashlib.sha256((ROOT / "requirements" / "cpu.lock").read_bytes()).hexdigest()
    assert line.startswith(f"requirements/cpu.lock (sha256 {sha[:12]}), installed versions ")
    assert "{{ environment }}" in (ROOT / "book" / "running.md").read_text(encoding="utf-8")  # the appendix's
    assert "{{ environment }}" not in (ROOT / "book" / "intro.md").read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- execution


@pytest.mark.slow
def test_failing_chapter_is_moved_out_of_the_executed_folder(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    (root / "notebooks").mkdir(parents=True)
    (root / "book").mkdir()
    (root / "_config.yml").write_text("title: t\n")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n- file: notebooks/01_a\n")
    (root / "notebooks" / "01_a.py").write_text(
        CHAPTER_TEXT + "\n# %%\nraise ValueError('boom at ' + str(limit))\n"
    )
    assert book.main(["--root", str(root), "--chapters", "01", "--execute-only", "-p", "01.limit=3"]) == 1
    err = capfd.readouterr().err
    assert "raised ValueError: boom at 3" in err
    executed = root / "_build" / "executed"
    assert not (executed / "notebooks" / "01_a.ipynb").exists()
    failed = json.loads((executed / "failed" / "01_a.ipynb").read_text())
    assert not [c for c in failed["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    parameters = [c for c in failed["cells"] if "parameters" in c["metadata"].get("tags", [])]
    assert len(parameters) == 1 and "limit = 3\n" in "".join(parameters[0]["source"])


def test_a_misspelt_parameter_stops_the_build_before_any_chapter_runs(tmp_path: Path,
                                                                      capfd: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    (root / "notebooks").mkdir(parents=True)
    (root / "book").mkdir()
    (root / "_config.yml").write_text("title: t\n")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n- file: notebooks/01_a\n"
                                   "- file: notebooks/02_b\n")
    (root / "notebooks" / "01_a.py").write_text(CHAPTER_TEXT + "\n# %%\nraise ValueError('ran')\n")
    (root / "notebooks" / "02_b.py").write_text(CHAPTER_TEXT)
    assert book.main(["--root", str(root), "--execute-only", "-p", "02.limt=3"]) == 1
    err = capfd.readouterr().err
    assert "02_b has no parameter 'limt' (did you mean 'limit'?)" in err and "ran" not in err
    assert not (root / "_build" / "executed").exists()


@pytest.mark.slow
def test_a_build_dir_leaves_the_default_build_alone(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    (root / "notebooks").mkdir(parents=True)
    (root / "book").mkdir()
    (root / "_config.yml").write_text("title: t\n")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n- file: notebooks/01_a\n")
    (root / "notebooks" / "01_a.py").write_text(CHAPTER_TEXT)
    (root / "_build" / "html").mkdir(parents=True)
    (root / "_build" / "html" / "index.html").write_text("the book tef book built")
    ci = root / "_build" / "ci"
    assert book.main(["--root", str(root), "--chapters", "01", "--execute-only", "--build-dir", str(ci)]) == 0, \
        capfd.readouterr().err
    assert (ci / "executed" / "notebooks" / "01_a.ipynb").is_file()
    assert json.loads((ci / "book-report.json").read_text())["chapters"] == ["01_a"]
    assert not (root / "_build" / "executed").exists() and not (root / "_build" / "book-report.json").exists()
    assert (root / "_build" / "html" / "index.html").read_text() == "the book tef book built"


@pytest.mark.slow
def test_papermill_by_hand_with_the_book_engine_prints_no_transport_warning(tmp_path: Path) -> None:
    import subprocess
    import sys

    source = tmp_path / "01_a.ipynb"
    source.write_text(jupytext.writes(jupytext.reads(CHAPTER_TEXT, fmt="py:percent"), fmt="ipynb"))
    papermill = [sys.executable, "-m", "papermill"]
    runs = {engine: subprocess.run([*papermill, *(["--engine", engine] if engine else []), str(source),
                                    str(tmp_path / f"out-{engine}.ipynb"), "-p", "limit", "3"],
                                   capture_output=True, text=True, timeout=300, cwd=tmp_path)
            for engine in ("tefbook", None)}
    assert runs["tefbook"].returncode == 0, runs["tefbook"].stderr
    assert "without encryption" not in runs["tefbook"].stderr
    assert "without encryption" in runs[None].stderr  # papermill's own TCP kernel: what the engine avoids


# ----------------------------------------------------------------------------- one parameters cell


def test_set_parameters_rewrites_the_cell_in_place() -> None:
    notebook = jupytext.reads(CHAPTER_TEXT.replace("limit = 8", "# How many.\nlimit = 8  # pairs"), fmt="py:percent")
    set_parameters(notebook, {"limit": 3, "model": "e5-zeroshot", "data_dir": "/data/mind"})
    cell = next(c for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
    assert cell.source.splitlines() == [
        "# How many.", "limit = 3  # pairs", 'langs = ["en", "zh"]', "model: str = 'e5-zeroshot'",
        "data_dir = '/data/mind'", "out = str(limit)"]
    assert parameter_defaults(notebook) == {"limit": 3, "langs": ["en", "zh"], "model": "e5-zeroshot",
                                            "data_dir": "/data/mind", "out": "str(limit)"}
    assert set_parameters(notebook, {}) is notebook and parameter_defaults(notebook)["limit"] == 3


@pytest.mark.parametrize("source, values, message", [
    (CHAPTER_TEXT, {"limt": 1}, "assigns no limt"),
    (CHAPTER_TEXT, {"limit": object()}, "is not a Python literal"),
    (CHAPTER_TEXT.replace("limit = 8", "limit = other = 8"), {"limit": 1}, "together with other names"),
])
def test_set_parameters_refuses(source: str, values: dict, message: str) -> None:
    with pytest.raises(BookError, match=message):
        set_parameters(jupytext.reads(source, fmt="py:percent"), values)


# ----------------------------------------------------------------------------- paths the user typed


@pytest.mark.parametrize("name, expected", [
    ("data_dir", True), ("cache_dir", True), ("paper_dir", True), ("out", True), ("reference_caches", True),
    ("model_path", True), ("limit", False), ("models", False), ("output_format", False), ("cached", False),
])
def test_path_parameters_by_name(name: str, expected: bool) -> None:
    assert is_path_parameter(name) is expected


def test_user_paths_mean_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_user_paths({"data_dir": "data/mind", "out": "~/x", "cache_dir": "/abs", "limit": "8",
                               "paper_dir": None, "reference_caches": ""}) == {
        "data_dir": str(tmp_path / "data/mind"), "out": str(Path.home() / "x"), "cache_dir": "/abs",
        "limit": "8", "paper_dir": None, "reference_caches": ""}
    chapters = [Chapter("notebooks/04_extraction", Path("x.py")), Chapter("notebooks/05_main", Path("y.py"))]
    merged = chapter_parameters(chapters, chapters, "ci", {"05": {"cache_dir": "caches"}},
                                [("04", "data_dir", "mind"), ("04", "models", "local")])
    assert merged == {"04_extraction": {"emulations": "all", "data_dir": str(tmp_path / "mind"), "models": "local"},
                      "05_main": {"cache_dir": str(tmp_path / "caches")}}


def test_user_path_environment(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.gguf").write_bytes(b"")
    environ = {"MIND_DATA_DIR": "data/mind", "TEF_LOCAL_GGUF": "models/m.gguf", "QWEN25_7B_PATH": "Qwen/Qwen2.5-7B",
               "OTHER_DIR": "/already/absolute", "LANG": "C.UTF-8", "SOME_PATH": "  "}
    assert book.user_path_environment(environ, tmp_path) == {
        "MIND_DATA_DIR": str(tmp_path / "data/mind"),  # always: a data folder, even one not there yet
        "TEF_LOCAL_GGUF": str(tmp_path / "models/m.gguf"),  # a file that exists here
    }  # a model name that is no path here, absolute paths and other variables are left alone


RELATIVE_CHAPTER = CHAPTER_TEXT.replace("data_dir = None", "data_dir = None\ncache_dir = 'data/caches'") + """
# %%
import os
print("env", os.environ["MIND_DATA_DIR"])
print("param", data_dir)
print("cache", cache_dir)
"""


@pytest.mark.slow
def test_relative_paths_reach_the_kernel_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capfd: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    (root / "notebooks").mkdir(parents=True)
    (root / "book").mkdir()
    (root / "_config.yml").write_text("title: t\n")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n- file: notebooks/01_a\n")
    (root / "notebooks" / "01_a.py").write_text(RELATIVE_CHAPTER)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # the user's working directory: not the book root, not the kernel's folder
    monkeypatch.setenv("MIND_DATA_DIR", "my data")
    code = book.main(["--root", str(root), "--chapters", "01", "--execute-only",
                      "-p", "01.data_dir=mind", "--param-overrides", "{01: {cache_dir: caches, limit: 2}}"])
    err = capfd.readouterr().err
    assert code == 0, err
    assert "without encryption" not in err and "Traceback" not in err
    executed = json.loads((root / "_build/executed/notebooks/01_a.ipynb").read_text())
    printed = "".join("".join(o.get("text", "")) for c in executed["cells"] for o in c.get("outputs", []))
    assert printed.splitlines()[-3:] == [f"env {work / 'my data'}", f"param {work / 'mind'}",
                                         f"cache {work / 'caches'}"]
    tagged = [c for c in executed["cells"] if {"parameters", "injected-parameters"} & set(c["metadata"].get("tags", []))]
    assert len(tagged) == 1 and "limit = 2\n" in "".join(tagged[0]["source"])


def test_kernel_manager_uses_private_sockets_and_does_not_interrupt_at_shutdown(tmp_path: Path) -> None:
    import asyncio

    manager = book._kernel_manager_class(tmp_path)()
    assert (manager.transport, manager.ip) == ("ipc", str(tmp_path / "kernel"))
    sent: list[str] = []

    async def signal_kernel(signum: int) -> None:
        sent.append("signal")

    manager._async_signal_kernel = signal_kernel  # what an interrupt of a signal-mode kernel sends
    manager.kernel_spec.interrupt_mode = "signal"
    type(manager).has_kernel = property(lambda self: True)  # as if a kernel were running
    asyncio.run(manager._async_interrupt_kernel())
    assert sent == ["signal"]  # a running chapter can still be interrupted (a cell's timeout)
    manager.shutting_down = True
    asyncio.run(manager._async_interrupt_kernel())
    assert sent == ["signal"]  # but not the kernel that is being shut down


def test_help_says_what_is_read_and_written() -> None:
    text = book.build_parser().format_help()
    words = " ".join(text.split())
    assert "Reads the chapters" in words and "Writes the executed chapters" in words
    assert text.rstrip().splitlines()[-2:] == ["example:", "  MIND_DATA_DIR=data/mind tef book --chapters 03 "
                                               "-p 03.data_dir=data/mind"]


# ----------------------------------------------------------------------------- a chapter built alone

CITED_CHAPTER = CHAPTER_TEXT.replace("# # A chapter\n", """# # The cited chapter
#
# $$ a = b $$ (t-first)
#
# \\begin{align}
# c = d
# \\end{align}
#
# $$ e = f $$ (t-third)
""")
CITING_CHAPTER = CHAPTER_TEXT.replace("# # A chapter\n", """# # The citing chapter
#
# Chapter 1 ends with {eq}`t-third`.
""")


def test_absent_equations_number_the_left_out_chapters_as_the_whole_book() -> None:
    import re

    from tefbook.equations import absent_equations
    from tefbook.toc import load_toc

    toc = load_toc(ROOT)
    numbers = absent_equations(ROOT, toc, {"notebooks/10_teaching_lab"})
    labels = re.findall(r"^# \$\$ \(([a-z-]+)\)$", (ROOT / "notebooks" / "01_derivation.py").read_text(), re.M)
    assert labels and [numbers[label] for label in labels] == [f"1.{i}" for i in range(1, len(labels) + 1)]
    assert numbers["prop-model"] == "2.1"  # chapter 2's first, numbered after chapter 1's
    kept = {f"notebooks/{name}" for name in FINAL_CHAPTERS}
    assert absent_equations(ROOT, toc, kept) == {}


@pytest.mark.parametrize("name", FINAL_CHAPTERS)
def test_every_equation_a_chapter_cites_is_numbered_when_it_is_built_alone(name: str) -> None:
    """What ``tef book --chapters NN`` needs of each chapter: every ``{eq}`` label it cites is its own or
    one that :func:`tefbook.equations.absent_equations` numbers from the chapters left out."""
    import re

    from tefbook.equations import absent_equations, equation_labels
    from tefbook.toc import load_toc

    notebook = read_chapter(ROOT / "notebooks" / f"{name}.py")
    markdown = [cell.source for cell in notebook.cells if cell.cell_type == "markdown"]
    cited = {label for text in markdown for label in re.findall(r"\{eq\}`([^`]+)`", text)}
    own = set(equation_labels(markdown))
    assert cited <= own | set(absent_equations(ROOT, load_toc(ROOT), {f"notebooks/{name}"})), cited - own


def test_the_equation_extension_leaves_unknown_labels_to_sphinx() -> None:
    spec = importlib.util.spec_from_file_location("tef_equations", ROOT / "book" / "_ext" / "tef_equations.py")
    extension = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extension)

    class App:
        config = type("Config", (), {"tef_absent_equations": {"t-third": "1.3"}, "math_eqref_format": "({number})"})

    cited = extension.cite_absent_equation(App, None, {"refdomain": "math", "reftype": "eq", "reftarget": "t-third"},
                                           None)
    assert cited.astext() == "(1.3)"
    for node in ({"refdomain": "math", "reftype": "eq", "reftarget": "t-typo"},
                 {"refdomain": "std", "reftype": "ref", "reftarget": "t-third"}):
        assert extension.cite_absent_equation(App, None, node, None) is None  # Sphinx warns: the build fails


@pytest.mark.slow
def test_a_chapter_citing_a_chapter_left_out_builds_alone(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """``--chapters 02`` builds, warnings as errors, when chapter 2 cites chapter 1's equation, and the
    citation reads as in the book of both chapters."""
    import shutil

    root = tmp_path / "root"
    (root / "notebooks").mkdir(parents=True)
    shutil.copy2(ROOT / "_config.yml", root / "_config.yml")
    shutil.copytree(ROOT / "book" / "_ext", root / "book" / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "book" / "_static", root / "book" / "_static")
    shutil.copy2(ROOT / "book" / "references.bib", root / "book" / "references.bib")
    (root / "book" / "intro.md").write_text("# Intro\n")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nparts:\n- caption: A\n  numbered: true\n"
                                   "  chapters:\n  - file: notebooks/01_a\n  - file: notebooks/02_b\n")
    (root / "notebooks" / "01_a.py").write_text(CITED_CHAPTER)
    (root / "notebooks" / "02_b.py").write_text(CITING_CHAPTER)

    def citation(build: Path) -> str:
        page = (build / "html" / "notebooks" / "02_b.html").read_text()
        return page.split("Chapter 1 ends with ", 1)[1].split("</p>", 1)[0]

    assert book.main(["--root", str(root), "--build-dir", str(tmp_path / "both")]) == 0, capfd.readouterr().err
    assert book.main(["--root", str(root), "--chapters", "02", "--build-dir", str(tmp_path / "alone")]) == 0, \
        capfd.readouterr().err
    whole, alone = citation(tmp_path / "both"), citation(tmp_path / "alone")
    assert "(1.3)" in whole and "(1.3)" in alone and "tef-eqref-absent" in alone
    assert not (tmp_path / "alone" / "html" / "notebooks" / "01_a.html").exists()
