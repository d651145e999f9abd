"""The objects of the claims ledger: a claim, what its check reads, the verdict, and the kind of evidence.

Each claim names the kind of evidence its verdict rests on (:data:`KINDS`), so that "holds" is never
read as "reproduced":

* ``run``, *reproduced by our run*: computed on caches of the paper's model that a run of ours made
  (the row names the run from its provenance: weights, engine, hardware, data);
* ``data``, *counted from the MIND files*: the data card, on the MIND data at hand;
* ``tables``, *recomputed from the paper's tables*: arithmetic on the printed Tables 1-4, with the
  pair counts of the release's files where a check needs an ``n``;
* ``formula``, *formula or simulation check*: the library's rules against the paper's formulas
  written out again, and the propositions on simulated detectors;
* ``gpu``, *GPU command, not run here*: needs the paper's model; the row gives the command, and turns
  into ``run`` when that command's caches are present;
* ``cannot``, *not checkable from the release*: the row says why.

A check is a function ``check(evidence) -> Verdict`` registered for a claim's id with :func:`check`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from tefcore.mind.load import MindFormatError, Post, load_posts, mind_filename, resolve_data_dir
from tefcore.mind.release import DATA_KINDS, data_card, describe_data, is_full_release
from tefpaper import runs as paper_runs
from tefpaper import tables as paper

KINDS: dict[str, str] = {
    "run": "reproduced by our run",
    "data": "counted from the MIND files",
    "tables": "recomputed from the paper's tables",
    "formula": "formula or simulation check",
    "gpu": "GPU command, not run here",
    "cannot": "not checkable from the release",
}
"""The kinds of evidence behind a verdict: key -> what the ledger prints."""

SECTIONS: dict[str, str] = {
    "method": "Method (Sec. 3)",
    "propositions": "Propositions 1 and 2 (Sec. 3)",
    "data": "The MIND data card (Sec. 4)",
    "headline": "Headline numbers (Abstract, Sec. 1, Sec. 5)",
    "table3": "Table 3: main results",
    "table4": "Table 4: ablation",
    "table1": "Table 1: prompt robustness",
    "table2": "Table 2: efficiency",
    "figure4": "Fig. 4: calibration",
}
"""Ledger sections in page order: key -> title."""

HOLDS, NOT_HOLD, NOT_CHECKED, FAILS = "holds", "does not hold", "not checked", "FAILS"
READER_CHECK = "(a reader's check)"
"""How ``claims.yaml`` opens the words of a row that is a standard a reviewer holds the paper's tables to,
not something the paper says."""
WHOSE: dict[str, str] = {"paper": "claim of the paper", "release": "count of the release", "reader": "reader's check"}
"""The three kinds of ledger row: key -> what the ledger prints (:attr:`Claim.whose`)."""
UNPRINTED = "not printed by the paper"
"""How the source (``where``) of a count of the release's files that the paper does not print opens."""
VERDICTS: tuple[str, ...] = (HOLDS, NOT_HOLD, NOT_CHECKED, FAILS)
READER_VERDICTS: dict[str, str] = {HOLDS: "reader's check: passes", NOT_HOLD: "reader's check: fails",
                                   NOT_CHECKED: "reader's check: not checked", FAILS: FAILS}
"""How the ledger's pages and ``tef claims`` print the verdict of a reader's check: a standard the paper never
claimed passes or fails; it never "does not hold" as a claim of the paper would. ``FAILS`` (a check that no
longer gives its recorded verdict) reads the same for both kinds of row."""
SAMPLE, FULL, CUSTOM = DATA_KINDS
_ID = re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*")


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check: our value, whether the claim holds (``None``: not checked here), how it was
    computed or why not, and the kind of evidence when it is not the claim's own (a ``gpu`` row checked
    on a cache is ``run``)."""

    value: str
    holds: bool | None
    note: str = ""
    kind: str | None = None


@dataclass(frozen=True)
class Claim:
    """One checkable claim of the paper, as ``book/tefpaper/claims.yaml`` lists it.

    Attributes
    ----------
    id, section, where, words, number, chapter
        Identifier (the ledger page's anchor), section key of :data:`SECTIONS`, where the paper says it,
        its words, its number (``"—"`` when none), the chapter that examines it.
    kind : str
        Key of :data:`KINDS`.
    expected : bool
        The verdict recorded for a checked claim: ``False`` for statements that do not hold.
    model, prompts, needs, reason : str
        ``gpu`` and ``cannot`` rows: the paper model (registry name), its prompt variants, what it needs,
        why it cannot be checked.
    premise : str
        A reader's check: what its verdict rests on beyond the printed numbers (``"none"`` when nothing).
    """

    id: str
    section: str
    where: str
    words: str
    number: str
    chapter: str
    kind: str
    expected: bool = True
    model: str = ""
    prompts: str = "original"
    needs: str = ""
    reason: str = ""
    premise: str = ""

    @property
    def whose(self) -> str:
        """``"reader"`` for a reader's check (words opening with :data:`READER_CHECK`), ``"release"`` for a count
        of the release's files the paper does not print (source opening with :data:`UNPRINTED`), else ``"paper"``.

        Examples
        --------
        >>> Claim("x", "method", "Sec. 3", "(a reader's check) y", "—", "01_derivation", "formula", premise="none").whose
        'reader'
        >>> Claim("x", "data", "not printed by the paper; counted", "labels", "1", "03_mind_statistics", "data").whose
        'release'
        """
        if self.words.startswith(READER_CHECK):
            return "reader"
        return "release" if self.where.startswith(UNPRINTED) else "paper"

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.id):
            raise ValueError(f"claim id {self.id!r} must be lower-case words joined by '-' or '.'")
        if self.kind not in KINDS or self.section not in SECTIONS:
            raise ValueError(f"claim {self.id}: unknown kind {self.kind!r} or section {self.section!r}")
        if (self.whose == "reader") != bool(self.premise):
            raise ValueError(f"claim {self.id}: a reader's check states its premise, and only a reader's check does")


class LedgerError(AssertionError):
    """Raised by :func:`tefpaper.ledger.assert_ledger` when a checked claim does not give its verdict."""


class DataUnavailable(LookupError):
    """The MIND data at hand cannot answer a data-card claim (a language's file is missing or unreadable)."""


class Evidence:
    """What the checks read, loaded once and on demand: the paper's tables, the MIND data at hand and the
    caches of the paper's models.

    Parameters
    ----------
    tables : mapping of str to DataFrame, optional
        The paper's tables (:func:`tefpaper.tables.load_tables`); read from ``paper_dir`` when omitted.
    paper_dir : str or Path, optional
        Directory of the paper's CSV tables (default: the repository's ``data/paper``, ``tables.PUBLISHED``).
    data_dir : str or Path, optional
        MIND data directory (default: ``$MIND_DATA_DIR``, else the embedded sample).
    cache_dir : str or Path, optional
        Root of probability caches (``<cache_dir>/<model>/<prompt>/<lang>.jsonl``, as ``tef reproduce``
        writes them); rows about a paper model are checked on its caches when they are there.
    """

    def __init__(self, tables: Mapping[str, pd.DataFrame] | None = None, *, paper_dir: str | Path | None = None,
                 data_dir: str | Path | None = None, cache_dir: str | Path | None = None) -> None:
        self._given = dict(tables) if tables is not None else None
        self.paper_dir, self.data_dir, self.cache_dir = paper_dir or None, data_dir or None, cache_dir or None

    @cached_property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Tables 1-4, keyed ``table1`` .. ``table4``."""
        return self._given if self._given is not None else paper.load_tables(self.paper_dir)

    def table(self, number: int) -> pd.DataFrame:
        """Table ``number`` (1-4) of the paper, tidy."""
        return self.tables[f"table{number}"]

    @cached_property
    def posts(self) -> dict[str, list[Post]]:
        """The posts of the data at hand, per language.

        Raises
        ------
        DataUnavailable
            When a language's file is missing or unreadable (the data card needs both).
        """
        posts = {}
        for lang in ("zh", "en"):
            try:
                posts[lang] = load_posts(lang, self.data_dir)
            except FileNotFoundError:
                raise DataUnavailable(f"no {mind_filename(lang)} in {resolve_data_dir(self.data_dir)}") from None
            except MindFormatError as exc:
                raise DataUnavailable(f"{mind_filename(lang)} cannot be read: {exc}") from None
        return posts

    @cached_property
    def cards(self) -> dict[str, dict]:
        """:func:`tefcore.mind.release.data_card` (reference segmentation) per language."""
        return {lang: data_card(posts) for lang, posts in self.posts.items()}

    @cached_property
    def dataset(self) -> str:
        """``"full MIND release"`` (recognised by its number of posts alone, so that its other published
        counts remain claims to check), ``"MIND sample"`` or ``"custom data"``."""
        if is_full_release({lang: len(p) for lang, p in self.posts.items()}):
            return FULL
        return describe_data(self.data_dir).kind

    def run(self, model: str, prompt: str = "original") -> paper_runs.PaperRun | None:
        """The caches of a paper model and prompt under ``cache_dir`` (both languages), or ``None``."""
        key = (model, prompt)
        found = self.__dict__.setdefault("_runs", {})
        if key not in found:
            found[key] = paper_runs.load_run(self.cache_dir, model, prompt) if self.cache_dir else None
        return found[key]


CHECKS: dict[str, Callable[[Evidence], Verdict]] = {}
"""Claim id -> its check (filled by :func:`check`)."""


def check(*ids: str) -> Callable[[Callable[[Evidence], Verdict]], Callable[[Evidence], Verdict]]:
    """Register a function as the check of the claims ``ids``."""
    def register(fn: Callable[[Evidence], Verdict]) -> Callable[[Evidence], Verdict]:
        for claim_id in ids:
            if claim_id in CHECKS:
                raise ValueError(f"claim {claim_id!r} has two checks")
            CHECKS[claim_id] = fn
        return fn
    return register


def fmt(x: float, digits: int = 1) -> str:
    """A number as the ledger prints it."""
    return f"{x:.{digits}f}"


def close_to(a: float, b: float) -> bool:
    """Within the rounding of a number printed with one decimal."""
    return abs(a - b) <= paper.ROUNDING_TOLERANCE + paper.SLACK


def per_lang(values: Mapping[str, object]) -> str:
    """``"<zh> zh / <en> en"``."""
    return " / ".join(f"{values[lang]} {lang}" for lang in ("zh", "en"))


def on_data(ev: Evidence, value: str, holds: bool, *, sample_confirms: bool, detail: str = "") -> Verdict:
    """A data-card verdict: checked on the full release, and on the sample where a sample can confirm;
    ``detail`` ends its note."""
    if ev.dataset == FULL or (sample_confirms and ev.dataset == SAMPLE):
        return Verdict(value, holds, f"on the {ev.dataset}{detail}")
    why = "the claim is about MIND" if ev.dataset == CUSTOM else "needs the full release (tef download)"
    return Verdict(value, None, f"{why}; the value is that of the {ev.dataset}{detail}")
