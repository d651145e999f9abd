"""Citations of the equations of chapters a partial build leaves out (a Sphinx extension of the TEF
Companion).

``tef book --chapters 10`` builds the lab without chapter 1, whose equations the lab cites; Sphinx would
warn "equation not found" and the build, warnings being errors, would fail. The build tool
(:mod:`tefbook.equations`) writes the labels of the left-out chapters' equations, with the numbers they
have in the whole book, into the configuration value ``tef_absent_equations``; this extension renders a
citation of such a label as that number, in the book's format (``math_eqref_format``), without a link.
Any other unresolved equation is left to Sphinx, which warns.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

__version__ = "1.0.0"

#: The configuration value: label -> number (``"1.7"``) of each equation of a chapter left out.
CONFIG_NAME = "tef_absent_equations"


def cite_absent_equation(app: Sphinx, env: Any, node: Any, contnode: Any) -> nodes.Node | None:
    """The number of a cited equation whose chapter is not built, or ``None`` (Sphinx warns as usual)."""
    if node.get("refdomain") != "math" or node.get("reftype") != "eq":
        return None
    number = (getattr(app.config, CONFIG_NAME, None) or {}).get(node.get("reftarget"))
    if number is None:
        return None
    text = app.config.math_eqref_format.format(number=number) if app.config.math_eqref_format else f"({number})"
    return nodes.inline(text, text, classes=["tef-eqref-absent"])


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the configuration value and the handler of unresolved references."""
    app.add_config_value(CONFIG_NAME, {}, "env")
    app.connect("missing-reference", cite_absent_equation)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
