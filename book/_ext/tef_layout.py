"""The page's contents behind a header button where wide outputs take the margin (a Sphinx extension of
the TEF Companion).

On a page with full-width cells, ``book/_static/tef.css`` moves the page's contents from the sticky
right-hand panel to the article header's "On this page" button, whose dialog the theme opens. The theme
(pydata-sphinx-theme 0.17) hooks that dialog to the first ``.secondary-toggle`` button of the page only,
the top navbar's, which the book theme hides; the header's own button does nothing. This extension adds
an inline script that forwards its clicks to the hooked button.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

__version__ = "1.0.0"

#: Forwards a click on any other "On this page" button to the one the theme listens to.
FORWARD_JS = """
document.addEventListener("DOMContentLoaded", () => {
  const [hooked, ...others] = document.querySelectorAll("button.secondary-toggle");
  const dialog = document.getElementById("pst-secondary-sidebar-modal");
  for (const button of others) {
    button.addEventListener("click", () => {
      if (!hooked || (dialog && dialog.open)) return;
      hooked.click();  // the theme moves the panel's contents and classes into its dialog
      // the book theme's scroll watcher looks the panel up by its class: keep one on it
      document.getElementById("pst-secondary-sidebar")?.classList.add("bd-sidebar-secondary");
    });
  }
});
"""


def setup(app: Sphinx) -> dict[str, Any]:
    """Add the inline script to every page."""
    app.add_js_file(None, body=FORWARD_JS)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
