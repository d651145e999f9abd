"""MIND posts: a validating loader, the evaluation pairs, the release download and data-card statistics.

A MIND file (``mind_en.jsonl`` / ``mind_zh.jsonl``) holds one JSON object per line (protocol §2)::

    {"id": "en-single-9", "lang": "en", "event": "COL", "text": "...",
     "labels": [{"dimension": "Economy", "subcategory": "Economic Models",
                 "orientation": "Interventionist", "side": "stability"}]}

:func:`read_mind_file` checks every record against :mod:`tefcore.schema` and reports the first
problem as a :class:`MindFormatError` whose message starts with ``"{path}:{line}: "``.
The evaluation unit is a (post, dimension) pair whose labels all fall on one side
(:func:`evaluation_pairs`); two-sided pairs have no target (:func:`excluded_pairs`).

Examples
--------
>>> from tefcore.data import load_posts, evaluation_pairs
>>> posts = load_posts("en")                       # doctest: +SKIP
>>> pairs = evaluation_pairs(posts)                # doctest: +SKIP
>>> pairs[0].dimension, pairs[0].side              # doctest: +SKIP
('Economy', 'stability')
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import re
import tempfile
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from tefcore.schema import DIMENSIONS, LANGS, SIDES, TABLE_ORDER, side_of
from tefcore.segment import MIN_LENGTH, split_sentences

__all__ = [
    "DATA_DIR_ENV",
    "RELEASE_BASE_URL",
    "RELEASE_COMMIT",
    "RELEASE_REPOSITORY",
    "EvaluationPair",
    "ExcludedPair",
    "Label",
    "MindFormatError",
    "Post",
    "data_card",
    "download_release",
    "evaluation_pairs",
    "excluded_pairs",
    "label_counts",
    "load_posts",
    "mind_filename",
    "pair_counts",
    "read_mind_file",
    "resolve_data_dir",
]

DATA_DIR_ENV = "MIND_DATA_DIR"
REPO_ROOT = Path(__file__).resolve().parent.parent
RELEASE_REPOSITORY = "Kzczc/ICASSP2027-TEF"
RELEASE_COMMIT = "3992d6257db508240ee41d2b7619fc182e880358"
"""The release commit (``3992d625``), pinned in full so that the download cannot drift."""
RELEASE_BASE_URL = f"https://raw.githubusercontent.com/{RELEASE_REPOSITORY}/{RELEASE_COMMIT}/data"

_RECORD_FIELDS = ("id", "lang", "event", "text", "labels")
_LABEL_FIELDS = ("dimension", "subcategory", "orientation", "side")
_ID = re.compile(r"(?P<lang>[a-z]+)-(?P<kind>single|multi)-(?P<source>\S+)")
_FILENAME = re.compile(r"mind_(?P<lang>[a-z]+)\.jsonl")
_CHUNK = 1 << 16


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


@dataclass(frozen=True)
class EvaluationPair:
    """One evaluation unit (protocol §2): a post and a dimension; ``side`` is the gold target."""

    post_id: str
    lang: str
    dimension: str
    side: str
    text: str


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
    _check_lang(lang)
    return f"mind_{lang}.jsonl"


def _check_lang(lang: object) -> None:
    """Raise ``ValueError`` unless ``lang`` is one of :data:`~tefcore.schema.LANGS`."""
    if lang not in LANGS:
        raise ValueError(f"unsupported language {lang!r}; expected one of {LANGS}")


# --- loader ---------------------------------------------------------------------------------
def read_mind_file(path: str | os.PathLike[str], lang: str | None = None) -> list[Post]:
    """Read and validate a MIND JSON-lines file.

    Parameters
    ----------
    path : str or path-like
        The file.
    lang : {"en", "zh"} or None
        The file's language. ``None`` takes it from a ``mind_<lang>.jsonl`` file name, else from
        the first record. Every record's ``lang`` and id prefix must equal it.

    Returns
    -------
    list of Post
        In file order.

    Raises
    ------
    ValueError
        If ``lang`` is neither None nor a MIND language.
    MindFormatError
        On the first bad record: invalid JSON, a truncated last line, a blank line that is not
        trailing, non-UTF-8 bytes, a missing, extra or duplicated field, a wrong type, an empty or
        blank text, an empty label list, an unknown dimension, subcategory, orientation or side, a
        side that contradicts the schema, a wrong language, a malformed or duplicate id, or a file
        without records (``line`` 0, "empty file").
    OSError
        If the file cannot be read (e.g. :class:`FileNotFoundError`).

    Notes
    -----
    Blank lines at the end of the file are ignored; any other blank line is an error. A UTF-8
    byte-order mark is accepted. The last line may lack its newline only if it is a complete
    record. Work is linear in the file size; no length limit applies.
    """
    if lang is not None:
        _check_lang(lang)
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
    line = lines[index]
    try:
        record = json.loads(line, object_pairs_hook=_unique_keys)
    except _InvalidRecordError as err:
        raise MindFormatError(path, index + 1, str(err)) from None
    except (ValueError, RecursionError) as err:
        if index == last == len(lines) - 1:
            reason = f"truncated last line (no newline at end of file and invalid JSON: {err})"
        else:
            reason = f"invalid JSON: {err}"
        raise MindFormatError(path, index + 1, reason) from None
    try:
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
    if lang is None and record_lang not in LANGS:
        raise _InvalidRecordError(f"unknown lang {record_lang!r}; expected one of {LANGS}")
    if lang is not None and record_lang != lang:
        raise _InvalidRecordError(f"lang {record_lang!r} but this is a {lang!r} file")
    lang = record_lang
    match = _ID.fullmatch(post_id)
    if match is None:
        raise _InvalidRecordError(f"id {post_id!r} is not of the form '<lang>-<single|multi>-<source id>'")
    if match["lang"] != lang:
        raise _InvalidRecordError(f"id {post_id!r} has language prefix {match['lang']!r}, expected {lang!r}")
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
    """Return the MIND data directory.

    Resolution order (as in the reference release): the explicit ``data_dir``; else the
    environment variable ``MIND_DATA_DIR`` when it is set and not blank; else the repository's
    ``data/`` directory (the parent of the :mod:`tefcore` package directory, then ``data``).
    The directory is not required to exist; :func:`load_posts` says what to do when it lacks a file.
    """
    return _resolve(data_dir)[0]


def _resolve(data_dir: str | os.PathLike[str] | None) -> tuple[Path, str]:
    """:func:`resolve_data_dir` plus a description of where the directory came from."""
    if data_dir is not None and os.fspath(data_dir) != "":
        return Path(data_dir).expanduser(), "the data_dir argument"
    env = os.environ.get(DATA_DIR_ENV, "").strip()
    if env:
        return Path(env).expanduser(), f"${DATA_DIR_ENV}"
    return REPO_ROOT / "data", "the default <repository>/data"


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
    ValueError
        On an unknown language.
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
            f"release into one with `tef download` (tefcore.data.download_release)."
        )
    return read_mind_file(path, lang=lang)


# --- evaluation pairs -----------------------------------------------------------------------
def _sides_by_dimension(post: Post) -> dict[str, set[str]]:
    """Map each dimension of a post, in order of first appearance, to the sides of its labels."""
    sides: dict[str, set[str]] = {}
    for label in post.labels:
        sides.setdefault(label.dimension, set()).add(label.side)
    return sides


def evaluation_pairs(posts: Iterable[Post]) -> list[EvaluationPair]:
    """Build the evaluation pairs of protocol §2.

    One pair per (post, dimension), dimensions in order of first appearance in the post's labels;
    the target is the side shared by all labels of that dimension. Pairs whose labels fall on both
    sides are left out (see :func:`excluded_pairs`).

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
        EvaluationPair(post.id, post.lang, dimension, next(iter(sides)), post.text)
        for post in posts
        for dimension, sides in _sides_by_dimension(post).items()
        if len(sides) == 1
    ]


def excluded_pairs(posts: Iterable[Post]) -> list[ExcludedPair]:
    """Return the two-sided (post, dimension) pairs, which have no target, as ``(post_id, lang, dimension)``."""
    return [
        ExcludedPair(post.id, post.lang, dimension)
        for post in posts
        for dimension, sides in _sides_by_dimension(post).items()
        if len(sides) > 1
    ]


# --- download -------------------------------------------------------------------------------
def download_release(
    dest_dir: str | os.PathLike[str],
    langs: Sequence[str] = LANGS,
    *,
    base_url: str = RELEASE_BASE_URL,
    checksums: Mapping[str, str] | None = None,
    force: bool = False,
    timeout: float = 60.0,
) -> dict[str, tuple[Path, str]]:
    """Download the MIND release files ``mind_<lang>.jsonl`` into ``dest_dir``.

    Each file is streamed to a temporary file in ``dest_dir``, hashed (SHA-256) on the way,
    checked against ``checksums[lang]`` when given, validated with :func:`read_mind_file`, and only
    then moved onto ``dest_dir/mind_<lang>.jsonl`` with an atomic :func:`os.replace`. On any
    failure the temporary file is removed and the destination is left as it was.

    Parameters
    ----------
    dest_dir : str or path-like
        Target directory (created if missing).
    langs : sequence of {"en", "zh"}, default ("en", "zh")
        Languages to fetch (a single string is accepted too).
    base_url : str
        Directory URL holding the files; defaults to the release commit on GitHub
        (:data:`RELEASE_BASE_URL`). ``https``, ``http`` and ``file`` URLs are accepted.
    checksums : mapping of str to str, optional
        Expected SHA-256 hex digest per language. A language without one is not checked: its
        digest is computed and returned (record it to pin later downloads).
    force : bool, default False
        Download even when the destination file exists. Without it an existing file is kept
        (its digest is returned, and checked when a checksum is given).
    timeout : float, default 60
        Socket timeout in seconds.

    Returns
    -------
    dict
        ``lang -> (path, sha256 hex digest)`` of the file now in place.

    Raises
    ------
    ValueError
        On an unknown language or URL scheme, or a checksum mismatch (the message names the
        expected and the obtained digest).
    MindFormatError
        If the downloaded content is not a valid MIND file (located by URL and line).
    OSError
        On network or file-system errors (:class:`urllib.error.URLError` is one).
    """
    langs = _unique_langs(langs)
    scheme = urllib.parse.urlsplit(base_url).scheme
    if scheme not in ("https", "http", "file"):
        raise ValueError(f"unsupported URL scheme {scheme!r} in {base_url!r}; use https, http or file")
    dest = Path(dest_dir).expanduser()
    dest.mkdir(parents=True, exist_ok=True)
    checksums = {key: value.strip().lower() for key, value in (checksums or {}).items()}
    result = {}
    for lang in langs:
        target = dest / mind_filename(lang)
        if target.exists() and not force:
            result[lang] = (target, _verify(_sha256_file(target), checksums.get(lang), str(target)))
        else:
            url = f"{base_url.rstrip('/')}/{mind_filename(lang)}"
            result[lang] = (target, _fetch(url, target, lang, checksums.get(lang), timeout))
    return result


def _unique_langs(langs: Sequence[str]) -> list[str]:
    """Validate languages and drop repeats, keeping order."""
    if isinstance(langs, str):
        langs = [langs]
    for lang in langs:
        _check_lang(lang)
    return list(dict.fromkeys(langs))


def _verify(got: str, expected: str | None, what: str) -> str:
    """Return ``got``; raise ``ValueError`` if an expected digest is given and differs."""
    if expected is not None and got != expected:
        raise ValueError(f"SHA-256 mismatch for {what}: expected {expected}, got {got}")
    return got


def _sha256_file(path: Path) -> str:
    """Return the SHA-256 hex digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fetch(url: str, target: Path, lang: str, expected: str | None, timeout: float) -> str:
    """Stream ``url`` to a temporary file beside ``target``, check it, then replace ``target``."""
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            for chunk in iter(lambda: response.read(_CHUNK), b""):
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        got = _verify(digest.hexdigest(), expected, url)
        try:
            read_mind_file(tmp, lang=lang)
        except MindFormatError as err:
            raise MindFormatError(url, err.line, err.reason) from None
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
        return got
    finally:
        tmp.unlink(missing_ok=True)


# --- data card ------------------------------------------------------------------------------
def _single_lang(posts: Sequence[Post]) -> str:
    """Return the one language of ``posts``; raise ``ValueError`` if empty or mixed."""
    langs = {post.lang for post in posts}
    if len(langs) != 1:
        found = sorted(langs) if langs else "no posts"
        raise ValueError(f"a data card needs posts of exactly one language, got {found}")
    lang = langs.pop()
    _check_lang(lang)
    return lang


def data_card(posts: Sequence[Post], rule: str = "reference", min_length: int = MIN_LENGTH) -> dict[str, Any]:
    """Compute the data-card statistics of one language's posts.

    Parameters
    ----------
    posts : sequence of Post
        Posts of a single language.
    rule : {"reference", "improved"}, default "reference"
        Segmentation rule for ``mean_sentences`` (see :func:`tefcore.segment.split_sentences`).
    min_length : int, default 10
        Its minimum sentence length.

    Returns
    -------
    dict
        ``lang``, ``posts``, ``labels``, ``pairs``, ``excluded_pairs``, ``change_pairs``,
        ``stability_pairs``, ``mean_length`` with its ``length_unit`` (characters for zh,
        white-space separated words for en), ``segmentation_rule``, ``mean_sentences`` (sentences
        per post) and ``dimensions_per_post`` (number of dimensions -> number of posts).

    Raises
    ------
    ValueError
        If ``posts`` is empty or mixes languages.
    """
    posts = list(posts)
    lang = _single_lang(posts)
    pairs = evaluation_pairs(posts)
    texts = pd.Series([post.text for post in posts], dtype=object)
    lengths = texts.str.len() if lang == "zh" else texts.str.count(r"\S+")
    sentences = texts.map(lambda text: len(split_sentences(text, lang, min_length, rule)))
    dims = Counter(len({label.dimension for label in post.labels}) for post in posts)
    sides = pd.Series([pair.side for pair in pairs], dtype=object)
    return {
        "lang": lang,
        "posts": len(posts),
        "labels": sum(len(post.labels) for post in posts),
        "pairs": len(pairs),
        "excluded_pairs": len(excluded_pairs(posts)),
        "change_pairs": int((sides == "change").sum()),
        "stability_pairs": int((sides == "stability").sum()),
        "mean_length": float(lengths.mean()),
        "length_unit": "characters" if lang == "zh" else "words",
        "segmentation_rule": rule,
        "mean_sentences": float(sentences.mean()),
        "dimensions_per_post": dict(sorted(dims.items())),
    }


def pair_counts(pairs: Iterable[EvaluationPair]) -> pd.DataFrame:
    """Count evaluation pairs per dimension and side.

    Parameters
    ----------
    pairs : iterable of EvaluationPair
        Usually one language's pairs (languages are not separated).

    Returns
    -------
    pandas.DataFrame
        Index ``dimension`` in :data:`~tefcore.schema.TABLE_ORDER` (all six, zeros included);
        integer columns ``change``, ``stability`` and ``total``.
    """
    rows = [(pair.dimension, pair.side) for pair in pairs]
    frame = pd.DataFrame({
        "dimension": pd.Categorical([row[0] for row in rows], categories=list(TABLE_ORDER)),
        "side": pd.Categorical([row[1] for row in rows], categories=list(SIDES)),
    })
    counts = frame.groupby(["dimension", "side"], observed=False).size().unstack("side").astype(int)
    counts.index = pd.Index(list(counts.index), name="dimension")
    counts.columns = list(counts.columns)
    counts["total"] = counts["change"] + counts["stability"]
    return counts


def label_counts(posts: Iterable[Post]) -> pd.DataFrame:
    """Count labels per orientation (the bars of the paper's MIND statistics figure).

    Parameters
    ----------
    posts : iterable of Post
        Posts of any language.

    Returns
    -------
    pandas.DataFrame
        One row per orientation in schema order (24 rows, zeros included), columns
        ``dimension``, ``subcategory``, ``orientation``, ``side``, ``count``.
    """
    schema = pd.DataFrame(
        [(dim.name, sub.name, sub.position(side).name, side)
         for dim in DIMENSIONS for sub in dim.subcategories for side in SIDES],
        columns=["dimension", "subcategory", "orientation", "side"],
    )
    labels = pd.DataFrame([(label.dimension, label.subcategory, label.orientation)
                           for post in posts for label in post.labels],
                          columns=["dimension", "subcategory", "orientation"])
    counts = labels.value_counts().rename("count").reset_index()
    merged = schema.merge(counts, on=["dimension", "subcategory", "orientation"], how="left")
    merged["count"] = merged["count"].fillna(0).astype(int)
    return merged
