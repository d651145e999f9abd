"""The extraction loop shared by ``tef extract`` and the book: pairs -> sentences -> prompts -> judge -> cache.

For every evaluation pair the judge scores the whole post (Direct) and every sentence of it (protocol §3
segmentation, §4 prompts). Pairs are taken dimension by dimension (the prompts of one language and
dimension share their prefix, which the local and vLLM backends reuse) in chunks of about
``batch_size`` prompts; a pair's record is appended to the cache only when all its prompts are scored,
so an interrupted run leaves only whole records, and a new run skips the pairs already there.

Each record also stores ``text_sha256`` (a hash of the post's text, not the text): resuming refuses a
pair whose text changed since it was scored.

Two engines run this work (:data:`ENGINES`): ``local``, the loop of this module, and ``ray``
(:mod:`tefcore.judges.ray_engine`, the optional extra ``tefcore[ray]``), which spreads the same chunks
over a Ray cluster. Both score a chunk with :func:`score_chunk` and build records with the same code, so
their numbers and provenance are the same.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from tefcore import __version__
from tefcore.judges.base import Backend, Score, ScoreRequest
from tefcore.judges.cache import CacheError, CacheWriter, text_sha256
from tefcore.mind.load import EvaluationPair
from tefcore.mind.prompts import VARIANTS, build_prompt, template_hash
from tefcore.mind.segment import MIN_LENGTH, SEGMENTATION_RULES, split_sentences

__all__ = ["DEFAULT_BATCH_SIZE", "ENGINES", "ExtractionInterrupted", "ExtractionReport", "build_requests",
           "cache_path", "count_record", "load_ray_engine", "run_extraction", "run_provenance", "score_chunk",
           "score_pairs"]

DEFAULT_BATCH_SIZE = 64

ENGINES: tuple[str, ...] = ("local", "ray")
"""Values of ``tef extract --engine``: this module's loop, or Ray Data (:mod:`tefcore.judges.ray_engine`)."""


@dataclass
class ExtractionReport:
    """What one run of :func:`run_extraction` did.

    Attributes
    ----------
    path : Path
        The cache file.
    pairs_in_scope : int
        Pairs asked for (after ``limit``).
    pairs_skipped : int
        Pairs already in the cache when the run started.
    pairs_written : int
        Pairs scored and appended by this run.
    prompts : int
        Prompts scored by this run (Direct and sentences).
    seconds : float
        Wall time of the scoring loop.
    prepare_seconds : float
        Wall time of ``backend.prepare`` (a judge that fits, such as the cross-fitted e5 judge,
        embeds and fits there): work done for this run before the loop.
    sources : Counter
        Sources of the numbers scored by this run.
    mass_sum : float
        Sum of the C+S mass of those numbers (NaN masses left out).
    mass_count : int
        How many masses entered ``mass_sum``.
    interrupted : bool
        True when the run stopped on Ctrl-C (only whole records were written).
    repaired : bool
        True when a torn last line was cut away on opening.
    """

    path: Path
    pairs_in_scope: int = 0
    pairs_skipped: int = 0
    pairs_written: int = 0
    prompts: int = 0
    seconds: float = 0.0
    prepare_seconds: float = 0.0
    sources: Counter[str] = field(default_factory=Counter)
    mass_sum: float = 0.0
    mass_count: int = 0
    interrupted: bool = False
    repaired: bool = False

    @property
    def pairs_done(self) -> int:
        """Pairs in the cache now (skipped + written)."""
        return self.pairs_skipped + self.pairs_written

    @property
    def prompts_per_second(self) -> float:
        r"""Prompts scored per second of this run, the judge's preparation included.

        A judge that does its work in ``prepare`` scores from memory in the loop; the loop's time alone
        would report that as speed.

        .. math:: \text{rate} = \frac{\text{prompts}}{t_\text{prepare} + t_\text{loop}}
        """
        elapsed = self.seconds + self.prepare_seconds
        return self.prompts / elapsed if elapsed > 0 else 0.0

    @property
    def mean_mass(self) -> float:
        """Mean C+S mass of this run's numbers (NaN when none)."""
        return self.mass_sum / self.mass_count if self.mass_count else float("nan")

    def source_shares(self) -> dict[str, float]:
        """Share of each source among this run's numbers."""
        total = sum(self.sources.values())
        return {k: v / total for k, v in sorted(self.sources.items())} if total else {}

    def summary(self) -> str:
        """One line for the terminal; the C+S mass is ``n/a`` for judges without one (embeddings).

        Examples
        --------
        >>> report = ExtractionReport(Path("en.jsonl"), pairs_in_scope=2, pairs_written=2, prompts=8,
        ...                           seconds=3.5, prepare_seconds=0.5, sources=Counter(embedding=8))
        >>> print(report.summary())  # doctest: +NORMALIZE_WHITESPACE
        en.jsonl: 2/2 pairs (2 new, 0 already there); 8 prompts in 4.0 s (2.00/s, 0.5 s of it preparing
        the judge); sources: embedding 100.0%; mean C+S mass n/a
        """
        shares = ", ".join(f"{k} {v:.1%}" for k, v in self.source_shares().items()) or "none"
        prepared = f", {self.prepare_seconds:.1f} s of it preparing the judge" if self.prepare_seconds >= 0.05 else ""
        mass = f"{self.mean_mass:.3f}" if self.mass_count else "n/a"
        return (f"{self.path}: {self.pairs_done}/{self.pairs_in_scope} pairs "
                f"({self.pairs_written} new, {self.pairs_skipped} already there); {self.prompts} prompts "
                f"in {self.seconds + self.prepare_seconds:.1f} s ({self.prompts_per_second:.2f}/s{prepared}); "
                f"sources: {shares}; mean C+S mass {mass}")


class ExtractionInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`run_extraction` between two records; ``report`` says how far it got."""

    def __init__(self, report: ExtractionReport) -> None:
        super().__init__(f"interrupted after {report.pairs_done} of {report.pairs_in_scope} pairs")
        self.report = report


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
    return Path(out_dir) / model / variant / f"{lang}{suffix}.jsonl"


def build_requests(pair: EvaluationPair, variant: str, rule: str) -> list[ScoreRequest]:
    """The Direct request, then one request per sentence (segmentation order)."""
    def request(text: str, kind: str) -> ScoreRequest:
        return ScoreRequest(build_prompt(text, pair.dimension, pair.lang, variant), text, pair.lang,
                            pair.dimension, pair.post_id, kind)

    sentences = split_sentences(pair.text, pair.lang, rule=rule)
    return [request(pair.text, "direct"), *(request(s, "sentence") for s in sentences)]


def run_provenance(backend: Backend, lang: str, variant: str, rule: str) -> dict[str, Any]:
    """Everything that identifies the numbers of a run (the start time is kept out of its id)."""
    prov = dict(backend.provenance())
    prov.setdefault("reading", getattr(backend, "reading", None))
    prov.update({
        "judge": getattr(backend, "name", prov.get("model")), "lang": lang, "prompt_variant": variant,
        "template_sha256": template_hash(lang, variant), "segmentation_rule": rule,
        "min_sentence_length": MIN_LENGTH, "tefcore_version": __version__,
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    })
    return prov


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM while a record is written; raise KeyboardInterrupt right after.

    Only in the main thread, and only for signals that are not ignored (a run started in the
    background by a shell ignores SIGINT; that choice is kept).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(sig, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            if handler is not signal.SIG_IGN:
                signal.signal(sig, handler)
    if received:
        raise KeyboardInterrupt


def _chunks(pairs: Sequence[EvaluationPair], variant: str, rule: str,
            batch_size: int) -> Iterator[list[tuple[EvaluationPair, list[ScoreRequest]]]]:
    """Pairs grouped by dimension (first-appearance order), cut into chunks of ~batch_size prompts."""
    by_dimension: dict[str, list[EvaluationPair]] = {}
    for pair in pairs:
        by_dimension.setdefault(pair.dimension, []).append(pair)
    for group in by_dimension.values():
        chunk: list[tuple[EvaluationPair, list[ScoreRequest]]] = []
        size = 0
        for pair in group:
            requests = build_requests(pair, variant, rule)
            chunk.append((pair, requests))
            size += len(requests)
            if size >= batch_size:
                yield chunk
                chunk, size = [], 0
        if chunk:
            yield chunk


def load_ray_engine() -> Any:
    """Import :mod:`tefcore.judges.ray_engine` and check that Ray is installed.

    Raises
    ------
    ImportError
        When Ray Data is missing; the message says what to install.
    """
    from tefcore.judges import ray_engine

    ray_engine.require_ray()
    return ray_engine


def _check_scope(pairs: Sequence[EvaluationPair], variant: str, rule: str) -> str:
    """Validate arguments; return the single language of the pairs."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown prompt variant {variant!r}; expected one of {VARIANTS}")
    if rule not in SEGMENTATION_RULES:
        raise ValueError(f"unknown segmentation rule {rule!r}; expected one of {SEGMENTATION_RULES}")
    langs = sorted({p.lang for p in pairs})
    if len(langs) != 1:
        raise ValueError(f"run_extraction takes the pairs of one language (one cache file), got {langs}")
    return langs[0]


def _pending(pairs: Sequence[EvaluationPair], writer: CacheWriter) -> list[EvaluationPair]:
    """Pairs not in the cache yet; a cached pair whose text changed is an error."""
    hashes = writer.text_hashes
    pending = []
    for pair in pairs:
        key = (pair.post_id, pair.dimension)
        if key not in writer.done:
            pending.append(pair)
        elif hashes.get(key) not in (None, text_sha256(pair.text)):
            raise CacheError(f"{writer.path}: pair {key} was scored from another text; "
                             f"use another --out for this data")
    return pending


def run_extraction(backend: Backend, pairs: Sequence[EvaluationPair], out_path: str | os.PathLike[str],
                   *, variant: str, rule: str = "reference", batch_size: int | None = None,
                   limit: int | None = None, progress: bool = True) -> ExtractionReport:
    """Score every pair with ``backend`` and append one record per pair to ``out_path``.

    Parameters
    ----------
    backend : Backend
        The judge (see :func:`tefcore.judges.make_backend`).
    pairs : sequence of EvaluationPair
        Pairs of one language, in data order (all of them go to ``backend.prepare``, so that a
        fitted judge does not depend on ``limit``).
    out_path : path-like
        The cache file (see :func:`cache_path`); an existing file of the same provenance is resumed.
    variant : {"original", "verbose", "minimal"}
        Prompt variant (protocol §4).
    rule : {"reference", "improved"}
        Segmentation rule (protocol §3).
    batch_size : int, optional
        Prompts per backend call (default: the backend's ``preferred_batch_size``, else 64).
    limit : int, optional
        Only the first ``limit`` pairs (the same ones on every run, so a limited run resumes).
    progress : bool
        Show a tqdm bar with pairs and prompts per second.

    Returns
    -------
    ExtractionReport

    Raises
    ------
    ExtractionInterrupted
        On Ctrl-C, after closing the cache (no half record); carries the report.
    ProvenanceMismatch
        When ``out_path`` holds results of another provenance.

    Notes
    -----
    A run that ends, or stops, before any pair is in the cache removes the file it opened: a cache is
    never a header alone.
    """
    lang = _check_scope(pairs, variant, rule)
    if batch_size is None:
        batch_size = getattr(backend, "preferred_batch_size", DEFAULT_BATCH_SIZE)
    if batch_size < 1 or (limit is not None and limit < 0):
        raise ValueError(f"batch_size must be >= 1 and limit >= 0, got {batch_size}, {limit}")
    started = time.perf_counter()
    backend.prepare(pairs)
    prepared = time.perf_counter() - started
    scope = list(pairs if limit is None else pairs[:limit])
    with CacheWriter(out_path, run_provenance(backend, lang, variant, rule)) as writer:
        try:
            report = ExtractionReport(Path(out_path), len(scope), prepare_seconds=prepared,
                                      repaired=writer.repaired)
            pending = _pending(scope, writer)
            report.pairs_skipped = len(scope) - len(pending)
            _loop(backend, pending, (lang, variant, rule), batch_size, writer, report, progress)
        finally:
            if not writer.done:  # a header alone is no cache: a run that scored nothing leaves none
                writer.path.unlink(missing_ok=True)
    return report


def _loop(backend: Backend, pending: list[EvaluationPair], setting: tuple[str, str, str], batch_size: int,
          writer: CacheWriter, report: ExtractionReport, progress: bool) -> None:
    """Score the pending pairs chunk by chunk with a progress bar; Ctrl-C -> ExtractionInterrupted.

    ``setting`` is ``(lang, variant, rule)``.
    """
    lang, variant, rule = setting
    bar = tqdm(total=len(pending), unit="pair", desc=f"{lang} {variant}", disable=not progress,
               dynamic_ncols=True)
    start = time.perf_counter()
    try:
        for scored in score_pairs(backend, pending, variant, rule, batch_size):
            for pair, scores in scored:
                with _signals_deferred():
                    record = writer.write_pair(pair, scores[0], scores[1:])
                count_record(report, record)
            report.seconds = time.perf_counter() - start
            bar.update(len(scored))
            bar.set_postfix_str(f"{report.prompts_per_second:.2f} prompts/s", refresh=False)
    except KeyboardInterrupt:
        report.interrupted = True
        raise ExtractionInterrupted(report) from None
    finally:
        report.seconds = time.perf_counter() - start
        bar.close()


def score_pairs(backend: Backend, pairs: Sequence[EvaluationPair], variant: str, rule: str,
                batch_size: int) -> Iterator[list[tuple[EvaluationPair, list[Score]]]]:
    """Score pairs chunk by chunk, as the local loop does: :func:`score_chunk` of each chunk.

    Pairs are grouped by dimension (first-appearance order) and cut into chunks of about
    ``batch_size`` prompts (whole pairs only).

    Parameters
    ----------
    backend : Backend
        A prepared judge.
    pairs : sequence of EvaluationPair
        The pairs to score (one language).
    variant, rule : str
        Prompt variant and segmentation rule.
    batch_size : int
        About how many prompts go into one backend call.

    Yields
    ------
    list of (EvaluationPair, list of Score)
        One chunk (see :func:`score_chunk`).
    """
    for chunk in _chunks(pairs, variant, rule, batch_size):
        yield score_chunk(backend, chunk)


def score_chunk(backend: Backend, chunk: Sequence[tuple[EvaluationPair, list[ScoreRequest]]]
                ) -> list[tuple[EvaluationPair, list[Score]]]:
    """The work of both engines: one chunk of pairs in, one backend call, each pair's scores out.

    The local loop writes what this returns with :meth:`CacheWriter.write_pair`; a Ray actor
    (:mod:`tefcore.judges.ray_engine`) receives the same chunks, calls this, and builds the same records
    with :func:`tefcore.judges.cache.pair_record`. The requests, the calls and the records are the same.

    Parameters
    ----------
    backend : Backend
        A prepared judge.
    chunk : sequence of (EvaluationPair, list of ScoreRequest)
        Pairs with their :func:`build_requests`.

    Returns
    -------
    list of (EvaluationPair, list of Score)
        Each pair with its scores, Direct first, then one per sentence.

    Raises
    ------
    RuntimeError
        When the judge answers with another number of scores than prompts.
    """
    requests = [r for _, reqs in chunk for r in reqs]
    scores = backend.score(requests)
    if len(scores) != len(requests):
        raise RuntimeError(f"the judge returned {len(scores)} scores for {len(requests)} prompts")
    scored, at = [], 0
    for pair, reqs in chunk:
        scored.append((pair, list(scores[at:at + len(reqs)])))
        at += len(reqs)
    return scored


def count_record(report: ExtractionReport, record: Mapping[str, Any]) -> None:
    """Add one written pair record (see :func:`tefcore.judges.cache.pair_record`) to ``report``."""
    sources = [record["direct_source"], *record["sentence_sources"]]
    masses = [m for m in [record["direct_mass"], *record["sentence_masses"]] if m is not None]
    report.pairs_written += 1
    report.prompts += len(sources)
    report.sources.update(sources)
    report.mass_sum += sum(masses)
    report.mass_count += len(masses)
