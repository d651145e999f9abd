"""Helpers that look for a secret in files and texts without ever printing it.

Used by ``test_secrets.py`` (caches, logs, exception messages, CLI output) and by the book's tests
(executed notebooks, built pages). A failure names where the secret was found, never the secret.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote, quote_plus

__all__ = ["secret_forms", "contains_secret", "files_with_secret", "assert_no_secret", "assert_text_clean"]


def secret_forms(secret: str) -> set[bytes]:
    """The byte strings a secret may appear as once written somewhere.

    Parameters
    ----------
    secret : str
        The secret value (at least 8 characters, or the search would match by chance).

    Returns
    -------
    set of bytes
        UTF-8 of the raw value, its URL-quoted and JSON-escaped forms, and the base64 of
        ``"Bearer <secret>"`` and of the secret alone (both as written by an HTTP library).
    """
    if len(secret) < 8:
        raise ValueError("a secret to search for must be at least 8 characters long")
    texts = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
    forms = {t.encode("utf-8") for t in texts}
    forms |= {base64.b64encode(s.encode("utf-8")) for s in (secret, f"Bearer {secret}")}
    return forms


def contains_secret(data: str | bytes, secret: str) -> bool:
    """Whether ``data`` holds ``secret`` in any of its :func:`secret_forms`."""
    blob = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    return any(form in blob for form in secret_forms(secret))


def _files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file()))
        elif p.is_file():
            out.append(p)
    return out


def files_with_secret(paths: Iterable[str | os.PathLike[str]], secret: str) -> list[Path]:
    """Files under ``paths`` (files or folders, searched recursively) that contain ``secret``."""
    return [f for f in _files(paths) if contains_secret(f.read_bytes(), secret)]


def assert_no_secret(paths: Iterable[str | os.PathLike[str]], secret: str, *, min_files: int = 1) -> int:
    """Assert that no file under ``paths`` contains ``secret``; return how many files were searched.

    Parameters
    ----------
    paths : iterable of path
        Files or folders (searched recursively).
    secret : str
        The value that must not appear.
    min_files : int, default 1
        Fail if fewer files than this were searched (a check of nothing proves nothing).

    Raises
    ------
    AssertionError
        Naming the files that contain the secret (never the secret itself).
    """
    files = _files(paths)
    assert len(files) >= min_files, f"only {len(files)} file(s) to search, expected at least {min_files}"
    leaks = [f for f in files if contains_secret(f.read_bytes(), secret)]
    assert not leaks, f"the secret appears in {len(leaks)} file(s): {[str(f) for f in leaks]}"
    return len(files)


def assert_text_clean(text: str | bytes, secret: str, where: str) -> None:
    """Assert that ``text`` does not contain ``secret``; the message names ``where`` only."""
    assert not contains_secret(text, secret), f"the secret appears in {where}"
