"""Launch buttons only where a chapter runs outside the book (a Sphinx extension of the TEF Companion).

With a repository address (``$TEF_REPOSITORY``, see :mod:`tefbook.repository`) the theme adds Binder
and Colab buttons to every notebook page. Most chapters need the project's checkout, its data and the
book's support code, so a button there would open a notebook that cannot run. This extension keeps the
buttons on the pages of chapters whose notebook metadata says ``tef_launch: true`` (chapters that need
only ``tefcore`` and install it themselves) and removes them from every other page.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

__version__ = "1.0.0"

#: Notebook metadata key of a launchable chapter (tefbook.repository.LAUNCH_METADATA).
LAUNCH_METADATA = "tef_launch"
#: The label of the theme's group of launch buttons (sphinx-book-theme).
LAUNCH_GROUP = "launch-buttons"


def is_launchable(app: Sphinx, pagename: str) -> bool:
    """Whether the page's notebook metadata marks it launchable (myst-nb passes notebook metadata to the
    page's metadata, as text)."""
    value = app.env.metadata.get(pagename, {}).get(LAUNCH_METADATA)
    return str(value).strip().lower() == "true"


def _keep_launch_buttons_on_launchable_pages(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    buttons = context.get("header_buttons")
    if isinstance(buttons, list) and not is_launchable(app, pagename):
        buttons[:] = [b for b in buttons if not (isinstance(b, dict) and b.get("label") == LAUNCH_GROUP)]


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the handler after the theme's (which adds the buttons at priority 501)."""
    app.connect("html-page-context", _keep_launch_buttons_on_launchable_pages, priority=600)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
