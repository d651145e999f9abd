"""Sentences that several chapters still compose in code; each chapter replaces them with Markdown and glued numbers."""

from __future__ import annotations

import os
from pathlib import Path

from companion.labels import LANG_LABELS
from tefbook.toc import project_root
from tefcore.mind.release import (
    DATA_KINDS,
    FULL_RELEASE,
    DataDescription,
)

ORDER: tuple[str, str] = ("zh", "en")
"""The paper's order of the languages (its Fig. 3: (a) Chinese, (b) English)."""


def shown_path(directory: str | os.PathLike[str]) -> str:
    """A data directory as a page shows it: relative to the project folder when inside it.

    Examples
    --------
    >>> shown_path(project_root() / "data" / "mind")
    'data/mind'
    """
    path = Path(directory).resolve()
    try:
        return path.relative_to(project_root().resolve()).as_posix()
    except ValueError:
        return str(path)


def data_markdown(description: DataDescription) -> str:
    """One paragraph saying which data a page ran on: the kind, counts per language and the files' hashes.

    Parameters
    ----------
    description : DataDescription
        :func:`tefcore.mind.release.describe_data` of the page's data directory.

    Examples
    --------
    >>> from tefcore.mind.release import describe_data
    >>> text = data_markdown(describe_data())
    >>> text.startswith("This page ran on **the embedded MIND sample**")
    True
    """
    kind = {DATA_KINDS[0]: "the embedded MIND sample", DATA_KINDS[1]: "the full MIND release"}.get(
        description.kind, "custom MIND-format data")
    parts = []
    for lang in [x for x in ORDER if x in description.posts]:
        share = description.posts[lang] / FULL_RELEASE[lang]["posts"]
        of_full = "" if description.kind == DATA_KINDS[1] else f", {share:.1%} of the full release's posts"
        parts.append(f"{LANG_LABELS[lang]} {description.posts[lang]:,} posts and "
                     f"{description.pairs[lang]:,} evaluation pairs{of_full} "
                     f"(`mind_{lang}.jsonl`, SHA-256 `{description.sha256[lang][:12]}…`)")
    text = f"This page ran on **{kind}** (`{shown_path(description.directory)}`): " + "; ".join(parts) + "."
    if description.kind != DATA_KINDS[1]:
        text += " It is not the full release, whose counts are the published ones quoted beside ours."
    return text


def ledger_markdown(chapter: str) -> str:
    """The rows of the claims ledger that name a chapter, as a Markdown list of links.

    Examples
    --------
    >>> ledger_markdown("06_ablation").splitlines()[0].startswith("* <a href=")
    True
    """
    from companion.ledger import claim_link
    from tefcore.paper.ledger import LEDGER

    return "\n".join(f"* {claim_link(c.id, c.id)}: {c.words} (paper: {c.number}; {c.where})"
                     for c in LEDGER if c.chapter == chapter)
