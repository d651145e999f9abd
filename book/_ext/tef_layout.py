"""The page's contents behind a header button where wide outputs take the margin (a Sphinx extension of
the TEF Companion).

On a page with full-width cells, ``book/_static/tef.css`` moves the page's contents from the sticky
right-hand panel to the article header's "On this page" button, whose dialog the theme opens. The theme
(pydata-sphinx-theme 0.17) hooks that dialog to the first ``.secondary-toggle`` button of the page only,
the top navbar's, which the book theme hides; the header's own button does nothing. This extension adds
an inline script that forwards its clicks to the hooked button, and fills the appendix's ``{{ wide_chapters }}``
with the chapters that have full-width cells (read from their sources), where the panel moves to that button.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

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


#: The substitution the appendix uses: the chapters whose contents panel moves to the header's button.
SUBSTITUTION = "wide_chapters"

#: A jupytext cell marker whose tags include ``full-width``.
_FULL_WIDTH = re.compile(r'^# %%.*tags=\[[^\]]*"full-width"', re.MULTILINE)


def wide_chapters(notebooks: Path) -> str:
    """The chapters (``NN_name.py`` sources under ``notebooks``) with a full-width cell, in words.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "03_a.py").write_text('# %% tags=["hide-input", "full-width"]\\nx = 1\\n')
    >>> _ = (d / "05_b.py").write_text('# %% tags=["full-width"]\\n')
    >>> _ = (d / "02_c.py").write_text("# %%\\n")
    >>> wide_chapters(d)
    'chapters 3 and 5'
    """
    numbers = [int(p.name[:2]) for p in sorted(notebooks.glob("[0-9][0-9]_*.py"))
               if _FULL_WIDTH.search(p.read_text(encoding="utf-8"))]
    if not numbers:
        return "no chapter"
    names = [str(n) for n in numbers]
    return f"chapter {names[0]}" if len(names) == 1 else f"chapters {', '.join(names[:-1])} and {names[-1]}"


def add_wide_chapters(app: Sphinx | None, config: Config) -> None:
    """Set the substitution :data:`SUBSTITUTION` to :func:`wide_chapters` of the project's ``notebooks``."""
    from tefbook.companion.runs import repo_path

    config.myst_substitutions = {**config.myst_substitutions, SUBSTITUTION: wide_chapters(repo_path("notebooks"))}


def setup(app: Sphinx) -> dict[str, Any]:
    """Add the inline script to every page and fill :data:`SUBSTITUTION`."""
    app.add_js_file(None, body=FORWARD_JS)
    app.connect("config-inited", add_wide_chapters)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
