"""Parts directories (what ``tef extract --engine ray`` writes) without Ray: the round trip to the usual cache
file, exact floats, one copy per pair, unfinished writes left out, refusals, ``tef cache merge``."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pq = pytest.importorskip("pyarrow.parquet", reason="parts directories need pyarrow (the ray extra)")

from tefcore.cli import main  # noqa: E402
from tefcore.judges.base import INVALID, Score  # noqa: E402
from tefcore.extraction.cache import (  # noqa: E402
    CacheError,
    CacheWriter,
    ProvenanceMismatch,
    pair_record,
    provenance_id,
    read_cache,
)
from tefcore.extraction.parts import (  # noqa: E402
    committed_parts,
    merge_parts,
    open_parts,
    pair_id,
    parts_path,
    read_parts,
    records_table,
)
from tefcore.mind.load import EvaluationPair, mind_pair  # noqa: E402

PROV = {"backend": "fake", "model": "m", "prompt_variant": "original", "lang": "en",
        "started_at": "2026-01-01T00:00:00+00:00"}
PID = provenance_id(PROV)
PAIRS = [mind_pair(f"en-single-{i}", "en", dim, side, f"Text number {i}. Another sentence.")
         for i, (dim, side) in enumerate([("Economy", "change"), ("Economy", "stability"), ("Culture", "change"),
                                          ("Politics", "stability")])]
S = Score(0.75, 0.8, "logprobs", logprobs=(math.log(0.6), math.log(0.2)))
HALF = Score(1.0, 0.5, "partial", logprobs=(math.log(0.5), -math.inf))
EMB = Score(0.123456789012345678, math.nan, "embedding")
TOO_LONG = Score(math.nan, 0.0, "invalid", "prompt longer than the context (n_ctx=32 tokens)")


def write_part(parts: Path, name: str, rows: list[tuple[int, dict]]) -> Path:
    (parts / "data").mkdir(parents=True, exist_ok=True)
    path = parts / "data" / f"{name}-0.parquet"
    pq.write_table(records_table(rows), path)
    return path


def scores_of(i: int) -> tuple[Score, list[Score]]:
    return [(S, [S, INVALID, HALF]), (EMB, [EMB]), (TOO_LONG, [TOO_LONG]), (HALF, [S, S])][i % 4]  # details too


def records(pairs: list[EvaluationPair], pid: str = PID) -> list[tuple[int, dict]]:
    return [(i, pair_record(p, *scores_of(i), pid)) for i, p in enumerate(pairs)]


def test_parts_merge_into_the_cache_file_the_local_loop_writes(tmp_path: Path) -> None:
    local = tmp_path / "local" / "en.jsonl"
    writer = CacheWriter(local, PROV)
    for i, pair in enumerate(PAIRS):
        writer.write_pair(pair, *scores_of(i))
    writer.close()
    parts = parts_path(tmp_path / "ray" / "en.jsonl")
    assert open_parts(parts, PROV) == PID
    rows = records(PAIRS)
    write_part(parts, "b", rows[2:])  # parts arrive in any order; seq restores the loop's
    write_part(parts, "a", rows[:2])
    merged = merge_parts(parts)
    assert merged == tmp_path / "ray" / "en.jsonl"
    assert merged.read_bytes() == local.read_bytes()  # header included: same provenance, same start time
    (frame, prov), (want, want_prov) = read_cache(merged), read_cache(local)
    assert frame.equals(want) and prov == want_prov
    assert frame.loc[1, "direct"] == 0.123456789012345678  # exact: Parquet keeps every bit


finite = st.floats(0, 1, allow_nan=False)
score = st.one_of(
    st.builds(lambda p, c, s: Score(p, 0.5, "logprobs", logprobs=(c, s)), finite, st.floats(-50, 0), st.floats(-50, 0)),
    st.builds(lambda p: Score(p, 0.5, "partial", logprobs=(math.log(0.5), -math.inf)), finite),
    st.builds(lambda p: Score(p, math.nan, "embedding"), finite),
    st.just(INVALID),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(score, st.lists(score, max_size=5)), min_size=1, max_size=6))
def test_any_scores_survive_the_round_trip_exactly(tmp_path_factory: pytest.TempPathFactory,
                                                  scored: list[tuple[Score, list[Score]]]) -> None:
    root = tmp_path_factory.mktemp("rt")
    pairs = [mind_pair(f"p{i}", "en", "Economy", "change", f"T {i}.") for i in range(len(scored))]
    writer = CacheWriter(root / "local.jsonl", PROV)
    for pair, (direct, sentences) in zip(pairs, scored):
        writer.write_pair(pair, direct, sentences)
    writer.close()
    parts = root / "en.parts"
    open_parts(parts, PROV)
    write_part(parts, "x", [(i, pair_record(p, d, s, PID)) for i, (p, (d, s)) in enumerate(zip(pairs, scored))])
    assert merge_parts(parts).read_bytes() == (root / "local.jsonl").read_bytes()


def test_one_copy_per_pair_and_two_different_copies_are_an_error(tmp_path: Path) -> None:
    parts = tmp_path / "en.parts"
    open_parts(parts, PROV)
    rows = records(PAIRS)
    write_part(parts, "a", rows)
    write_part(parts, "b", [(7, rows[0][1])])  # a retried write: the same record again (seq aside)
    got, _ = read_parts(parts)
    assert [r["pair_id"] for r in got] == [pair_id(p.post_id, p.dimension) for p in PAIRS]
    other = dict(rows[1][1], direct=0.5)
    bad = write_part(parts, "c", [(1, other)])
    with pytest.raises(CacheError, match="two different copies"):
        read_parts(parts)
    bad.unlink()
    write_part(parts, "d", [(9, pair_record(PAIRS[0], S, [], "another-run"))])
    with pytest.raises(CacheError, match="from another provenance"):
        read_parts(parts)


def test_an_unfinished_write_is_left_out(tmp_path: Path) -> None:
    parts = tmp_path / "en.parts"
    open_parts(parts, PROV)
    rows = records(PAIRS)
    done = write_part(parts, "u1_000000", rows[:2])
    write_part(parts, "u1_000001", rows[2:])
    (parts / "checkpoint").mkdir()
    (parts / "checkpoint" / "u1_000000.parquet").write_bytes(b"committed")
    (parts / "checkpoint" / "u1_000001.pending.parquet").write_bytes(b"pending")
    assert committed_parts(parts) == [done]
    assert len(read_parts(parts)[0]) == 2


def test_refusals(tmp_path: Path) -> None:
    parts = tmp_path / "en.parts"
    open_parts(parts, PROV)
    with pytest.raises(ProvenanceMismatch, match="differs in: model"):
        open_parts(parts, {**PROV, "model": "other"})
    assert open_parts(parts, {**PROV, "started_at": "later"}) == PID  # the start time is not provenance
    write_part(parts, "a", records(PAIRS[:2]))
    target = tmp_path / "en.jsonl"
    writer = CacheWriter(target, {**PROV, "model": "other"})
    writer.close()
    with pytest.raises(ProvenanceMismatch, match="another provenance than the parts"):
        merge_parts(parts)
    target.unlink()
    writer = CacheWriter(target, PROV)
    for i, pair in enumerate(PAIRS[:3]):
        writer.write_pair(pair, *scores_of(i))
    writer.close()
    with pytest.raises(CacheError, match="1 pair\\(s\\) the parts lack"):
        merge_parts(parts)
    write_part(parts, "b", records(PAIRS)[2:])
    assert len(read_cache(merge_parts(parts))[0]) == 4  # a file the parts cover is replaced
    with pytest.raises(ValueError, match="no column for record field"):
        records_table([(0, {**records(PAIRS)[0][1], "new_field": 1})])


def test_served_fields_travel_too(tmp_path: Path) -> None:
    parts = tmp_path / "en.parts"
    open_parts(parts, PROV)
    rec = dict(records(PAIRS[:1])[0][1])
    rec.pop("provenance_id")
    rec.update(served_models=["m-2026"], system_fingerprints=["fp_1"], provenance_id=PID)
    write_part(parts, "a", [(0, rec)])
    line = merge_parts(parts).read_text().splitlines()[1]
    assert '"served_models": ["m-2026"], "system_fingerprints": ["fp_1"], "provenance_id"' in line


def test_cache_merge_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parts = tmp_path / "e5" / "original" / "en.parts"
    open_parts(parts, PROV)
    write_part(parts, "a", records(PAIRS))
    assert main(["cache", "merge", str(parts)]) == 0
    assert capsys.readouterr().out.strip() == f"{parts.with_name('en.jsonl')}: 4 pairs from {parts}"
    assert main(["cache", "merge", str(parts), "--out", str(tmp_path / "x.jsonl")]) == 0
    assert (tmp_path / "x.jsonl").read_bytes() == parts.with_name("en.jsonl").read_bytes()
    assert main(["cache", "merge", str(parts), str(parts), "--out", str(tmp_path / "y.jsonl")]) == 2
    assert "--out takes one parts directory" in capsys.readouterr().err
    assert main(["cache", "merge", str(tmp_path)]) == 2
    assert "not a readable parts header" in capsys.readouterr().err


def test_retry_invalid_with_the_ray_engine_is_refused_in_one_line_and_the_merged_cache_is_retried(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tefcore.extraction.cache import cache_invalid_answers, drop_invalid, encode_record

    assert main(["init", str(tmp_path / "study")]) == 0
    capsys.readouterr()
    out = tmp_path / "out"
    code = main(["extract", "--task", str(tmp_path / "study" / "task.yaml"), "--model", "e5-zeroshot", "--out",
                 str(out), "--engine", "ray", "--retry-invalid", "--no-progress"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("tef: error: --retry-invalid works on a cache file, not on the parts of --engine ray: "
                               f"merge the parts first (tef cache merge {out}")
    assert ".parts), then retry on the merged cache without --engine ray" in lines[0]
    assert not out.exists()  # refused before a judge is loaded or anything written

    parts = tmp_path / "e5" / "original" / "en.parts"  # the documented way: merge, then retry on the cache
    open_parts(parts, PROV)
    write_part(parts, "a", records(PAIRS))
    cache = merge_parts(parts)
    assert cache_invalid_answers(cache)[2] == [("en-single-0", "Economy"), ("en-single-2", "Culture")]
    assert drop_invalid(cache) == 2 and cache_invalid_answers(cache)[0] == 0
    assert sorted(read_cache(cache)[0]["post_id"]) == ["en-single-1", "en-single-3"]
    with open(cache, "ab") as handle:  # the retry scored them again: the parts' older answers must not come back
        for rec in [pair_record(PAIRS[0], S, [S, S, S], PID), pair_record(PAIRS[2], S, [S], PID)]:
            handle.write(encode_record(rec))
    before = cache.read_bytes()
    with pytest.raises(CacheError, match=r"en\.jsonl holds 2 pair\(s\) scored again since the parts were merged "
                                         r"\(e\.g\. 'Culture/en-single-2', by tef extract --retry-invalid\)"):
        merge_parts(parts)
    assert cache.read_bytes() == before
