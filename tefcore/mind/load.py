"""MIND posts: a validating loader, the data directory and the evaluation pairs.

A MIND file (``mind_en.jsonl`` / ``mind_zh.jsonl``) holds one JSON object per line (protocol §2)::

    {"id": "en-single-9", "lang": "en", "event": "COL", "text": "...",
     "labels": [{"dimension": "Economy", "subcategory": "Economic Models",
                 "orientation": "Interventionist", "side": "stability"}]}

:func:`read_mind_file` checks every record against :mod:`tefcore.mind.schema` and reports the first
problem as a :class:`MindFormatError`. The evaluation unit is a (post, dimension) pair whose labels all
fall on one side (:func:`evaluation_pairs`); two-sided pairs have no target (:func:`excluded_pairs`).

Examples
--------
>>> pairs = evaluation_pairs(load_posts("en"))       # the embedded sample
>>> pairs[0].post_id, pairs[0].dimension, pairs[0].side
('en-single-9', 'Economy', 'stability')
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from tefcore.mind.prompts import choices
from tefcore.mind.schema import LANGS, SIDES, check_lang, side_of
from tefcore.tasks.load import MAX_TEXT_CHARS
from tefcore.tasks.schema import EvaluationPair, sides_by_dimension


__all__ = ["DATA_DIR_ENV", "EvaluationPair", "ExcludedPair", "Label", "MindFormatError", "Post", "evaluation_pairs",
           "excluded_pairs", "load_posts", "mind_filename", "mind_pair", "read_mind_file", "resolve_data_dir",
           "sample_dir", "sides_by_dimension"]

DATA_DIR_ENV = "MIND_DATA_DIR"

_RECORD_FIELDS = ("id", "lang", "event", "text", "labels")
_LABEL_FIELDS = ("dimension", "subcategory", "orientation", "side")
_FILENAME = re.compile(r"mind_(?P<lang>[a-z]+)\.jsonl")


# --- records --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Label:
    """One annotation of a post: a position on one subcategory of one dimension (English names)."""

    dimension: str
    subcategory: str
    orientation: str
    side: str


@dataclass(frozen=True)
class Post:
    """One MIND record. ``text`` is kept verbatim; ``labels`` in file order."""

    id: str
    lang: str
    event: str
    text: str
    labels: tuple[Label, ...]


class ExcludedPair(NamedTuple):
    """A (post, dimension) pair whose labels fall on both sides: it has no target."""

    post_id: str
    lang: str
    dimension: str


class MindFormatError(ValueError):
    """A MIND file that does not follow the format; the message starts with ``"{path}:{line}: "``.

    Attributes
    ----------
    path : str
        The file (or URL) that was read.
    line : int
        1-based line number of the offending record; 0 when the file as a whole is at fault
        (an empty file).
    reason : str
        What is wrong, without the location.
    """

    def __init__(self, path: str | os.PathLike[str], line: int, reason: str) -> None:
        self.path = os.fspath(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{self.path}:{line}: {reason}")

    def __reduce__(self) -> tuple[type[MindFormatError], tuple[str, int, str]]:
        return (type(self), (self.path, self.line, self.reason))


class _InvalidRecordError(Exception):
    """Internal: a record-level problem, located by :func:`read_mind_file`."""


def mind_filename(lang: str) -> str:
    """Return the release file name of a language: ``mind_<lang>.jsonl``."""
    check_lang(lang)
    return f"mind_{lang}.jsonl"


# --- loader ---------------------------------------------------------------------------------
def read_mind_file(path: str | os.PathLike[str], lang: str | None = None) -> list[Post]:
    """Read and validate a MIND JSON-lines file.

    Parameters
    ----------
    path : str or path-like
        The file.
    lang : {"en", "zh"} or None
        The file's language (None: from a ``mind_<lang>.jsonl`` name, else the first record); every
        record's ``lang`` must equal it.

    Returns
    -------
    list of Post
        In file order.

    Raises
    ------
    UnknownName
        If ``lang`` is neither None nor a MIND language (a KeyError and a ValueError).
    MindFormatError
        On the first bad line (invalid JSON or UTF-8, a field, label or language against the schema, a
        blank field, a text longer than :data:`tefcore.tasks.load.MAX_TEXT_CHARS` characters, a duplicate
        id, a blank line before trailing ones, a torn last line), or a file without records (``line`` 0).
        A UTF-8 byte-order mark is accepted.

    Notes
    -----
    An id is any non-blank string, unique in the file: the protocol uses it as the key of a post and its
    pairs only. The release's ids read ``<lang>-<single|multi>-<source id>`` (protocol §2), but nothing
    depends on that form, and the reference release accepts others.
    OSError
        If the file cannot be read (e.g. :class:`FileNotFoundError`).
    """
    if lang is not None:
        check_lang(lang)
    lines = _decode_lines(path)
    last = _last_record_line(path, lines)
    expected = lang or _file_lang(path)
    posts: list[Post] = []
    first_seen: dict[str, int] = {}
    for index in range(last + 1):
        post = _read_line(path, lines, index, last, expected)
        expected = post.lang
        if post.id in first_seen:
            raise MindFormatError(path, index + 1,
                                  f"duplicate id {post.id!r} (first on line {first_seen[post.id]})")
        first_seen[post.id] = index + 1
        posts.append(post)
    return posts


def _decode_lines(path: str | os.PathLike[str]) -> list[str]:
    """Read the file as UTF-8 and split it at line feeds; non-UTF-8 bytes are located by line."""
    data = Path(path).read_bytes()
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise MindFormatError(path, line, f"not UTF-8: byte 0x{data[err.start]:02x} at byte {column} of the line"
                              ) from None
    return text.split("\n")


def _last_record_line(path: str | os.PathLike[str], lines: list[str]) -> int:
    """Return the index of the last non-blank line; reject non-trailing blank lines and empty files."""
    last = len(lines) - 1
    while last >= 0 and not lines[last].strip():
        last -= 1
    if last < 0:
        raise MindFormatError(path, 0, "empty file: no records")
    for index in range(last):
        if not lines[index].strip():
            raise MindFormatError(path, index + 1, "blank line (only blank lines at the end are allowed)")
    return last


def _file_lang(path: str | os.PathLike[str]) -> str | None:
    """Return the language of a ``mind_<lang>.jsonl`` file name, or None for another name."""
    match = _FILENAME.fullmatch(Path(path).name)
    return match["lang"] if match and match["lang"] in LANGS else None


def _read_line(
    path: str | os.PathLike[str], lines: list[str], index: int, last: int, lang: str | None
) -> Post:
    """Parse and validate line ``index``; wrap any problem in a :class:`MindFormatError`."""
    try:
        try:
            record = json.loads(lines[index], object_pairs_hook=_unique_keys)
        except (ValueError, RecursionError) as err:
            if index == last == len(lines) - 1:
                raise _InvalidRecordError(f"truncated last line (no newline at end of file and invalid JSON: {err})"
                                          ) from None
            raise _InvalidRecordError(f"invalid JSON: {err}") from None
        return _post(record, lang)
    except _InvalidRecordError as err:
        raise MindFormatError(path, index + 1, str(err)) from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that refuses a key given twice in one JSON object."""
    result = dict(pairs)
    if len(result) != len(pairs):
        counts = Counter(key for key, _ in pairs)
        raise _InvalidRecordError(f"duplicate field(s) {[key for key, n in counts.items() if n > 1]}")
    return result


def _check_fields(obj: object, expected: tuple[str, ...], what: str) -> dict[str, Any]:
    """Check that ``obj`` is a JSON object with exactly the ``expected`` keys."""
    if not isinstance(obj, dict):
        raise _InvalidRecordError(f"{what} must be a JSON object, got {type(obj).__name__}")
    missing = [key for key in expected if key not in obj]
    extra = [key for key in obj if key not in expected]
    if missing:
        raise _InvalidRecordError(f"{what}: missing field(s) {missing}")
    if extra:
        raise _InvalidRecordError(f"{what}: unexpected field(s) {extra}; expected exactly {list(expected)}")
    return obj


def _string(obj: dict[str, Any], key: str, what: str) -> str:
    """Return ``obj[key]`` if it is a non-blank string of valid Unicode."""
    value = obj[key]
    if not isinstance(value, str):
        raise _InvalidRecordError(f"{what}: field {key!r} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise _InvalidRecordError(f"{what}: field {key!r} is empty or white space only")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _InvalidRecordError(f"{what}: field {key!r} holds a lone surrogate (not valid Unicode)") from None
    return value


def _post(record: object, lang: str | None) -> Post:
    """Validate one decoded record and build its :class:`Post` (``lang=None``: any MIND language)."""
    record = _check_fields(record, _RECORD_FIELDS, "record")
    post_id, record_lang, event, text = (_string(record, key, "record") for key in _RECORD_FIELDS[:4])
    if len(text) > MAX_TEXT_CHARS:
        raise _InvalidRecordError(f"record: field 'text' holds {len(text):,} characters; the bound is "
                                  f"{MAX_TEXT_CHARS:,} (tefcore.tasks.load.MAX_TEXT_CHARS)")
    if lang is None and record_lang not in LANGS:
        raise _InvalidRecordError(f"unknown lang {record_lang!r}; expected one of {LANGS}")
    if lang is not None and record_lang != lang:
        raise _InvalidRecordError(f"lang {record_lang!r} but this is a {lang!r} file")
    lang = record_lang
    labels = record["labels"]
    if not isinstance(labels, list):
        raise _InvalidRecordError(f"record: field 'labels' must be a list, got {type(labels).__name__}")
    if not labels:
        raise _InvalidRecordError("record: empty 'labels' list")
    return Post(post_id, lang, event, text, tuple(_label(obj, i + 1) for i, obj in enumerate(labels)))


def _label(obj: object, number: int) -> Label:
    """Validate one label object against the schema."""
    what = f"label {number}"
    obj = _check_fields(obj, _LABEL_FIELDS, what)
    label = Label(*(_string(obj, key, what) for key in _LABEL_FIELDS))
    if label.side not in SIDES:
        raise _InvalidRecordError(f"{what}: unknown side {label.side!r}; expected one of {SIDES}")
    try:
        expected = side_of(label.dimension, label.subcategory, label.orientation)
    except ValueError as err:
        raise _InvalidRecordError(f"{what}: {err}") from None
    if label.side != expected:
        raise _InvalidRecordError(f"{what}: orientation {label.orientation!r} is on side {expected!r}, "
                       f"but the label says {label.side!r}")
    return label


# --- data directory -------------------------------------------------------------------------
def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Return the MIND data directory, absolute (it need not exist).

    As in the reference release, with the embedded sample as the default: ``data_dir``; else
    ``$MIND_DATA_DIR`` when set and not blank; else :func:`sample_dir`. A relative path means the
    working directory.

    Examples
    --------
    >>> resolve_data_dir().joinpath("mind_en.jsonl").is_file()
    True
    >>> resolve_data_dir("some/dir").is_absolute()
    True
    """
    return _resolve(data_dir)[0]


def _resolve(data_dir: str | os.PathLike[str] | None) -> tuple[Path, str]:
    """:func:`resolve_data_dir` plus a description of where the directory came from."""
    if data_dir is not None and os.fspath(data_dir) != "":
        return Path(data_dir).expanduser().absolute(), "the data_dir argument"
    env = os.environ.get(DATA_DIR_ENV, "").strip()
    if env:
        return Path(env).expanduser().absolute(), f"${DATA_DIR_ENV}"
    return sample_dir(), "the default, the embedded MIND sample"


def sample_dir() -> Path:
    """The folder of the embedded MIND sample (``data/mind`` in the repository; package data when installed)."""
    return Path(str(resources.files("tefcore.mind.sample")))


def load_posts(lang: str, data_dir: str | os.PathLike[str] | None = None) -> list[Post]:
    """Load and validate ``mind_<lang>.jsonl`` from the resolved data directory.

    Parameters
    ----------
    lang : {"en", "zh"}
        Language of the file to read.
    data_dir : str or path-like, optional
        See :func:`resolve_data_dir`.

    Returns
    -------
    list of Post

    Raises
    ------
    UnknownName
        On an unknown language (:class:`tefcore.errors.UnknownName`, a KeyError and a ValueError).
    FileNotFoundError
        If the directory has no ``mind_<lang>.jsonl``; the message says how to get one.
    MindFormatError
        If the file is malformed (see :func:`read_mind_file`).
    """
    directory, source = _resolve(data_dir)
    path = directory / mind_filename(lang)
    if not path.is_file():
        raise FileNotFoundError(
            f"MIND file {path} not found (data directory from {source}). Point ${DATA_DIR_ENV} or "
            f"data_dir= at a directory holding mind_en.jsonl and mind_zh.jsonl, or download the "
            f"release into one with `tef download` (tefcore.mind.release.download_release)."
        )
    return read_mind_file(path, lang=lang)


# --- evaluation pairs -----------------------------------------------------------------------
def _post_sides(post: Post) -> dict[str, set[str]]:
    """:func:`sides_by_dimension` of a post's labels."""
    return sides_by_dimension((label.dimension, label.side) for label in post.labels)


def mind_pair(post_id: str, lang: str, dimension: str, side: str | None, text: str) -> EvaluationPair:
    """A pair of MIND's: its dimension's sides are change and stability (:func:`tefcore.mind.prompts.choices`).

    Examples
    --------
    >>> mind_pair("en-single-1", "en", "Economy", "change", "Taxes should fall.").choices.letters
    ('C', 'S')
    """
    return EvaluationPair(post_id, lang, dimension, side, text, choices(dimension, lang))


def evaluation_pairs(posts: Iterable[Post]) -> list[EvaluationPair]:
    """Build the evaluation pairs of protocol §2.

    One per (post, dimension) whose labels share one side, the target (:func:`sides_by_dimension`);
    two-sided pairs are left out (:func:`excluded_pairs`).

    Parameters
    ----------
    posts : iterable of Post
        Validated posts (see :func:`read_mind_file`).

    Returns
    -------
    list of EvaluationPair
        Post order, then dimension order.
    """
    return [
        mind_pair(post.id, post.lang, dimension, next(iter(sides)), post.text)
        for post in posts
        for dimension, sides in _post_sides(post).items()
        if len(sides) == 1
    ]


def excluded_pairs(posts: Iterable[Post]) -> list[ExcludedPair]:
    """Return the two-sided (post, dimension) pairs, which have no target, as ``(post_id, lang, dimension)``."""
    return [
        ExcludedPair(post.id, post.lang, dimension)
        for post in posts
        for dimension, sides in _post_sides(post).items()
        if len(sides) > 1
    ]
