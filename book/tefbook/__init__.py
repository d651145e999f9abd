"""tefbook: the build tool of the TEF Companion (papermill driver, table of contents, parameters, leak guard, PDF).

It imports :mod:`tefcore`; :mod:`tefcore` never imports it. Run it as ``python -m tefbook`` or ``tef book``.
The chapters' support lives beside the build tool and is walled off from it: :mod:`tefbook.companion` (what
several chapters share) and :mod:`tefbook.chapters` (one module per chapter). This file imports nothing, so a
chapter's import of its support does not load the build toolchain.
"""

from __future__ import annotations

__all__: list[str] = []
