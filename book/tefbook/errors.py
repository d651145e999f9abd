"""The error of the book toolchain (:mod:`tefbook.build` and the modules it builds on).

:mod:`tefbook.toc`, :mod:`tefbook.parameters`, :mod:`tefbook.leaks`, :mod:`tefbook.chromium`
and :mod:`tefbook.build` raise :class:`BookError` for every problem a reader can fix (a missing
file, a bad option, a failing cell); ``python -m tefbook`` prints its message and exits
with status 1.
"""

from __future__ import annotations

__all__ = ["BookError"]


class BookError(RuntimeError):
    """The book cannot be executed or built; the message says why and what to do."""
