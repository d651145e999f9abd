"""The error of the book toolchain (:mod:`tefcore.book` and the modules it builds on).

:mod:`tefcore.toc`, :mod:`tefcore.parameters`, :mod:`tefcore.leaks`, :mod:`tefcore.chromium`
and :mod:`tefcore.book` raise :class:`BookError` for every problem a reader can fix (a missing
file, a bad option, a failing cell); ``python -m tefcore.book`` prints its message and exits
with status 1.
"""

from __future__ import annotations

__all__ = ["BookError"]


class BookError(RuntimeError):
    """The book cannot be executed or built; the message says why and what to do."""
