"""Headless Chromium for the book: serve a built folder on loopback and print a page to PDF.

:func:`find_chromium` locates the browser (``$TEF_CHROMIUM`` or Debian's ``chromium``),
:func:`chromium_flags` keeps it quiet and off the network's background services, and
:func:`serve_directory` serves a folder on 127.0.0.1. :func:`print_pdf` uses all three for
``python -m tefbook --pdf``; the browser test of the built book uses them too.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tefbook.errors import BookError

__all__ = ["chromium_flags", "find_chromium", "print_pdf", "serve_directory"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static file handler that does not log every request."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return


@contextlib.contextmanager
def serve_directory(folder: Path) -> Iterator[str]:
    """Serve a folder over HTTP on 127.0.0.1 (a free port) and yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def find_chromium() -> str:
    """Path of a Chromium binary: ``$TEF_CHROMIUM``, else ``chromium`` on PATH (Debian).

    Raises
    ------
    BookError
        When none is found.
    """
    candidates = [os.environ.get("TEF_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"]
    for candidate in candidates:
        if candidate and (found := shutil.which(candidate)):
            return found
    raise BookError("Chromium not found: apt-get install chromium, or set TEF_CHROMIUM")


def chromium_flags(user_data_dir: Path) -> list[str]:
    """Headless Chromium flags that keep it quiet and off the network's background services."""
    return [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-default-apps",
        "--hide-scrollbars",
        "--mute-audio",
        f"--user-data-dir={user_data_dir}",
    ]


def print_pdf(html_dir: Path, page: str, pdf_path: Path, *, budget_ms: int = 60000) -> Path:
    """Print one page of a built HTML folder to PDF with headless Chromium.

    Parameters
    ----------
    html_dir : Path
        Folder to serve (a ``singlehtml`` build).
    page : str
        Page to print, relative to ``html_dir``.
    pdf_path : Path
        Output file.
    budget_ms : int
        Virtual time Chromium gives the page's scripts (MathJax, plotly, vega) before printing.
    """
    chromium = find_chromium()
    pdf_path.parent.mkdir(parents=True, exist_ok=True)
    pdf_path.unlink(missing_ok=True)
    profile = pdf_path.parent / ".chromium-profile"
    shutil.rmtree(profile, ignore_errors=True)
    with serve_directory(html_dir) as base:
        command = [
            chromium,
            *chromium_flags(profile),
            "--no-pdf-header-footer",
            "--run-all-compositor-stages-before-draw",
            f"--virtual-time-budget={budget_ms}",
            f"--print-to-pdf={pdf_path}",
            f"{base}/{page}",
        ]
        result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
    shutil.rmtree(profile, ignore_errors=True)
    if result.returncode != 0 or not pdf_path.is_file() or pdf_path.stat().st_size == 0:
        raise BookError(f"Chromium could not print {page}: {result.stderr.strip()[-2000:]}")
    return pdf_path

