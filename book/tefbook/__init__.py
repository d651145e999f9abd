"""tefbook: the build tool of the TEF Companion (papermill driver, table of contents, parameters, leak guard, PDF).

It imports :mod:`tefcore`; :mod:`tefcore` never imports it. Run it as ``python -m tefbook`` or ``tef book``.
"""

from __future__ import annotations

__all__: list[str] = []
