"""What the book found, on the front page (a Sphinx extension of the TEF Companion).

The introduction writes ``{{ findings }}`` on a line of its own; this extension fills that substitution when
the build starts with :func:`tefbook.companion.findings.findings_markdown`: a table computed from the committed caches,
the paper's tables and the claims ledger by the same functions the chapters call. The appendix's
``{{ smollm_caches }}`` gets the pairs each SmolLM2 cache holds, counted from the caches.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from sphinx.application import Sphinx
from sphinx.config import Config

__version__ = "1.0.0"

#: The substitution the introduction uses.
SUBSTITUTION = "findings"

#: The substitution the appendix uses: the pairs each SmolLM2 cache holds, counted from the caches.
CACHES_SUBSTITUTION = "smollm_caches"


#: What the page says where the committed caches are not there to compute the findings from.
NO_CACHES = "*(The findings are computed from the committed caches in `data/caches`, which this build does not have.)*"


def _root_page_uses_it(srcdir: Path) -> bool:
    """Whether the book's root page (the ``root`` of its ``_toc.yml``) writes ``{{ findings }}``."""
    toc = srcdir / "_toc.yml"
    root = yaml.safe_load(toc.read_text(encoding="utf-8")).get("root", "") if toc.is_file() else ""
    page = srcdir / f"{root}.md"
    return bool(root) and page.is_file() and f"{{{{ {SUBSTITUTION} }}}}" in page.read_text(encoding="utf-8")


def add_findings(app: Sphinx | None, config: Config) -> None:
    """Set the substitution :data:`SUBSTITUTION` to the findings table (computed now, about half a minute),
    when the root page uses it; a book without the committed caches gets :data:`NO_CACHES` instead."""
    from tefbook.companion.findings import findings_markdown
    from tefbook.companion.runs import repo_path

    if app is not None and not _root_page_uses_it(Path(app.srcdir)):
        return
    caches = repo_path("data/caches")
    table = findings_markdown(caches) if caches.is_dir() else NO_CACHES
    config.myst_substitutions = {**config.myst_substitutions, SUBSTITUTION: table}


def add_cache_pairs(app: Sphinx | None, config: Config) -> None:
    """Set the substitution :data:`CACHES_SUBSTITUTION` to the pairs of every SmolLM2 cache
    (:func:`tefbook.companion.findings.cache_pairs_markdown`); :data:`NO_CACHES` without the committed caches."""
    from tefbook.companion.findings import cache_pairs_markdown
    from tefbook.companion.runs import repo_path

    caches = repo_path("data/caches")
    table = cache_pairs_markdown(caches) if (caches / "local").is_dir() else NO_CACHES
    config.myst_substitutions = {**config.myst_substitutions, CACHES_SUBSTITUTION: table}


def setup(app: Sphinx) -> dict[str, Any]:
    """Fill the substitutions once the configuration is read (before any page is parsed)."""
    app.connect("config-inited", add_findings)
    app.connect("config-inited", add_cache_pairs)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
