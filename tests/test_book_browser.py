"""Load every page of the built book in headless Chromium, offline.

The book is served from ``$TEF_BOOK_DIR`` (default ``_build/html``, built by
``python -m tefbook``) on 127.0.0.1 and every page under ``book/`` and ``notebooks/`` is
opened with Debian's ``chromium`` driven by Playwright (``executable_path``; Playwright's own
browser download is not used). For each page the test asserts:

* no failed request (network error or HTTP status >= 400) and no console error or page error
  (the generated pages ``search.html``, ``genindex.html``, ... are loaded too);
* no request to any host but the loopback one: such requests are aborted and reported;
* math is typeset: every Sphinx math element holds a MathJax ``mjx-container``, no
  ``mjx-merror``, and no raw LaTeX is left in the visible text outside code;
* every figure is drawn: each plotly div holds a non-empty ``.main-svg``, each altair chart an
  ``svg`` or ``canvas`` with non-zero size inside ``.vega-embed`` and no error message;
* the results tables of :data:`FITTING` fit the 1280-px page (no horizontal scroll bar);
* no table or figure lies under the right-hand "Contents" panel: where the panel is shown, the visible
  part of each table, figure, chart and image (its box cut to the ancestors that clip it) stays left of
  the panel, or, for a panel that does not stick to the screen, clear of its box;
* the visible text (code inputs and inline code left out, cell outputs kept) holds none of the raw
  printouts of :data:`RAW_TEXT`: a role left unrendered, a pandas ``dtype:`` footer, a warning, a
  traceback, ``NaN`` or an absolute path of a build machine; a failure names the page and the snippet;

and saves a full-page screenshot to ``artifacts/screenshots/`` (``$TEF_SCREENSHOT_DIR``).
Without a built book, Playwright or Chromium the tests skip, unless ``TEF_REQUIRE_BROWSER=1``
(CI), which turns the skip into a failure.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tefbook.errors import BookError
from tefbook.chromium import chromium_flags, find_chromium, serve_directory

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[1]
BOOK_DIR = Path(os.environ.get("TEF_BOOK_DIR") or ROOT / "_build" / "html")
SCREENSHOT_DIR = Path(os.environ.get("TEF_SCREENSHOT_DIR") or ROOT / "artifacts" / "screenshots")
REQUIRE = os.environ.get("TEF_REQUIRE_BROWSER", "") == "1"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
#: Seconds a page may take to typeset its math and draw its figures.
RENDER_TIMEOUT_S = float(os.environ.get("TEF_BROWSER_TIMEOUT", "45"))
VIEWPORT = {"width": 1280, "height": 900}
#: Sections whose tables must fit the page at VIEWPORT's width (no horizontal scroll bar): the results tables
#: a reader compares column by column, Average included.
FITTING: dict[str, tuple[str, ...]] = {
    "notebooks/05_main_results.html": ("table-3-ours-beside-the-paper-s",),
    "notebooks/06_ablation.html": ("table-4-ours-beside-the-paper-s",),
    "notebooks/03_mind_statistics.html": ("pairs-per-dimension",),
}

#: What a reader must never see on a page (JavaScript regular expressions, matched in the visible text):
#: a MyST role printed raw, a pandas Series footer, a warning or traceback printed by a cell, a missing
#: number, and an absolute path of the machine that built the book.
RAW_TEXT: dict[str, str] = {
    "unrendered role": r"\{glue",
    "pandas dtype footer": r"dtype:",
    "warning": r"\w*Warning\b",
    "traceback": r"Traceback",
    "NaN": r"\bNaN\b",
    "absolute path": r"(?:^|[\s'\"(=:,\[])(?:/work|/root|/tmp|/home|/Users|/private/var)/",
}


def _unavailable(reason: str) -> None:
    """Skip the test, or fail it when the environment requires the browser test to run."""
    if REQUIRE:
        pytest.fail(f"{reason} (TEF_REQUIRE_BROWSER=1)")
    pytest.skip(reason)


def book_pages(book_dir: Path) -> list[str]:
    """The pages of a built book: every ``.html`` under ``book/`` and ``notebooks/``, then the
    generated ones (search, index of theorems, ...) but the root redirect ``index.html``."""
    pages: list[str] = []
    for folder in ("book", "notebooks"):
        pages += sorted(p.relative_to(book_dir).as_posix() for p in (book_dir / folder).glob("**/*.html"))
    pages += sorted(p.name for p in book_dir.glob("*.html") if p.name != "index.html")
    return pages


PAGES = book_pages(BOOK_DIR) if BOOK_DIR.is_dir() else []

# A page is ready when MathJax has typeset every math element and every figure is drawn
# (or has failed visibly).
READY_JS = """
() => {
  const maths = document.querySelectorAll('.math');
  if (maths.length) {
    if (!(window.MathJax && MathJax.startup && MathJax.startup.document)) return false;
    for (const m of maths) { if (!m.querySelector('mjx-container')) return false; }
  }
  for (const d of document.querySelectorAll('.plotly-graph-div')) {
    if (!d.querySelector('.main-svg')) return false;
  }
  for (const d of document.querySelectorAll('div[id^="altair-viz-"]')) {
    if (!d.querySelector('svg, canvas') && !d.querySelector('.error')) return false;
  }
  return true;
}
"""

INSPECT_JS = r"""
(rawText) => {
  const size = (el) => { const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  const math = [...document.querySelectorAll('.math')].map((m) => ({
    typeset: !!m.querySelector('mjx-container'),
    text: (m.querySelector('mjx-container') ? '' : m.textContent).slice(0, 80),
  }));
  const plotly = [...document.querySelectorAll('.plotly-graph-div')].map((d) => {
    const svg = d.querySelector('.main-svg');
    const [w, h] = svg ? size(svg) : [0, 0];
    // drawn data: scatter/bar/box traces, heatmap images, pie slices, contour paths
    const drawn = d.querySelectorAll(
      '.trace, .hm, image, .slice, .contourlayer path, .heatmaplayer *').length;
    return {id: d.id, w, h, traces: (d.data || []).length, drawn,
            children: svg ? svg.childElementCount : 0};
  });
  const altair = [...document.querySelectorAll('div[id^="altair-viz-"]')].map((d) => {
    const g = d.querySelector('svg, canvas');
    const [w, h] = g ? size(g) : [0, 0];
    const err = d.querySelector('.error');
    return {id: d.id, embedded: d.classList.contains('vega-embed'), w, h,
            marks: g && g.tagName.toLowerCase() === 'svg'
              ? g.querySelectorAll('path, rect, line, circle, text').length : -1,
            error: err ? err.textContent.slice(0, 300) : null};
  });
  // Visible text outside code, formulas and scripts, to find LaTeX that MathJax left raw.
  const article = document.querySelector('article') || document.body;
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => n.parentElement.closest(
      'pre, code, script, style, mjx-container, .highlight, textarea, .tef-figure')
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  const raw = [];
  const pattern = /\\\(|\\\[|\$\$|\\(frac|sum|log|mathbf|mathcal|operatorname|begin|left|right)\b/;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (pattern.test(n.textContent)) raw.push(n.textContent.trim().slice(0, 120));
  }
  // Python reprs printed instead of a rendered object (a display call that was not rendered).
  const reprs = (article.innerText.match(
    /<(?:IPython\.core\.display\.\w+|Figure size|pandas\.io\.formats\.style\.Styler|altair\.\w+)[^>]*>|\bobject at 0x[0-9a-f]+/g
  ) || []).slice(0, 5);
  // Tables wider than their output box (a horizontal scroll bar), by the id of their section.
  const wide = [...document.querySelectorAll('div.cell_output .output')]
    .filter((o) => o.querySelector('table') && o.scrollWidth > o.clientWidth + 1)
    .map((o) => (o.closest('section[id]') || {id: ''}).id);
  // Raw printouts in the visible text. Code inputs, code blocks and inline code are what a reader types,
  // not what the book says, and are left out; cell outputs (their <pre> included) are kept.
  const sweep = [];
  const patterns = Object.entries(rawText).map(([what, source]) => [what, new RegExp(source)]);
  const textWalker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => {
      const el = n.parentElement;
      if (!el || el.closest('script, style, noscript, template, textarea, mjx-container, .cell_input')) {
        return NodeFilter.FILTER_REJECT;
      }
      if (el.closest('pre, code, .highlight') && !el.closest('.cell_output')) return NodeFilter.FILTER_REJECT;
      return el.checkVisibility() ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
    },
  });
  for (let n = textWalker.nextNode(); n; n = textWalker.nextNode()) {
    for (const [what, re] of patterns) {
      const m = re.exec(n.textContent);
      if (m) {
        const at = m.index;
        sweep.push(`${what}: ...${n.textContent.slice(Math.max(0, at - 60), at + 60).replace(/\s+/g, ' ')}...`);
      }
    }
  }
  // Tables and figures under the right-hand "Contents" panel: the visible part of each (its box cut to
  // every ancestor that clips it) against the panel's box; a panel that sticks to the screen passes over
  // the whole page, so there only the horizontal extents count.
  const panel = [...document.querySelectorAll('div.bd-sidebar-secondary')].find((p) => p.checkVisibility());
  const overlaps = [];
  if (panel) {
    const pr = panel.getBoundingClientRect();
    const sticky = ['sticky', 'fixed'].includes(getComputedStyle(panel).position);
    const shown = (el) => {
      let r = el.getBoundingClientRect();
      let [left, right, top, bottom] = [r.left, r.right, r.top, r.bottom];
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        const st = getComputedStyle(a);
        if (st.overflowX !== 'visible' || st.overflowY !== 'visible') {
          const c = a.getBoundingClientRect();
          if (st.overflowX !== 'visible') { left = Math.max(left, c.left); right = Math.min(right, c.right); }
          if (st.overflowY !== 'visible') { top = Math.max(top, c.top); bottom = Math.min(bottom, c.bottom); }
        }
      }
      return {left, right, top, bottom};
    };
    const items = document.querySelectorAll(
      'article table, article figure, article img, article canvas, article .tef-figure, '
      + 'article .plotly-graph-div, article div[id^="altair-viz-"]');
    for (const el of items) {
      if (!el.checkVisibility()) continue;
      const r = shown(el);
      if (r.right - r.left < 1 || r.bottom - r.top < 1) continue;
      const across = Math.min(r.right, pr.right) - Math.max(r.left, pr.left);
      const down = sticky ? 1 : Math.min(r.bottom, pr.bottom) - Math.max(r.top, pr.top);
      if (across > 1 && down > 0) {
        const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.classList.length ? '.' + [...el.classList].join('.') : '');
        overlaps.push(`${name} in section ${(el.closest('section[id]') || {id: '?'}).id}: `
          + `${Math.round(r.left)}-${Math.round(r.right)} px, the panel from ${Math.round(pr.left)} px`);
      }
    }
  }
  return {
    title: document.title,
    math, plotly, altair, raw, reprs, wide, sweep, overlaps,
    merrors: document.querySelectorAll('mjx-merror').length,
    // print-only static renditions (TEF_STATIC_FIGURES=1) must stay hidden on screen
    staticShown: [...document.querySelectorAll('.tef-figure-static')]
      .filter((e) => e.offsetParent !== null).length,
    mathjax: !!window.MathJax,
  };
}
"""


@dataclass
class PageLog:
    """What happened while one page loaded."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


def _is_loopback(url: str) -> bool:
    """Whether a URL stays on this machine (data:, blob: and about: do)."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https", "ws", "wss", "ftp"}:
        return True
    return (parts.hostname or "") in LOOPBACK


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """The built book, served on 127.0.0.1."""
    if not (BOOK_DIR / "index.html").is_file():
        _unavailable(f"no built book at {BOOK_DIR}: run `python -m tefbook` or set TEF_BOOK_DIR")
    with serve_directory(BOOK_DIR) as url:
        yield url


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless Chromium (Debian's) with a fresh profile, driven by Playwright."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    try:
        executable = find_chromium()
    except BookError as exc:
        _unavailable(str(exc))
    profile = tmp_path_factory.mktemp("chromium-profile")
    # Playwright passes --user-data-dir itself for a persistent context.
    args = [a for a in chromium_flags(profile) if not a.startswith(("--user-data-dir", "--headless"))]
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=executable,
            headless=True,
            args=args,
            viewport=VIEWPORT,
            service_workers="block",
        )
        try:
            yield context
        finally:
            context.close()
    shutil.rmtree(profile, ignore_errors=True)


def _load(
    context: Any, url: str, screenshot: Path, timeout_s: float = RENDER_TIMEOUT_S
) -> tuple[PageLog, dict[str, Any], float]:
    """Open a page, wait (at most ``timeout_s``) until it has rendered, inspect it and take a
    screenshot."""
    record = PageLog()
    page = context.new_page()

    def route(route: Any) -> None:
        if _is_loopback(route.request.url):
            route.continue_()
        else:
            record.external.append(route.request.url)
            route.abort("blockedbyclient")

    def on_response(response: Any) -> None:
        if response.status >= 400:
            record.failed.append(f"HTTP {response.status} {response.url}")

    def on_failed(request: Any) -> None:
        if _is_loopback(request.url):
            record.failed.append(f"{request.failure} {request.url}")

    in_flight: dict[Any, float] = {}

    def on_request(request: Any) -> None:
        record.requests.append(request.url)
        in_flight[request] = time.perf_counter()

    page.route("**/*", route)
    page.on("request", on_request)
    page.on("response", on_response)
    page.on("requestfinished", lambda request: in_flight.pop(request, None))
    page.on("requestfailed", lambda request: (in_flight.pop(request, None), on_failed(request)))
    page.on(
        "console",
        lambda msg: (
            record.console_errors.append(f"{msg.text} @ {msg.location}") if msg.type == "error" else None
        ),
    )
    page.on("pageerror", lambda error: record.page_errors.append(str(error)))
    started = time.perf_counter()
    page.goto(url, wait_until="load")
    try:
        page.wait_for_function(READY_JS, timeout=timeout_s * 1000, polling=200)
    except Exception:  # noqa: BLE001 - the assertions below say what is missing
        pass
    # Quiet network: no request in flight for 500 ms (Chromium's own "networkidle" event does
    # not always fire on pages with many plotly figures).
    quiet_since = time.perf_counter()
    deadline = quiet_since + timeout_s
    while time.perf_counter() < deadline:
        page.wait_for_timeout(100)
        if in_flight:
            quiet_since = time.perf_counter()
        elif time.perf_counter() - quiet_since >= 0.5:
            break
    if in_flight:
        record.failed += [f"still loading after {timeout_s:.0f} s: {r.url}" for r in in_flight]
    elapsed = time.perf_counter() - started
    info = page.evaluate(INSPECT_JS, RAW_TEXT)
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(screenshot), full_page=True)
    page.close()
    return record, info, elapsed


def test_book_has_pages() -> None:
    """The built book has its content pages (the root page at least)."""
    if not BOOK_DIR.is_dir():
        _unavailable(f"no built book at {BOOK_DIR}: run `python -m tefbook` or set TEF_BOOK_DIR")
    assert "book/intro.html" in PAGES, f"no book/intro.html in {BOOK_DIR}; pages: {PAGES}"


@pytest.mark.parametrize(
    "page_path", PAGES or [pytest.param("none", marks=pytest.mark.skip(reason="no built book"))]
)
def test_page_renders_offline(page_path: str, base_url: str, browser: Any) -> None:
    """One page: offline, no errors, math typeset, figures drawn; screenshot saved."""
    shot = SCREENSHOT_DIR / (page_path.removesuffix(".html").replace("/", "__") + ".png")
    record, info, elapsed = _load(browser, f"{base_url}/{page_path}", shot)
    print(
        f"{page_path}: {elapsed:.1f} s, {len(record.requests)} requests, "
        f"{len(info['math'])} formulas, {len(info['plotly'])} plotly, {len(info['altair'])} altair -> {shot}"
    )

    assert not record.external, f"requests to other hosts: {record.external}"
    assert not record.failed, f"failed requests: {record.failed}"
    assert not record.page_errors, f"page errors: {record.page_errors}"
    assert not record.console_errors, f"console errors: {record.console_errors}"
    assert "404" not in info["title"], info["title"]

    untypeset = [m["text"] for m in info["math"] if not m["typeset"]]
    assert not untypeset, f"{len(untypeset)} of {len(info['math'])} formulas not typeset: {untypeset[:5]}"
    assert info["merrors"] == 0, f"{info['merrors']} MathJax errors (mjx-merror)"
    assert not info["raw"], f"raw LaTeX left in the text: {info['raw'][:5]}"
    assert not info["reprs"], f"Python reprs shown instead of the objects: {info['reprs']}"

    for fig in info["plotly"]:
        assert fig["children"] > 0 and fig["w"] > 50 and fig["h"] > 50, f"plotly figure not drawn: {fig}"
        assert fig["traces"] > 0 and fig["drawn"] > 0, f"plotly figure without drawn data: {fig}"
    for chart in info["altair"]:
        assert chart["error"] is None, f"altair chart failed: {chart}"
        assert chart["embedded"] and chart["w"] > 50 and chart["h"] > 50, f"altair chart not drawn: {chart}"
        assert chart["marks"] != 0, f"altair chart without marks: {chart}"
    assert info["staticShown"] == 0, f"{info['staticShown']} print-only figures shown on screen"
    scrolled = [section for section in info["wide"] if section in FITTING.get(page_path, ())]
    assert not scrolled, f"tables that must fit a {VIEWPORT['width']}-px page scroll sideways in: {scrolled}"
    assert not info["overlaps"], f"{page_path}: tables or figures under the Contents panel: {info['overlaps']}"
    assert not info["sweep"], f"{page_path}: raw printouts in the visible text: {info['sweep']}"
    assert shot.is_file() and shot.stat().st_size > 0


def test_checker_sees_external_requests_errors_and_raw_math(browser: Any, tmp_path: Path) -> None:
    """The checks are not vacuous: a bad page trips every one of them, and stays offline."""
    (tmp_path / "bad.html").write_text(
        "<html><head><link rel='icon' href='data:,'>"
        "<script src='https://cdn.jsdelivr.net/npm/vega@6'></script></head><body><article>"
        "<p>raw \\(\\frac{a}{b}\\)</p><span class='math'>\\(x\\)</span>"
        "<img src='missing.png'><script>undefinedFunction()</script>"
        "<pre>&lt;IPython.core.display.Markdown object&gt;</pre>"
        "<section id='results'><div class='cell_output'><div class='output' style='width:300px;overflow-x:auto'>"
        "<table style='width:900px'><tr><td>wide</td></tr></table></div></div></section>"
        "<section id='fits'><div class='cell_output'><div class='output' style='width:300px;overflow-x:auto'>"
        "<table style='width:200px'><tr><td>narrow</td></tr></table></div></div></section>"
        "</article></body></html>"
    )
    with serve_directory(tmp_path) as url:
        record, info, _ = _load(browser, f"{url}/bad.html", tmp_path / "bad.png", timeout_s=3)
    assert record.external == ["https://cdn.jsdelivr.net/npm/vega@6"]
    assert any("missing.png" in f for f in record.failed)
    assert any("undefinedFunction" in e for e in record.page_errors)
    assert [m["typeset"] for m in info["math"]] == [False]
    assert info["raw"] and "\\frac" in info["raw"][0]
    assert info["reprs"] == ["<IPython.core.display.Markdown object>"]
    assert info["wide"] == ["results"]  # the table wider than its box, not the one that fits


PLANTED = """<html><head><link rel='icon' href='data:,'><style>body {margin: 0}</style></head><body>
<div class='bd-main' style='display: flex'>
 <article style='width: 1008px; flex: none'>
  <section id='printouts'>
   <p>0 local/original: the languages' caches differ. Name: caches not read, dtype: str</p>
   <p>(post {glue:text}`demo_post`, dimension 2)</p>
   <div class='cell_output'><pre>/work/main/book/tefbook/chapters/ch06.py:104: PerformanceWarning: indexing past lexsort depth</pre>
   <pre>Traceback (most recent call last):</pre></div>
   <table><tr><td>decisive agree (%)</td><td>NaN</td></tr></table>
  </section>
  <section id='typed'>
   <div class='cell_input'><pre>x = float("NaN")  # a Warning, dtype: float, in /work/x</pre></div>
   <div class='highlight'><pre>tef extract --out /tmp/caches</pre></div>
   <p>The column <code>dtype: float64</code> is said as code; see https://example.org/home/page.</p>
   <div style='display: none'>NaN hidden</div>
  </section>
  <section id='wide-results'><table style='width: 1200px'><tr><td>verdict</td></tr></table></section>
  <section id='scrolled'><div style='overflow-x: auto; width: 600px'>
   <table style='width: 1500px'><tr><td>scrolls inside its column</td></tr></table></div></section>
  <section id='fits'><div class='tef-figure' style='width: 700px; height: 100px'></div></section>
 </article>
 <div class='bd-sidebar-secondary' style='position: sticky; top: 0; width: 272px; height: 300px'>Contents</div>
</div></body></html>"""


def test_sweep_and_overlap_catch_a_planted_defect(browser: Any, tmp_path: Path) -> None:
    """A page with every raw printout and a table running under the Contents panel fails both checks, by
    name; what a reader types (code) and what stays in its column (a table that scrolls inside its box, a
    figure that fits) passes."""
    (tmp_path / "planted.html").write_text(PLANTED)
    with serve_directory(tmp_path) as url:
        _, info, _ = _load(browser, f"{url}/planted.html", tmp_path / "planted.png", timeout_s=3)
    found = {entry.split(":", 1)[0] for entry in info["sweep"]}
    assert found == set(RAW_TEXT), info["sweep"]
    shown = " ".join(info["sweep"])
    for snippet in ("Name: caches not read, dtype: str", "{glue:text}", "PerformanceWarning", "Traceback",
                    "/work/main/book/tefbook/chapters/ch06.py", "NaN"):
        assert snippet in shown, (snippet, info["sweep"])
    assert "float(" not in shown and "/tmp/caches" not in shown and "hidden" not in shown
    assert len(info["overlaps"]) == 1 and "section wide-results" in info["overlaps"][0], info["overlaps"]
    assert "the panel from 1008 px" in info["overlaps"][0]


# --------------------------------------------------------------------------- explorable figures
#: Pages with a figure that the reader's browser computes: the slider to move, its new value, and how
#: to read the figure's verdict from the texts it draws (SVG renderer).
EXPLORABLE: dict[str, tuple[str, str]] = {
    "notebooks/01_derivation.html": ("p1", "0.3"),
    "notebooks/10_teaching_lab.html": ("ph", "0.3"),
}

CHART_TEXTS_JS = "() => [...document.querySelectorAll('div[id^=\"altair-viz-\"] svg text')].map((t) => t.textContent)"


def _tef_verdict(texts: list[str]) -> str:
    """What the figure says of TEF: chapter 1 draws the four decisions after the rule names (TEF
    last), the lab one line per rule (TEF last)."""
    lines = [t for t in texts if t.startswith(("one decisive sentence", "the hedging sentences never"))]
    if lines:
        return lines[-1]
    start = texts.index("TEF") + 1
    return texts[start + 3]


@pytest.mark.parametrize("page_path", sorted(EXPLORABLE))
def test_explorable_figure_moves_offline_from_file(page_path: str, browser: Any) -> None:
    """Opened from ``file://`` with every other request refused, the figure draws, and moving a slider
    changes TEF's verdict: the rules run in the browser, from the book's own copy of Vega."""
    page_file = BOOK_DIR / page_path
    if not page_file.is_file():
        _unavailable(f"{page_file} is not built (python -m tefbook --chapters 01 10)")
    slider, value = EXPLORABLE[page_path]
    page = browser.new_page()
    outside: list[str] = []
    errors: list[str] = []

    def route(route: Any) -> None:
        if route.request.url.startswith(("file:", "data:", "blob:", "about:")):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort("blockedbyclient")

    page.route("**/*", route)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        page.goto(page_file.resolve().as_uri(), wait_until="load")
        page.wait_for_function(f"() => ({CHART_TEXTS_JS})().includes('TEF')", timeout=RENDER_TIMEOUT_S * 1000)
        before = _tef_verdict(page.evaluate(CHART_TEXTS_JS))
        page.locator(f"input[type=range][name={slider}]").evaluate(
            "(el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); }", value)
        deadline, after = time.perf_counter() + 5, before
        while after == before and time.perf_counter() < deadline:  # Vega re-renders asynchronously
            page.wait_for_timeout(100)
            after = _tef_verdict(page.evaluate(CHART_TEXTS_JS))
        shot = SCREENSHOT_DIR / (page_path.removesuffix(".html").replace("/", "__") + "__explored.png")
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.locator("div[id^='altair-viz-']").first.screenshot(path=str(shot))
    finally:
        page.close()
    print(f"{page_path}: {slider} = {value}: TEF {before!r} -> {after!r}")
    assert not outside, f"requests that left the file system: {outside}"
    assert not errors, f"errors in the page: {errors}"
    assert before != after
    if page_path.startswith("notebooks/01"):  # the decisive sentence pulled below 1/2: TEF turns
        assert (before, after) == ("change", "stability")
