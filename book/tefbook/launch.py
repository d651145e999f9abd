"""The launch branch: the chapters that run outside the book, as notebooks for Binder and Colab.

Colab opens only ``.ipynb`` files that a GitHub repository holds, and the project commits no
notebooks (its chapters are jupytext ``.py`` files; executed notebooks are build outputs). So the
Pages workflow writes the launchable chapters (``tef_launch: true`` in their notebook metadata, see
:mod:`tefbook.repository`) as notebooks onto their own branch, :data:`~tefbook.repository.LAUNCH_BRANCH`,
where the book's Binder and Colab buttons point::

    TEF_REPOSITORY=owner/name python -m tefbook.launch --out _build/launch           # write the tree
    TEF_REPOSITORY=owner/name python -m tefbook.launch --out _build/launch --push    # and publish it

The tree holds ``notebooks/<chapter>.ipynb`` for each launchable chapter (its parameters cell set to
the repository's address, no outputs), a ``requirements.txt`` from which Binder installs ``tefcore``
at the revision the book was built from, and a ``README.md``. ``--push`` commits the tree on top of
the remote branch's last commit (a fast-forward, never a forced push) and pushes it; when the tree
has not changed, nothing is committed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
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

__all__ = ["LAUNCH_REQUIREMENTS", "commit_tree", "main", "write_launch_tree"]

#: What a launchable chapter needs besides tefcore (and what Binder's image lacks): the lab's figure.
#: Nothing of the book's own tools: a launchable chapter imports them only where they exist.
LAUNCH_REQUIREMENTS: tuple[str, ...] = ("altair>=5.4",)


def _git(repo: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    result = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                            env={**os.environ, **(env or {})})
    if check and result.returncode != 0:
        raise BookError(f"git {' '.join(args)} failed: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout.strip() if result.returncode == 0 else ""


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
            set_parameters(notebook, {REPOSITORY_PARAMETER: repository})
        except BookError as exc:
            raise BookError(f"{chapter.source}: a launchable chapter needs a {REPOSITORY_PARAMETER!r} "
                            f"parameter ({exc})") from None
        target = out / CHAPTER_DIR / f"{chapter.name}.ipynb"
        notebook.metadata.pop("jupytext", None)  # a plain notebook: no pairing with a .py that is not there
        nbformat.write(notebook, target)
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
