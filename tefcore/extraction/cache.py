"""The probability cache: JSON lines, one record per evaluation pair, with provenance.

Layout of a cache file (``<out>/<model>/<prompt>/<lang>.jsonl``)::

    {"type": "header", "provenance": {...}, "provenance_id": "<sha256>"}
    {"type": "pair", "post_id": ..., "lang": ..., "dimension": ..., "side": ...,
     "direct": 0.81, "direct_source": "logprobs", "direct_mass": 0.93, "direct_logprob_c": ...,
     "direct_logprob_s": ..., "sentences": [...], "sentence_sources": [...], "sentence_masses": [...],
     "sentence_logprobs_c": [...], "sentence_logprobs_s": [...], "provenance_id": "<sha256>"}
    ...

A task's dimension with K > 2 sides (:mod:`tefcore.tasks`) adds the distribution over its sides,
``"direct_probs": [K numbers]`` and ``"sentence_probs": [[K numbers], ...]`` (``direct`` and ``sentences``
hold the first side's), and for LLM judges each letter's log-probability, ``"direct_logprobs"`` and
``"sentence_logprobs"``. A two-side task's records are MIND's, ``direct`` being the first side's
probability; the provenance names the sides.

JSON has no NaN or infinity: an unreadable P(change) is ``null`` (NaN when read) and a letter that
was never seen has log-probability ``null`` (``-inf`` when read). Texts are not stored (MIND's licence
keeps them in MIND); the segmentation rule in the provenance regenerates the sentences. A run resumes
into a file only under the same :func:`provenance_id`. The Ray engine's parts directories hold the same
records (:mod:`tefcore.extraction.parts`).

Crash safety (:class:`CacheWriter`): one writer per file (``flock``), each record appended whole then
``fsync``-ed, so a kill leaves at most one torn last line, which resuming cuts away with a warning; a
bad line elsewhere is an error naming its line number, and so is a duplicate pair.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tefcore.fusion import CLASSES
from tefcore.judges.base import SOURCES, Score
from tefcore.hashing import text_sha256

log = logging.getLogger(__name__)

_TIME_KEYS: tuple[str, ...] = ("started_at", "hardware", "numeric_environment", "engine_path")
"""Provenance fields recorded but left out of the provenance id: when the run started, and the
machine (the visible GPUs; the CPU, C library, BLAS kernel, threads and package versions of
:func:`tefcore.judges.machine.numeric_environment`; where an engine library lies on its disk): a run may
resume on another machine if nothing that changes the numbers differs."""

COLUMNS: tuple[str, ...] = (
    "post_id", "lang", "dimension", "side", "direct", "direct_source", "direct_mass", "direct_logprob_c",
    "direct_logprob_s", "sentences", "sentence_sources", "sentence_masses", "sentence_logprobs_c",
    "sentence_logprobs_s",
)
"""Columns of :func:`read_cache`'s DataFrame: a pair's key (``side`` is its gold target), then its numbers."""

_REQUIRED_COLUMNS: tuple[str, ...] = tuple(c for c in COLUMNS if "logprob" not in c)
"""Fields every pair record must have (all of :data:`COLUMNS` but the log-probabilities)."""

_SENTENCE_LISTS = ("sentences", "sentence_sources", "sentence_masses")

_K_COLUMNS: tuple[str, ...] = ("direct_probs", "sentence_probs")
"""Columns of :func:`read_cache`'s DataFrame for a K > 2 task: each answer's distribution over the sides."""


class CacheError(ValueError):
    """A cache file that cannot be read or resumed; the message names the file (and line)."""


class ProvenanceMismatch(CacheError):
    """The cache was written under another provenance (model, prompt, rule, reading, ...)."""


def lock_exclusive(fd: int, target: Path, command: str) -> None:
    """Lock ``fd`` for this run alone (``flock``): two runs never write one store; ``command`` names the writer."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise CacheError(f"{target} is being written by another run ({command}); wait for it to finish or "
                         f"stop it first") from None


def provenance_id(provenance: Mapping[str, Any]) -> str:
    """SHA-256 hex digest of the canonical JSON (sorted keys, no spaces, UTF-8 characters kept) of
    ``provenance`` without :data:`_TIME_KEYS`."""
    stable = {k: v for k, v in provenance.items() if k not in _TIME_KEYS}
    canonical = json.dumps(stable, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def cache_path(out_dir: str | os.PathLike[str], model: str, variant: str, lang: str,
               rule: str = "reference", reading: str = "summed") -> Path:
    """``<out>/<model>/<variant>/<lang>.jsonl``; a non-default rule or reading is added to the file name.

    Examples
    --------
    >>> cache_path("data/caches", "local", "original", "en").as_posix()
    'data/caches/local/original/en.jsonl'
    >>> cache_path("out", "local", "minimal", "zh", rule="improved").as_posix()
    'out/local/minimal/zh.rule-improved.jsonl'
    """
    suffix = "".join(f".{what}-{value}" for what, value, default in
                     (("rule", rule, "reference"), ("reading", reading, "summed")) if value != default)
    for what, name in (("model", model), ("prompt", variant), ("language", lang)):
        if name in ("", ".", "..") or "/" in name or "\\" in name:  # one folder (or file) of its own, inside out_dir
            raise ValueError(f"the {what} name {name!r} cannot name a cache folder: give it a plain name")
    return Path(out_dir) / model / variant / f"{lang}{suffix}.jsonl"


def recorded_provenance(cache: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The provenance in the header line of a cache file (or of a parts directory's header file); None
    when there is no readable header (a new cache; the writer reports a damaged one)."""
    try:
        with open(cache, "rb") as handle:
            header = json.loads(handle.readline())
    except (OSError, ValueError):
        return None
    return dict(header["provenance"]) if isinstance(header, dict) and isinstance(header.get("provenance"), dict) \
        else None


# --- one record -------------------------------------------------------------------------------
def _num(x: float) -> float | None:
    """A JSON number, or null for NaN and infinities (a letter never seen has log-probability -inf)."""
    return None if math.isnan(x) or math.isinf(x) else float(x)


def _two_letters(score: Score) -> tuple[float | None, float | None]:
    """The two letter columns of a record (``*_logprob_c``, ``*_logprob_s``): the first two sides'
    log-probabilities (MIND: C, then S), null when the answer has none.

    Examples
    --------
    >>> _two_letters(Score(0.75, 0.8, "logprobs", logprobs=(math.log(0.5), -math.inf)))
    (-0.6931471805599453, None)
    >>> _two_letters(Score(0.3, math.nan, "embedding"))
    (None, None)
    """
    first, second = score.logprobs[:2] if score.logprobs else (math.nan, math.nan)
    return _num(first), _num(second)


def pair_record(pair: Any, direct: Score, sentences: Sequence[Score], pid: str) -> dict[str, Any]:
    """Build the JSON record of one evaluation pair.

    Parameters
    ----------
    pair : EvaluationPair
        The pair (``post_id, lang, dimension, side`` are stored, and :func:`text_sha256` of its
        text when it has one; the text itself is not stored).
    direct : Score
        The whole post's score.
    sentences : sequence of Score
        One score per sentence, in segmentation order.
    pid : str
        The provenance id of the run.

    Notes
    -----
    Fields written only when there is something to say: ``served_models`` and ``system_fingerprints``
    (the distinct values among the answers, sorted) when an API said which model and build answered
    (:class:`tefcore.judges.openai.ServedScore`); ``direct_detail`` and ``sentence_details`` (one string
    per answer, empty for the others) when an answer is invalid for a reason the judge gave
    (:attr:`Score.detail <tefcore.judges.base.Score>`, e.g. a prompt longer than the context); a K > 2
    pair's distributions (K nulls for an invalid answer) and, from an LLM judge, its log-probabilities.
    The letter columns ``*_logprob_c`` and ``*_logprob_s`` hold the first two sides' log-probabilities
    (:attr:`Score.logprobs <tefcore.judges.base.Score>`; MIND: C, then S).
    """
    direct_c, direct_s = _two_letters(direct)
    sentence_c, sentence_s = zip(*map(_two_letters, sentences)) if sentences else ((), ())
    return {
        "type": "pair", "post_id": pair.post_id, "lang": pair.lang, "dimension": pair.dimension,
        "side": pair.side,
        "direct": _num(direct.p_change), "direct_source": direct.source, "direct_mass": _num(direct.mass),
        "direct_logprob_c": direct_c, "direct_logprob_s": direct_s,
        "sentences": [_num(s.p_change) for s in sentences],
        "sentence_sources": [s.source for s in sentences],
        "sentence_masses": [_num(s.mass) for s in sentences],
        "sentence_logprobs_c": list(sentence_c), "sentence_logprobs_s": list(sentence_s),
        **({"text_sha256": text_sha256(pair.text)} if isinstance(getattr(pair, "text", None), str) else {}),
        **_served_fields([direct, *sentences]),
        **_detail_fields(direct, sentences),
        **_k_fields(getattr(pair, "choices", None), [direct, *sentences]),
        "provenance_id": pid,
    }


def _k_fields(choices: Any, scores: Sequence[Score]) -> dict[str, Any]:
    """A K > 2 pair's ``direct_probs``, ``sentence_probs`` (and ``direct_logprobs``, ``sentence_logprobs``)."""
    k = getattr(choices, "K", 2)
    if k <= 2:
        return {}
    probs = [[_num(x) for x in s.probs] if s.probs else [None] * k for s in scores]
    if any(len(row) != k for row in probs):
        raise ValueError(f"a judge gave a distribution over {max(map(len, probs))} sides where there are {k}")
    out: dict[str, Any] = {"direct_probs": probs[0], "sentence_probs": probs[1:]}
    if any(s.logprobs for s in scores):
        lps = [[_num(x) for x in s.logprobs] if s.logprobs else [None] * k for s in scores]
        out.update(direct_logprobs=lps[0], sentence_logprobs=lps[1:])
    return out


def _detail_fields(direct: Score, sentences: Sequence[Score]) -> dict[str, Any]:
    """``direct_detail`` and ``sentence_details``, in records with an answer the judge said was invalid."""
    details = [getattr(s, "detail", "") or "" for s in (direct, *sentences)]
    if not any(details):
        return {}
    return {"direct_detail": details[0], "sentence_details": details[1:]}


def _served_fields(scores: Sequence[Score]) -> dict[str, list[str]]:
    """``served_models`` and ``system_fingerprints`` of one pair, when its scores carry them."""
    out: dict[str, list[str]] = {}
    for attr, key in (("served_model", "served_models"), ("system_fingerprint", "system_fingerprints")):
        values = sorted({v for s in scores if isinstance(v := getattr(s, attr, None), str)})
        if values:
            out[key] = values
    return out


def encode_record(record: Mapping[str, Any]) -> bytes:
    """One line of a cache file: the record's JSON (UTF-8 kept, no NaN) and a newline."""
    return (json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


# --- reading lines ----------------------------------------------------------------------------
def _parse(path: Path) -> tuple[list[dict[str, Any]], int, bool]:
    """The records of every line, the bytes of the valid part, and whether the last line is torn.

    A torn last line is reported; a bad line elsewhere raises.
    """
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    complete, tail = lines[:-1], lines[-1]  # ``tail`` is b"" when the file ends with a newline
    records: list[dict[str, Any]] = []
    offset = 0
    for number, line in enumerate(complete, start=1):
        try:
            obj = json.loads(line.decode("utf-8"))
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
        except (UnicodeDecodeError, ValueError) as exc:
            if number == len(complete) and not tail:
                return records, offset, True
            raise CacheError(f"{path}, line {number}: not a valid cache record ({exc})") from None
        records.append(obj)
        offset += len(line) + 1
    return records, offset, bool(tail)


def check_header(path: Path, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the header record or raise a clear error."""
    if not records or records[0].get("type") != "header":
        raise CacheError(f"{path}, line 1: the first line must be the cache header")
    header = records[0]
    if not isinstance(header.get("provenance"), dict) or "provenance_id" not in header:
        raise CacheError(f"{path}, line 1: the header lacks provenance or provenance_id")
    if provenance_id(header["provenance"]) != header["provenance_id"]:
        raise CacheError(f"{path}, line 1: the header's provenance is not the one its provenance_id was made from "
                         "(edited after the run?); its records cannot be told apart from another run's: "
                         "extract again into another --out")
    return header


def check_pairs(path: Path, records: list[dict[str, Any]], pid: str) -> list[dict[str, Any]]:
    """Check pair records: type, provenance, required fields, lengths, duplicates."""
    seen: dict[tuple[str, str], int] = {}
    pairs = []
    provenance = records[0].get("provenance") if records else None
    sides = _recorded_sides(provenance if isinstance(provenance, dict) else {})
    for number, rec in enumerate(records[1:], start=2):
        if rec.get("type") != "pair":
            raise CacheError(f"{path}, line {number}: expected a pair record, got type {rec.get('type')!r}")
        if rec.get("provenance_id") != pid:
            raise CacheError(f"{path}, line {number}: record from another provenance "
                             f"({rec.get('provenance_id')!r} != header {pid!r})")
        missing = [c for c in _REQUIRED_COLUMNS if c not in rec]
        if missing:
            raise CacheError(f"{path}, line {number}: record lacks column(s) {', '.join(missing)}")
        _check_key(path, number, rec, sides)
        _check_numbers(path, number, rec)
        _check_lengths(path, number, rec)
        key = (str(rec["post_id"]), str(rec["dimension"]))
        if key in seen:
            raise CacheError(f"{path}, line {number}: duplicate pair {key} (first on line {seen[key]})")
        seen[key] = number
        pairs.append(rec)
    return pairs


def _recorded_sides(provenance: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The sides per dimension a task's cache records; None for a MIND cache (every dimension's sides are
    :data:`tefcore.fusion.CLASSES`)."""
    sides = provenance.get("sides")
    return sides if provenance.get("task") and isinstance(sides, dict) else None


def _check_key(path: Path, number: int, rec: Mapping[str, Any], sides: Mapping[str, Any] | None) -> None:
    """A pair's key: ``post_id``, ``lang`` and ``dimension`` non-empty strings, ``side`` one of the
    dimension's sides or null (no gold)."""
    for field in ("post_id", "lang", "dimension"):
        if not isinstance(rec[field], str) or not rec[field]:
            raise CacheError(f"{path}, line {number}: field {field!r} is {_shown_value(rec[field])}, "
                             "not a non-empty string")
    allowed = CLASSES if sides is None else sides.get(rec["dimension"])
    if allowed is None:
        raise CacheError(f"{path}, line {number}: dimension {rec['dimension']!r} is not one of the header's "
                         f"({', '.join(sides or ())})")
    if rec["side"] is not None and rec["side"] not in allowed:
        raise CacheError(f"{path}, line {number}: gold side {_shown_value(rec['side'])} is not a side of "
                         f"{rec['dimension']!r} ({', '.join(map(str, allowed))})")


_NUMBERS = ("direct", "direct_mass", "direct_logprob_c", "direct_logprob_s")
_NUMBER_LISTS = ("sentences", "sentence_masses", "sentence_logprobs_c", "sentence_logprobs_s", "direct_probs",
                 "direct_logprobs")
_NUMBER_TABLES = ("sentence_probs", "sentence_logprobs")


def _is_number(x: Any) -> bool:
    """A JSON number or null (``true`` and ``false`` are not numbers)."""
    return x is None or (isinstance(x, int | float) and not isinstance(x, bool))


def _shown_value(x: Any) -> str:
    """A value for a message, cut short."""
    text = json.dumps(x, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_numbers(path: Path, number: int, rec: Mapping[str, Any]) -> None:
    """Every probability, mass and log-probability a number or null; a K > 2 record has both
    ``direct_probs`` and ``sentence_probs`` (lists of numbers)."""
    given = [k for k in _K_COLUMNS if k in rec]
    if len(given) == 1:
        raise CacheError(f"{path}, line {number}: record has {given[0]!r} without "
                         f"{next(k for k in _K_COLUMNS if k not in rec)!r}")
    values = [(f, rec[f]) for f in _NUMBERS if f in rec]
    for field in (f for f in _NUMBER_LISTS if f in rec):
        if not isinstance(rec[field], list):
            raise CacheError(f"{path}, line {number}: field {field!r} is {_shown_value(rec[field])}, not a list")
        values += [(field, x) for x in rec[field]]
    for field in (f for f in _NUMBER_TABLES if f in rec):
        rows = rec[field] if isinstance(rec[field], list) else [None]
        if not all(isinstance(row, list) for row in rows):
            raise CacheError(f"{path}, line {number}: field {field!r} must be a list of lists of numbers")
        values += [(field, x) for row in rows for x in row]
    bad = next(((f, x) for f, x in values if not _is_number(x)), None)
    if bad is not None:
        raise CacheError(f"{path}, line {number}: field {bad[0]!r} holds {_shown_value(bad[1])}, not a number or null")


def _check_lengths(path: Path, number: int, rec: Mapping[str, Any]) -> None:
    lengths = {c: len(rec[c]) for c in _SENTENCE_LISTS if isinstance(rec[c], list)}
    if len(lengths) != len(_SENTENCE_LISTS) or len(set(lengths.values())) != 1:
        raise CacheError(f"{path}, line {number}: sentence lists must be lists of one length, got {lengths}")
    if "sentence_probs" in rec and len(rec["sentence_probs"]) != len(rec["sentences"]):
        raise CacheError(f"{path}, line {number}: sentence_probs must hold one distribution per sentence")
    bad = [s for s in [rec["direct_source"], *rec["sentence_sources"]] if s not in SOURCES]
    if bad:
        raise CacheError(f"{path}, line {number}: unknown source(s) {bad}; expected {SOURCES}")


# --- the frame --------------------------------------------------------------------------------
def _floats(values: Sequence[float | None], missing: float) -> list[float]:
    return [missing if v is None else float(v) for v in values]


def _record_row(rec: Mapping[str, Any]) -> dict[str, Any]:
    """One DataFrame row from a record (null -> NaN for numbers, -inf for log-probabilities)."""
    n = len(rec["sentences"])
    nan, ninf = math.nan, -math.inf
    return {
        "post_id": rec["post_id"], "lang": rec["lang"], "dimension": rec["dimension"], "side": rec["side"],
        "direct": nan if rec["direct"] is None else float(rec["direct"]),
        "direct_source": rec["direct_source"],
        "direct_mass": nan if rec["direct_mass"] is None else float(rec["direct_mass"]),
        "direct_logprob_c": _floats([rec.get("direct_logprob_c")], ninf)[0],
        "direct_logprob_s": _floats([rec.get("direct_logprob_s")], ninf)[0],
        "sentences": _floats(rec["sentences"], nan),
        "sentence_sources": list(rec["sentence_sources"]),
        "sentence_masses": _floats(rec["sentence_masses"], nan),
        "sentence_logprobs_c": _floats(rec.get("sentence_logprobs_c", [None] * n), ninf),
        "sentence_logprobs_s": _floats(rec.get("sentence_logprobs_s", [None] * n), ninf),
        **({"direct_probs": _floats(rec["direct_probs"], nan),
            "sentence_probs": [_floats(row, nan) for row in rec["sentence_probs"]]} if "direct_probs" in rec else {}),
    }


def _cache_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The pairs' rows with :data:`COLUMNS`, and :data:`_K_COLUMNS` when the pairs have more than two sides."""
    k_columns = [c for c in _K_COLUMNS if any(c in row for row in rows)]
    return pd.DataFrame(rows, columns=[*COLUMNS, *k_columns])


def read_cache_file(path: str | os.PathLike[str]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read one cache file strictly (a torn last line is an error here: resume repairs it).

    Returns
    -------
    (DataFrame, dict)
        One row per pair with :data:`COLUMNS`, and the header's provenance (plus ``provenance_id``).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"cache file {path} not found")
    records, _, torn = _parse(path)
    if torn:
        raise CacheError(f"{path}: the last line is torn (an interrupted write); run the same "
                         f"`tef extract` again to repair and finish it")
    header = check_header(path, records)
    pid = header["provenance_id"]
    frame = _cache_frame([_record_row(rec) for rec in check_pairs(path, records, pid)])
    return frame, {**header["provenance"], "provenance_id": pid}


def read_cache(path: str | os.PathLike[str]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read a cache file, or every ``*.jsonl`` cache under a directory.

    Parameters
    ----------
    path : path-like
        A ``.jsonl`` file, or a directory searched recursively for ``*.jsonl`` (files in sorted order).
        A parts directory of the Ray engine is merged into a cache file first
        (:func:`tefcore.extraction.parts.merge_parts`).

    Returns
    -------
    (DataFrame, dict)
        The pairs (one row each, :data:`COLUMNS`; with a directory also ``cache`` = the file's
        relative path) and the provenance: of the file, or ``{relative path: provenance}`` for a
        directory.

    Raises
    ------
    FileNotFoundError
        If nothing is there.
    CacheError
        On a malformed file (the message names file and line).
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(path.rglob("*.jsonl"))
        if not files:
            raise FileNotFoundError(f"no *.jsonl cache under {path}")
        frames, provenance = [], {}
        for file in files:
            frame, prov = read_cache_file(file)
            rel = file.relative_to(path).as_posix()
            frames.append(frame.assign(cache=rel))
            provenance[rel] = prov
        return pd.concat(frames, ignore_index=True), provenance
    return read_cache_file(path)


def _stale_gold(records: Sequence[Mapping[str, Any]], pairs: Sequence[Any]) -> list[str]:
    """The stored pairs whose gold side is not the one ``pairs`` (the data now) give, one line each.

    Examples
    --------
    >>> from types import SimpleNamespace as Pair
    >>> records = [{"post_id": "p1", "dimension": "Tone", "side": "calm"}]
    >>> _stale_gold(records, [Pair(post_id="p1", dimension="Tone", side="angry")])
    ["post 'p1', Tone: 'calm' in the cache, 'angry' in the data"]
    """
    gold = {(p.post_id, p.dimension): p.side for p in pairs}
    return [f"post {r['post_id']!r}, {r['dimension']}: {r['side']!r} in the cache, {gold[key]!r} in the data"
            for r in records if (key := (r["post_id"], r["dimension"])) in gold and gold[key] != r["side"]]


def header_pairs(path: str | os.PathLike[str]) -> int | None:
    """The number of pairs of the data a cache file was made for (its header's ``n_pairs``); None when unknown."""
    try:
        with open(path, "rb") as handle:
            header = json.loads(handle.readline())
    except (OSError, ValueError):
        return None
    n = header.get("n_pairs") if isinstance(header, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) else None


# --- invalid answers ------------------------------------------------------------------------
INVALID_WARN_SHARE = 0.05
"""``tef extract`` warns when more than this share of a cache's answers (Direct and sentences) is invalid."""


SKIP_DETAIL = "(too few labelled texts per side)"
"""How the detail of an invalid answer ends when a learning judge skipped its dimension on purpose
(:mod:`tefcore.judges.e5_crossfit`): scoring it again gives the same answer, more labelled texts would help."""


def _invalid_answers(records: Sequence[Mapping[str, Any]],
                     skips_only: bool = False) -> tuple[int, int, list[tuple[str, str]]]:
    """Count the invalid answers among pair records: (invalid answers, answers, pairs holding one).

    With ``skips_only`` only the invalid answers a judge's deliberate skip explains count (detail ending
    with :data:`SKIP_DETAIL`).

    Examples
    --------
    >>> skip = "e5-crossfit skips en/Tone (too few labelled texts per side)"
    >>> records = [{"type": "header"},
    ...            {"type": "pair", "post_id": "p1", "dimension": "Tone", "direct_source": "invalid",
    ...             "direct_detail": skip, "sentence_sources": ["logprobs", "invalid"]},
    ...            {"type": "pair", "post_id": "p2", "dimension": "Tone", "direct_source": "logprobs",
    ...             "sentence_sources": ["logprobs"]}]
    >>> _invalid_answers(records), _invalid_answers(records, skips_only=True)
    ((2, 5, [('p1', 'Tone')]), (1, 5, [('p1', 'Tone')]))
    """
    bad = answers = 0
    pairs: list[tuple[str, str]] = []
    for record in records:
        if record.get("type") != "pair":
            continue
        sources = [record.get("direct_source"), *(record.get("sentence_sources") or ())]
        details = [record.get("direct_detail"), *(record.get("sentence_details") or [None] * (len(sources) - 1))]
        invalid = sum(source == "invalid" and (not skips_only or str(detail or "").endswith(SKIP_DETAIL))
                      for source, detail in zip(sources, details))
        bad, answers = bad + invalid, answers + len(sources)
        if invalid:
            pairs.append((str(record.get("post_id")), str(record.get("dimension"))))
    return bad, answers, pairs


def cache_invalid_answers(path: str | os.PathLike[str]) -> tuple[int, int, list[tuple[str, str]]]:
    """:func:`_invalid_answers` of a cache file's records (a torn last line left out)."""
    return _invalid_answers(_parse(Path(path))[0])


def cache_skipped_answers(path: str | os.PathLike[str]) -> tuple[int, list[tuple[str, str]]]:
    """The invalid answers of a cache file that a judge's deliberate skip explains: (answers, pairs holding one)."""
    skipped, _, pairs = _invalid_answers(_parse(Path(path))[0], skips_only=True)
    return skipped, pairs


def drop_invalid(path: str | os.PathLike[str]) -> int:
    """Remove the pair records that hold an invalid answer from a cache file, so that a run scores them again.

    The file is locked as a writer locks it, rewritten beside itself and moved in place, so it is whole
    at every moment. Returns how many pair records were removed (0 leaves the file untouched).
    """
    path = Path(path)
    with open(path, "ab") as handle:
        lock_exclusive(handle.fileno(), path, "tef extract --retry-invalid")
        records, _, _ = _parse(path)
        check_header(path, records)
        _, _, bad = _invalid_answers(records)
        drop = set(bad)
        if not drop:
            return 0
        kept = [r for r in records if r.get("type") != "pair"
                or (str(r.get("post_id")), str(r.get("dimension"))) not in drop]
        tmp = path.with_name(f".{path.name}.retry")
        try:
            with open(tmp, "wb") as out:
                write_all(out.fileno(), b"".join(encode_record(r) for r in kept))
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    return len(drop)


# --- writing ----------------------------------------------------------------------------------
def write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to the file descriptor ``fd`` whole (``os.write`` may write part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class CacheWriter:
    """Append pair records to a cache file, crash-safely; resume an existing one.

    Parameters
    ----------
    path : path-like
        The cache file (parents are created).
    provenance : mapping
        The run's provenance (see :func:`provenance_id`).
    pairs : sequence of EvaluationPair, optional
        Every pair of the data the run is for (not only the ``limit`` it scores): a new file's header records
        how many (``n_pairs``, outside the provenance, so that ``tef evaluate`` can say a cache is partial),
        and a resume warns, in one line, when the data's gold side of a stored pair is not the cache's.

    Attributes
    ----------
    done : set of (post_id, dimension)
        Pairs already in the file (read on opening).
    text_hashes : dict
        ``(post_id, dimension) -> text_sha256`` of those pairs (when recorded).
    provenance_id : str
    repaired : bool
        True when a torn last line was cut away on opening.

    Raises
    ------
    ProvenanceMismatch
        When the file holds another provenance: a changed model or prompt is a new cache.
    CacheError
        When the file is malformed before its last line.
    """

    def __init__(self, path: str | os.PathLike[str], provenance: Mapping[str, Any],
                 pairs: Sequence[Any] | None = None) -> None:
        self.path = Path(path)
        self.pairs = pairs
        self.provenance = dict(provenance)
        self.provenance_id = provenance_id(self.provenance)
        self.done: set[tuple[str, str]] = set()
        self.text_hashes: dict[tuple[str, str], str] = {}
        self.repaired = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "ab")  # appends only, whatever a seek says
        try:
            lock_exclusive(self._file.fileno(), self.path, "tef extract")
            self._open_existing()
        except BaseException:
            self._file.close()
            raise

    def _open_existing(self) -> None:
        """Repair a torn tail, check the header, load the done pairs; write a header if empty."""
        records, valid_bytes, torn = _parse(self.path)
        if torn:
            log.warning("%s: cut away a torn last line (%d bytes kept); that pair will be scored again",
                        self.path, valid_bytes)
            os.ftruncate(self._file.fileno(), valid_bytes)
            os.fsync(self._file.fileno())
            self.repaired = True
        if not records:
            header = {"type": "header", "provenance": self.provenance, "provenance_id": self.provenance_id}
            self._append(header if self.pairs is None else {**header, "n_pairs": len(self.pairs)})
            return
        header = check_header(self.path, records)
        if header["provenance_id"] != self.provenance_id:
            old, new = header["provenance"], self.provenance
            keys = sorted(k for k in set(old) | set(new) if k not in _TIME_KEYS and old.get(k) != new.get(k))
            raise ProvenanceMismatch(f"{self.path} holds another provenance (differs in: {', '.join(keys)}); "
                                     f"refusing to mix results: choose another --out or move it away")
        pairs = check_pairs(self.path, records, self.provenance_id)
        self.done = {(str(r["post_id"]), str(r["dimension"])) for r in pairs}
        self.text_hashes = {(str(r["post_id"]), str(r["dimension"])): r["text_sha256"]
                            for r in pairs if "text_sha256" in r}
        stale = _stale_gold(pairs, self.pairs or ())
        if stale:
            log.warning("%s: the data's gold side differs from the cache's on %d pair(s) (first: %s); tef evaluate "
                        "with --task (a task) or --data-dir (MIND) scores the data's", self.path, len(stale),
                        stale[0])

    def _append(self, record: Mapping[str, Any]) -> None:
        """Write one whole line straight to the file, then ``fsync`` it.

        A write that fails (a full disk) is cut away again, so the file ends with a whole record, and
        the error names the file.
        """
        fd = self._file.fileno()
        size = os.fstat(fd).st_size
        try:
            write_all(fd, encode_record(record))
            os.fsync(fd)
        except OSError as exc:
            try:
                os.ftruncate(fd, size)
            except OSError:
                pass  # resuming cuts a torn last line away
            raise OSError(exc.errno, exc.strerror or str(exc), str(self.path)) from None

    def write_pair(self, pair: Any, direct: Score, sentences: Sequence[Score]) -> dict[str, Any]:
        """Append one complete pair record (one write, then fsync); return the record."""
        key = (pair.post_id, pair.dimension)
        if key in self.done:
            raise CacheError(f"{self.path}: pair {key} is already in the cache")
        record = pair_record(pair, direct, sentences, self.provenance_id)
        self._append(record)
        self.done.add(key)
        return record

    def close(self) -> None:
        """Close the file (idempotent)."""
        self._file.close()

    def __enter__(self) -> CacheWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
