"""The environment a build ran in, on the front matter (a Sphinx extension of the TEF Companion).

The introduction writes ``{{ environment }}``; this extension fills that substitution when the build starts
with :func:`tefbook.lockfile.describe_lock`: the lock the packages were installed from
(``requirements/cpu.lock``), the first 12 hex digits of its sha256, and whether the installed versions are
the locked ones (or which differ).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

from tefbook.lockfile import describe_lock, lock_status

__version__ = "1.0.0"

#: The substitution the introduction uses.
SUBSTITUTION = "environment"


def add_environment(app: Sphinx, config: Config) -> None:
    """Set the substitution :data:`SUBSTITUTION` to the line of :func:`tefbook.lockfile.describe_lock`."""
    config.myst_substitutions = {**config.myst_substitutions, SUBSTITUTION: describe_lock(lock_status())}


def setup(app: Sphinx) -> dict[str, Any]:
    """Fill the substitution once the configuration is read (before any page is parsed)."""
    app.connect("config-inited", add_environment)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
