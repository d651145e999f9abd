"""The evidence report of a whole committed cache, opened in headless Chromium: it renders its sentences and
index, and no request leaves the machine (``tef explain --format html`` writes one self-contained file).

Run with the browser tier (``make browser``); skipped without Playwright or Chromium unless
``TEF_REQUIRE_BROWSER=1``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tefbook.chromium import chromium_flags, find_chromium, serve_directory
from tefbook.errors import BookError
from tefcore.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "data" / "caches" / "e5-crossfit" / "original"
LOOPBACK = ("http://127.0.0.1:", "data:", "about:")


def _unavailable(reason: str) -> None:
    if os.environ.get("TEF_REQUIRE_BROWSER", "") == "1":
        pytest.fail(f"{reason} (TEF_REQUIRE_BROWSER=1)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless Chromium with a fresh profile."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed")
    try:
        executable = find_chromium()
    except BookError as exc:
        _unavailable(str(exc))
    profile = tmp_path_factory.mktemp("chromium-explain")
    args = [a for a in chromium_flags(profile) if not a.startswith(("--user-data-dir", "--headless"))]
    with sync_playwright() as playwright:
        ctx = playwright.chromium.launch_persistent_context(str(profile), executable_path=executable,
                                                            headless=True, args=args,
                                                            viewport={"width": 1280, "height": 900})
        try:
            yield ctx
        finally:
            ctx.close()
    shutil.rmtree(profile, ignore_errors=True)


def test_the_whole_cache_report_opens_offline(context: Any, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.html"
    assert main(["explain", "--cache", str(CACHE), "--format", "html", "--out", str(report)]) == 0
    capsys.readouterr()
    requests: list[str] = []
    with serve_directory(tmp_path) as base:
        page = context.new_page()
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
