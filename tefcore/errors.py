"""The one error of a lookup by name, shared by every room of the library (it imports nothing of tefcore)."""

from __future__ import annotations

__all__ = ["UnknownName"]


class UnknownName(KeyError, ValueError):
    """A name that is not there: a dimension, side, language, rule, metric, model or prompt variant.

    It is a :class:`KeyError` (a :class:`LookupError`, as Python's own lookups and the reference release
    raise) and a :class:`ValueError` (as tefcore raised before), and prints its one-line message as
    written, which names the valid choices (a plain KeyError would print it quoted).

    Examples
    --------
    >>> err = UnknownName("unknown dimension 'Sports'; expected one of ['Economy']")
    >>> print(err)
    unknown dimension 'Sports'; expected one of ['Economy']
    >>> isinstance(err, KeyError), isinstance(err, ValueError)
    (True, True)
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""
