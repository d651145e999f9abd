"""Interrupted runs of ``tef extract`` on the embedded model: kill -9 and Ctrl-C lose nothing.

A run over the first pairs of the English sample is killed with SIGKILL several times at seeded
random moments while it scores, once with a torn line appended as if the kill had hit a write, and
restarted each time; the final cache must hold every pair exactly once with the same numbers as an
uninterrupted run. Ctrl-C (SIGINT), and SIGTERM alike, must stop between two records with exit code
130 and say how far the run got and how to resume.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sigint import sigint_default_in_child
from tefcore.extraction.cache import read_cache

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (bash scripts/setup.sh --local-llm adds it)")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

# enough pairs that two kill rounds (each one record and at most a second more) never finish the run,
# however quiet the machine
LIMIT = 8


def command(mind_dir: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "tefcore.cli", "extract", "--model", "local", "--lang", "en",
            "--prompt", "minimal", "--limit", str(LIMIT), "--data-dir", str(mind_dir), "--out", str(out),
            "--no-progress"]


def cache_file(out: Path) -> Path:
    return out / "local" / "minimal" / "en.jsonl"


def complete_lines(path: Path) -> int:
    """Whole lines in the file (header included)."""
    return path.read_bytes().count(b"\n") if path.is_file() else 0


def wait_for_lines(proc: subprocess.Popen[bytes], path: Path, lines: int, timeout: float = 300) -> bool:
    """Wait until the cache has ``lines`` whole lines; False if the process ended first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if complete_lines(path) >= lines:
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.05)
    raise TimeoutError(f"{path} did not reach {lines} lines")


def frame(path: Path):  # noqa: ANN201 - a DataFrame
    df, _ = read_cache(path)  # strict: a torn line or a duplicate fails here
    return df.drop(columns=[]).set_index(["post_id", "dimension"]).sort_index()


@pytest.fixture(scope="module")
def reference(mind_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("uninterrupted")
    proc = subprocess.run(command(mind_dir, out), capture_output=True, timeout=900)
    assert proc.returncode == 0, proc.stderr.decode()
    return cache_file(out)


def test_sigkill_at_random_moments_loses_nothing(mind_dir: Path, reference: Path, tmp_path: Path) -> None:
    rng = random.Random(20261122)
    out = tmp_path / "out"
    path = cache_file(out)
    kills = 0
    for round_ in range(3):
        before = complete_lines(path)
        proc = subprocess.Popen(command(mind_dir, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # wait for this run to write a record of its own, then kill it a random moment later
        if not wait_for_lines(proc, path, max(before, 1) + 1):
            break
        time.sleep(rng.uniform(0.0, 1.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        kills += proc.returncode == -signal.SIGKILL
        if round_ == 1:  # as if the kill had hit a write: half a record, no newline
            with open(path, "ab") as handle:
                handle.write(b'{"type": "pair", "post_id": "en-single-9", "lang": "en", "dimen')
    assert kills >= 2
    done = subprocess.run(command(mind_dir, out), capture_output=True, timeout=900)
    assert done.returncode == 0, done.stderr.decode()
    assert b"torn last line" in done.stderr or complete_lines(path) == LIMIT + 1
    got, want = frame(path), frame(reference)
    assert len(got) == LIMIT and got.index.is_unique
    assert got.index.tolist() == want.index.tolist()
    for column in ("side", "direct", "direct_source", "direct_mass", "sentences", "sentence_sources",
                   "sentence_masses", "sentence_logprobs_c", "sentence_logprobs_s"):
        assert got[column].tolist() == want[column].tolist(), column  # bitwise equal
    assert complete_lines(path) == LIMIT + 1  # header + one line per pair, nothing else


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_stops_cleanly_and_says_how_to_resume(mind_dir: Path, reference: Path, tmp_path: Path,
                                                     signum: int) -> None:
    out = tmp_path / "out"
    path = cache_file(out)
    argv = command(mind_dir, out)
    # a background job (nohup make test &) passes SIGINT on ignored; Ctrl-C must reach the child
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=sigint_default_in_child)
    assert wait_for_lines(proc, path, 2), "the run ended before writing a record"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=300)
    text = err.decode()
    assert proc.returncode == 130, text
    assert "Traceback" not in text
    done = len(frame(path))  # strict read: no half record
    assert 1 <= done <= LIMIT
    assert f"interrupted: {done} of {LIMIT} en pairs are in {path}" in text
    assert "To resume, run the same command again:" in text and " ".join(argv[3:]) in text
    resumed = subprocess.run(argv, capture_output=True, timeout=900)
    assert resumed.returncode == 0
    assert f"{LIMIT}/{LIMIT} pairs ({LIMIT - done} new, {done} already there)" in resumed.stdout.decode()
    assert frame(path)["sentences"].tolist() == frame(reference)["sentences"].tolist()


def test_repaired_torn_line_is_reported(mind_dir: Path, reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    path = cache_file(out)
    path.parent.mkdir(parents=True)
    lines = reference.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:3]) + b"\n" + lines[3][:25])  # header, two pairs, a torn third
    proc = subprocess.run(command(mind_dir, out), capture_output=True, timeout=900,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.returncode == 0
    assert b"torn last line" in proc.stderr
    assert f"({LIMIT - 2} new, 2 already there)".encode() in proc.stdout
    assert frame(path)["direct"].tolist() == frame(reference)["direct"].tolist()
