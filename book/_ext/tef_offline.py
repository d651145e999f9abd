"""Serve MathJax, plotly.js and the vega bundle from installed Python packages.

Jupyter Book's HTML loads MathJax, plotly.js and vega from CDNs, so a book viewed without a
network shows raw LaTeX and blank figures. This Sphinx extension makes the book
self-contained without committing any JavaScript:

* on ``config-inited`` it points ``mathjax_path`` at a local copy of MathJax 3.2.2;
* on ``builder-inited`` it copies, into a build-time folder added to ``html_static_path``
  (and so into ``_static/tef-offline/`` of the output):

  - ``plotly.min.js`` from the ``plotly`` package,
  - the vega / vega-lite / vega-embed bundle of ``vl_convert.javascript_bundle()``, wrapped in
    a function scope (the bundle declares top-level ``const``\\ s) and followed by a global
    ``VEGA_DEBUG`` object naming the versions that altair's HTML template asks for, so that
    the template skips its CDN loads and uses the global ``vegaEmbed``,
  - MathJax 3.2.2 from the data-only ``django-static-mathjax`` wheel
    (``es5/tex-mml-chtml.js`` with ``output/chtml``, ``input/tex/extensions``, ``ui``, ``a11y``);

* on ``html-page-context`` it adds ``plotly.min.js`` and the vega bundle to exactly the pages
  whose body holds a plotly or an altair figure, and drops repeated identical scripts (Jupyter
  Book's sphinx-thebe registers its inline configuration twice, a SyntaxError in browsers).

Nothing is written to a top-level ``_static/``: Jupyter Book adds every ``.js``/``.css`` found
there to every page.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError
from sphinx.util import logging

__version__ = "1.0.0"

logger = logging.getLogger(__name__)

#: Sub-folder of ``_static`` that holds every vendored asset.
ASSET_DIR = "tef-offline"
PLOTLY_JS = f"{ASSET_DIR}/plotly.min.js"
VEGA_JS = f"{ASSET_DIR}/vega-bundle.js"
MATHJAX_JS = f"{ASSET_DIR}/mathjax/tex-mml-chtml.js"
#: The parts of MathJax's ``es5`` folder that ``tex-mml-chtml.js`` loads at run time.
MATHJAX_PARTS = ("tex-mml-chtml.js", "output/chtml", "input/tex/extensions", "ui", "a11y")
#: Markers in a page body that tell which bundles the page needs.
PLOTLY_MARKERS = ('class="plotly-graph-div"',)
VEGA_MARKERS = ('<div id="altair-viz-',)


def _package_dir(module: str, extra: str) -> Path:
    """Return the directory of an installed module or raise a clear error.

    Parameters
    ----------
    module : str
        Importable module name (found without importing it).
    extra : str
        Name of the PyPI distribution to install when it is missing.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ExtensionError(
            f"tef_offline: the Python module {module!r} is missing; install {extra!r} "
            "(the book's tools install it: pip install -e ./book)"
        )
    return Path(spec.origin).parent


def plotly_js_path() -> Path:
    """Path of ``plotly.min.js`` inside the installed ``plotly`` package."""
    path = _package_dir("plotly", "plotly") / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise ExtensionError(f"tef_offline: {path} not found in the plotly package")
    return path


def mathjax_es5_dir() -> Path:
    """Path of MathJax's ``es5`` folder inside ``django-static-mathjax``."""
    path = _package_dir("mathjax", "django-static-mathjax") / "static" / "mathjax" / "es5"
    if not (path / "tex-mml-chtml.js").is_file():
        raise ExtensionError(f"tef_offline: {path}/tex-mml-chtml.js not found")
    return path


def vega_versions() -> dict[str, str]:
    """The versions altair's HTML template compares with ``VEGA_DEBUG`` before a CDN load.

    The template derives each key from the library name with its first ``-`` removed
    (``vega_version``, ``vegalite_version``, ``vegaembed_version``).
    """
    from altair.vegalite.v6 import display

    return {
        "vega_version": str(display.VEGA_VERSION),
        "vegalite_version": str(display.VEGALITE_VERSION),
        "vegaembed_version": str(display.VEGAEMBED_VERSION),
    }


def vega_bundle_js() -> str:
    """The vega bundle of ``vl-convert-python`` as a classic script.

    The bundle ends by assigning ``window.vegaEmbed``, ``window.vega`` and
    ``window.vegaLite``; its top-level ``const`` declarations are kept out of the global
    scope by an immediately invoked function.
    """
    try:
        import vl_convert
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ExtensionError("tef_offline: vl-convert-python is missing (pip install -e ./book)") from exc
    bundle = vl_convert.javascript_bundle()
    versions = json.dumps(vega_versions(), sort_keys=True)
    return (
        "/* vega, vega-lite and vega-embed from vl-convert-python "
        f"{getattr(vl_convert, '__version__', '?')} (generated at build time) */\n"
        "(function () {\n"
        f"{bundle}\n"
        "}).call(window);\n"
        f"window.VEGA_DEBUG = Object.assign(window.VEGA_DEBUG || {{}}, {versions});\n"
    )


def _fingerprint() -> str:
    """A digest of the installed versions, to reuse a staged asset folder across builds."""
    import altair
    import plotly

    try:
        import vl_convert

        vl_version = getattr(vl_convert, "__version__", "?")
    except ImportError:  # pragma: no cover
        vl_version = "missing"
    parts = [
        __version__,
        plotly.__version__,
        altair.__version__,
        vl_version,
        json.dumps(vega_versions(), sort_keys=True),
        str(plotly_js_path().stat().st_size),
        str((mathjax_es5_dir() / "tex-mml-chtml.js").stat().st_size),
    ]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def stage_assets(target: Path) -> Path:
    """Write every vendored asset below ``target/tef-offline``.

    Parameters
    ----------
    target : Path
        A build-time folder (never in the repository) that Sphinx copies into ``_static``.

    Returns
    -------
    Path
        ``target``, for chaining.
    """
    stamp_file = target / ASSET_DIR / ".stamp"
    stamp = _fingerprint()
    if stamp_file.is_file() and stamp_file.read_text() == stamp:
        return target
    asset_root = target / ASSET_DIR
    if asset_root.exists():
        shutil.rmtree(asset_root)
    (asset_root / "mathjax").mkdir(parents=True)
    shutil.copy2(plotly_js_path(), asset_root / "plotly.min.js")
    (asset_root / "vega-bundle.js").write_text(vega_bundle_js(), encoding="utf-8")
    es5 = mathjax_es5_dir()
    for part in MATHJAX_PARTS:
        source = es5 / part
        destination = asset_root / "mathjax" / part
        if source.is_dir():
            shutil.copytree(source, destination)
        else:
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)
    stamp_file.write_text(stamp)
    return target


def _on_config_inited(app: Sphinx, config: Config) -> None:
    """Point Sphinx's MathJax loader at the local copy."""
    config.mathjax_path = MATHJAX_JS


def _on_builder_inited(app: Sphinx) -> None:
    """Stage the assets and add their folder to ``html_static_path`` (HTML builders only)."""
    if app.builder.format != "html":
        return
    target = Path(app.outdir).parent / ".tef_offline_assets"
    stage_assets(target)
    static_path = list(app.config.html_static_path)
    if str(target) not in static_path:
        static_path.append(str(target))
    app.config.html_static_path = static_path
    logger.info("tef_offline: serving MathJax, plotly.js and vega from %s", target)


def _on_html_page_context(
    app: Sphinx,
    pagename: str,
    templatename: str,
    context: dict[str, Any],
    doctree: Any,
) -> None:
    """Add plotly.js / the vega bundle to the pages that hold such figures."""
    body = context.get("body", "") or ""
    # Loaded synchronously in <head>, before the figure scripts in the body run.
    if any(marker in body for marker in PLOTLY_MARKERS):
        app.add_js_file(PLOTLY_JS, priority=400)
    if any(marker in body for marker in VEGA_MARKERS):
        app.add_js_file(VEGA_JS, priority=400)


def _dedupe_scripts(
    app: Sphinx,
    pagename: str,
    templatename: str,
    context: dict[str, Any],
    doctree: Any,
) -> None:
    """Drop repeated identical ``<script>`` entries from a page.

    sphinx-thebe 0.3.1 under Sphinx 7 registers its inline configuration script twice; the
    second copy redeclares ``const THEBE_JS_URL`` and raises a SyntaxError in the browser.
    """
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen: set[tuple[str, str]] = set()
    unique = []
    for script in scripts:
        # The copies differ only in filename None vs "" and in priority.
        filename = str(getattr(script, "filename", script) or "")
        attributes = getattr(script, "attributes", {}) or {}
        key = (filename, json.dumps(attributes, sort_keys=True, default=str))
        if key in seen:
            continue
        seen.add(key)
        unique.append(script)
    scripts[:] = unique


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the event handlers (Sphinx extension entry point)."""
    app.setup_extension("sphinx.ext.mathjax")
    app.connect("config-inited", _on_config_inited, priority=900)
    app.connect("builder-inited", _on_builder_inited)
    app.connect("html-page-context", _on_html_page_context)
    app.connect("html-page-context", _dedupe_scripts, priority=950)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
