"""The probability cache: round trip, provenance, crash repair, resume, strict reading."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import pandas as pd
import pytest

from tefcore.judges.base import INVALID, Score
from tefcore.extraction.cache import (
    COLUMNS,
    CacheError,
    CacheWriter,
    ProvenanceMismatch,
    encode_record,
    pair_record,
    provenance_id,
    read_cache,
    read_cache_file,
)
from tefcore.mind.load import EvaluationPair, mind_pair

PROV = {"backend": "fake", "model": "m", "prompt_variant": "original", "lang": "en",
        "started_at": "2026-01-01T00:00:00+00:00"}
P1 = mind_pair("en-single-1", "en", "Economy", "change", "One. Two.")
P2 = mind_pair("en-single-2", "en", "Culture", "stability", "Three.")
S = Score(0.75, 0.8, "logprobs", logprobs=(math.log(0.6), math.log(0.2)))
HALF = Score(1.0, 0.5, "partial", logprobs=(math.log(0.5), -math.inf))


def write(path: Path, pairs: list[EvaluationPair], prov: dict = PROV) -> CacheWriter:
    writer = CacheWriter(path, prov)
    for pair in pairs:
        writer.write_pair(pair, S, [S, INVALID, HALF])
    writer.close()
    return writer


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "m" / "original" / "en.jsonl"
    write(path, [P1, P2])
    frame, prov = read_cache(path)
    assert list(frame.columns) == list(COLUMNS)
    assert frame["post_id"].tolist() == ["en-single-1", "en-single-2"]
    row = frame.iloc[0]
    assert (row["lang"], row["dimension"], row["side"]) == ("en", "Economy", "change")
    assert row["direct"] == 0.75 and row["direct_source"] == "logprobs" and row["direct_mass"] == 0.8
    assert row["direct_logprob_c"] == math.log(0.6)  # exact: full float precision
    assert row["sentences"][0] == 0.75 and math.isnan(row["sentences"][1]) and row["sentences"][2] == 1.0
    assert row["sentence_sources"] == ["logprobs", "invalid", "partial"]
    assert row["sentence_masses"] == [0.8, 0.0, 0.5]
    assert row["sentence_logprobs_s"][2] == -math.inf and row["sentence_logprobs_c"][1] == -math.inf
    assert prov["model"] == "m" and prov["provenance_id"] == provenance_id(PROV)


def test_file_layout(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [P1])
    lines = path.read_text(encoding="utf-8").splitlines()
    header, record = json.loads(lines[0]), json.loads(lines[1])
    assert header["type"] == "header" and header["provenance"] == PROV
    assert header["provenance_id"] == provenance_id(PROV) == record["provenance_id"]
    assert record["sentences"][1] is None  # NaN is null in JSON, never 0.5
    assert record["text_sha256"] and "text" not in record and "One." not in lines[1]
    assert "NaN" not in path.read_text() and "Infinity" not in path.read_text()


def test_provenance_id_ignores_time_only() -> None:
    later = {**PROV, "started_at": "2030-01-01T00:00:00+00:00"}
    assert provenance_id(later) == provenance_id(PROV)
    assert provenance_id({**PROV, "prompt_variant": "minimal"}) != provenance_id(PROV)
    assert provenance_id(dict(reversed(list(PROV.items())))) == provenance_id(PROV)
    assert len(provenance_id(PROV)) == 64


def test_resume_reads_the_done_pairs(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [P1])
    writer = CacheWriter(path, {**PROV, "started_at": "later"})
    assert writer.done == {("en-single-1", "Economy")} and not writer.repaired
    writer.write_pair(P2, S, [S])
    with pytest.raises(CacheError, match="already in the cache"):
        writer.write_pair(P1, S, [S])
    writer.close()
    frame, _ = read_cache(path)
    assert frame["post_id"].tolist() == ["en-single-1", "en-single-2"]
    assert len(path.read_text().splitlines()) == 3  # one header only


@pytest.mark.parametrize("tail", [b'{"type": "pair", "post_id": "en-sin', b"{", b"garbage", b"\xff\xfe"])
def test_torn_last_line_is_cut_away_with_a_warning(tmp_path: Path, tail: bytes,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [P1])
    good = path.read_bytes()
    path.write_bytes(good + tail)
    with pytest.raises(CacheError, match="torn"):  # never silently read
        read_cache(path)
    with caplog.at_level(logging.WARNING):
        writer = CacheWriter(path, PROV)
    assert writer.repaired and "torn last line" in caplog.text
    assert writer.done == {("en-single-1", "Economy")}
    assert path.read_bytes() == good
    writer.write_pair(P2, S, [S])
    writer.close()
    assert read_cache(path)[0]["post_id"].tolist() == ["en-single-1", "en-single-2"]


def test_invalid_last_line_with_newline_is_repaired_too(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [P1])
    good = path.read_bytes()
    path.write_bytes(good + b'{"type": "pa\n')
    assert CacheWriter(path, PROV).repaired and path.read_bytes() == good


def test_torn_header_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"type": "header", "prov')
    writer = CacheWriter(path, PROV)
    writer.close()
    assert writer.repaired and read_cache(path)[1]["provenance_id"] == provenance_id(PROV)


def test_bad_middle_line_names_its_number(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [P1, P2])
    lines = path.read_bytes().split(b"\n")
    lines[1] = b"not json"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(CacheError, match=r"c\.jsonl, line 2"):
        CacheWriter(path, PROV)
    with pytest.raises(CacheError, match="line 2"):
        read_cache(path)


def test_other_provenance_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [P1])
    with pytest.raises(ProvenanceMismatch, match="differs in: model, prompt_variant"):
        CacheWriter(path, {**PROV, "model": "other", "prompt_variant": "verbose"})
    assert read_cache(path)[0].shape[0] == 1  # untouched


def test_record_from_another_provenance(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [P1, P2])
    lines = path.read_text().splitlines()
    rec = json.loads(lines[2])
    rec["provenance_id"] = "0" * 64
    lines[2] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CacheError, match="line 3: record from another provenance"):
        read_cache(path)


def test_duplicate_pair_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [P1])
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, lines[1]]) + "\n")
    with pytest.raises(CacheError, match=r"line 3: duplicate pair \('en-single-1', 'Economy'\).*line 2"):
        read_cache(path)


@pytest.mark.parametrize("column", ["sentences", "direct_source", "side"])
def test_missing_column_is_named(tmp_path: Path, column: str) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [P1])
    lines = path.read_text().splitlines()
    rec = json.loads(lines[1])
    del rec[column]
    path.write_text(lines[0] + "\n" + json.dumps(rec) + "\n")
    with pytest.raises(CacheError, match=f"lacks column.*{column}"):
        read_cache(path)


def test_mismatched_sentence_lists(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [P1])
    lines = path.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["sentence_masses"] = rec["sentence_masses"][:1]
    rec2 = dict(rec, sentence_masses=rec["sentence_masses"] * 3, direct_source="maybe")
    path.write_text(lines[0] + "\n" + json.dumps(rec) + "\n")
    with pytest.raises(CacheError, match="one length"):
        read_cache(path)
    path.write_text(lines[0] + "\n" + json.dumps(rec2) + "\n")
    with pytest.raises(CacheError, match="unknown source"):
        read_cache(path)


def test_missing_header(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [P1])
    path.write_text(path.read_text().split("\n", 1)[1])
    with pytest.raises(CacheError, match="line 1: the first line must be the cache header"):
        read_cache(path)


def test_read_a_directory(tmp_path: Path) -> None:
    write(tmp_path / "m" / "original" / "en.jsonl", [P1])
    write(tmp_path / "m" / "minimal" / "en.jsonl", [P1, P2], {**PROV, "prompt_variant": "minimal"})
    frame, prov = read_cache(tmp_path)
    assert frame["cache"].tolist() == ["m/minimal/en.jsonl"] * 2 + ["m/original/en.jsonl"]
    assert prov["m/minimal/en.jsonl"]["prompt_variant"] == "minimal"
    with pytest.raises(FileNotFoundError):
        read_cache(tmp_path / "nothing")
    with pytest.raises(FileNotFoundError):
        read_cache_file(tmp_path / "none.jsonl")


def test_the_frame_feeds_the_evaluation(tmp_path: Path) -> None:
    from tefcore.evaluate import predict_pairs

    path = tmp_path / "c.jsonl"
    write(path, [P1, P2])
    frame, _ = read_cache(path)
    pred = predict_pairs(frame, rules=["direct", "tef"])
    assert isinstance(pred, pd.DataFrame)
    assert pred["n_invalid"].tolist() == [1, 1, 1, 1]
    assert set(pred["prediction"]) == {"change"}


def test_file_sha256_reads_in_chunks(tmp_path: Path) -> None:
    import hashlib

    from tefcore.hashing import file_sha256

    f = tmp_path / "w.bin"
    f.write_bytes(b"abc" * 100_000)  # several read chunks
    assert file_sha256(f) == hashlib.sha256(b"abc" * 100_000).hexdigest()


def test_a_second_writer_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    first = CacheWriter(path, PROV)
    with pytest.raises(CacheError, match="being written by another run"):
        CacheWriter(path, PROV)
    first.close()
    CacheWriter(path, PROV).close()  # free again once the first is closed


MIND_RECORD = (
    '{"type": "pair", "post_id": "en-single-1", "lang": "en", "dimension": "Economy", "side": "change", '
    '"direct": 0.75, "direct_source": "logprobs", "direct_mass": 0.8, "direct_logprob_c": -0.5108256237659907, '
    '"direct_logprob_s": -1.6094379124341003, "sentences": [0.75, null, 1.0, 0.3], '
    '"sentence_sources": ["logprobs", "invalid", "partial", "embedding"], "sentence_masses": [0.8, 0.0, 0.5, null], '
    '"sentence_logprobs_c": [-0.5108256237659907, null, -0.6931471805599453, null], '
    '"sentence_logprobs_s": [-1.6094379124341003, null, null, null], "text_sha256": "668b4fb68ab87519", '
    '"provenance_id": "pid"}\n'
)
"""The record MIND's caches hold for these answers, as written when a Score also carried the two letters' fields."""


def test_a_mind_record_is_written_byte_for_byte_as_before() -> None:
    embedded = Score(0.3, math.nan, "embedding")
    record = pair_record(P1, S, [S, INVALID, HALF, embedded], "pid")
    assert encode_record(record) == MIND_RECORD.encode("utf-8")


def test_the_letter_columns_are_the_first_two_sides() -> None:
    from types import SimpleNamespace

    from tefcore.tasks import Choices

    lps = (math.log(0.5), math.log(0.3), math.log(0.1))
    three = Score(0.5 / 0.9, 0.9, "logprobs", probs=(0.5 / 0.9, 0.3 / 0.9, 0.1 / 0.9), logprobs=lps)
    embedded = Score(0.2, math.nan, "embedding", probs=(0.2, 0.3, 0.5))
    choices = Choices("Transport", ("car", "transit", "cycling"), ("by car", "by bus", "by bike"))
    pair = SimpleNamespace(post_id="p1", lang="en", dimension="Transport", side="car", choices=choices)
    record = pair_record(pair, three, [embedded, INVALID, three], "pid")
    assert (record["direct_logprob_c"], record["direct_logprob_s"]) == lps[:2]
    assert record["sentence_logprobs_c"] == [None, None, lps[0]]
    assert record["sentence_logprobs_s"] == [None, None, lps[1]]
    assert record["direct_logprobs"] == list(lps) and record["sentence_logprobs"][0] == [None] * 3
