"""Ctrl-C in tests that may be started with SIGINT ignored.

A shell starts a background job (``nohup make test &``, ``(trap '' INT; make test)``) with SIGINT
ignored, and every process it starts inherits that; Python then keeps SIGINT ignored instead of
raising :class:`KeyboardInterrupt`. A program that honours an inherited ignored SIGINT behaves
correctly, so the tests that send Ctrl-C restore the default disposition themselves:
:func:`default_sigint` in the test process, :func:`sigint_default_in_child` (a ``preexec_fn``) in
the child processes they start. (``subprocess``'s ``restore_signals`` only resets SIGPIPE, SIGXFZ
and SIGXFSZ, never SIGINT.)
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["default_sigint", "sigint_default_in_child"]


@contextmanager
def default_sigint() -> Iterator[None]:
    """Make SIGINT raise :class:`KeyboardInterrupt` in this process for the block, then restore it."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def sigint_default_in_child() -> None:
    """``preexec_fn`` for :class:`subprocess.Popen`: the child starts with SIGINT's default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
