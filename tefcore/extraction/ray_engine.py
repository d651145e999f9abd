"""``tef extract --engine ray``: the engine that spreads the extraction over a Ray cluster with Ray Data.

:class:`RayEngine` is a :class:`tefcore.extraction.run._Engine`: :func:`tefcore.extraction.run.run_extraction`
checks the scope, skips the pairs already stored and counts the records, as for the local engine. The
session's plan is the one Ray Data can checkpoint, read -> map -> write:

1. The driver prepares the judge once and writes the provenance header of a *parts directory*
   (:mod:`tefcore.extraction.parts`, ``<lang>.parts`` beside ``<lang>.jsonl``), held locked for the run.
2. The pending pairs go in blocks of the local loop's whole chunks (:func:`_blocks`), one read task each.
3. An actor pool (:class:`JudgeActor`) scores each block with the local loop's own code
   (:func:`tefcore.extraction.run.score_pairs`), and Ray Data writes one Parquet part per block to ``data/``.
   Ray's checkpoint (``checkpoint/``, keyed by ``pair_id``) records the committed pairs, so a rerun
   scores only the missing ones; dead actors are restarted and their blocks retried.
4. The driver checks that every pair it sent is in a part, and merges the parts into ``<lang>.jsonl``.

A judge that fits something in ``prepare`` (the e5 judges, or any judge object given directly) travels
pickled (:func:`ship_prepared`); an LLM judge fits nothing, so each actor builds its own from the
registry entry and the driver loads no model (:class:`JudgeShipment`). Every actor checks that its
judge has the driver's provenance id before it scores anything. Ray is an optional extra
(``pip install 'tefcore[ray]'``), imported only when a run starts.
"""

from __future__ import annotations

import copyreg
import io
import logging
import math
import os
import pickle
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tefcore.judges import make_backend
from tefcore.judges.base import Backend
from tefcore.extraction.cache import CacheError, lock_exclusive, pair_record, provenance_id
from tefcore.extraction.parts import (PARTS_CHECKPOINT, PARTS_DATA, PARTS_HEADER, PARTS_PENDING, merge_parts, open_parts,
                                  pair_id, part_record, parts_path, read_parts, records_table)
from tefcore.judges.registry import ModelSpec
from tefcore.extraction.run import (Setting, chunks, dimension_order, preferred_batch_size, prepare_judge, run_provenance,
                                score_pairs)
from tefcore.mind.load import EvaluationPair

__all__ = ["JudgeActor", "JudgeShipment", "RayEngine", "RayOptions", "Resources",
           "check_fits", "map_arguments", "plan_resources", "ship_prepared"]

log = logging.getLogger(__name__)

_SHIPPED_CACHE_MAX_BYTES = 256 * 2**20
"""Embeddings computed by ``prepare`` travel to the actors with the judge up to this size; beyond it
the actors compute them again (the numbers are the same: the e5 engine is batch-invariant)."""

_DEFAULT_CPUS: dict[str, float] = {"openai": 0.25, "vllm": 1.0, "e5-zeroshot": 1.0, "e5-crossfit": 1.0}
"""Logical CPUs per actor when ``--cpus-per-actor`` is not given (llama.cpp: its ``n_threads``; an
OpenAI-compatible judge waits on its server, so it takes a fraction and ``--actors`` is its concurrency)."""

_DEFAULT_MAX_ACTORS = 16
"""The most actors a run starts when ``--actors`` is not given."""

LOCK_FILE = ".lock"
"""The file of a parts directory that a running driver holds locked."""


# --- options and resources ----------------------------------------------------------------------
@dataclass(frozen=True)
class RayOptions:
    """What the user asked for (``None``: the default of :func:`plan_resources`), checked here: ``tef extract``
    passes its flags as typed (``--actors`` as text), so that its parser needs nothing of this module.

    Attributes
    ----------
    address : str, optional
        ``"auto"``, ``"ray://host:10001"``, ...; ``None``: this process's Ray, else a new local one.
    actors : (int, int), optional
        Size of the actor pool, ``(min, max)``. Given as a tuple or as ``--actors``'s text: ``"N"`` (a fixed
        pool) or ``"MIN:MAX"`` (an autoscaling pool), read into ``(min, max)``.
    cpus_per_actor, gpus_per_actor : float, optional
        Logical CPUs and GPUs each actor holds.
    pairs_per_batch : int, optional
        Pairs per Ray Data batch (one actor call).

    Examples
    --------
    >>> RayOptions(actors="4").actors, RayOptions(actors="1:8").actors, RayOptions(actors=(2, 3)).actors
    ((4, 4), (1, 8), (2, 3))
    >>> RayOptions(actors="0")
    Traceback (most recent call last):
    ...
    ValueError: --actors takes N or MIN:MAX with 1 <= MIN <= MAX, got '0'
    """

    address: str | None = None
    actors: str | tuple[int, int] | None = None
    cpus_per_actor: float | None = None
    gpus_per_actor: float | None = None
    pairs_per_batch: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.actors, str):
            text = self.actors
            low, sep, high = text.partition(":")
            try:
                pair = (int(low), int(high if sep else low))
            except ValueError:
                raise ValueError(f"--actors takes N or MIN:MAX (positive integers), got {text!r}") from None
            if pair[0] < 1 or pair[1] < pair[0]:
                raise ValueError(f"--actors takes N or MIN:MAX with 1 <= MIN <= MAX, got {text!r}")
            object.__setattr__(self, "actors", pair)  # frozen: the text becomes (min, max) once, here
        elif self.actors is not None and not 1 <= self.actors[0] <= self.actors[1]:
            raise ValueError(f"--actors needs 1 <= MIN <= MAX, got {self.actors}")
        if self.cpus_per_actor is not None and not self.cpus_per_actor > 0:
            raise ValueError(f"--cpus-per-actor must be > 0, got {self.cpus_per_actor}")
        if self.gpus_per_actor is not None and self.gpus_per_actor < 0:
            raise ValueError(f"--gpus-per-actor must be >= 0, got {self.gpus_per_actor}")
        if self.pairs_per_batch is not None and self.pairs_per_batch < 1:
            raise ValueError(f"--pairs-per-batch must be >= 1, got {self.pairs_per_batch}")


@dataclass(frozen=True)
class Resources:
    """The resolved resources of a run.

    Attributes
    ----------
    actors : (int, int)
        ``(min, max)`` actors.
    cpus, gpus : float
        Logical CPUs and GPUs per actor.
    threads : int
        Threads a CPU judge uses in one actor (``max(1, floor(cpus))``).
    pairs_per_batch : int
        Pairs per actor call.
    """

    actors: tuple[int, int]
    cpus: float
    gpus: float
    threads: int
    pairs_per_batch: int


def plan_resources(kind: str, options: RayOptions, cluster: Mapping[str, float], batch_size: int,
                   spec_options: Mapping[str, Any] | None = None) -> Resources:
    """Fill in the defaults of ``options`` for a judge of backend ``kind`` on ``cluster``.

    Defaults: CPUs per actor from :data:`_DEFAULT_CPUS` (llama.cpp: its ``n_threads``); GPUs per actor 0,
    vLLM its ``tensor_parallel_size`` (``"auto"`` is refused: the GPUs an actor holds are what vLLM sees);
    pairs per batch ``max(8, batch_size // 4)``; actors as many as fit beside two free CPUs
    (:func:`check_fits`), at most :data:`_DEFAULT_MAX_ACTORS`.

    Parameters
    ----------
    kind : str
        A registry backend, or ``"prepared"``.
    options : RayOptions
    cluster : mapping
        ``ray.cluster_resources()`` (``"CPU"``, ``"GPU"``).
    batch_size : int
        Prompts per judge call.
    spec_options : mapping, optional
        The registry entry's options (``n_threads``, ``tensor_parallel_size``).

    Returns
    -------
    Resources

    Examples
    --------
    >>> r = plan_resources("vllm", RayOptions(), {"CPU": 32, "GPU": 8}, 4096, {"tensor_parallel_size": 2})
    >>> r.gpus, r.actors, r.pairs_per_batch
    (2.0, (4, 4), 1024)
    """
    spec_options = spec_options or {}
    default_cpus = float(spec_options.get("n_threads", 1)) if kind == "llama_cpp" else _DEFAULT_CPUS.get(kind, 1.0)
    cpus = float(options.cpus_per_actor if options.cpus_per_actor is not None else default_cpus)
    gpus = float(options.gpus_per_actor or 0.0)
    if options.gpus_per_actor is None and kind == "vllm":
        size = spec_options.get("tensor_parallel_size", 1)
        if size == "auto":
            raise ValueError("this vLLM judge has tensor_parallel_size 'auto': say how many GPUs each actor holds "
                             "(and gives vLLM) with --gpus-per-actor")
        gpus = float(size)
    fit = math.floor((cluster.get("CPU", 0.0) - 2) / cpus + 1e-9)
    if gpus > 0:
        fit = min(fit, math.floor(cluster.get("GPU", 0.0) / gpus + 1e-9))
    fits = max(1, min(fit, _DEFAULT_MAX_ACTORS))
    actors = options.actors if isinstance(options.actors, tuple) else (fits, fits)  # text was read in __post_init__
    ppb = options.pairs_per_batch or max(8, batch_size // 4)
    return Resources(actors, cpus, gpus, max(1, math.floor(cpus)), ppb)


def check_fits(resources: Resources, cluster: Mapping[str, float], resuming: bool) -> None:
    """Refuse a pool that would hang Ray Data.

    Ray Data's read and write tasks need a logical CPU that no actor holds (one), and a resumed run
    runs the checkpoint filter on one more (two). The largest pool must leave them free:

    .. math:: a_{max} \\, c + f \\le C, \\qquad a_{max} \\, g \\le G

    with :math:`c, g` the CPUs and GPUs per actor, :math:`f` the free CPUs and :math:`C, G` the
    cluster's logical CPUs and GPUs.

    Raises
    ------
    ValueError
        One line: what was asked, what the cluster has, what to change.

    Examples
    --------
    >>> r = Resources((2, 2), 1.0, 0.0, 1, 16)
    >>> check_fits(r, {"CPU": 4}, resuming=True)
    >>> check_fits(r, {"CPU": 3}, resuming=True)
    Traceback (most recent call last):
    ...
    ValueError: 2 actors x 1 CPU leave 1 of the cluster's 3 logical CPUs free; Ray Data needs 2 free \
(its read and write tasks and, when resuming, the checkpoint filter) or the run hangs: use fewer \
--actors or --cpus-per-actor, or give Ray more logical CPUs (ray start --num-cpus)
    """
    free_needed = 2 if resuming else 1
    total_cpu, total_gpu = cluster.get("CPU", 0.0), cluster.get("GPU", 0.0)
    n = resources.actors[1]
    left = total_cpu - n * resources.cpus
    if left + 1e-9 < free_needed:
        raise ValueError(
            f"{n} actors x {resources.cpus:g} CPU leave {max(left, 0):g} of the cluster's {total_cpu:g} logical "
            f"CPUs free; Ray Data needs {free_needed} free (its read and write tasks"
            f"{' and, when resuming, the checkpoint filter' if resuming else ''}) or the run hangs: use fewer "
            f"--actors or --cpus-per-actor, or give Ray more logical CPUs (ray start --num-cpus)")
    if n * resources.gpus > total_gpu + 1e-9:
        raise ValueError(f"{n} actors x {resources.gpus:g} GPU need {n * resources.gpus:g} GPUs; the cluster has "
                         f"{total_gpu:g}: use fewer --actors or --gpus-per-actor")


def _ray() -> Any:
    """Ray with the parts of Ray Data a run uses, imported when a run starts: the rest of this module
    (:class:`RayOptions`, which checks ``tef extract``'s Ray flags, among it) needs no Ray."""
    import ray
    import ray.data.block
    import ray.data.checkpoint
    import ray.data.datasource

    return ray


def map_arguments(resources: Resources) -> dict[str, Any]:
    """Keyword arguments of ``Dataset.map_batches`` for the actor pool (besides the class)."""
    pool = _ray().data.ActorPoolStrategy
    low, high = resources.actors
    compute = pool(size=low) if low == high else pool(min_size=low, max_size=high)
    # batch_size=None: a batch is a whole block (whole chunks, see _blocks)
    args: dict[str, Any] = {"compute": compute, "batch_size": None, "batch_format": "pyarrow",
                            "num_cpus": resources.cpus}
    if resources.gpus > 0:
        args["num_gpus"] = resources.gpus
    return args


# --- shipping the judge ---------------------------------------------------------------------------
def _embedder_with(cls: type, batch_size: int, threads: int, cache: dict[Any, Any]) -> Any:
    """A fresh e5 embedder (its engine opens on first use) holding the embeddings ``prepare`` computed."""
    return cls(batch_size=batch_size, num_threads=threads, cache=cache)


def _embedder_reducer(threads: int) -> tuple[type, Callable[[Any], Any]] | None:
    """How an e5 embedder travels: settings, the actor's threads, and the embeddings ``prepare`` computed
    (its own pickling drops them) up to :data:`_SHIPPED_CACHE_MAX_BYTES`; ``None`` when the embedder's module
    was not imported (no e5 judge to ship)."""
    module = sys.modules.get("tefcore.judges.e5_engine")
    if module is None:
        return None

    def reduce(embedder: Any) -> Any:
        cache = embedder.cached
        if sum(getattr(v, "nbytes", 0) for v in cache.values()) > _SHIPPED_CACHE_MAX_BYTES:
            log.info("the judge's embeddings exceed %d bytes: the actors compute them again",
                     _SHIPPED_CACHE_MAX_BYTES)
            cache = {}
        return _embedder_with, (type(embedder), embedder.batch_size, threads, cache)

    return module.E5Embedder, reduce


def ship_prepared(backend: Backend, threads: int = 1) -> bytes:
    """Pickle a prepared judge for the actors.

    Parameters
    ----------
    backend : Backend
        A judge after ``prepare`` (its classes must be importable where the actors run).
    threads : int
        Threads of the judge's engine in one actor (e5).

    Returns
    -------
    bytes

    Raises
    ------
    ValueError
        When the judge holds something that cannot be pickled.
    """
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    table = dict(copyreg.dispatch_table)
    reducer = _embedder_reducer(threads)
    if reducer is not None:
        table[reducer[0]] = reducer[1]
    pickler.dispatch_table = table  # type: ignore[attr-defined]
    try:
        pickler.dump(backend)
    except (pickle.PicklingError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"judge {getattr(backend, 'name', backend)!r} cannot be sent to Ray actors "
                         f"({' '.join(str(exc).split())})") from None
    return buffer.getvalue()


@dataclass(frozen=True)
class JudgeShipment:
    """What an actor needs to hold the driver's judge.

    Attributes
    ----------
    provenance_id : str
        The run's provenance id; an actor whose judge differs refuses to start.
    payload : bytes, optional
        The prepared judge (:func:`ship_prepared`).
    spec : ModelSpec, optional
        Otherwise: build the judge from this registry entry (its options as the run sets them:
        ``reading``, ``n_threads``).
    """

    provenance_id: str = ""
    payload: bytes | None = None
    spec: ModelSpec | None = None

    def build(self) -> Backend:
        """The judge: unpickled, or built from the registry entry."""
        if self.payload is not None:
            backend: Backend = pickle.loads(self.payload)
            return backend
        if self.spec is None:
            raise ValueError("a JudgeShipment needs a payload or a spec")
        return make_backend(self.spec)


class JudgeActor:
    """One Ray actor: one judge, scoring blocks of pairs with the local loop's code.

    Parameters
    ----------
    shipment : JudgeShipment
        The judge.
    setting : Setting
        The run's language, prompt variant and segmentation.
    batch_size : int, optional
        Prompts per judge call, the driver's (default: the judge's ``preferred_batch_size``).

    Raises
    ------
    RuntimeError
        When the judge built here has another provenance than the driver's.
    """

    def __init__(self, shipment: JudgeShipment, setting: Setting, batch_size: int | None = None) -> None:
        self.backend = shipment.build()
        self.setting = setting
        self.batch_size = batch_size or preferred_batch_size(self.backend)
        self.provenance_id = provenance_id(run_provenance(self.backend, setting))
        if shipment.provenance_id and self.provenance_id != shipment.provenance_id:
            raise RuntimeError(f"the judge built in a Ray actor has another provenance "
                               f"({self.provenance_id[:12]}) than the driver's ({shipment.provenance_id[:12]}); "
                               f"check that every node has the same model files and package versions")

    def __call__(self, batch: Any) -> Any:
        """Score a block (an Arrow table of whole chunks, see :func:`_blocks`) -> an Arrow table of part rows.

        The block's pairs go to :func:`tefcore.extraction.run.score_pairs`, which cuts them into the chunks
        the local loop would send.
        """
        rows = batch.to_pylist()
        seq = {row["pair_id"]: int(row["seq"]) for row in rows}
        scored = score_pairs(self.backend, [self.setting.pair_of(r) for r in rows], self.setting, self.batch_size)
        return records_table([(seq[pair_id(pair.post_id, pair.dimension)],
                               pair_record(pair, scores[0], scores[1:], self.provenance_id))
                              for pair, scores in scored])


def _probe_provenance(shipment: JudgeShipment, setting: Setting) -> dict[str, Any]:
    """Build the judge as an actor does (its checks included) and return the run's provenance."""
    return run_provenance(JudgeActor(shipment, setting).backend, setting)


# --- the engine ---------------------------------------------------------------------------------
class RayEngine:
    """The :class:`tefcore.extraction.run._Engine` of a Ray cluster (see the module notes).

    Parameters
    ----------
    options : RayOptions, optional
        Cluster address and resources.

    Raises
    ------
    ImportError
        Without Ray Data (the message says what to install).
    """

    def __init__(self, options: RayOptions | None = None) -> None:
        try:
            import ray.data  # noqa: F401
        except ImportError as exc:
            raise ImportError("--engine ray needs Ray Data: pip install 'tefcore[ray]'") from exc
        self.options = options or RayOptions()

    @contextmanager
    def session(self, judge: Backend | ModelSpec, pairs: Sequence[EvaluationPair], setting: Setting,
                out_path: Path, batch_size: int | None, progress: bool) -> Iterator[_RaySession]:
        """Connect, prepare and ship the judge, open and lock the parts; on success merge them into ``out_path``."""
        ray = _ray()
        started_here = _connect(self.options.address)
        try:
            cluster = {k: float(v) for k, v in ray.cluster_resources().items()}
            kind, spec_options = (judge.backend, judge.options) if isinstance(judge, ModelSpec) else ("prepared", {})
            size = batch_size or preferred_batch_size(judge)
            resources = plan_resources(kind, self.options, cluster, size, spec_options)
            parts = parts_path(out_path.absolute())
            started = time.perf_counter()
            provenance, shipment = _ship(judge, pairs, setting, parts, resources, progress)
            prepared = time.perf_counter() - started
            shipment = replace(shipment, provenance_id=open_parts(parts, provenance))
            with open(parts / LOCK_FILE, "ab") as lock:
                # a second run into the directory would undo this one's writes: Ray Data's recovery
                # deletes the parts of unfinished writes, which for a running run are writes in progress
                lock_exclusive(lock.fileno(), parts, "tef extract --engine ray")
                yield _RaySession(shipment, setting, parts, size, resources, cluster, pairs, prepared, progress)
                if parts.joinpath(PARTS_DATA).is_dir():
                    merge_parts(parts, out_path)
        finally:
            if started_here:
                ray.shutdown()


class _RaySession:
    """A Ray run's parts directory and the actor pool that fills it."""

    def __init__(self, shipment: JudgeShipment, setting: Setting, parts: Path, batch_size: int,
                 resources: Resources, cluster: dict[str, float], pairs: Sequence[EvaluationPair],
                 prepare_seconds: float, progress: bool) -> None:
        self.shipment, self.setting, self.store, self.batch_size = shipment, setting, parts, batch_size
        self.resources, self.cluster, self.progress = resources, cluster, progress
        # each pair's place in the local loop's order over all pairs (stable under ``limit``)
        self.seq = {pair_id(p.post_id, p.dimension): i for i, p in enumerate(dimension_order(pairs))}
        self.prepare_seconds, self.repaired = prepare_seconds, False
        self.done = _done_hashes(parts)

    def score(self, pending: list[EvaluationPair]) -> Iterator[list[dict[str, Any]]]:
        """Run read -> map -> write over the pending pairs; yield the records this run committed."""
        if not pending:
            return
        check_fits(self.resources, self.cluster, resuming=_resuming(self.store))
        if self.shipment.payload is not None:
            _probe(self.shipment, self.setting, self.resources)
        try:
            _execute(pending, self)
        except KeyboardInterrupt:
            yield self._committed_now()  # counted as done, then the interruption goes on
            raise
        yield self._committed_now()
        _check_complete(pending, self.store)

    def _committed_now(self) -> list[dict[str, Any]]:
        """The records committed since the session opened."""
        rows, _ = read_parts(self.store)
        return [part_record(row) for row in rows if (row["post_id"], row["dimension"]) not in self.done]


def _connect(address: str | None) -> bool:
    """Join ``address`` or this process's Ray, else start a local one; True when started here."""
    ray = _ray()
    if ray.is_initialized():
        return False
    if address is None:
        # logical CPUs are scheduling slots: two beyond the cores for Ray Data's own tasks (check_fits)
        ray.init(num_cpus=(os.cpu_count() or 1) + 2, include_dashboard=False, logging_level=logging.WARNING)
    else:
        ray.init(address=address, logging_level=logging.WARNING)
    return True


def _check_complete(pending: Sequence[EvaluationPair], parts: Path) -> None:
    """Every pair sent to Ray must now be in a committed part: one that Ray's checkpoint lists but no
    part holds (parts removed by hand) would be skipped by Ray's id filter for ever."""
    done = _done_hashes(parts)
    missing = [pair_id(p.post_id, p.dimension) for p in pending if (p.post_id, p.dimension) not in done]
    if missing:
        raise CacheError(f"{parts}: {len(missing)} pair(s) (e.g. {missing[0]!r}) are in Ray's checkpoint but in no "
                         f"part; remove {parts / PARTS_CHECKPOINT} and run the same command again")


def _ship(judge: Backend | ModelSpec, pairs: Sequence[EvaluationPair], setting: Setting, parts: Path,
          resources: Resources, progress: bool) -> tuple[dict[str, Any], JudgeShipment]:
    """The run's provenance and the shipment of its judge (see the module notes)."""
    if isinstance(judge, ModelSpec) and judge.reads_logprobs:
        if judge.backend == "llama_cpp":
            judge = judge.with_options(n_threads=resources.threads)
        shipment = JudgeShipment(spec=judge)
        return _probe(shipment, setting, resources), shipment
    if isinstance(judge, ModelSpec):
        judge = make_backend(judge)
    prepare_judge(judge, pairs, parts / PARTS_HEADER, progress)
    return run_provenance(judge, setting), JudgeShipment(payload=ship_prepared(judge, resources.threads))


def _probe(shipment: JudgeShipment, setting: Setting, resources: Resources) -> dict[str, Any]:
    """Build the judge once where actors run, with their resources: its provenance, or the actors' error.

    For a shipped judge, this checks that it arrives whole before the pool starts (Ray Data reports an
    actor that fails to start only as a dead actor).
    """
    ray = _ray()
    gpus = {"num_gpus": resources.gpus} if resources.gpus > 0 else {}
    task = ray.remote(_probe_provenance).options(num_cpus=resources.cpus, max_retries=0, **gpus)
    try:
        provenance: dict[str, Any] = ray.get(task.remote(shipment, setting))
    except Exception as exc:
        raise _user_error(exc) from None
    return provenance


def _done_hashes(parts: Path) -> dict[tuple[str, str], str | None]:
    """``(post_id, dimension) -> text_sha256`` of the committed parts (empty for a new directory)."""
    if not parts.joinpath(PARTS_DATA).is_dir():
        return {}
    rows, _ = read_parts(parts, columns=["post_id", "dimension", "text_sha256"])
    return {(r["post_id"], r["dimension"]): r.get("text_sha256") for r in rows}


def _resuming(parts: Path) -> bool:
    """True when Ray's checkpoint holds committed ids (its filter will run)."""
    folder = parts / PARTS_CHECKPOINT
    return folder.is_dir() and any(not f.name.endswith(PARTS_PENDING) for f in folder.glob("*.parquet"))


def _blocks(pending: Sequence[EvaluationPair], session: _RaySession) -> list[Any]:
    """The pending pairs as Arrow tables of whole chunks (the local loop's), at least ``pairs_per_batch`` pairs each.

    Columns: ``pair_id`` (the stable key), ``seq``, ``post_id``, ``lang``, ``dimension``, ``side``, ``text``:
    the texts travel in the read tasks, never to disk.
    """
    import pyarrow as pa

    blocks, block = [], []
    for chunk in chunks(pending, session.setting, session.batch_size):
        block.extend(pair for pair, _ in chunk)
        if len(block) >= session.resources.pairs_per_batch:
            blocks.append(block)
            block = []
    if block:
        blocks.append(block)

    def table(block: list[EvaluationPair]) -> Any:
        ids = [pair_id(p.post_id, p.dimension) for p in block]
        columns = {key: [getattr(p, key) for p in block] for key in ("post_id", "lang", "dimension", "side", "text")}
        return pa.table({"pair_id": ids, "seq": pa.array([session.seq[i] for i in ids], pa.int64()), **columns})

    return [table(b) for b in blocks]


def _pair_source(blocks: list[Any]) -> Any:
    """A Ray Data source with one read task per block (whole chunks, never split): a read, so that Ray
    Data's checkpoint (read -> map -> write) applies."""
    data = _ray().data
    metadata, read_task = data.block.BlockMetadata, data.datasource.ReadTask

    class PairSource(data.datasource.Datasource):  # type: ignore[misc]
        def estimate_inmemory_data_size(self) -> int:
            return int(sum(b.nbytes for b in blocks))

        def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None,
                           data_context: Any = None) -> list[Any]:
            return [read_task(lambda b=b: [b], metadata(num_rows=b.num_rows, size_bytes=b.nbytes,
                                                        exec_stats=None, input_files=None))
                    for b in blocks]

    return PairSource()


def _execute(pending: Sequence[EvaluationPair], session: _RaySession) -> None:
    """read -> map (the actor pool) -> write, under Ray Data's checkpoint."""
    ray = _ray()
    blocks = _blocks(pending, session)
    ctx = ray.data.DataContext.get_current()
    saved = (ctx.checkpoint_config, ctx.enable_progress_bars)
    ctx.checkpoint_config = ray.data.checkpoint.CheckpointConfig(
        id_column="pair_id", checkpoint_path=str(session.store / PARTS_CHECKPOINT), delete_checkpoint_on_success=False)
    ctx.enable_progress_bars = session.progress
    try:
        # as many output blocks as read tasks: Ray Data must not split a block (it would split chunks)
        ds = ray.data.read_datasource(_pair_source(blocks), override_num_blocks=len(blocks))
        actor_kwargs = {"shipment": session.shipment, "setting": session.setting, "batch_size": session.batch_size}
        ds = ds.map_batches(JudgeActor, fn_constructor_kwargs=actor_kwargs, **map_arguments(session.resources))
        ds.write_parquet(str(session.store / PARTS_DATA))
    except Exception as exc:
        raise _user_error(exc) from None
    finally:
        ctx.checkpoint_config, ctx.enable_progress_bars = saved


def _user_error(exc: BaseException) -> BaseException:
    """The innermost error of ours inside Ray's wrappers (a judge's ValueError, a CacheError, ...)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or getattr(current, "cause", None)
    for candidate in reversed(seen):
        if any(cls.__module__.startswith("tefcore.") or cls in (ValueError, RuntimeError, FileNotFoundError,
                                                                  ImportError) for cls in type(candidate).__mro__):
            return candidate
    return exc
