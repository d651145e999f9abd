"""Support for the book's chapters: what only notebooks import.

:mod:`~tefcore.chapters.runs` (loading the caches of several judges and prompts),
:mod:`~tefcore.chapters.presentation` (labels, number formats, display tables),
:mod:`~tefcore.chapters.figures` (figure set-up and styling), :mod:`~tefcore.chapters.paper` (the
paper's tables), :mod:`~tefcore.chapters.claims` (the claims ledger: every checkable claim of the paper
as data), :mod:`~tefcore.chapters.experiments` (the result chapters' comparisons),
:mod:`~tefcore.chapters.provenance` (labels of runs read from their cache headers),
:mod:`~tefcore.chapters.calibration` and :mod:`~tefcore.chapters.efficiency`.
The paper's tables are package data (:mod:`tefcore.chapters.paper_tables`).
"""

from __future__ import annotations

__all__: list[str] = []
