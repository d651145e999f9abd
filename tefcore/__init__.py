"""tefcore: Tempered Evidence Fusion of LLM judgments, exact to the paper.

The package is flat, one module per idea: :mod:`tefcore.schema`, :mod:`tefcore.data`,
:mod:`tefcore.segment`, :mod:`tefcore.prompts`, :mod:`tefcore.fusion`, :mod:`tefcore.metrics`,
:mod:`tefcore.evaluate`, :mod:`tefcore.backends`, :mod:`tefcore.cache`, :mod:`tefcore.registry`,
:mod:`tefcore.simulate`, :mod:`tefcore.paper` and :mod:`tefcore.cli`.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
