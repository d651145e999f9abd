"""scripts/setup.sh's own words: its help, and the one line a CPU without AVX2 and FMA gets before any install."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

import pytest

SETUP = Path(__file__).resolve().parents[1] / "scripts" / "setup.sh"


def run_setup(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SETUP), *args], env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=60, check=False)


def test_help_names_every_option() -> None:
    result = run_setup("--help")
    assert result.returncode == 0 and result.stderr == ""
    for option in ("--local-llm", "--latest", "--no-browser", "requirements/cpu.lock"):
        assert option in result.stdout
    assert "set -euo" not in result.stdout  # the header comment only
    assert run_setup("--fast").returncode == 2


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the check reads x86-64 flags")
@pytest.mark.parametrize("flags", ["fpu sse4_2 avx f16c", "fpu avx avx2", "fpu fma avx"])
def test_a_cpu_without_avx2_and_fma_stops_in_one_line_before_any_install(tmp_path: Path, flags: str) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text(f"processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n", encoding="utf-8")
    venv = SETUP.parents[1] / ".venv"
    before = venv.stat().st_mtime_ns if venv.exists() else None
    result = run_setup("--no-browser", TEF_CPUINFO=str(info))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "has no AVX2 and FMA" in result.stderr
    assert "the e5 embedding engine needs both" in result.stderr
    assert (venv.stat().st_mtime_ns if venv.exists() else None) == before


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the check reads x86-64 flags")
def test_unreadable_cpu_flags_stop_in_one_line_too(tmp_path: Path) -> None:
    result = run_setup("--no-browser", TEF_CPUINFO=str(tmp_path / "absent"))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and f"(flags in {tmp_path / 'absent'})" in result.stderr


def test_the_wheel_lists_every_package_of_the_library() -> None:
    """A non-editable install holds every folder of tefcore that has an ``__init__.py`` (setuptools lists them)."""
    import tomllib

    root = Path(__file__).resolve().parent.parent
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(root).parts) for p in (root / "tefcore").rglob("__init__.py")}
    assert found - listed == set(), f"pyproject.toml [tool.setuptools] packages lacks {sorted(found - listed)}"
