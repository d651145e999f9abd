"""Parts directories: the store of a Ray run (:mod:`tefcore.extraction.ray_engine`), merged into a cache file at the end.

``<lang>.parts/`` beside ``<lang>.jsonl`` holds ``header.json`` (the header line of a cache file),
``data/*.parquet`` (the cache file's records, one row each with its ``pair_id`` and ``seq``, the local
loop's order; Parquet keeps every float bit) and Ray Data's ``checkpoint/``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


from tefcore.extraction.cache import (COLUMNS, CacheError, CacheWriter, ProvenanceMismatch, check_header,
                                  check_pairs, encode_record, read_cache_file)

__all__ = ["PARTS_CHECKPOINT", "PARTS_DATA", "PARTS_HEADER", "PARTS_PENDING", "committed_parts", "merge_parts",
           "open_parts", "pair_id", "part_record", "parts_path", "read_parts", "records_table"]

_PARTS_SUFFIX = ".parts"
"""A parts directory sits beside its cache file: ``<lang>.jsonl`` -> ``<lang>.parts/``."""

PARTS_HEADER = "header.json"
PARTS_DATA = "data"
PARTS_CHECKPOINT = "checkpoint"

PARTS_PENDING = ".pending.parquet"
"""Ray's checkpoint file of a write not committed yet ends so."""

_OPTIONAL_KEYS: tuple[str, ...] = ("text_sha256", "served_models", "system_fingerprints", "direct_detail",
                                   "sentence_details", "direct_probs", "sentence_probs", "direct_logprobs",
                                   "sentence_logprobs")
"""Record fields that :func:`tefcore.extraction.cache.pair_record` writes only when it has them (null in a part otherwise)."""

_RECORD_KEYS: tuple[str, ...] = (*COLUMNS, *_OPTIONAL_KEYS, "provenance_id")
"""The fields of a pair record after ``type``, in :func:`tefcore.extraction.cache.pair_record`'s order."""

def pair_id(post_id: str, dimension: str) -> str:
    """The stable key of a (post, dimension) pair in a parts directory.

    Examples
    --------
    >>> pair_id("en-single-7", "Economy")
    'Economy/en-single-7'
    """
    return f"{dimension}/{post_id}"


def parts_path(cache_file: str | os.PathLike[str]) -> Path:
    """The parts directory of a cache file.

    Examples
    --------
    >>> parts_path("out/e5-zeroshot/original/en.jsonl").as_posix()
    'out/e5-zeroshot/original/en.parts'
    """
    path = Path(cache_file)
    return path.with_name(path.name.removesuffix(".jsonl") + _PARTS_SUFFIX)


def records_table(rows: Sequence[tuple[int, Mapping[str, Any]]]) -> Any:
    """An Arrow table of pair records: ``pair_id``, ``seq`` (the local loop's order), then the record's fields.

    Parameters
    ----------
    rows : sequence of (int, dict)
        ``seq`` and the record of :func:`tefcore.extraction.cache.pair_record`.

    Raises
    ------
    ValueError
        When a record has a field that :data:`_RECORD_KEYS` lacks.
    """
    import pyarrow as pa

    floats, strings = pa.list_(pa.float64()), pa.list_(pa.string())
    types = {"post_id": pa.string(), "lang": pa.string(), "dimension": pa.string(), "side": pa.string(),
             "direct": pa.float64(), "direct_source": pa.string(), "direct_mass": pa.float64(),
             "direct_logprob_c": pa.float64(), "direct_logprob_s": pa.float64(), "sentences": floats,
             "sentence_sources": strings, "sentence_masses": floats, "sentence_logprobs_c": floats,
             "sentence_logprobs_s": floats, "text_sha256": pa.string(), "served_models": strings,
             "system_fingerprints": strings, "direct_detail": pa.string(), "sentence_details": strings,
             "direct_probs": floats, "sentence_probs": pa.list_(floats), "direct_logprobs": floats,
             "sentence_logprobs": pa.list_(floats), "provenance_id": pa.string()}
    schema = pa.schema([("pair_id", pa.string()), ("seq", pa.int64()), *((k, types[k]) for k in _RECORD_KEYS)])
    columns: dict[str, list[Any]] = {"pair_id": [], "seq": [], **{k: [] for k in _RECORD_KEYS}}
    for seq, rec in rows:
        unknown = set(rec) - {"type", *_RECORD_KEYS}
        if unknown:
            raise ValueError(f"a part has no column for record field(s) {sorted(unknown)}; add them to _RECORD_KEYS")
        columns["pair_id"].append(pair_id(rec["post_id"], rec["dimension"]))
        columns["seq"].append(seq)
        for key in _RECORD_KEYS:
            columns[key].append(rec.get(key))
    return pa.Table.from_pydict(columns, schema=schema)


def part_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON record of a part row (the keys of :func:`tefcore.extraction.cache.pair_record`, in its order)."""
    rec: dict[str, Any] = {"type": "pair"}
    for key in _RECORD_KEYS:
        if key not in _OPTIONAL_KEYS or row.get(key) is not None:
            rec[key] = row[key]
    return rec


def open_parts(parts_dir: str | os.PathLike[str], provenance: Mapping[str, Any]) -> str:
    """Create a parts directory with its header, or check the header of an existing one.

    The header (``header.json``) is a cache file of one line, its header, written before any part by
    a :class:`~tefcore.extraction.cache.CacheWriter` (which checks the provenance of an existing one).

    Returns
    -------
    str
        The provenance id.

    Raises
    ------
    ProvenanceMismatch
        When the directory was written under another provenance.
    """
    with CacheWriter(Path(parts_dir) / PARTS_HEADER, provenance) as header:
        return header.provenance_id


def _parts_header(parts: Path) -> dict[str, Any]:
    """The header record of a parts directory."""
    header_file = parts / PARTS_HEADER
    try:
        header = json.loads(header_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CacheError(f"{header_file}: not a readable parts header ({exc})") from None
    return check_header(header_file, [header] if isinstance(header, dict) else [])


def committed_parts(parts_dir: str | os.PathLike[str]) -> list[Path]:
    """Part files whose write was committed (sorted).

    Ray Data writes a pending checkpoint before a part and renames it when the part is complete;
    a part whose name starts with a pending checkpoint's name is an unfinished write (the next run
    deletes it) and is left out here.
    """
    parts = Path(parts_dir)
    checkpoint = parts / PARTS_CHECKPOINT
    pending = [f.name[:-len(PARTS_PENDING)] for f in checkpoint.glob(f"*{PARTS_PENDING}")] if checkpoint.is_dir() else []
    files = sorted((parts / PARTS_DATA).rglob("*.parquet"))
    return [f for f in files if not any(f.name.startswith(p) for p in pending)]


def read_parts(parts_dir: str | os.PathLike[str],
               columns: Sequence[str] | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Read the committed parts of a parts directory: one row per pair, duplicates removed.

    Parameters
    ----------
    parts_dir : path-like
        The parts directory.
    columns : sequence of str, optional
        Read only these columns (``pair_id`` is always read); checks that need other columns are
        skipped.

    Returns
    -------
    (list of dict, dict)
        The rows (part columns, sorted by ``seq``) and the header.

    Raises
    ------
    CacheError
        On an unreadable part, a row of another provenance, or two different copies of one pair.
    """
    import pyarrow.parquet as pq

    parts = Path(parts_dir)
    header = _parts_header(parts)
    wanted = None if columns is None else list(dict.fromkeys(["pair_id", *columns]))
    rows: dict[str, dict[str, Any]] = {}
    for file in committed_parts(parts):
        try:
            table = pq.read_table(file, columns=wanted)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise CacheError(f"{file}: not a readable part ({' '.join(str(exc).split())})") from None
        for row in table.to_pylist():
            if "provenance_id" in row and row["provenance_id"] != header["provenance_id"]:
                raise CacheError(f"{file}: pair {row['pair_id']!r} is from another provenance "
                                 f"({row['provenance_id']!r} != header {header['provenance_id']!r})")
            first = rows.setdefault(row["pair_id"], row)  # one copy per pair; another must be equal, seq aside
            if first is not row and {k: v for k, v in first.items() if k != "seq"} != \
                    {k: v for k, v in row.items() if k != "seq"}:
                raise CacheError(f"{file}: pair {row['pair_id']!r} has two different copies in the parts; "
                                 f"the directory mixes runs that disagree")
    ordered = sorted(rows.values(), key=lambda r: (r.get("seq", 0), r["pair_id"]))
    return ordered, header


def merge_parts(parts_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> Path:
    """Write the usual cache file from a parts directory (records in the local loop's order).

    Parameters
    ----------
    parts_dir : path-like
        The parts directory.
    out : path-like, optional
        The cache file (default: ``<lang>.jsonl`` beside ``<lang>.parts``). It is replaced atomically;
        an existing file must have the same provenance and no pair that the parts lack.

    Returns
    -------
    Path
        The cache file.

    Raises
    ------
    ProvenanceMismatch, CacheError
        When ``out`` holds another provenance, pairs the parts do not have, or pairs whose answers'
        sources differ from the parts' (scored again on the merged cache, by ``--retry-invalid``).
    """
    parts = Path(parts_dir)
    target = Path(out) if out is not None else parts.with_name(parts.name.removesuffix(_PARTS_SUFFIX) + ".jsonl")
    rows, header = read_parts(parts)
    pairs = check_pairs(parts, [header, *(part_record(r) for r in rows)], header["provenance_id"])
    if target.exists():
        frame, prov = read_cache_file(target)
        if prov["provenance_id"] != header["provenance_id"]:
            raise ProvenanceMismatch(f"{target} holds another provenance than the parts; refusing to replace it")
        lost = sorted(set(map(pair_id, frame["post_id"], frame["dimension"])) -
                      {pair_id(r["post_id"], r["dimension"]) for r in pairs})
        if lost:
            raise CacheError(f"{target} holds {len(lost)} pair(s) the parts lack (e.g. {lost[0]!r}); "
                             f"refusing to replace it")
        sources = {pair_id(r["post_id"], r["dimension"]): [r["direct_source"], *r["sentence_sources"]] for r in pairs}
        rescored = sorted(pid for pid, *answer in zip(map(pair_id, frame["post_id"], frame["dimension"]),
                                                       frame["direct_source"], frame["sentence_sources"])
                          if sources[pid] != [answer[0], *answer[1]])
        if rescored:
            raise CacheError(f"{target} holds {len(rescored)} pair(s) scored again since the parts were merged (e.g. "
                             f"{rescored[0]!r}, by tef extract --retry-invalid); refusing to replace them with the "
                             f"parts' older answers")
    tmp = target.with_name(f".{target.name}.merging")
    try:
        with open(tmp, "wb") as handle:
            for rec in [header, *pairs]:
                handle.write(encode_record(rec))
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:  # a full disk: the target is left as it was, and the error names it
        tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from None
    os.replace(tmp, target)
    return target
