"""The evidence report of a whole committed cache, opened in headless Chromium: it renders its sentences and
index, and no request leaves the machine (``tef explain --format html`` writes one self-contained file).

Run with the browser tier (``make browser``); skipped without Playwright or Chromium unless
``TEF_REQUIRE_BROWSER=1``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_book_browser import browser  # noqa: F401 - the browser tier's headless Chromium (a fixture)

from tefbook.chromium import serve_directory
from tefcore.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "data" / "caches" / "e5-crossfit" / "original"
LOOPBACK = ("http://127.0.0.1:", "data:", "about:")


def test_the_whole_cache_report_opens_offline(browser: Any, tmp_path: Path,  # noqa: F811 - the fixture
                                               capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.html"
    assert main(["explain", "--cache", str(CACHE), "--format", "html", "--out", str(report)]) == 0
    capsys.readouterr()
    requests: list[str] = []
    with serve_directory(tmp_path) as base:
        page = browser.new_page()
        page.on("request", lambda request: requests.append(request.url))
        page.goto(f"{base}/report.html", wait_until="load", timeout=60_000)
        shaded = page.locator("span.s").count()
        text = page.inner_text("body")
        page.close()
    external = [url for url in requests if not url.startswith(LOOPBACK)]
    assert external == [], f"requests leaving the machine: {external[:5]}"
    assert shaded > 8_000  # every sentence of the 1,820 texts is a shaded span (8,845 of them)
    assert "en-single-452" in text and "TEF" in text
    for raw in ("Traceback", "NaN", "{glue"):
        assert raw not in text
