"""The numbered equations of the chapters, for a build of some of them.

A chapter may cite another chapter's equation (``{eq}`deriv-cubic``` in chapter 2 and in the lab
cites chapter 1). When ``--chapters`` leaves the cited chapter out, Sphinx finds no such equation
and, warnings being errors, the build fails. :func:`absent_equations` reads the chapters the build
leaves out and gives each of their labelled equations the number it has in the whole book; the
local extension ``book/_ext/tef_equations.py`` renders a citation of such a label as that number
(without a link, since the page is not built). A label no chapter defines still fails the build.

Numbering, as Sphinx does it with ``numfig`` and ``math_numfig`` (``numfig_secnum_depth`` 1): the
chapters of the numbered parts of ``_toc.yml`` are numbered 1, 2, ... across the parts, and each
chapter numbers its labelled display equations (``$$ ... $$ (label)``) and its unstarred amsmath
environments ``chapter.1``, ``chapter.2``, ... in reading order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tefbook.parameters import read_chapter
from tefbook.toc import toc_chapters

__all__ = ["CONFIG_NAME", "absent_equations", "chapter_numbers", "equation_labels"]

#: The Sphinx configuration value (``sphinx.config`` of the staged ``_config.yml``) holding
#: label -> number of the equations of the chapters left out.
CONFIG_NAME = "tef_absent_equations"
#: The MyST extensions of the book's ``_config.yml`` that change how equations are parsed.
_MYST_EXTENSIONS = {"amsmath", "dollarmath", "colon_fence", "deflist", "substitution"}


def _parser() -> Any:
    """MyST's own markdown-it parser with the book's math extensions."""
    from myst_parser.config.main import MdParserConfig
    from myst_parser.mdit_to_docutils.base import DocutilsRenderer
    from myst_parser.parsers.mdit import create_md_parser

    config = MdParserConfig(enable_extensions=_MYST_EXTENSIONS, dmath_double_inline=True)
    return create_md_parser(config, DocutilsRenderer)


def equation_labels(markdown: Iterable[str]) -> list[str | None]:
    """The numbered equations of a chapter's Markdown cells, in reading order: the label of each
    labelled display equation, ``None`` for an unstarred amsmath environment (numbered, never cited).

    Examples
    --------
    >>> equation_labels(["$$ a $$ (first)\\n\\n$$ b $$\\n", "\\\\begin{align}x\\\\end{align}\\n\\n$$ c $$ (third)"])
    ['first', None, 'third']
    """
    parser = _parser()
    labels: list[str | None] = []
    for text in markdown:
        for token in parser.parse(text):
            if token.type == "math_block_label":
                labels.append(token.info)
            elif token.type == "amsmath" and not str(token.meta.get("name", "")).endswith("*"):
                labels.append(None)
    return labels


def chapter_numbers(toc: Mapping[str, Any]) -> dict[str, int]:
    """The number of every chapter of the numbered parts (docname -> 1, 2, ...; across parts, as
    Jupyter Book numbers them)."""
    numbers: dict[str, int] = {}
    for part in toc.get("parts") or []:
        if not part.get("numbered"):
            continue
        for entry in part.get("chapters") or []:
            if "file" in entry:
                numbers[str(entry["file"])] = len(numbers) + 1
    return numbers


def absent_equations(root: Path, toc: Mapping[str, Any], kept: Iterable[str]) -> dict[str, str]:
    """Label -> whole-book number (``"1.7"``) of the labelled equations of the numbered chapters that a
    build leaves out (``kept``: the docnames it builds); chapters without a source give none."""
    numbers = chapter_numbers(toc)
    kept = set(kept)
    found: dict[str, str] = {}
    for chapter in toc_chapters(root, toc):
        number = numbers.get(chapter.docname)
        if chapter.docname in kept or chapter.source is None or number is None:
            continue
        markdown = [cell.source for cell in read_chapter(chapter.source).cells if cell.cell_type == "markdown"]
        for index, label in enumerate(equation_labels(markdown), start=1):
            if label is not None:
                found[label] = f"{number}.{index}"
    return found
