"""The launch branch: the chapters that run outside the book, as notebooks for Binder and Colab.

Colab opens only ``.ipynb`` files that a GitHub repository holds, and the project commits no
notebooks (its chapters are jupytext ``.py`` files; executed notebooks are build outputs). So the
Pages workflow writes the launchable chapters (``tef_launch: true`` in their notebook metadata, see
:mod:`tefbook.repository`) as notebooks onto their own branch, :data:`~tefbook.repository.LAUNCH_BRANCH`,
where the book's Binder and Colab buttons point::

    TEF_REPOSITORY=owner/name python -m tefbook.launch --out _build/launch           # write the tree
    TEF_REPOSITORY=owner/name python -m tefbook.launch --out _build/launch --push    # and publish it

The tree holds ``notebooks/<chapter>.ipynb`` for each launchable chapter, as its student edition
(:func:`student_edition`: no solution, no teacher note, its numbers written out, its answer key sealed; its
parameters cell set to the repository's address, no outputs), a ``requirements.txt`` from which Binder installs ``tefcore``
at the revision the book was built from, and a ``README.md``. ``--push`` commits the tree on top of
the remote branch's last commit (a fast-forward, never a forced push) and pushes it; when the tree
has not changed, nothing is committed.
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib.util
import os
import pprint
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any
from pathlib import Path

import nbformat

from tefbook.errors import BookError
from tefbook.parameters import read_chapter, set_parameters
from tefbook.repository import (
    LAUNCH_BRANCH,
    REPOSITORY_ENV,
    REPOSITORY_PARAMETER,
    is_launchable,
    repository_from_env,
    repository_url,
)
from tefbook.toc import CHAPTER_DIR, find_root, load_toc, toc_chapters

__all__ = ["ANSWER_KEY_TAG", "BOOK_ONLY_TAGS", "BOOK_PACKAGES", "CHECKS_TAG", "LAUNCH_REQUIREMENTS", "STUDENT_SUFFIX",
           "commit_tree", "literal_values", "main", "render_glue", "sealed_key", "student_edition", "write_launch_tree",
           "write_student_editions", "written_out"]

#: Tags of the cells that only the book's page shows: solutions, teacher notes, the explorable figures
#: (drawn by the book's support code) and the words about the two editions.
BOOK_ONLY_TAGS: frozenset[str] = frozenset({"solution", "teacher", "explorable", "book-only"})
#: The tag of a cell that only the student edition shows (the page removes it with ``remove-cell``).
STUDENT_TAG = "student"
#: The tag of the cell that imports a chapter's checks from its module of :mod:`tefbook.chapters`: the student
#: edition writes the module's source out in its place (the module imports nothing of the book).
CHECKS_TAG = "checks"
#: The tag of the cell that fills a chapter's answer key (``ANSWER_KEY``, a dict its checks module defines) from
#: the book's code. The student edition runs it when it is written and holds only what it filled, as a literal
#: (:func:`sealed_key`): the checks cell then holds no code that computes an answer.
ANSWER_KEY_TAG = "answer-key"
#: The student edition of ``NN_name`` is ``NN_name_student.ipynb`` beside the page.
STUDENT_SUFFIX = "_student"
_GLUE = re.compile(r"\{glue:text\}`([A-Za-z_]\w*)(?::([^`]*))?`")
_MYST = re.compile(r"\{[a-z][\w:-]*\}`|^\s*(```|:::)\s*\{", re.MULTILINE)

#: What a launchable chapter's student edition needs besides tefcore (and its numpy and pandas): nothing
#: so far, since the explorable figures (altair, the book's support code) stay on the book's page.
LAUNCH_REQUIREMENTS: tuple[str, ...] = ()
#: The book's packages, which a student's machine lacks.
BOOK_PACKAGES: frozenset[str] = frozenset({"tefbook", "tefpaper", "myst_nb", "altair"})


def _git(repo: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    result = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                            env={**os.environ, **(env or {})})
    if check and result.returncode != 0:
        raise BookError(f"git {' '.join(args)} failed: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout.strip() if result.returncode == 0 else ""


def _parameter_values(notebook: Any) -> dict[str, Any]:
    """The literal values the ``parameters`` cell assigns."""
    cell = next((c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])), None)
    if cell is None:
        return {}
    values = {}
    for node in ast.parse(cell.source).body:
        if isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            values[node.target.id] = ast.literal_eval(node.value)
        elif isinstance(node, ast.Assign):
            values.update({t.id: ast.literal_eval(node.value) for t in node.targets if isinstance(t, ast.Name)})
    return values


def literal_values(notebook: Any) -> dict[str, Any]:
    r"""The names a notebook's code cells bind to literals: its parameters, and for any other name the first
    literal it is given (``strong, weak = 0.9, 0.4``; a dict of tuples); names bound otherwise are left out.

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[
    ...     nbformat.v4.new_code_cell("seed = 7", metadata={"tags": ["parameters"]}),
    ...     nbformat.v4.new_code_cell("a, b = 0.9, 0.4\ngrid = make(3)\nseed = 8\nb = 1")])
    >>> literal_values(nb)
    {'a': 0.9, 'b': 0.4, 'seed': 7}
    """
    values: dict[str, Any] = {}
    for cell in (c for c in notebook.cells if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])):
        try:
            body = ast.parse(cell.source).body
        except SyntaxError:
            continue
        for node in body:
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target, value = node.targets[0], node.value
            pairs = (zip(target.elts, value.elts) if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                     and len(target.elts) == len(value.elts) else [(target, value)])
            for name, item in pairs:
                if isinstance(name, ast.Name) and name.id not in values:
                    try:
                        values[name.id] = ast.literal_eval(item)
                    except ValueError:
                        values[name.id] = None  # bound otherwise first: not a literal of the notebook
    return {k: v for k, v in values.items() if v is not None} | _parameter_values(notebook)


def sealed_key(source: str, values: Mapping[str, Any], where: str = "the chapter") -> str:
    """The source of an answer-key cell (:data:`ANSWER_KEY_TAG`) for the student edition: the cell run with the
    notebook's literal values, and the key it fills written out as a literal (an entry that is a function is
    called first).

    Raises
    ------
    BookError
        When the cell fails with those values, or fills the key with something that is no literal.

    Examples
    --------
    >>> print(sealed_key("ANSWER_KEY.update({'exercise 1': lambda: {'salt': str(seed)}})", {"seed": 7}))
    # The answer key: for each answer, salted hashes of the right value at the precision its exercise asks
    # for. The checks hash an answer the same way and compare, so the key tells a right answer from a wrong
    # one without holding any answer.
    ANSWER_KEY.update({'exercise 1': {'salt': '7'}})
    <BLANKLINE>
    """
    namespace: dict[str, Any] = {**values, "ANSWER_KEY": {}}
    try:
        exec(compile(source, f"{where} (answer key)", "exec"), namespace)  # noqa: S102 - the book's own cell
        key = {k: v() if callable(v) else v for k, v in namespace["ANSWER_KEY"].items()}
    except Exception as exc:  # noqa: BLE001 - any failure of the chapter's code is the chapter's error
        raise BookError(f"{where}: the cell tagged {ANSWER_KEY_TAG!r} fails with the notebook's literal values "
                        f"({type(exc).__name__}: {exc})") from None
    text = pprint.pformat(key, width=110, sort_dicts=False)
    try:
        literal = ast.literal_eval(text) == key
    except (ValueError, SyntaxError):
        literal = False
    if not literal:
        raise BookError(f"{where}: the cell tagged {ANSWER_KEY_TAG!r} fills the answer key with values that are no "
                        "literals (strings, numbers, lists and dicts)")
    return ("# The answer key: for each answer, salted hashes of the right value at the precision its exercise asks\n"
            "# for. The checks hash an answer the same way and compare, so the key tells a right answer from a wrong\n"
            f"# one without holding any answer.\nANSWER_KEY.update({text})\n")


def render_glue(text: str, values: dict[str, Any], where: str = "the chapter") -> str:
    """Write each ``{glue:text}`name:format``` role of ``text`` out as its value from ``values``.

    A list is written as its items joined by commas (each with the format, ``g`` by default).

    Raises
    ------
    BookError
        When a role names no value of ``values`` (in the student edition only parameters are quoted).

    Examples
    --------
    >>> render_glue("{glue:text}`n:,d` posts at T = {glue:text}`sweep`", {"n": 2000, "sweep": [0.5, 1.0]})
    '2,000 posts at T = 0.5, 1'
    """
    def value(match: re.Match[str]) -> str:
        name, spec = match.group(1), match.group(2) or ""
        if name not in values:
            raise BookError(f"{where}: the student edition quotes {{glue:text}}`{name}`, which is no parameter; "
                            "tag the cell 'solution' or 'book-only', or write the number out")
        item = values[name]
        if isinstance(item, (list, tuple)):
            return ", ".join(format(x, spec or "g") for x in item)
        return format(item, spec)
    return _GLUE.sub(value, text)


def written_out(source: str, where: str = "the chapter") -> str:
    """A checks cell's imports from the book replaced by the source of the modules they import from.

    Raises
    ------
    BookError
        When the cell holds anything but imports, or a module it names imports from the book itself.

    Examples
    --------
    >>> text = written_out("from tefbook.chapters.ch10_checks import check_exercise_1")
    >>> "def check_exercise_1(" in text and "import tefbook" not in text
    True
    """
    parts = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("tefbook."):
            raise BookError(f"{where}: the cell tagged {CHECKS_TAG!r} may only import from a module of tefbook "
                            f"(line {node.lineno} is something else)")
        spec = importlib.util.find_spec(node.module)
        if spec is None or spec.origin is None:
            raise BookError(f"{where}: the cell tagged {CHECKS_TAG!r} imports from {node.module}, which is no module")
        text = Path(spec.origin).read_text(encoding="utf-8")
        book = [n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.Import, ast.ImportFrom))
                and any(m.split(".")[0] in BOOK_PACKAGES for m in _imported(n))]
        if book:
            raise BookError(f"{where}: {node.module} imports from the book (line {book[0].lineno}), so the "
                            "student edition could not run it where only tefcore is installed")
        parts.append(text.strip() + "\n")
    return "\n\n".join(parts)


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import statement names."""
    return [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]


def student_edition(notebook: Any, repository: str = "", where: str = "the chapter") -> Any:
    r"""The notebook a student gets: no solution, no teacher note, no markup plain Jupyter cannot read.

    Cells tagged with one of :data:`BOOK_ONLY_TAGS` are left out, and so are cells the page removes
    (``remove-cell``) unless they are tagged ``student`` or ``answer-key``; ``{glue:text}`` roles quoting a
    parameter are written out; the ``repository`` parameter is set; outputs and the jupytext pairing are
    dropped. The cell tagged ``checks`` is replaced by the source of the module it imports the checks from
    (:func:`written_out`), so the notebook runs where only tefcore is installed, and the cell tagged
    ``answer-key`` by the key it fills, sealed (:func:`sealed_key`), so no code of the notebook computes
    an answer.

    Raises
    ------
    BookError
        When a kept Markdown cell still holds MyST markup (a role, a directive) or quotes a glued value
        that is no parameter, or the answer key cannot be sealed.

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[
    ...     nbformat.v4.new_code_cell("n = 3\nrepository = ''", metadata={"tags": ["parameters"]}),
    ...     nbformat.v4.new_markdown_cell("Fuse {glue:text}`n:d` posts."),
    ...     nbformat.v4.new_markdown_cell("```{admonition} Solution\n42\n```", metadata={"tags": ["solution"]}),
    ...     nbformat.v4.new_markdown_cell("Students only.", metadata={"tags": ["remove-cell", "student"]})])
    >>> [c.source for c in student_edition(nb).cells[1:]]
    ['Fuse 3 posts.', 'Students only.']
    """
    edition = copy.deepcopy(notebook)
    kept = []
    for cell in edition.cells:
        tags = list(cell.metadata.get("tags", []))
        if BOOK_ONLY_TAGS & set(tags) or ("remove-cell" in tags and not {STUDENT_TAG, ANSWER_KEY_TAG} & set(tags)):
            continue
        tags = [t for t in tags if t not in ("remove-cell", STUDENT_TAG)]
        if tags:
            cell.metadata["tags"] = tags
        else:
            cell.metadata.pop("tags", None)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            if CHECKS_TAG in tags:
                cell.source = written_out(cell.source, where)
        kept.append(cell)
    edition.cells = kept
    set_parameters(edition, {REPOSITORY_PARAMETER: repository})
    values = _parameter_values(edition)
    literals = literal_values(edition)
    for cell in edition.cells:
        if cell.cell_type == "code" and ANSWER_KEY_TAG in cell.metadata.get("tags", []):
            cell.source = sealed_key(cell.source, literals, where)
        if cell.cell_type == "markdown":
            cell.source = render_glue(cell.source, values, where)
            markup = _MYST.search(cell.source)
            if markup:
                line = cell.source[:markup.start()].count("\n") + 1
                raise BookError(f"{where}: the student edition holds MyST markup ({markup.group(0).strip()!r}, line "
                                f"{line} of a Markdown cell) that plain Jupyter shows raw; tag the cell 'book-only'")
    edition.metadata.pop("jupytext", None)
    return edition


def write_student_editions(root: Path, folder: Path, docnames: Sequence[str], repository: str = "",
                           toc: Mapping[str, Any] | None = None) -> list[Path]:
    """Write ``<docname>_student.ipynb`` under ``folder`` for each launchable chapter among ``docnames``:
    the build puts it beside the chapter's page in the staged tree, and the page links it for download.

    Returns
    -------
    list of Path
        The notebooks written.
    """
    written = []
    for chapter in toc_chapters(root, load_toc(root) if toc is None else toc):
        if chapter.docname not in docnames or chapter.source is None or chapter.source.suffix != ".py":
            continue
        notebook = read_chapter(chapter.source)
        if is_launchable(notebook):
            target = folder / f"{chapter.docname}{STUDENT_SUFFIX}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(student_edition(notebook, repository, str(chapter.source)), target)
            written.append(target)
    return written


def write_launch_tree(root: Path, out: Path, repository: str, revision: str) -> list[Path]:
    """Write the launch branch's files into ``out`` (emptied first).

    Parameters
    ----------
    root : Path
        The book root (``_toc.yml``, ``notebooks/``).
    out : Path
        The folder to fill.
    repository : str
        ``owner/name`` (:func:`tefbook.repository.repository_from_env`).
    revision : str
        The commit the book was built from; Binder installs ``tefcore`` at it.

    Returns
    -------
    list of Path
        The notebooks written.

    Raises
    ------
    BookError
        When no chapter is launchable, or a launchable one has no ``repository`` parameter (it could not
        install tefcore where it is missing).
    """
    if out.exists():
        for path in sorted(out.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
    (out / CHAPTER_DIR).mkdir(parents=True, exist_ok=True)
    written = []
    for chapter in toc_chapters(root, load_toc(root)):
        if chapter.source is None or chapter.source.suffix != ".py":
            continue
        notebook = read_chapter(chapter.source)
        if not is_launchable(notebook):
            continue
        try:
            set_parameters(copy.deepcopy(notebook), {REPOSITORY_PARAMETER: repository})
        except BookError as exc:
            raise BookError(f"{chapter.source}: a launchable chapter needs a {REPOSITORY_PARAMETER!r} "
                            f"parameter ({exc})") from None
        edition = student_edition(notebook, repository, str(chapter.source))
        target = out / CHAPTER_DIR / f"{chapter.name}.ipynb"
        nbformat.write(edition, target)  # a plain notebook: no pairing with a .py that is not there
        written.append(target)
    if not written:
        raise BookError("no chapter is launchable (tef_launch: true in its jupytext header)")
    url = repository_url(repository)
    (out / "requirements.txt").write_text(
        f"# Installed by Binder for the notebooks of this branch (written by tefbook.launch).\n"
        f"tefcore @ git+{url}@{revision}\n" + "".join(f"{r}\n" for r in LAUNCH_REQUIREMENTS),
        encoding="utf-8")
    names = "\n".join(f"- `{p.relative_to(out).as_posix()}`" for p in written)
    (out / "README.md").write_text(
        f"# Notebooks to run on Binder or Colab\n\nThis branch is written by the book's publishing workflow "
        f"from {url} at {revision}; do not edit it. It holds the chapters that run outside the book, "
        f"as notebooks:\n\n{names}\n\nTheir first cells install `tefcore` from {url} where it is missing. "
        f"The chapters' sources are the `.py` files of `{CHAPTER_DIR}/` on the main branch.\n",
        encoding="utf-8")
    return written


def commit_tree(repo: Path, tree: Path, *, remote: str = "origin", branch: str = LAUNCH_BRANCH,
                message: str = "Notebooks for Binder and Colab", push: bool = True) -> str | None:
    """Commit the files of ``tree`` as the next commit of ``remote``'s ``branch`` and push it.

    The new commit's parent is the branch's tip on the remote (none when the branch does not exist
    yet), so the push is a fast-forward. Nothing is committed when the tree equals the tip's.

    Returns
    -------
    str or None
        The new commit, or ``None`` when nothing changed.
    """
    fetched = subprocess.run(["git", "fetch", "--quiet", remote, f"refs/heads/{branch}"], cwd=repo,
                             capture_output=True, text=True)
    parent = _git(repo, "rev-parse", "FETCH_HEAD") if fetched.returncode == 0 else None
    with tempfile.TemporaryDirectory(prefix="tef-launch-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), "GIT_WORK_TREE": str(tree.resolve())}
        _git(repo, "add", "--all", "--force", ".", env=env)
        tree_id = _git(repo, "write-tree", env=env)
    if parent and _git(repo, "rev-parse", f"{parent}^{{tree}}") == tree_id:
        return None
    commit = _git(repo, "commit-tree", tree_id, "-m", message, *(["-p", parent] if parent else []))
    if push:
        _git(repo, "push", "--quiet", remote, f"{commit}:refs/heads/{branch}")
    return commit


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tefbook.launch``: write (and with ``--push`` publish) the launch branch."""
    parser = argparse.ArgumentParser(
        prog="python -m tefbook.launch",
        description=f"Write the chapters marked tef_launch: true as notebooks for Binder and Colab, with "
                    f"${REPOSITORY_ENV} (owner/name) as their repository; with --push, commit them on the "
                    f"branch '{LAUNCH_BRANCH}' of the remote and push.")
    parser.add_argument("--out", type=Path, required=True, help="folder to write the branch's files into")
    parser.add_argument("--push", action="store_true", help=f"commit onto '{LAUNCH_BRANCH}' and push it")
    parser.add_argument("--remote", default="origin", help="the remote to push to (default origin)")
    parser.add_argument("--root", type=Path, default=None, help="book root (default: found from the cwd)")
    args = parser.parse_args(argv)
    try:
        repository = repository_from_env()
        if repository is None:
            raise BookError(f"${REPOSITORY_ENV} is not set: the notebooks need the repository's address")
        root = find_root(args.root)
        revision = _git(root, "rev-parse", "HEAD")
        written = write_launch_tree(root, args.out, repository, revision)
        print(f"wrote {len(written)} notebook(s) to {args.out}: {', '.join(p.name for p in written)}")
        if args.push:
            commit = commit_tree(root, args.out, remote=args.remote,
                                 message=f"Notebooks for Binder and Colab from {revision}")
            print(f"{LAUNCH_BRANCH}: {'unchanged' if commit is None else f'pushed {commit}'}")
    except BookError as exc:
        print(f"tefbook.launch: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
