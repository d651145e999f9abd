"""Checks on the chapter sources in ``notebooks/`` (no kernel is started).

Every chapter is a jupytext percent ``.py`` file with a kernelspec in its header and one cell
tagged ``parameters``; no parameter is named like a credential (papermill writes parameters
into the published notebook); executed ``.ipynb`` files are never committed; the chapters and
``_toc.yml`` agree; a chapter that draws plotly or altair figures calls
``tefbook.companion.figures.setup_notebook()``; no chapter reaches files through ``../`` paths (the
kernel's working directory is ``_build/executed/notebooks`` in the build and in nbval).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import jupytext
import pytest
from jupytext.formats import guess_format

from tefbook.parameters import parameter_defaults
from tefbook.toc import load_toc, toc_chapters
from tefcore.redact import is_secret_name

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("*.py"))
NO_SOURCES = pytest.mark.skip(reason="no chapter sources in notebooks/ yet")


def _params(paths: list[Path]) -> list[object]:
    """pytest parameters, one per source, or one skipped placeholder."""
    return [pytest.param(p, id=p.name) for p in paths] or [pytest.param(None, marks=NO_SOURCES)]


@pytest.mark.parametrize("source", _params(SOURCES))
def test_jupytext_percent_header_with_kernelspec(source: Path) -> None:
    """The source is a percent-format jupytext file whose header names a Python kernel."""
    text = source.read_text(encoding="utf-8")
    assert text.startswith("# ---\n"), f"{source.name}: no jupytext YAML header on the first line"
    fmt, _ = guess_format(text, ".py")
    assert fmt == "percent", f"{source.name}: jupytext reads it as {fmt!r}, not 'percent' (# %% cells)"
    kernelspec = jupytext.read(source).metadata.get("kernelspec", {})
    assert kernelspec.get("name"), f"{source.name}: the header has no kernelspec (papermill needs one)"
    assert kernelspec.get("language") == "python", f"{source.name}: kernelspec {kernelspec}"


@pytest.mark.parametrize("source", _params(SOURCES))
def test_one_parameters_cell_without_secret_names(source: Path) -> None:
    """Exactly one code cell is tagged ``parameters``; no parameter looks like a credential."""
    notebook = jupytext.read(source)
    tagged = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{source.name}: {len(tagged)} cells tagged 'parameters', want 1"
    assert tagged[0].cell_type == "code", f"{source.name}: the 'parameters' cell is not code"
    defaults = parameter_defaults(notebook)
    secret = [name for name in defaults if is_secret_name(name)]
    assert not secret, (
        f"{source.name}: parameters {secret} look like credentials; papermill writes "
        "parameters into the executed notebook, so read keys from the environment instead"
    )


@pytest.mark.parametrize("source", _params(SOURCES))
def test_figures_use_book_renderers(source: Path) -> None:
    """A chapter that imports plotly or altair calls ``setup_notebook()`` (offline rendering)."""
    code = "\n".join(c.source for c in jupytext.read(source).cells if c.cell_type == "code")
    if re.search(r"^\s*(import|from)\s+(plotly|altair)\b", code, flags=re.M):
        assert "setup_notebook(" in code, (
            f"{source.name}: imports plotly/altair but never calls "
            "tefbook.companion.figures.setup_notebook(); its figures would be blank in the book"
        )


@pytest.mark.parametrize("source", _params(SOURCES))
def test_no_parent_relative_paths(source: Path) -> None:
    """Code cells do not reach files through ``../`` (the working directory differs by runner)."""
    code = "\n".join(c.source for c in jupytext.read(source).cells if c.cell_type == "code")
    hits = re.findall(r"""["']\.\.[/\\][^"']*["']""", code)
    assert not hits, (
        f"{source.name}: relative paths {hits}; the kernel runs in _build/executed/notebooks. "
        "Locate files through tefcore (e.g. its data-directory helpers) instead"
    )


MAX_CODE_SHARE = 0.45
"""A chapter reads as a lecture: at most this share of its lines is code (QuantEcon's lectures: 26-29 %)."""


def code_share(text: str) -> float:
    """Non-blank lines outside markdown cells over all non-blank lines of a percent-format source.

    The jupytext header is left out; a cell marker line counts with its cell
    (``test_code_share_counts_lines`` checks it on a small source).
    """
    lines = text.splitlines()
    if lines and lines[0] == "# ---":
        lines = lines[lines.index("# ---", 1) + 1:]
    markdown, code, total = False, 0, 0
    for line in lines:
        if line.startswith("# %%"):
            markdown = "[markdown]" in line or "[md]" in line
        if line.strip():
            total += 1
            code += not markdown
    return code / total if total else 0.0


def test_code_share_counts_lines() -> None:
    text = "# ---\n# x: 1\n# ---\n\n# %% [markdown]\n# Text\n# more\n\n# %%\nx = 1\n"
    assert code_share(text) == 2 / 5  # "# %%" and "x = 1" of 5 non-blank lines after the header


@pytest.mark.parametrize("source", _params(SOURCES))
def test_chapter_reads_as_a_lecture(source: Path) -> None:
    """At most 45 % of a chapter's non-blank lines are code; the rest is prose."""
    share = code_share(source.read_text(encoding="utf-8"))
    assert share <= MAX_CODE_SHARE, (
        f"{source.name}: {100 * share:.0f} % of its lines are code (at most {100 * MAX_CODE_SHARE:.0f} %); "
        "move plumbing into tefbook.companion (or the chapter's module in tefbook.chapters) and keep the code that is the lesson"
    )


@pytest.mark.parametrize("source", _params(SOURCES))
def test_chapter_never_speaks_of_issues(source: Path) -> None:
    """The book speaks of TEF, never of an issue tracker the reader cannot see."""
    hits = re.findall(r"\b(?:issues?|ticket)\s*#?\d+", source.read_text(encoding="utf-8"), flags=re.I)
    assert not hits, f"{source.name}: mentions {hits}"


def test_no_ipynb_committed() -> None:
    """No ``.ipynb`` is tracked by git: executed notebooks are build outputs."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        tracked = [str(p.relative_to(ROOT)) for p in NOTEBOOKS.glob("*.ipynb")]
    else:
        result = subprocess.run(
            ["git", "ls-files", "*.ipynb"], cwd=ROOT, capture_output=True, text=True, check=True
        )
        tracked = result.stdout.split()
    assert not tracked, f"committed notebooks (build outputs, or paired copies): {tracked}"


def test_every_source_is_in_the_toc() -> None:
    """Each ``notebooks/*.py`` is a chapter of ``_toc.yml`` (nothing is silently left out)."""
    listed = {c.name for c in toc_chapters(ROOT, load_toc(ROOT))}
    orphans = [s.name for s in SOURCES if s.stem not in listed]
    assert not orphans, f"chapter sources missing from _toc.yml: {orphans}"


def test_every_toc_chapter_has_a_source() -> None:
    """Each chapter of ``_toc.yml`` has its source (``python -m tefbook`` needs all)."""
    missing = [c.docname for c in toc_chapters(ROOT, load_toc(ROOT)) if c.source is None]
    assert not missing, f"_toc.yml chapters without a notebooks/*.py source: {missing}"
