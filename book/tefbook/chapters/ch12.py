"""Chapter 12 (TEF on your own data): how the chapter names the library's columns, prints its tables and lists the
commands of its path. The numbers are computed on the page."""

from __future__ import annotations

import hashlib

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tefbook.companion.labels import LANG_LABELS, yes_no
from tefcore.fusion import RULE_LABELS

__all__ = ["COLUMN_LABELS", "COMMANDS", "KEYED", "commands_block", "glue_numbers", "k_line", "label", "numbers",
           "shown"]

COLUMN_LABELS: dict[str, str] = {
    "post_id": "comment", "id": "comment", "lang": "language", "side": "gold side", "gold": "gold side",
    "rule": "rule", "weight": "weight w", "vote": "MV vote", "text": "sentence", "leans": "leans to",
    "share": "share of TEF's margin", "disagreement": "disagree\u00adment", "strongest_baseline": "strongest baseline", "baseline": "its accuracy (%)",
    "tef": "TEF", "gain": "TEF − baseline (points)", "accuracy": "accuracy (%)", "macro_f1": "macro-F1 (%)",
}
"""The page's name of each column key of the library's tables."""

KEYED: tuple[tuple[str, str], ...] = (("score_", "score of {}"), ("p_", "p({})"), ("contribution_", "w·ℓ({})"))
"""Column keys that carry a side's name after a prefix, and how the page names them."""

COMMANDS: tuple[tuple[str, str], ...] = (
    ("tef init my-study", "task.yaml, posts.csv, prompt.txt, README.md to start from"),
    ("tef validate my-study/task.yaml", "what it found, or one line per problem (load_task)"),
    ("tef extract --task my-study/task.yaml --model e5-zeroshot --out out", "score every sentence"),
    ("tef fuse --cache out/e5-zeroshot/prompt --format csv > decisions.csv", "one decision per text (decisions)"),
    ("tef explain --cache out/e5-zeroshot/prompt --task my-study/task.yaml --id p1", "which sentences decided"),
    ("tef explain --cache out/e5-zeroshot/prompt --task my-study/task.yaml --format html --out report.html",
     "the evidence view of every text"),
    ("tef evaluate --cache out/e5-zeroshot/prompt", "scores where gold exists (score_table)"),
)
"""The path of the chapter on the command line, step by step: (command, what it does)."""


def label(key: object) -> str:
    """A column key of the library's tables as the page names it; a name that is no key is kept.

    Examples
    --------
    >>> label("post_id"), label("tef"), label("p_cycling"), label("contribution_car"), label("tef_confidence")
    ('comment', 'TEF', 'p(cycling)', 'w·ℓ(car)', 'tef confidence')
    >>> label("Eq. 3 by hand")
    'Eq. 3 by hand'
    """
    key = str(key)
    if not key.isidentifier():
        return key
    if key in COLUMN_LABELS or key in RULE_LABELS:
        return COLUMN_LABELS.get(key) or RULE_LABELS[key]
    return next((form.format(key[len(pre):]) for pre, form in KEYED if key.startswith(pre)), key.replace("_", " "))


def shown(frame: pd.DataFrame, digits: int, index: bool = True, compact: bool = False, **names: str) -> Any:
    """A table as the page prints it: reader labels for the column keys (``names`` override), languages by name,
    numbers with ``digits`` decimals, missing values empty; ``compact`` narrows the cells' padding and type, so
    that a table of many columns fits the text column.

    Examples
    --------
    >>> styled = shown(pd.DataFrame({"post_id": ["t01"], "lang": ["en"], "direct": [0.25]}), 2, index=False,
    ...                direct="p(first side)")
    >>> list(styled.data.columns), styled.data.iloc[0, 1]
    (['comment', 'language', 'p(first side)'], 'English')
    """
    out = yes_no(frame)
    if "lang" in out.columns:
        out["lang"] = out["lang"].map(LANG_LABELS)
    out = out.rename(columns=lambda k: names.get(str(k)) or label(k))
    out = out.rename_axis(index=[(names.get(n) or label(n)) if n else None for n in out.index.names],
                          columns=[label(n) if n else None for n in out.columns.names])
    digest = hashlib.sha256(out.to_csv().encode("utf-8")).hexdigest()[:10]  # the same ids on every run
    styled = out.style.set_uuid(f"tef-{digest}").format(precision=digits, na_rep="", thousands=",")
    if compact:
        styled = styled.set_table_styles([{"selector": "th, td", "props": "padding: 0.2em 0.4em; font-size: 0.85em;"}])
    return styled if index else styled.hide(axis="index")


def k_line(provenance: Mapping[str, Mapping[str, Any]]) -> str:
    """The number of sides of each dimension, as the first cache's provenance records it, for the prose.

    Examples
    --------
    >>> k_line({"en": {"K": {"Housing": 2, "Transport": 3}}})
    'K = 2 for Housing, K = 3 for Transport'
    """
    return ", ".join(f"K = {k} for {d}" for d, k in next(iter(provenance.values()))["K"].items())


def commands_block() -> Any:
    """:data:`COMMANDS` as one bash block, each command under a comment saying what it does.

    Examples
    --------
    >>> commands_block().data.splitlines()[:3]
    ['```bash', '# task.yaml, posts.csv, prompt.txt, README.md to start from', 'tef init my-study']
    """
    from IPython.display import Markdown

    return Markdown("```bash\n" + "\n".join(f"# {what}\n{command}" for command, what in COMMANDS) + "\n```")


def numbers(values: Mapping[str, Any]) -> dict[str, Any]:
    """The page's numbers as plain Python values: a numpy scalar becomes its Python number, the rest is kept.

    Examples
    --------
    >>> numbers({"n": np.int64(3), "share": np.float64(0.5), "name": "TEF"})
    {'n': 3, 'share': 0.5, 'name': 'TEF'}
    >>> type(numbers({"n": np.int64(3)})["n"]).__name__
    'int'
    """
    return {name: value.item() if isinstance(value, np.generic) else value for name, value in values.items()}


def glue_numbers(values: Mapping[str, Any]) -> None:
    """Glue every number the page computed under its name, for the prose (:func:`numbers`), without showing it."""
    from myst_nb import glue

    for name, value in numbers(values).items():
        glue(name, value, display=False)
