"""The hashes that name a file or a text in provenance and caches."""

from __future__ import annotations

import hashlib
import os

def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 hex digest of a file, read in chunks (a release file, model weights ...).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = (Path(folder) / "abc.txt").write_bytes(b"abc")
    ...     print(file_sha256(Path(folder) / "abc.txt"))
    ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def text_sha256(text: str) -> str:
    """Short hash of a post's text (stored with its record instead of the text).

    Examples
    --------
    >>> text_sha256("abc")
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
