"""The one extraction loop: pairs -> sentences -> prompts -> judge -> cache, whatever engine scores them.

:func:`run_extraction` checks the scope (one language, a known prompt and segmentation rule), has the
engine open a *session* (the judge built and prepared, the store of the cache opened under the run's
provenance), skips the pairs already stored (a pair whose text changed is an error: each record keeps
``text_sha256``, a hash of the post's text), and counts what the session stores into an
:class:`ExtractionReport` with one progress bar; Ctrl-C stops between two records
(:class:`ExtractionInterrupted`).

Two engines implement the session (:class:`_Engine`): :class:`LocalEngine`, this process appending to
the cache file, and :class:`tefcore.extraction.ray_engine.RayEngine`, a Ray cluster writing Parquet parts
merged into the same file at the end. Both score with :func:`score_pairs` (the same chunks, one judge
call each), so their records are the same. A pair's prompts are its task's (:class:`tefcore.tasks.Task`:
MIND's, :func:`tefcore.mind.mind_task`, or one's own).
"""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from tqdm.auto import tqdm

from tefcore.errors import UnknownName
from tefcore import __version__
from tefcore.judges.base import Backend, Score, ScoreRequest
from tefcore.extraction.cache import CacheError, CacheWriter, recorded_provenance
from tefcore.hashing import text_sha256
from tefcore.judges.machine import numeric_environment
from tefcore.judges.registry import ModelSpec
from tefcore.mind.prompts import VARIANTS, mind_task
from tefcore.tasks.schema import EvaluationPair, Task
from tefcore.tasks.segment import MIN_LENGTH, SEGMENTATION_RULES, split_sentences

__all__ = ["ExtractionInterrupted", "ExtractionReport", "LocalEngine",
           "Setting", "build_requests", "chunks", "dimension_order",
           "preferred_batch_size", "prepare_judge", "run_extraction", "run_provenance", "score_chunk",
           "score_pairs", "signals_deferred"]

_DEFAULT_BATCH_SIZE = 64
"""Prompts per judge call when neither the caller nor the judge (``preferred_batch_size``) says."""

_Chunk = list[tuple[EvaluationPair, list[ScoreRequest]]]
"""Pairs with their requests, scored in one judge call."""


# --- what is scored -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Setting:
    """What one cache file holds besides the judge: the language, the task (its prompt) and the segmentation.

    Parameters
    ----------
    lang : str
        The language of every pair.
    task : Task
        MIND's (:func:`tefcore.mind.mind_task`, a prompt variant of protocol §4) or one's own; its
        :meth:`~tefcore.tasks.Task.provenance` goes to the cache's.
    rule : {"reference", "improved"}
        Segmentation rule (protocol §3).

    Examples
    --------
    >>> Setting("en", mind_task("minimal")).provenance()["prompt_variant"]
    'minimal'
    """

    lang: str
    task: Task
    rule: str = "reference"

    def __post_init__(self) -> None:
        if self.rule not in SEGMENTATION_RULES:
            raise UnknownName(f"unknown segmentation rule {self.rule!r}; expected one of {SEGMENTATION_RULES}")

    @property
    def variant(self) -> str:
        """The prompt's name (the cache's ``<prompt>`` folder)."""
        return self.task.prompt_name

    def requests(self, pair: EvaluationPair) -> list[ScoreRequest]:
        """The Direct request, then one request per sentence (segmentation order)."""
        return build_requests(pair, self.task, self.rule)

    def pair_of(self, row: Mapping[str, Any]) -> EvaluationPair:
        """The pair of a row (``post_id, lang, dimension, side, text``: a Ray block's), with its task's sides."""
        return EvaluationPair(row["post_id"], row["lang"], row["dimension"], row["side"], row["text"],
                              self.task.choices(row["dimension"], row["lang"]))

    def provenance(self) -> dict[str, Any]:
        """The setting's part of a run's provenance: the task's (the template by its hash; a task file's name,
        hash, sides and K), the prompt's name and the segmentation."""
        task = self.task.provenance(self.lang)
        return {"lang": self.lang, "prompt_variant": self.variant, "template_sha256": task.pop("template_sha256"),
                "segmentation_rule": self.rule, "min_sentence_length": MIN_LENGTH, **task}


def build_requests(pair: EvaluationPair, task: Task, rule: str) -> list[ScoreRequest]:
    """The Direct request, then one request per sentence (segmentation order), in ``task``'s prompt."""
    def request(text: str, kind: str) -> ScoreRequest:
        prompt = task.prompt(text, pair.dimension, pair.lang)
        return ScoreRequest(prompt, text, pair.lang, pair.dimension, pair.post_id, kind, choices=pair.choices)

    sentences = split_sentences(pair.text, pair.lang, rule=rule)
    return [request(pair.text, "direct"), *(request(s, "sentence") for s in sentences)]


def dimension_order(pairs: Sequence[EvaluationPair]) -> list[EvaluationPair]:
    """The pairs grouped by dimension, dimensions in first-appearance order: the order the loop scores them.

    Examples
    --------
    >>> ab = mind_task().choices("Economy", "en")
    >>> pairs = [EvaluationPair(str(i), "en", dim, "change", "", ab) for i, dim in enumerate("ABA")]
    >>> [p.post_id for p in dimension_order(pairs)]
    ['0', '2', '1']
    """
    first: dict[str, int] = {}
    for pair in pairs:
        first.setdefault(pair.dimension, len(first))
    return sorted(pairs, key=lambda p: first[p.dimension])


def chunks(pairs: Sequence[EvaluationPair], setting: Setting, batch_size: int) -> Iterator[_Chunk]:
    """The pairs in :func:`dimension_order`, cut into chunks of one dimension and about ``batch_size`` prompts.

    Whole pairs only: a chunk closes at the first pair that brings it to ``batch_size`` prompts. The
    prompts of one dimension share their prefix, which the local and vLLM backends reuse.
    """
    chunk: _Chunk = []
    size = 0
    for pair in dimension_order(pairs):
        if chunk and (size >= batch_size or pair.dimension != chunk[0][0].dimension):
            yield chunk
            chunk, size = [], 0
        requests = setting.requests(pair)
        chunk.append((pair, requests))
        size += len(requests)
    if chunk:
        yield chunk


def score_pairs(backend: Backend, pairs: Sequence[EvaluationPair], setting: Setting,
                batch_size: int) -> Iterator[tuple[EvaluationPair, list[Score]]]:
    """Each pair with its scores, chunk by chunk (:func:`chunks`, :func:`score_chunk`): what every engine runs."""
    for chunk in chunks(pairs, setting, batch_size):
        yield from score_chunk(backend, chunk)


def score_chunk(backend: Backend, chunk: _Chunk) -> list[tuple[EvaluationPair, list[Score]]]:
    """The work of every engine: one chunk of pairs in, one judge call, each pair's scores out.

    Parameters
    ----------
    backend : Backend
        A prepared judge.
    chunk : _Chunk
        Pairs with their :meth:`Setting.requests`.

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


def run_provenance(backend: Backend, setting: Setting) -> dict[str, Any]:
    """Everything that identifies the numbers of a run (the judge's and the setting's provenance), the start
    time and the machine's numeric environment (:func:`tefcore.judges.machine.numeric_environment`), both
    outside the provenance id (:data:`tefcore.extraction.cache._TIME_KEYS`)."""
    prov = dict(backend.provenance())
    prov.setdefault("reading", getattr(backend, "reading", None))
    prov.update({"judge": getattr(backend, "name", prov.get("model")), **setting.provenance(),
                 "tefcore_version": __version__,
                 "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                 "numeric_environment": numeric_environment()})
    return prov


def preferred_batch_size(judge: Backend | ModelSpec) -> int:
    """The judge's ``preferred_batch_size`` (its class's, for a registry entry), else :data:`_DEFAULT_BATCH_SIZE`."""
    if isinstance(judge, ModelSpec):
        from tefcore.judges import backend_class

        return int(getattr(backend_class(judge.backend), "preferred_batch_size", _DEFAULT_BATCH_SIZE))
    return int(getattr(judge, "preferred_batch_size", _DEFAULT_BATCH_SIZE))


def prepare_judge(backend: Backend, pairs: Sequence[EvaluationPair], resumed: Path, progress: bool) -> float:
    """``backend.prepare`` on every pair; return its wall time in seconds.

    ``resumed`` is the cache file (or parts header) the run goes on with: a judge whose fit is recorded
    in its provenance, made on the same pairs, takes it instead of fitting again.
    """
    started = time.perf_counter()
    backend.prepare(pairs, progress=progress, recorded=recorded_provenance(resumed))
    return time.perf_counter() - started


# --- what a run did -------------------------------------------------------------------------------
@dataclass
class ExtractionReport:
    """What one run of :func:`run_extraction` did.

    Attributes
    ----------
    path : Path
        The cache file.
    pairs_in_scope, pairs_skipped, pairs_written : int
        Pairs asked for (after ``limit``), already in the cache when the run started, scored by this run.
    prompts : int
        Prompts scored by this run (Direct and sentences).
    seconds, prepare_seconds : float
        Wall time of the scoring loop, and of the judge's preparation before it (where e5 judges fit).
    sources : Counter
        Sources of the numbers scored by this run.
    details : Counter
        Why answers were invalid, when the judge said (e.g. a prompt longer than the context).
    mass_sum, mass_count : float, int
        Sum of the C+S mass of those numbers (NaN masses left out), and how many entered it.
    interrupted : bool
        True when the run stopped on Ctrl-C (only whole records were stored).
    repaired : bool
        True when a torn last line was cut away on opening.
    store : Path, optional
        Where the records are while the run goes on, when not ``path`` (a Ray run's parts directory).
    """

    path: Path
    pairs_in_scope: int = 0
    pairs_skipped: int = 0
    pairs_written: int = 0
    prompts: int = 0
    seconds: float = 0.0
    prepare_seconds: float = 0.0
    sources: Counter[str] = field(default_factory=Counter)
    details: Counter[str] = field(default_factory=Counter)
    mass_sum: float = 0.0
    mass_count: int = 0
    interrupted: bool = False
    repaired: bool = False
    store: Path | None = None

    @property
    def pairs_done(self) -> int:
        """Pairs in the cache now (skipped + written)."""
        return self.pairs_skipped + self.pairs_written

    @property
    def prompts_per_second(self) -> float:
        r"""Prompts scored per second of the scoring loop (the progress bar's rate; preparation aside).

        .. math:: \text{rate} = \frac{\text{prompts}}{t_\text{loop}}
        """
        return self.prompts / self.seconds if self.seconds > 0 else 0.0

    @property
    def mean_mass(self) -> float:
        """Mean C+S mass of this run's numbers (NaN when none)."""
        return self.mass_sum / self.mass_count if self.mass_count else float("nan")

    def add_record(self, record: Mapping[str, Any]) -> None:
        """Add one stored pair record (see :func:`tefcore.extraction.cache.pair_record`)."""
        sources = [record["direct_source"], *record["sentence_sources"]]
        masses = [m for m in [record["direct_mass"], *record["sentence_masses"]] if m is not None]
        details = [record.get("direct_detail"), *(record.get("sentence_details") or ())]
        self.pairs_written += 1
        self.prompts += len(sources)
        self.sources.update(sources)
        self.details.update(d for d in details if d)
        self.mass_sum += sum(masses)
        self.mass_count += len(masses)

    def summary(self) -> str:
        """One line for the terminal; the C+S mass is ``n/a`` for judges without one (embeddings).

        Examples
        --------
        >>> report = ExtractionReport(Path("en.jsonl"), pairs_in_scope=2, pairs_written=2, prompts=8,
        ...                           seconds=4.0, prepare_seconds=0.5, sources=Counter(embedding=8))
        >>> print(report.summary())  # doctest: +NORMALIZE_WHITESPACE
        en.jsonl: 2/2 pairs (2 new, 0 already there); 8 prompts in 4.0 s (2.00/s), after 0.5 s preparing
        the judge; sources: embedding 100.0%; mean C+S mass n/a
        """
        total = sum(self.sources.values())
        shares = ", ".join(f"{k} {v / total:.1%}" for k, v in sorted(self.sources.items())) or "none"
        prepared = f", after {self.prepare_seconds:.1f} s preparing the judge" if self.prepare_seconds >= 0.05 else ""
        mass = f"{self.mean_mass:.3f}" if self.mass_count else "n/a"
        return (f"{self.path}: {self.pairs_done}/{self.pairs_in_scope} pairs "
                f"({self.pairs_written} new, {self.pairs_skipped} already there); {self.prompts} prompts "
                f"in {self.seconds:.1f} s ({self.prompts_per_second:.2f}/s){prepared}; "
                f"sources: {shares}; mean C+S mass {mass}")


class ExtractionInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`run_extraction` between two records; ``report`` says how far it got."""

    def __init__(self, report: ExtractionReport) -> None:
        super().__init__(f"interrupted after {report.pairs_done} of {report.pairs_in_scope} pairs")
        self.report = report


# --- the engines ----------------------------------------------------------------------------------
class _Session(Protocol):
    """An engine's open run: a prepared judge and the store of one cache."""

    done: Mapping[tuple[str, str], str | None]
    """``(post_id, dimension) -> text_sha256`` of the pairs already stored (None when not recorded)."""
    store: Path
    """Where the records go (the cache file, or a Ray run's parts directory)."""
    prepare_seconds: float
    repaired: bool

    def score(self, pending: list[EvaluationPair]) -> Iterator[list[dict[str, Any]]]:
        """Score and store the pending pairs; yield the stored records, a chunk (or a batch) at a time."""
        ...


class _Engine(Protocol):
    """How the pairs are scored: :class:`LocalEngine` or :class:`tefcore.extraction.ray_engine.RayEngine`."""

    def session(self, judge: Backend | ModelSpec, pairs: Sequence[EvaluationPair], setting: Setting,
                out_path: Path, batch_size: int | None, progress: bool) -> AbstractContextManager[_Session]:
        """Prepare the judge on ``pairs`` and open the store of ``out_path``; closing it finishes the cache."""
        ...


class LocalEngine:
    """Score in this process: one chunk per judge call, each record appended to the cache file at once.

    A registry entry is built once and kept for the engine's later runs (another language or prompt
    variant loads no model again).
    """

    def __init__(self) -> None:
        self._built: tuple[ModelSpec, Backend] | None = None

    def judge(self, judge: Backend | ModelSpec) -> Backend:
        """The judge object: ``judge`` itself, or the one built from a registry entry."""
        if not isinstance(judge, ModelSpec):
            return judge
        if self._built is None or self._built[0] != judge:
            from tefcore.judges import make_backend

            self._built = None  # free the previous model first
            self._built = (judge, make_backend(judge))
        return self._built[1]

    @contextmanager
    def session(self, judge: Backend | ModelSpec, pairs: Sequence[EvaluationPair], setting: Setting,
                out_path: Path, batch_size: int | None, progress: bool) -> Iterator[_LocalSession]:
        backend = self.judge(judge)
        prepared = prepare_judge(backend, pairs, out_path, progress)
        with CacheWriter(out_path, run_provenance(backend, setting), pairs) as writer:
            try:
                yield _LocalSession(backend, writer, setting, batch_size or preferred_batch_size(backend), prepared)
            finally:
                if not writer.done:  # a header alone is no cache: a run that scored nothing leaves none
                    writer.path.unlink(missing_ok=True)


class _LocalSession:
    """The session of :class:`LocalEngine`: a judge and a :class:`~tefcore.extraction.cache.CacheWriter`."""

    def __init__(self, backend: Backend, writer: CacheWriter, setting: Setting, batch_size: int,
                 prepare_seconds: float) -> None:
        self.backend, self.writer, self.setting, self.batch_size = backend, writer, setting, batch_size
        self.prepare_seconds, self.repaired, self.store = prepare_seconds, writer.repaired, writer.path
        self.done = {key: writer.text_hashes.get(key) for key in writer.done}

    def score(self, pending: list[EvaluationPair]) -> Iterator[list[dict[str, Any]]]:
        for pair, scores in score_pairs(self.backend, pending, self.setting, self.batch_size):
            # Ctrl-C waits until the record is written and counted: a stored pair is a counted pair
            with signals_deferred():
                yield [self.writer.write_pair(pair, scores[0], scores[1:])]


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM while a record is written; raise KeyboardInterrupt right after.

    Only in the main thread, and only signals not ignored (a shell's background job ignores SIGINT).
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


# --- the loop -------------------------------------------------------------------------------------
def _resolve_task(task: Task | None, variant: str | None) -> Task:
    """The task of a run: ``task``, or MIND's with the prompt ``variant`` (``variant=`` alone is MIND's shorthand).

    Examples
    --------
    >>> _resolve_task(None, "verbose")
    mind_task('verbose')
    """
    if isinstance(task, Task):
        if variant not in (None, task.prompt_name):
            raise ValueError(f"task {task.name!r} has one prompt, {task.prompt_name!r}, not {variant!r}")
        return task
    if variant is None:
        raise ValueError(f"run_extraction on MIND pairs needs a prompt variant, one of {VARIANTS}")
    return mind_task(variant)


def _check_scope(pairs: Sequence[EvaluationPair], task: Task, rule: str) -> Setting:
    """The setting of a run over ``pairs``: they must share one language (one cache file)."""
    langs = sorted({p.lang for p in pairs})
    if len(langs) != 1:
        raise ValueError(f"run_extraction takes the pairs of one language (one cache file), got {langs}")
    return Setting(langs[0], task, rule)


def _pending_pairs(scope: Sequence[EvaluationPair], done: Mapping[tuple[str, str], str | None],
                  store: Path) -> list[EvaluationPair]:
    """The pairs of ``scope`` not stored yet (data order); a stored pair whose text changed is an error."""
    pending = []
    for pair in scope:
        key = (pair.post_id, pair.dimension)
        if key not in done:
            pending.append(pair)
        elif done[key] not in (None, text_sha256(pair.text)):
            raise CacheError(f"{store}: pair {key} was scored from another text; use another --out for this data")
    return pending


def run_extraction(judge: Backend | ModelSpec, pairs: Sequence[EvaluationPair], out_path: str | Path, *,
                   variant: str | None = None, rule: str = "reference", batch_size: int | None = None,
                   limit: int | None = None, progress: bool = True, engine: _Engine | None = None,
                   task: Task | None = None) -> ExtractionReport:
    """Score every pair with ``judge`` and store one record per pair in the cache ``out_path``.

    Parameters
    ----------
    judge : Backend or ModelSpec
        The judge, or a registry entry that the engine builds it from (:func:`tefcore.judges.make_backend`;
        the Ray engine builds an LLM judge in its actors only).
    pairs : sequence of EvaluationPair
        Pairs of one language, in data order (all of them go to the judge's ``prepare``, so that a
        fitted judge does not depend on ``limit``).
    out_path : path-like
        The cache file (see :func:`tefcore.extraction.cache.cache_path`); an existing file of the same
        provenance is resumed.
    variant : {"original", "verbose", "minimal"}, optional
        MIND's prompt variant (protocol §4): shorthand for ``task=mind_task(variant)``.
    rule : {"reference", "improved"}
        Segmentation rule (protocol §3).
    batch_size : int, optional
        Prompts per judge call (default: the judge's ``preferred_batch_size``, else 64).
    limit : int, optional
        Only the first ``limit`` pairs (the same ones on every run, so a limited run resumes).
    progress : bool
        Progress bars: the judge's preparation (when it has long work), then pairs and prompts per second.
    engine : _Engine, optional
        :class:`LocalEngine` (default) or :class:`tefcore.extraction.ray_engine.RayEngine`.
    task : Task, optional
        The task of ``pairs``: one's own (:meth:`tefcore.tasks.TaskFile.pairs`) or MIND's
        (:func:`tefcore.mind.mind_task`).

    Returns
    -------
    ExtractionReport

    Raises
    ------
    ExtractionInterrupted
        On Ctrl-C, after closing the store (no half record); carries the report.
    ProvenanceMismatch
        When ``out_path`` holds results of another provenance.

    Notes
    -----
    A local run that ends, or stops, before any pair is in the cache removes the file it opened.
    """
    setting = _check_scope(pairs, _resolve_task(task, variant), rule)
    if (batch_size is not None and batch_size < 1) or (limit is not None and limit < 0):
        raise ValueError(f"batch_size must be >= 1 and limit >= 0, got {batch_size}, {limit}")
    scope = list(pairs if limit is None else pairs[:limit])
    with (engine or LocalEngine()).session(judge, pairs, setting, Path(out_path), batch_size, progress) as session:
        report = ExtractionReport(Path(out_path), len(scope), prepare_seconds=session.prepare_seconds,
                                  repaired=session.repaired, store=session.store)
        pending = _pending_pairs(scope, session.done, session.store)
        report.pairs_skipped = len(scope) - len(pending)
        bar = tqdm(total=len(pending), unit="pair", desc=f"{setting.lang} {setting.variant}", dynamic_ncols=True,
                   smoothing=0, disable=not progress or not pending)  # smoothing 0: the mean rate, as the postfix
        start = time.perf_counter()
        try:
            for records in session.score(pending):
                for record in records:
                    report.add_record(record)
                report.seconds = time.perf_counter() - start
                bar.update(len(records))
                bar.set_postfix_str(f"{report.prompts_per_second:.2f} prompts/s", refresh=False)
        except KeyboardInterrupt:
            report.interrupted = True
            raise ExtractionInterrupted(report) from None
        finally:
            report.seconds = time.perf_counter() - start
            bar.close()
    return report
