"""The extraction loop with a deterministic stand-in judge (no model): records, resume, Ctrl-C."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tefcore.mind import mind_task
from tefcore.judges.base import INVALID, Score, ScoreRequest
from tefcore.extraction.cache import CacheError, ProvenanceMismatch, cache_path, read_cache
from tefcore.extraction.run import ExtractionInterrupted, build_requests, run_extraction
from tefcore.mind.load import EvaluationPair, mind_pair
from tefcore.mind.prompts import build_prompt, template_hash
from tefcore.tasks.segment import split_sentences

TEXTS = [
    "Markets should decide prices. The state must stay out of it. Regulation kills growth!",
    "We need strong public services. Taxes fund them well.",
    "Tradition matters a great deal to this community.",
    "Open borders bring new ideas. Isolation breeds decline? Yes, clearly so.",
]
DIMS = ["Economy", "Economy", "Culture", "Politics", "Culture", "Economy"]


def make_pairs(lang: str = "en") -> list[EvaluationPair]:
    return [mind_pair(f"{lang}-single-{i}", lang, DIMS[i], "change" if i % 2 else "stability",
                           TEXTS[i % len(TEXTS)]) for i in range(len(DIMS))]


def fake_p(prompt: str) -> float:
    """A deterministic P(change) from the prompt text."""
    return int(hashlib.sha256(prompt.encode()).hexdigest()[:6], 16) / 0xFFFFFF


class FakeJudge:
    """Scores from a hash of the prompt; every 7th prompt unreadable; counts its calls."""

    name = "fake"
    reading = "summed"
    preferred_batch_size = 5

    def __init__(self, fail_after: int | None = None) -> None:
        self.calls: list[list[ScoreRequest]] = []
        self.prepared: list[Any] = []
        self.fail_after = fail_after

    def provenance(self) -> dict[str, Any]:
        return {"backend": "fake", "model": "hash-judge"}

    def prepare(self, pairs: Sequence[EvaluationPair], **options: Any) -> None:
        self.prepared.append(list(pairs))

    def score(self, requests: Sequence[ScoreRequest]) -> list[Score]:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise KeyboardInterrupt
        self.calls.append(list(requests))
        out = []
        for r in requests:
            p = fake_p(r.prompt)
            out.append(INVALID if int(p * 1e6) % 7 == 0 else Score(p, 0.8, "logprobs", logprobs=(math.log(0.5), math.log(0.3))))
        return out


def test_cache_path() -> None:
    assert cache_path("d", "local", "original", "en") == Path("d/local/original/en.jsonl")
    assert cache_path("d", "m", "verbose", "zh", "improved", "reference") == \
        Path("d/m/verbose/zh.rule-improved.reading-reference.jsonl")


def test_build_requests() -> None:
    pair = make_pairs()[0]
    reqs = build_requests(pair, mind_task("minimal"), "reference")
    sentences = split_sentences(pair.text, "en")
    assert [r.kind for r in reqs] == ["direct"] + ["sentence"] * len(sentences)
    assert reqs[0].prompt == build_prompt(pair.text, "Economy", "en", "minimal")
    assert [r.text for r in reqs[1:]] == sentences and len(sentences) == 3
    assert {(r.post_id, r.dimension, r.lang) for r in reqs} == {("en-single-0", "Economy", "en")}


def test_records_hold_every_number_in_order(tmp_path: Path) -> None:
    judge = FakeJudge()
    out = tmp_path / "c.jsonl"
    report = run_extraction(judge, make_pairs(), out, variant="original", progress=False)
    frame, prov = read_cache(out)
    assert len(frame) == 6 and report.pairs_written == 6 and report.pairs_skipped == 0
    for pair in make_pairs():
        row = frame.set_index(["post_id", "dimension"]).loc[(pair.post_id, pair.dimension)]
        want = [fake_p(build_prompt(s, pair.dimension, "en")) for s in split_sentences(pair.text, "en")]
        got = row["sentences"]
        assert len(got) == len(want)
        for g, w, src in zip(got, want, row["sentence_sources"]):
            assert (math.isnan(g) and src == "invalid") or g == w
        assert row["direct"] == fake_p(build_prompt(pair.text, pair.dimension, "en")) or \
            math.isnan(row["direct"])
    assert report.prompts == sum(len(r) for r in judge.calls) == 6 + sum(len(split_sentences(t, "en"))
                                                                         for t in [p.text for p in make_pairs()])
    assert report.sources["logprobs"] + report.sources["invalid"] == report.prompts
    assert report.mean_mass == pytest.approx((0.8 * report.sources["logprobs"]) / report.prompts)
    assert prov["template_sha256"] == template_hash("en", "original")
    assert (prov["segmentation_rule"], prov["prompt_variant"], prov["lang"], prov["judge"]) == \
        ("reference", "original", "en", "fake")
    assert prov["reading"] == "summed" and prov["tefcore_version"] and prov["started_at"]
    assert judge.prepared and len(judge.prepared[0]) == 6


def test_batches_are_grouped_by_dimension(tmp_path: Path) -> None:
    judge = FakeJudge()
    run_extraction(judge, make_pairs(), tmp_path / "c.jsonl", variant="minimal", progress=False)
    for call in judge.calls:
        assert len({r.dimension for r in call}) == 1
        # whole pairs only: each call starts with a Direct request
        assert call[0].kind == "direct"
    dims = [call[0].dimension for call in judge.calls]
    assert dims == sorted(dims, key=["Economy", "Culture", "Politics"].index)


def test_resume_skips_done_pairs_and_limit_is_stable(tmp_path: Path) -> None:
    out = tmp_path / "c.jsonl"
    first = run_extraction(FakeJudge(), make_pairs(), out, variant="original", limit=2, progress=False)
    assert first.pairs_written == 2 and first.pairs_in_scope == 2
    judge = FakeJudge()
    second = run_extraction(judge, make_pairs(), out, variant="original", progress=False)
    assert second.pairs_skipped == 2 and second.pairs_written == 4 and second.pairs_done == 6
    scored = {r.post_id for call in judge.calls for r in call}
    assert scored == {p.post_id for p in make_pairs()[2:]}
    third = run_extraction(FakeJudge(), make_pairs(), out, variant="original", progress=False)
    assert third.pairs_written == 0 and third.prompts == 0
    frame, _ = read_cache(out)
    assert sorted(frame["post_id"]) == sorted(p.post_id for p in make_pairs())


def test_ctrl_c_leaves_whole_records_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "c.jsonl"
    with pytest.raises(ExtractionInterrupted) as stop:
        run_extraction(FakeJudge(fail_after=2), make_pairs(), out, variant="original", progress=False)
    report = stop.value.report
    assert report.interrupted and 0 < report.pairs_done < 6
    assert isinstance(stop.value, KeyboardInterrupt)
    frame, _ = read_cache(out)  # strict read: no torn or half record
    assert len(frame) == report.pairs_done
    run_extraction(FakeJudge(), make_pairs(), out, variant="original", progress=False)
    full = tmp_path / "full.jsonl"
    run_extraction(FakeJudge(), make_pairs(), full, variant="original", progress=False)
    a = read_cache(out)[0].set_index(["post_id", "dimension"]).sort_index()
    b = read_cache(full)[0].set_index(["post_id", "dimension"]).sort_index()
    assert a["sentences"].map(str).tolist() == b["sentences"].map(str).tolist()
    assert a["direct"].fillna(-1).tolist() == b["direct"].fillna(-1).tolist()


def test_changed_text_or_provenance_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "c.jsonl"
    run_extraction(FakeJudge(), make_pairs()[:2], out, variant="original", progress=False)
    changed = [mind_pair(p.post_id, p.lang, p.dimension, p.side, p.text + " Extra words here.")
               for p in make_pairs()]
    with pytest.raises(CacheError, match="scored from another text"):
        run_extraction(FakeJudge(), changed, out, variant="original", progress=False)
    with pytest.raises(ProvenanceMismatch, match="prompt_variant, template_sha256"):
        run_extraction(FakeJudge(), make_pairs(), out, variant="verbose", progress=False)
    with pytest.raises(ProvenanceMismatch, match="segmentation_rule"):
        run_extraction(FakeJudge(), make_pairs(), out, variant="original", rule="improved", progress=False)


def test_bad_arguments(tmp_path: Path) -> None:
    mixed = make_pairs("en")[:1] + make_pairs("zh")[:1]
    with pytest.raises(ValueError, match="one language"):
        run_extraction(FakeJudge(), mixed, tmp_path / "c.jsonl", variant="original")
    with pytest.raises(ValueError, match="variant"):
        run_extraction(FakeJudge(), make_pairs(), tmp_path / "c.jsonl", variant="short")
    with pytest.raises(ValueError, match="segmentation rule"):
        run_extraction(FakeJudge(), make_pairs(), tmp_path / "c.jsonl", variant="original", rule="nltk")
    with pytest.raises(ValueError, match="batch_size"):
        run_extraction(FakeJudge(), make_pairs(), tmp_path / "c.jsonl", variant="original", batch_size=0)


def test_short_answer_list_is_an_error(tmp_path: Path) -> None:
    class Short(FakeJudge):
        def score(self, requests: Sequence[ScoreRequest]) -> list[Score]:
            return super().score(requests)[:-1]

    with pytest.raises(RuntimeError, match="returned"):
        run_extraction(Short(), make_pairs(), tmp_path / "c.jsonl", variant="original", progress=False)
    assert not (tmp_path / "c.jsonl").exists()  # a run that scored nothing leaves no cache behind


def test_signals_wait_for_the_record_being_written() -> None:
    import os
    import signal

    from sigint import default_sigint
    from tefcore.extraction.run import signals_deferred

    steps = []
    with default_sigint():  # the suite may run with SIGINT ignored (a background job)
        with pytest.raises(KeyboardInterrupt):
            with signals_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                steps.append("after the signal")  # the block still completes
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    assert steps == ["after the signal"]
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with signals_deferred():  # an ignored Ctrl-C stays ignored
            os.kill(os.getpid(), signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_during_a_write_counts_the_record_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal arrives while a record is written: it waits, the record is stored and counted, then the run stops."""
    import os
    import signal

    from sigint import default_sigint
    from tefcore.extraction.cache import CacheWriter

    write = CacheWriter.write_pair

    def write_then_signal(self: CacheWriter, *args: Any) -> Any:
        record = write(self, *args)
        if len(self.done) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the middle of the second record's write
        return record

    monkeypatch.setattr(CacheWriter, "write_pair", write_then_signal)
    out = tmp_path / "c.jsonl"
    with default_sigint(), pytest.raises(ExtractionInterrupted) as stop:
        run_extraction(FakeJudge(), make_pairs(), out, variant="original", batch_size=100, progress=False)
    assert stop.value.report.pairs_written == len(read_cache(out)[0]) == 2
