"""The MIND release: download, data card, which data a run used, the published counts (protocol §2)."""

from __future__ import annotations

import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tefcore.hashing import file_sha256
from tefcore.mind.load import (EvaluationPair, MindFormatError, Post, evaluation_pairs, excluded_pairs,
                               load_posts, mind_filename, read_mind_file, resolve_data_dir, sample_dir)
from tefcore.mind.schema import LANGS, SIDES, TABLE_ORDER, check_lang
from tefcore.tasks.segment import MIN_LENGTH, split_sentences

__all__ = ["FULL_RELEASE_DIR", "RELEASE_BASE_URL", "DATA_KINDS",
           "DataDescription", "DownloadError", "data_card", "describe_data", "download_release",
           "pair_counts", "FULL_RELEASE", "FULL_RELEASE_PAIRS", "is_full_release"]

FULL_RELEASE_DIR = "data/mind-full"
"""Where the book's commands expect the full release (``tef download --dest data/mind-full``)."""

_RELEASE_REPOSITORY = "Kzczc/ICASSP2027-TEF"
_RELEASE_COMMIT = "3992d6257db508240ee41d2b7619fc182e880358"
"""The release commit (``3992d625``), pinned in full so that the download cannot drift."""
RELEASE_BASE_URL = f"https://raw.githubusercontent.com/{_RELEASE_REPOSITORY}/{_RELEASE_COMMIT}/data"

_CHUNK = 1 << 16


# --- the full release (protocol §2) ---------------------------------------------------------------
FULL_RELEASE: dict[str, dict[str, float]] = {
    "zh": {"posts": 5474, "labels": 11762, "pairs": 10330, "excluded_pairs": 208,
           "mean_length": 138.2, "mean_sentences": 4.35},
    "en": {"posts": 2884, "labels": 4919, "pairs": 4621, "excluded_pairs": 40,
           "mean_length": 86.8, "mean_sentences": 5.84},
}
"""Published counts of the full MIND release per language: ``mean_length`` in characters (zh) or words
(en), ``mean_sentences`` per post under the reference segmentation rule."""

FULL_RELEASE_PAIRS: dict[str, dict[str, tuple[int, int]]] = {
    "zh": {"Culture": (669, 1330), "Economy": (672, 715), "Society": (1323, 853),
           "Politics": (1806, 708), "Technology": (822, 634), "Environment": (531, 267)},
    "en": {"Culture": (434, 615), "Economy": (563, 539), "Society": (775, 337),
           "Politics": (659, 328), "Technology": (107, 127), "Environment": (106, 31)},
}
"""Published evaluation pairs of the full release per language and dimension: ``(change, stability)``."""

_PUBLISHED_COUNTS: tuple[str, ...] = ("posts", "labels", "pairs", "excluded_pairs")
"""The counts of :data:`FULL_RELEASE` that :func:`_published_counts` recomputes from posts."""


def _published_counts(posts: Sequence[Post]) -> dict[str, int]:
    """The :data:`_PUBLISHED_COUNTS` of one language's posts (posts, labels, pairs, excluded pairs).

    Examples
    --------
    >>> _published_counts(load_posts("en"))
    {'posts': 381, 'labels': 637, 'pairs': 605, 'excluded_pairs': 2}
    """
    return {"posts": len(posts), "labels": sum(len(post.labels) for post in posts),
            "pairs": len(evaluation_pairs(posts)), "excluded_pairs": len(excluded_pairs(posts))}


def is_full_release(posts_per_lang: Mapping[str, int]) -> bool:
    """Whether the data at hand has the full release's number of posts in every language.

    Parameters
    ----------
    posts_per_lang : mapping of str to int
        Number of posts loaded per language (``{"en": 381, "zh": 649}``).
    """
    return all(int(posts_per_lang.get(lang, -1)) == int(FULL_RELEASE[lang]["posts"]) for lang in LANGS)


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

    Each file is streamed to a temporary file in ``dest_dir``, checked against ``checksums[lang]``,
    validated with :func:`read_mind_file`, and only then moved onto ``dest_dir/mind_<lang>.jsonl``
    (:func:`os.replace`). On any failure the destination is left as it was.

    Parameters
    ----------
    dest_dir : str or path-like
        Target directory (created if missing; removed again, with the parents this call created, when
        the download fails before any file is in place).
    langs : sequence of {"en", "zh"}, default ("en", "zh")
        Languages to fetch (a single string is accepted too).
    base_url : str
        Directory URL holding the files; defaults to the release commit on GitHub
        (:data:`RELEASE_BASE_URL`). ``https``, ``http`` and ``file`` URLs are accepted.
    checksums : mapping of str to str, optional
        Expected SHA-256 hex digest per language; a language without one is not checked.
    force : bool, default False
        Download even when the destination file exists (else it is kept, its digest checked).
    timeout : float, default 60
        Socket timeout in seconds.

    Returns
    -------
    dict
        ``lang -> (path, sha256 hex digest)`` of the file now in place.

    Raises
    ------
    ValueError
        On an unknown language or URL scheme, or a checksum mismatch (naming both digests).
    MindFormatError
        If the downloaded content is not a valid MIND file (located by URL and line).
    DownloadError
        When a file cannot be fetched (no network, HTTP error); the message names the URL.
    OSError
        On file-system errors.
    """
    langs = _unique_langs(langs)
    scheme = urllib.parse.urlsplit(base_url).scheme
    if scheme not in ("https", "http", "file"):
        raise ValueError(f"unsupported URL scheme {scheme!r} in {base_url!r}; use https, http or file")
    dest = Path(dest_dir).expanduser().absolute()
    created = [folder for folder in (dest, *dest.parents) if not folder.exists()]  # deepest first
    dest.mkdir(parents=True, exist_ok=True)
    checksums = {key: value.strip().lower() for key, value in (checksums or {}).items()}
    result = {}
    try:
        for lang in langs:
            target = dest / mind_filename(lang)
            if target.exists() and not force:
                result[lang] = (target, _verify(file_sha256(target), checksums.get(lang), str(target)))
            else:
                url = f"{base_url.rstrip('/')}/{mind_filename(lang)}"
                result[lang] = (target, _fetch(url, target, lang, checksums.get(lang), timeout))
    except BaseException:
        for folder in created:  # a failed download leaves no empty folder behind (one holding a file stays)
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    return result


def _unique_langs(langs: Sequence[str]) -> list[str]:
    """Validate languages and drop repeats, keeping order."""
    if isinstance(langs, str):
        langs = [langs]
    for lang in langs:
        check_lang(lang)
    return list(dict.fromkeys(langs))


def _verify(got: str, expected: str | None, what: str) -> str:
    """Return ``got``; raise ``ValueError`` if an expected digest is given and differs."""
    if expected is not None and got != expected:
        raise ValueError(f"SHA-256 mismatch for {what}: expected {expected}, got {got}")
    return got


class DownloadError(OSError):
    """The release could not be fetched (no network, a refused connection, an HTTP error)."""


def _open_url(url: str, timeout: float) -> Any:
    """``urlopen`` whose failures are one :class:`DownloadError` naming the URL and the reason."""
    try:
        return urllib.request.urlopen(url, timeout=timeout)
    except urllib.error.HTTPError as err:
        raise DownloadError(f"cannot download {url}: HTTP {err.code} {err.reason}") from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise DownloadError(f"cannot download {url}: {reason} (is the network reachable?)") from None


def _fetch(url: str, target: Path, lang: str, expected: str | None, timeout: float) -> str:
    """Stream ``url`` to a temporary file beside ``target``, check it, then replace ``target``."""
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, _open_url(url, timeout) as response:
            for chunk in iter(lambda: response.read(_CHUNK), b""):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        got = _verify(file_sha256(tmp), expected, url)
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
    return check_lang(langs.pop())


def data_card(posts: Sequence[Post], rule: str = "reference", min_length: int = MIN_LENGTH) -> dict[str, Any]:
    """Compute the data-card statistics of one language's posts.

    Parameters
    ----------
    posts : sequence of Post
        Posts of a single language.
    rule : {"reference", "improved"}, default "reference"
        Segmentation rule for ``mean_sentences`` (see :func:`tefcore.tasks.segment.split_sentences`).
    min_length : int, default 10
        Its minimum sentence length.

    Returns
    -------
    dict
        ``lang``, the :func:`_published_counts`, ``change_pairs``, ``stability_pairs``,
        ``mean_length`` in its ``length_unit`` (zh characters, en words), ``segmentation_rule``,
        ``mean_sentences`` (per post), ``dimensions_per_post`` (number of dimensions -> posts).

    Raises
    ------
    ValueError
        If ``posts`` is empty or mixes languages.
    """
    posts = list(posts)
    lang = _single_lang(posts)
    texts = pd.Series([post.text for post in posts], dtype=object)
    lengths = texts.str.len() if lang == "zh" else texts.str.count(r"\S+")
    sentences = texts.map(lambda text: len(split_sentences(text, lang, min_length, rule)))
    dims = Counter(len({label.dimension for label in post.labels}) for post in posts)
    sides = pd.Series([pair.side for pair in evaluation_pairs(posts)], dtype=object)
    return {
        "lang": lang,
        **_published_counts(posts),
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
        Index ``dimension`` in :data:`~tefcore.mind.schema.TABLE_ORDER` (all six, zeros included);
        integer columns ``change``, ``stability`` and ``total``.
    """
    found = Counter((pair.dimension, pair.side) for pair in pairs)
    counts = pd.DataFrame([[found[(dim, side)] for side in SIDES] for dim in TABLE_ORDER], columns=list(SIDES),
                          index=pd.Index(TABLE_ORDER, name="dimension"), dtype=int)
    counts["total"] = counts["change"] + counts["stability"]
    return counts


# --- which data ---------------------------------------------------------------------------------
DATA_KINDS: tuple[str, ...] = ("MIND sample", "full MIND release", "custom data")
"""What :func:`describe_data` can say a data directory holds."""


@dataclass(frozen=True)
class DataDescription:
    """Which MIND data a directory holds (``kind``, one of :data:`DATA_KINDS`), the absolute ``directory``,
    and per language the ``posts``, evaluation ``pairs`` and the file's ``sha256``."""

    kind: str
    directory: Path
    posts: dict[str, int]
    pairs: dict[str, int]
    sha256: dict[str, str]


def describe_data(data_dir: str | os.PathLike[str] | None = None, langs: Sequence[str] = LANGS) -> DataDescription:
    """Say which data a MIND directory holds: the embedded sample, the full release, or custom data.

    The data are the MIND sample when every language's post ids and texts equal the embedded sample's,
    whatever the files' bytes; the full release when every language has the :func:`_published_counts`
    of :data:`FULL_RELEASE`; custom data otherwise.

    Parameters
    ----------
    data_dir : str or path-like, optional
        Resolved as by :func:`tefcore.mind.load.resolve_data_dir`.
    langs : sequence of {"en", "zh"}
        The languages to read (each must have its file).

    Returns
    -------
    DataDescription

    Raises
    ------
    FileNotFoundError
        When a language's file is missing.
    MindFormatError
        When a file is malformed.

    Examples
    --------
    >>> described = describe_data()          # the embedded sample
    >>> described.kind, described.posts, described.pairs
    ('MIND sample', {'en': 381, 'zh': 649}, {'en': 605, 'zh': 1215})
    >>> described.sha256["en"][:12]
    '4e6c23ed7136'
    """
    langs = _unique_langs(langs)
    directory = resolve_data_dir(data_dir)
    posts = {lang: load_posts(lang, directory) for lang in langs}
    return DataDescription(
        kind=_data_kind(directory, posts),
        directory=directory,
        posts={lang: len(items) for lang, items in posts.items()},
        pairs={lang: len(evaluation_pairs(items)) for lang, items in posts.items()},
        sha256={lang: file_sha256(directory / mind_filename(lang)) for lang in langs},
    )


def _data_kind(directory: Path, posts: Mapping[str, Sequence[Post]]) -> str:
    """``"MIND sample"``, ``"full MIND release"`` or ``"custom data"`` (see :func:`describe_data`)."""
    if directory.resolve() == sample_dir().resolve() or all(
        _ids_and_texts(items) == _ids_and_texts(load_posts(lang, sample_dir())) for lang, items in posts.items()
    ):
        return DATA_KINDS[0]
    if all(_published_counts(items) == {key: int(FULL_RELEASE[lang][key]) for key in _PUBLISHED_COUNTS}
           for lang, items in posts.items()):
        return DATA_KINDS[1]
    return DATA_KINDS[2]


def _ids_and_texts(posts: Sequence[Post]) -> list[tuple[str, str]]:
    """The (id, text) of each post: what makes data the MIND sample, whatever the file's bytes."""
    return [(post.id, post.text) for post in posts]
