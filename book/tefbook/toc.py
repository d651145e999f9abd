"""The book's table of contents and the choice of the chapters to build.

``_toc.yml`` (Jupyter Book 1.x) lists the pages of ``book/`` and the chapters, which live in
:data:`CHAPTER_DIR` as jupytext sources. :func:`toc_chapters` pairs each chapter with its
source, :func:`select_chapters` picks the ones ``--chapters`` names (numbers, names or
``all``), and :func:`filter_toc` writes the reduced table of contents that the staged tree is
built from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tefbook.errors import BookError

__all__ = [
    "CHAPTER_DIR",
    "PROJECT_ENV",
    "SOURCE_SUFFIXES",
    "Chapter",
    "filter_toc",
    "find_root",
    "load_toc",
    "project_root",
    "resolve_chapter",
    "select_chapters",
    "toc_chapters",
    "toc_docnames",
]

#: Folder of the chapter sources, relative to the book root.
CHAPTER_DIR = "notebooks"
#: Suffixes of chapter sources, in the order they are looked for.
SOURCE_SUFFIXES = (".py", ".md")
#: Keys under which a toc entry nests further entries.
_SUBTREE_KEYS = ("parts", "chapters", "sections")


@dataclass(frozen=True)
class Chapter:
    """One chapter of the table of contents.

    Attributes
    ----------
    docname : str
        Name in ``_toc.yml`` (``notebooks/05_main_results``).
    source : Path or None
        The jupytext source, or ``None`` when it does not exist (yet).
    """

    docname: str
    source: Path | None

    @property
    def name(self) -> str:
        """File stem, e.g. ``05_main_results``."""
        return Path(self.docname).name


PROJECT_ENV = "TEF_PROJECT_ROOT"
"""Environment variable naming the book's project folder (set by the book build for every chapter)."""


def project_root() -> Path:
    """The book's project folder: ``$TEF_PROJECT_ROOT``, else the nearest folder at or above the
    working directory that holds ``_toc.yml``, else the working directory."""
    env = os.environ.get(PROJECT_ENV, "").strip()
    if env:
        return Path(env).expanduser().absolute()
    here = Path.cwd()
    return next((d for d in (here, *here.parents) if (d / "_toc.yml").is_file()), here)


def find_root(start: Path | None = None) -> Path:
    """The book root: the first folder from ``start`` upwards holding ``_config.yml`` and
    ``_toc.yml``.

    Raises
    ------
    BookError
        When no such folder exists.
    """
    start = Path.cwd() if start is None else Path(start)
    for folder in (start.resolve(), *start.resolve().parents):
        if (folder / "_config.yml").is_file() and (folder / "_toc.yml").is_file():
            return folder
    raise BookError(
        f"no _config.yml and _toc.yml in {start} or above; run from the repository root or pass --root"
    )


def load_toc(root: Path) -> dict[str, Any]:
    """Read ``_toc.yml`` of the book root."""
    path = root / "_toc.yml"
    try:
        toc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise BookError(f"cannot read {path}: {exc}") from exc
    if not isinstance(toc, dict) or "root" not in toc:
        raise BookError(f"{path} is not a Jupyter Book table of contents (no 'root' key)")
    return toc


def toc_docnames(toc: Mapping[str, Any]) -> list[str]:
    """Every ``file`` of the table of contents, root first, in reading order."""
    names: list[str] = [str(toc["root"])]

    def walk(entries: Any) -> None:
        for entry in entries or []:
            if not isinstance(entry, Mapping):
                continue
            if "file" in entry:
                names.append(str(entry["file"]))
            for key in _SUBTREE_KEYS:
                walk(entry.get(key))

    for key in _SUBTREE_KEYS:
        walk(toc.get(key))
    return names


def _is_chapter(docname: str) -> bool:
    """Whether a toc entry is a notebook chapter (in :data:`CHAPTER_DIR`)."""
    return docname.startswith(f"{CHAPTER_DIR}/")


def filter_toc(toc: Mapping[str, Any], keep: set[str]) -> dict[str, Any]:
    """A copy of the table of contents without the chapters that are not in ``keep``.

    Pages outside :data:`CHAPTER_DIR` are always kept; parts left without chapters are
    dropped.

    Parameters
    ----------
    toc : mapping
        The parsed ``_toc.yml``.
    keep : set of str
        Docnames of the chapters to keep (``notebooks/01_derivation``).
    """

    def keep_entry(entry: Mapping[str, Any]) -> bool:
        name = entry.get("file")
        return name is None or not _is_chapter(str(name)) or str(name) in keep

    def prune(node: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``node`` with its filtered subtrees, the emptied ones left out."""
        new = dict(node)
        for key in _SUBTREE_KEYS:
            if key in new:
                new[key] = walk(new[key])
                if not new[key]:
                    del new[key]
        return new

    def walk(entries: Any) -> list[Any]:
        result = []
        for entry in entries or []:
            if not isinstance(entry, Mapping):
                result.append(entry)
                continue
            if not keep_entry(entry):
                continue
            new = prune(entry)
            if "file" not in new and not any(k in new for k in (*_SUBTREE_KEYS, "url", "glob")):
                continue
            result.append(new)
        return result

    return prune(toc)


def toc_chapters(root: Path, toc: Mapping[str, Any]) -> list[Chapter]:
    """The notebook chapters of the toc, each with its source file when it exists."""
    chapters = []
    for docname in toc_docnames(toc):
        if not _is_chapter(docname):
            continue
        source = next(
            (
                root / f"{docname}{suffix}"
                for suffix in SOURCE_SUFFIXES
                if (root / f"{docname}{suffix}").is_file()
            ),
            None,
        )
        chapters.append(Chapter(docname, source))
    return chapters


def _matches(chapter: Chapter, selector: str) -> bool:
    """Whether ``selector`` (``01``, ``1``, ``01_derivation``, ``derivation``) names a chapter."""
    selector = selector.strip().removeprefix(f"{CHAPTER_DIR}/").removesuffix(".py").removesuffix(".md")
    name = chapter.name
    number, _, rest = name.partition("_")
    if selector in {name, rest}:
        return True
    return selector.isdigit() and number.isdigit() and int(selector) == int(number)


def resolve_chapter(chapters: Sequence[Chapter], selector: str) -> Chapter:
    """The one chapter a selector names.

    Raises
    ------
    BookError
        When the selector names no chapter of the toc, or several.
    """
    found = [c for c in chapters if _matches(c, selector)]
    if len(found) != 1:
        names = ", ".join(c.name for c in chapters)
        what = "no chapter" if not found else "several chapters"
        raise BookError(f"{selector!r} names {what} of _toc.yml; chapters are: {names}")
    return found[0]


def select_chapters(
    chapters: Sequence[Chapter], selectors: Sequence[str] | None
) -> tuple[list[Chapter], list[Chapter]]:
    """Choose the chapters to execute and build.

    Parameters
    ----------
    chapters : sequence of Chapter
        The toc's chapters (:func:`toc_chapters`).
    selectors : sequence of str or None
        ``None``: every chapter, each of which must have a source. ``["all"]``: every chapter
        that has a source. Otherwise the named chapters; those without a source are skipped.

    Returns
    -------
    (selected, skipped)
        Chapters to build, in toc order, and the requested ones skipped for lack of a source.

    Raises
    ------
    BookError
        When ``selectors`` is ``None`` and a chapter has no source, or a selector names none.
    """
    if selectors is None:
        missing = [c for c in chapters if c.source is None]
        if missing:
            names = ", ".join(f"{c.docname}.py" for c in missing)
            raise BookError(
                f"chapter sources missing: {names}. Build a subset with --chapters "
                "(e.g. --chapters all, or --chapters 01 05)"
            )
        return list(chapters), []
    if [s.lower() for s in selectors] == ["all"]:
        wanted = list(chapters)
    else:
        picked = {resolve_chapter(chapters, s).docname for s in selectors}
        wanted = [c for c in chapters if c.docname in picked]
    return [c for c in wanted if c.source], [c for c in wanted if not c.source]

