"""The objects of the claims ledger: a claim, the evidence its check reads, the verdict it returns.

How a claim is checked (:data:`HOW`) and the ledger's sections (:data:`SECTIONS`) are defined here;
the checks are in :mod:`tefcore.paper.checks`, the claims themselves in :mod:`tefcore.paper.ledger`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from tefcore.mind.load import Post, load_posts
from tefcore.mind.release import (
    DATA_KINDS,
    data_card,
    describe_data,
    is_full_release,
)
from tefcore.paper import tables as paper

RUNS = "reproduced on our runs"
TABLES = "recomputed from the paper's own tables"
GPU = "GPU command"
CANNOT = "cannot be checked from the release"
HOW: tuple[str, ...] = (RUNS, TABLES, GPU, CANNOT)
"""How a claim is checked."""

HOW_SHORT: dict[str, str] = {RUNS: "runs", TABLES: "tables", GPU: "GPU", CANNOT: "n/a"}
"""Short labels of :data:`HOW` for compact tables."""

SECTIONS: tuple[str, ...] = (
    "Method (Sec. 3)",
    "Propositions 1 and 2 (Sec. 3)",
    "The MIND data card (Sec. 4)",
    "Headline numbers (Abstract, Sec. 1, Sec. 5)",
    "Table 3: main results",
    "Table 4: ablation",
    "Table 1: prompt robustness",
    "Table 2: efficiency",
    "Fig. 4: calibration",
)
"""Ledger sections, in the order of the ledger page."""

FORMATS: tuple[str, ...] = ("text", "csv", "markdown", "json")

HOLDS, NOT_HOLD, NOT_CHECKED, FAILS = "holds", "does not hold", "not checked", "FAILS"
SAMPLE, FULL, CUSTOM = DATA_KINDS
SLACK = 1e-9  # floating-point slack on comparisons of printed one-decimal numbers
_ID = re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*")


# --------------------------------------------------------------------------------------------------
# the objects
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """The outcome of one check.

    Attributes
    ----------
    value : str
        Our value, as printed in the ledger.
    holds : bool or None
        Whether the claim holds; ``None`` when it is not checked here.
    note : str
        How it was computed, or why it is not checked.
    """

    value: str
    holds: bool | None
    note: str = ""


class Evidence:
    """What the checks read, loaded once and on demand: the paper's tables and the MIND data at hand.

    Parameters
    ----------
    tables : mapping of str to DataFrame, optional
        The paper's tables as :func:`tefcore.paper.tables.load_tables` returns them; read from
        ``paper_dir`` when omitted.
    paper_dir : str or Path, optional
        Directory of the paper's CSV tables (default: the tables shipped with the package).
    data_dir : str or Path, optional
        MIND data directory (default: ``$MIND_DATA_DIR``, else the embedded sample).
    """

    def __init__(
        self,
        tables: Mapping[str, pd.DataFrame] | None = None,
        *,
        paper_dir: str | Path | None = None,
        data_dir: str | Path | None = None,
    ) -> None:
        self._given = dict(tables) if tables is not None else None
        self.paper_dir = paper_dir or None
        self.data_dir = data_dir or None

    @cached_property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Tables 1-4, keyed ``table1`` .. ``table4``."""
        return self._given if self._given is not None else paper.load_tables(self.paper_dir)

    def table(self, number: int) -> pd.DataFrame:
        """Table ``number`` (1-4) of the paper, tidy."""
        return self.tables[f"table{number}"]

    @cached_property
    def posts(self) -> dict[str, list[Post]]:
        """The posts of the data at hand, per language."""
        return {lang: load_posts(lang, self.data_dir) for lang in ("zh", "en")}

    @cached_property
    def cards(self) -> dict[str, dict]:
        """:func:`tefcore.mind.release.data_card` (reference segmentation) per language."""
        return {lang: data_card(posts) for lang, posts in self.posts.items()}

    @cached_property
    def dataset(self) -> str:
        """``"full MIND release"``, ``"MIND sample"`` or ``"custom data"``.

        The full release is recognised by its number of posts alone, so that its other published
        counts remain claims to check; otherwise :func:`tefcore.mind.release.describe_data` decides.
        """
        if is_full_release({lang: len(p) for lang, p in self.posts.items()}):
            return FULL
        return describe_data(self.data_dir).kind


@dataclass(frozen=True)
class Claim:
    """One checkable claim of the paper.

    Attributes
    ----------
    id : str
        Stable identifier (lower case, ``-`` and ``.``); the ledger page's anchor is
        :func:`claim_anchor` of it.
    section : str
        One of :data:`SECTIONS`.
    where : str
        Where the paper says it.
    words : str
        The paper's words (quoted or closely paraphrased).
    number : str
        The paper's number, or ``"—"``.
    chapter : str
        Stem of the chapter that examines it (``"05_main_results"``).
    how : str
        One of :data:`HOW`.
    check : callable
        ``check(evidence) -> Verdict``.
    expected : bool
        The verdict the ledger records for a checked claim: ``False`` for the statements that do not
        hold on the paper's own tables.
    """

    id: str
    section: str
    where: str
    words: str
    number: str
    chapter: str
    how: str
    check: Callable[[Evidence], Verdict]
    expected: bool = True

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.id):
            raise ValueError(f"claim id {self.id!r} must be lower-case words joined by '-' or '.'")
        if self.how not in HOW:
            raise ValueError(f"claim {self.id}: how must be one of {HOW}, got {self.how!r}")
        if self.section not in SECTIONS:
            raise ValueError(f"claim {self.id}: unknown section {self.section!r}")


class LedgerError(AssertionError):
    """Raised by :func:`assert_ledger` when a checked claim does not give the recorded verdict."""


# --------------------------------------------------------------------------------------------------
# small helpers of the checks
# --------------------------------------------------------------------------------------------------
def fmt(x: float, digits: int = 1) -> str:
    return f"{x:.{digits}f}"


def close_to(a: float, b: float) -> bool:
    """Within the rounding of a number printed with one decimal."""
    return abs(a - b) <= paper.ROUNDING_TOLERANCE + SLACK


def gpu_check(command: str, what: str) -> Callable[[Evidence], Verdict]:
    def check(ev: Evidence) -> Verdict:
        return Verdict("—", None, f"needs {what}: {command}")

    return check


def cannot_check(reason: str) -> Callable[[Evidence], Verdict]:
    def check(ev: Evidence) -> Verdict:
        return Verdict("—", None, reason)

    return check


def per_lang(values: Mapping[str, object]) -> str:
    return " / ".join(f"{values[lang]} {lang}" for lang in ("zh", "en"))


def on_data(ev: Evidence, value: str, holds: bool, *, sample_confirms: bool) -> Verdict:
    """A data-card verdict: checked on the full release, and on the sample where a sample can confirm."""
    if ev.dataset == FULL or (sample_confirms and ev.dataset == SAMPLE):
        return Verdict(value, holds, f"on the {ev.dataset}")
    why = "the claim is about MIND" if ev.dataset == CUSTOM else "needs the full release (tef download)"
    return Verdict(value, None, f"{why}; the value is that of the {ev.dataset}")


