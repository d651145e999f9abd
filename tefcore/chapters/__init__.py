"""Support for the book's chapters: what only notebooks import.

:mod:`~tefcore.chapters.runs` (loading the caches of several judges and prompts),
:mod:`~tefcore.chapters.presentation` (labels, number formats, display tables),
:mod:`~tefcore.chapters.figures` (figure set-up and styling), :mod:`~tefcore.chapters.paper` (the
paper's tables and the checks of its claims), :mod:`~tefcore.chapters.experiments` (the result
chapters' comparisons), :mod:`~tefcore.chapters.calibration` and :mod:`~tefcore.chapters.efficiency`.
The paper's tables are package data (:mod:`tefcore.chapters.paper_tables`).
"""

from __future__ import annotations

__all__: list[str] = []
