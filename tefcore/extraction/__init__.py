"""Extraction: the resumable loop that asks a judge about every post and sentence and writes the cache.

:func:`run_extraction` is the one entry; the loop, its engines (local, Ray), the cache and its parts live here.
"""

from __future__ import annotations

from tefcore.extraction.run import run_extraction

__all__ = ["run_extraction"]
