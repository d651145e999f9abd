"""Is the installed llama.cpp build one that runs on this CPU? Asked before a model is loaded.

llama-cpp-python compiles llama.cpp at install, by default with ``-march=native``: such a build died in
its first decode (SIGSEGV, SIGILL) on x86-64 CPUs with AVX-512 and AMX, a build made elsewhere dies on a
CPU without its instructions, and pip's wheel cache hands a built wheel back whatever ``CMAKE_ARGS`` says.

:func:`check_build` (called by :class:`tefcore.judges.local.LocalBackend` before it loads the model)
compares the build's CPU features (:func:`build_features`) with the CPU's (:func:`cpu_flags`), then decodes
one token in a subprocess (a crash kills the probe, not the caller), and turns a failure into one line that
names the fix (:func:`_rebuild_command`: an AVX2 rebuild that bypasses the wheel cache).
``python -m tefcore.judges.local`` runs the same check from a shell (``scripts/setup.sh`` does).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import platform
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["AVX2_CMAKE_ARGS", "NEEDS_LLAMA_CPP", "BrokenBuild", "build_features", "check_build", "cpu_flags",
           "missing_features"]

AVX2_CMAKE_ARGS = ("-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON "
                   "-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF "
                   "-DLLAMA_BUILD_SERVER=OFF")
"""The x86-64 build that ran everywhere this project was tested (``scripts/setup.sh`` makes it)."""

_CPUINFO_FLAGS: dict[str, str] = {
    "SSE3": "pni", "SSSE3": "ssse3", "AVX": "avx", "AVX2": "avx2", "F16C": "f16c", "FMA": "fma", "BMI2": "bmi2",
    "AVX_VNNI": "avx_vnni", "AVX512": "avx512f", "AVX512_VBMI": "avx512vbmi", "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16", "AMX_INT8": "amx_int8",
}
"""llama.cpp's name of an x86 CPU feature -> its flag in ``/proc/cpuinfo``."""

NEEDS_LLAMA_CPP = ("the local backend needs llama-cpp-python (it compiles from source, ~6 min on 2 cores): "
                   "bash scripts/setup.sh --local-llm (outside the repository: pip install 'tefcore[local]')")
"""The one-line error when llama-cpp-python is not installed."""

_PROBE_TIMEOUT = 300.0
"""Seconds the probe may take (loading a large model from a slow disk included)."""

_PROBE = """
import sys
import llama_cpp
print(llama_cpp.llama_print_system_info().decode("utf-8", "replace"), flush=True)
llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=64, n_threads=1, n_batch=8, logits_all=False, verbose=False)
llm.eval(llm.tokenize(b"Hello", add_bos=True))
print("decoded one token", flush=True)
"""


class BrokenBuild(RuntimeError):
    """The installed llama.cpp build cannot run on this CPU; the message says how to rebuild it."""


def build_features(llama_cpp: Any) -> str:
    """The CPU features compiled into a llama.cpp build, as llama.cpp reports them.

    Parameters
    ----------
    llama_cpp : module
        The imported ``llama_cpp`` package (anything with ``llama_print_system_info``).

    Returns
    -------
    str
        The features switched on, in llama.cpp's order, space-separated.

    Examples
    --------
    >>> class Build:
    ...     llama_print_system_info = staticmethod(lambda: b"CPU : SSE3 = 1 | AVX = 1 | AVX512 = 0 | ")
    >>> build_features(Build)
    'SSE3 AVX'
    """
    info = llama_cpp.llama_print_system_info()
    return _features(info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info))


def _features(text: str) -> str:
    pairs = (part.rsplit("=", 1) for part in text.split("|") if "=" in part)
    return " ".join(name.split(":")[-1].strip() for name, on in pairs if on.strip() == "1")


def cpu_flags(cpuinfo: str | os.PathLike[str] = "/proc/cpuinfo") -> frozenset[str] | None:
    """The CPU's feature flags (Linux ``/proc/cpuinfo``), or None where that file does not say."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return None


def missing_features(features: str, flags: frozenset[str] | None) -> list[str]:
    """The x86 features of a build that the CPU lacks (none when the CPU's flags are unknown).

    Examples
    --------
    >>> missing_features("SSE3 AVX AVX2 AVX512 AMX_INT8 OPENMP", frozenset({"pni", "avx", "avx2", "avx512f"}))
    ['AMX_INT8']
    """
    if flags is None:
        return []
    return [f for f in features.split() if f in _CPUINFO_FLAGS and _CPUINFO_FLAGS[f] not in flags]


def _rebuild_command(version: str | None = None) -> str:
    """The shell command that rebuilds llama-cpp-python for this machine, bypassing pip's wheel cache.

    Examples
    --------
    >>> _rebuild_command("0.3.36").endswith("pip install --no-cache-dir --force-reinstall --no-deps "
    ...                                    "llama-cpp-python==0.3.36")
    True
    """
    pin = f"llama-cpp-python=={version}" if version else "llama-cpp-python"
    flags = f'CMAKE_ARGS="{AVX2_CMAKE_ARGS}" ' if platform.machine() in ("x86_64", "AMD64") else ""
    return f"{flags}pip install --no-cache-dir --force-reinstall --no-deps {pin}"


def _library_key() -> tuple[str, float] | None:
    """Where the installed llama_cpp package is and when it was installed (a rebuild changes it)."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent
    libs = sorted(folder.glob("lib/*")) or [Path(spec.origin)]
    return str(folder), max(p.stat().st_mtime for p in libs)


def check_build(model_path: str | os.PathLike[str], timeout: float = _PROBE_TIMEOUT) -> str:
    """Check that the installed llama.cpp build runs ``model_path`` on this CPU (once per build and model).

    Parameters
    ----------
    model_path : path-like
        The GGUF file the judge will load.
    timeout : float
        Seconds the probe may take.

    Returns
    -------
    str
        The build's CPU features (:func:`build_features`).

    Raises
    ------
    BrokenBuild
        One line: what failed (a feature the CPU lacks, a crash with its signal) and the command that
        rebuilds llama-cpp-python (:func:`_rebuild_command`).
    ImportError
        When llama-cpp-python is not installed.
    """
    key = _library_key()
    if key is None:
        raise ImportError(NEEDS_LLAMA_CPP)
    return _probe(key, str(Path(model_path).resolve()), timeout)


@functools.lru_cache(maxsize=None)
def _probe(key: tuple[str, float], model: str, timeout: float) -> str:
    from importlib.metadata import version

    fix = _rebuild_command(version("llama-cpp-python"))
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE, model], capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"})
    except subprocess.TimeoutExpired:
        raise BrokenBuild(f"the llama.cpp build did not decode one token of {Path(model).name} in {timeout:g} s; "
                          f"if it is built for this CPU, the machine is too busy, else rebuild it: {fix}") from None
    lines = done.stdout.splitlines()
    features = _features(lines[0]) if lines else ""
    lacking = missing_features(features, cpu_flags())
    if lacking:
        raise BrokenBuild(f"the llama.cpp build uses {', '.join(lacking)}, which this CPU lacks (a build made "
                          f"for another machine, or reused from pip's wheel cache); rebuild it: {fix}")
    if done.returncode != 0:
        raise BrokenBuild(f"the llama.cpp build {_how(done.returncode)} while decoding one token of "
                          f"{Path(model).name} ({features or 'features unknown'}; a -march=native build on a CPU "
                          f"with AVX-512 and AMX does this); rebuild it for AVX2: {fix}")
    return features


def _how(code: int) -> str:
    """``crashed (SIGILL)``, ``crashed (SIGSEGV)``, or ``failed (exit 1)``."""
    if code < 0:
        try:
            return f"crashed ({signal.Signals(-code).name})"
        except ValueError:
            return f"crashed (signal {-code})"
    return f"failed (exit {code})"
