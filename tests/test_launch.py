"""The book's repository setting (``$TEF_REPOSITORY``), its launch buttons and the launch branch.

* a build given an address links every page to the repository and puts Binder and Colab buttons on the
  lab's page (and on no page of a chapter that cannot run outside the book); a build without one shows
  no link and no button, and no chapter names an address;
* the launch branch holds the launchable chapters as notebooks with the address, and is published as a
  fast-forward (tested against a local bare repository);
* the lab installs tefcore from the address where it is missing, and its student edition imports nothing
  that Colab or Binder would lack without a fallback (its checks are written out from their module).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from tefbook.errors import BookError
from tefbook.launch import commit_tree, write_launch_tree
from tefbook.repository import (
    LAUNCH_BRANCH,
    REPOSITORY_ENV,
    apply_to_config,
    is_launchable,
    repository_from_env,
)

ROOT = Path(__file__).resolve().parents[1]
LAB = "10_teaching_lab"
ADDRESS = "octo/tef-companion"


@pytest.mark.parametrize("value", ["octo", "https://github.com/octo/tef", "octo/tef/extra", "octo/tef.git",
                                   "-octo/tef", "octo/../tef", "octo/tef companion"])
def test_a_bad_address_is_a_one_line_error(value: str) -> None:
    with pytest.raises(BookError, match=f"{REPOSITORY_ENV} must be the GitHub repository as owner/name"):
        repository_from_env({REPOSITORY_ENV: value})


def test_staged_config_gets_links_only_with_an_address(tmp_path: Path) -> None:
    config = tmp_path / "_config.yml"
    shutil.copy2(ROOT / "_config.yml", config)
    apply_to_config(config, None)
    assert config.read_bytes() == (ROOT / "_config.yml").read_bytes()
    apply_to_config(config, ADDRESS)
    import yaml

    data = yaml.safe_load(config.read_text())
    assert data["repository"]["url"] == f"https://github.com/{ADDRESS}"
    assert data["repository"]["branch"] == LAUNCH_BRANCH
    assert data["html"]["use_repository_button"] is True
    assert data["html"]["favicon"] == "book/_static/favicon.svg"  # the rest of the file is kept
    assert data["launch_buttons"]["binderhub_url"] == "https://mybinder.org"
    assert data["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    # the introduction names the repository through one substitution: plain words without the setting
    assert yaml.safe_load((ROOT / "_config.yml").read_text())["parse"]["myst_substitutions"] == {
        "repository": "this repository"}
    assert data["parse"]["myst_substitutions"]["repository"] == f"[{ADDRESS}](https://github.com/{ADDRESS})"
    assert data["parse"]["myst_enable_extensions"]  # merged into parse, not replacing it


def _build(root: Path, repository: str | None) -> Path:
    """Build chapters 1 and 10 of a copy of the book in ``root``; returns its ``_build``."""
    env = {k: v for k, v in os.environ.items() if k != REPOSITORY_ENV}
    if repository:
        env[REPOSITORY_ENV] = repository
    result = subprocess.run([sys.executable, "-m", "tefbook", "--root", str(root), "--chapters", "01", "10"],
                            cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return root / "_build"


@pytest.fixture(scope="module")
def book_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("book")
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(ROOT / name, root / name)
    for folder in ("book", "notebooks"):
        shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__", "*.ipynb"))
    return root


def _links(page: Path) -> set[str]:
    import re

    return set(re.findall(r'href="(https://[^"]+)"', page.read_text(encoding="utf-8")))


def _repository_parameter(notebook_path: Path) -> str:
    """The value the notebook's parameters cell gives ``repository``."""
    notebook = nbformat.read(notebook_path, as_version=4)
    cell = next(c.source for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
    values = {t.id: ast.literal_eval(n.value) for n in ast.parse(cell).body if isinstance(n, ast.Assign)
              for t in n.targets if isinstance(t, ast.Name)}
    return values["repository"]


@pytest.mark.slow
def test_a_build_with_an_address_links_the_repository_and_launches_the_lab(book_copy: Path) -> None:
    build = _build(book_copy, ADDRESS)
    lab, chapter1 = build / "html" / "notebooks" / f"{LAB}.html", build / "html" / "notebooks" / "01_derivation.html"
    binder = f"https://mybinder.org/v2/gh/{ADDRESS}/{LAUNCH_BRANCH}?urlpath=lab/tree/notebooks/{LAB}.ipynb"
    colab = f"https://colab.research.google.com/github/{ADDRESS}/blob/{LAUNCH_BRANCH}/notebooks/{LAB}.ipynb"
    assert {f"https://github.com/{ADDRESS}", binder, colab} <= _links(lab)
    links = _links(chapter1)  # chapter 1 needs the book's support: the repository link, no launch button
    assert f"https://github.com/{ADDRESS}" in links
    assert not any("mybinder" in u or "colab" in u for u in links), links
    assert _repository_parameter(build / "executed" / "notebooks" / f"{LAB}.ipynb") == ADDRESS
    intro = (build / "html" / "book" / "intro.html").read_text(encoding="utf-8")
    assert f'href="https://github.com/{ADDRESS}">{ADDRESS}</a>' in intro.replace('class="reference external" ', "")


@pytest.mark.slow
def test_a_build_without_an_address_has_no_link_and_no_button(book_copy: Path) -> None:
    build = _build(book_copy, None)
    for page in (build / "html").rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for marker in ("mybinder.org", "colab.research.google.com", ADDRESS, "launch-buttons",
                       "Source repository"):
            assert marker not in text, f"{page.relative_to(build)} holds {marker!r}"
    assert _repository_parameter(build / "executed" / "notebooks" / f"{LAB}.ipynb") == ""
    assert "library in this repository" in (build / "html" / "book" / "intro.html").read_text(encoding="utf-8")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}).stdout.strip()


def test_launch_tree_holds_the_launchable_chapters_with_the_address(tmp_path: Path) -> None:
    written = write_launch_tree(ROOT, tmp_path / "tree", ADDRESS, "0123abc")
    assert [p.name for p in written] == [f"{LAB}.ipynb"]
    notebook = nbformat.read(written[0], as_version=4)
    assert _repository_parameter(written[0]) == ADDRESS
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")
    assert "jupytext" not in notebook.metadata
    requirements = (tmp_path / "tree" / "requirements.txt").read_text()
    assert f"tefcore @ git+https://github.com/{ADDRESS}@0123abc" in requirements
    assert "tef-companion-book" not in requirements  # the lab needs nothing of the book's tools


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_launch_branch_is_published_as_a_fast_forward(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    _git(tmp_path, "init", "--quiet", "--bare", str(remote))
    _git(tmp_path, "init", "--quiet", str(work))
    (work / "x.txt").write_text("main\n")
    _git(work, "add", "x.txt")
    _git(work, "commit", "--quiet", "-m", "main")
    _git(work, "remote", "add", "origin", str(remote))
    tree = tmp_path / "tree"
    (tree / "notebooks").mkdir(parents=True)
    (tree / "notebooks" / "lab.ipynb").write_text("{}\n")
    for key in ("GIT_AUTHOR", "GIT_COMMITTER"):
        monkeypatch.setenv(f"{key}_NAME", "t")
        monkeypatch.setenv(f"{key}_EMAIL", "t@example.org")
    first = commit_tree(work, tree)
    assert first and _git(remote, "rev-parse", f"refs/heads/{LAUNCH_BRANCH}") == first
    assert commit_tree(work, tree) is None  # nothing changed: no commit
    (tree / "notebooks" / "lab.ipynb").write_text('{"cells": []}\n')
    second = commit_tree(work, tree)
    assert _git(remote, "rev-parse", f"refs/heads/{LAUNCH_BRANCH}") == second
    assert _git(remote, "rev-parse", f"{second}^") == first  # a fast-forward of the published branch
    assert _git(remote, "ls-tree", "-r", "--name-only", second).split() == ["notebooks/lab.ipynb"]


def _lab_cells() -> list[nbformat.NotebookNode]:
    return [c for c in jupytext.read(ROOT / "notebooks" / f"{LAB}.py").cells if c.cell_type == "code"]


def test_lab_is_launchable_and_installs_tefcore_where_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cell after the parameters installs tefcore from the address when it is missing, says in
    one line what to do without an address, and does nothing where tefcore is installed."""
    assert is_launchable(jupytext.read(ROOT / "notebooks" / f"{LAB}.py"))
    cells = _lab_cells()
    at = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    install = cells[at + 1].source
    calls: list[list[str]] = []
    monkeypatch.setattr(subprocess, "run", lambda command, **kwargs: calls.append(command))
    exec(install, {"repository": ADDRESS})  # noqa: S102 - tefcore is installed here: nothing happens
    assert calls == []
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tefcore" else real(name, *a))
    exec(install, {"repository": ADDRESS})  # noqa: S102
    assert calls == [[sys.executable, "-m", "pip", "install", "--quiet", f"tefcore @ git+https://github.com/{ADDRESS}"]]
    with pytest.raises(ModuleNotFoundError, match="set `repository` to owner/name"):
        exec(install, {"repository": ""})  # noqa: S102


#: What Colab and Binder (with the launch branch's requirements) have besides the standard library.
COLAB_HAS = {"numpy", "pandas", "scipy", "altair", "IPython", "tefcore"}


def test_launchable_chapters_import_only_what_colab_has() -> None:
    """Every import of a launchable chapter's student edition (what Colab and Binder open) is of the
    standard library, of a package Colab and the launch branch provide, or guarded by ``except ImportError``
    (the book's own renderers and glue); its checks are written out, not imported from the book."""
    from tefbook.launch import student_edition

    for source in sorted((ROOT / "notebooks").glob("*.py")):
        if not is_launchable(jupytext.read(source)):
            continue
        edition = student_edition(jupytext.read(source), ADDRESS, str(source))
        for cell in (c for c in edition.cells if c.cell_type == "code"):
            tree = ast.parse("\n".join(line for line in cell.source.splitlines() if not line.startswith(("%", "!"))))
            guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try)
                       and any(isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
                               for h in t.handlers)
                       for n in ast.walk(ast.Module(body=t.body, type_ignores=[]))}
            for node in ast.walk(tree):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in guarded:
                    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                    for name in names:
                        top = name.split(".")[0]
                        assert top in sys.stdlib_module_names or top in COLAB_HAS, (
                            f"{source.name} imports {name} unguarded: Colab and Binder would lack it")


def test_a_checks_cell_imports_only_a_module_that_needs_no_book() -> None:
    """The checks cell is written out from the modules it imports; anything else in it, a module that is
    not there or one that imports the book is a one-line error."""
    from tefbook.launch import written_out

    assert "def check_exercise_7(" in written_out("from tefbook.chapters.ch10_checks import check_exercise_7")
    for source, message in (("x = 1", "may only import from a module of tefbook"),
                            ("from tefbook.chapters.ch99 import f", "which is no module"),
                            ("from tefbook.launch import student_edition", "imports from the book")):
        with pytest.raises(BookError, match=message):
            written_out(source, "lab.py")


def test_an_answer_key_cell_is_sealed_or_a_one_line_error() -> None:
    """The cell tagged answer-key runs with the notebook's literal values when the student edition is written,
    and only the key it fills is kept, as a literal; a cell that fails, or fills the key with anything but
    literals, is a one-line error naming the chapter."""
    from tefbook.launch import sealed_key, student_edition

    cells = [nbformat.v4.new_code_cell("seed = 7\nrepository = ''", metadata={"tags": ["parameters"]}),
             nbformat.v4.new_code_cell("ANSWER_KEY = {}", metadata={"tags": ["checks-like"]}),
             nbformat.v4.new_code_cell("strong, weak = 0.9, 0.4"),
             nbformat.v4.new_code_cell("ANSWER_KEY.update({'ex': lambda: {'n': seed * strong}})",
                                       metadata={"tags": ["remove-cell", "answer-key"]})]
    edition = student_edition(nbformat.v4.new_notebook(cells=cells))
    assert edition.cells[-1].source.endswith("ANSWER_KEY.update({'ex': {'n': 6.3}})\n")
    assert "lambda" not in edition.cells[-1].source and edition.cells[-1].metadata["tags"] == ["answer-key"]
    for source, message in (("ANSWER_KEY.update({'ex': missing})", "fails with the notebook's literal values"),
                            ("ANSWER_KEY.update({'ex': object()})", "fills the answer key with values that are no literals")):
        with pytest.raises(BookError, match=f"lab.py: the cell tagged 'answer-key' {message}"):
            sealed_key(source, {}, "lab.py")


def test_no_address_is_committed() -> None:
    """The address is read at build time only: the committed configuration and workflow name none."""
    for name in ("_config.yml", ".github/workflows/pages.yml"):
        assert "github.com/" not in (ROOT / name).read_text(encoding="utf-8"), name


def test_launch_branch_and_build_hand_out_the_student_edition(tmp_path: Path) -> None:
    """Binder and Colab open the student edition (no solution, no teacher note), and the build writes the
    same edition beside the lab's page for download; a chapter that is not launchable gets none."""
    from tefbook.launch import write_student_editions

    written = write_launch_tree(ROOT, tmp_path / "tree", ADDRESS, "0123abc")
    text = "\n".join(c.source for c in nbformat.read(written[0], as_version=4).cells)
    assert "This is the student edition of the lab" in text
    assert "{admonition} Solution" not in text and "For the teacher" not in text and "{glue" not in text
    editions = write_student_editions(ROOT, tmp_path / "stage", [f"notebooks/{LAB}", "notebooks/01_derivation"],
                                      ADDRESS)
    assert editions == [tmp_path / "stage" / "notebooks" / f"{LAB}_student.ipynb"]
    assert _repository_parameter(editions[0]) == ADDRESS
    lab = (ROOT / "notebooks" / f"{LAB}.py").read_text(encoding="utf-8")
    assert f"{{download}}`download the student notebook <{LAB}_student.ipynb>`" in lab  # the page links it
