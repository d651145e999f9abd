"""Judges for the Ray engine's tests: deterministic, cheap, picklable (the actors import this module).

:class:`HashJudge` scores from a hash of the prompt and can sleep per call (to give a test time to
kill something mid-run) and log the pairs it scored (to count them across processes and runs).
:class:`KillOnce` kills its own process (SIGKILL) once, mid-run, in the middle of a call.
"""

from __future__ import annotations

import hashlib
import math
import os
import signal
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tefcore.judges.base import INVALID, Score, ScoreRequest


def hash_p(prompt: str) -> float:
    """A deterministic P(change) from the prompt text."""
    return int(hashlib.sha256(prompt.encode()).hexdigest()[:6], 16) / 0xFFFFFF


class HashJudge:
    """Scores from a hash of the prompt; every 7th one unreadable."""

    name = "hash"
    reading = "summed"
    preferred_batch_size = 8

    def __init__(self, delay: float = 0.0, log: str | None = None, model: str = "hash-judge") -> None:
        self.delay, self.log, self.model = delay, log, model
        self.prepared = 0

    def provenance(self) -> dict[str, Any]:
        return {"backend": "hash", "model": self.model}

    def prepare(self, pairs: Sequence[Any], **options: Any) -> None:
        self.prepared += 1

    def score(self, requests: Sequence[ScoreRequest]) -> list[Score]:
        time.sleep(self.delay)
        out = []
        for r in requests:
            p = hash_p(r.prompt)
            out.append(INVALID if int(p * 1e6) % 7 == 0 else Score(p, 0.8, "logprobs", logprobs=(math.log(0.5), math.log(0.3))))
        if self.log:  # one line per pair: "<call> <pair_id> <node>", the call a random token
            call, node = uuid.uuid4().hex[:12], _node()
            lines = "".join(f"{call} {r.dimension}/{r.post_id} {node}\n" for r in requests if r.kind == "direct")
            fd = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, lines.encode())
            finally:
                os.close(fd)
        return out


class KillOnce(HashJudge):
    """A HashJudge that SIGKILLs its own process once, mid-run, in the middle of a call.

    The kill comes in the first call that starts after ``after`` pairs were logged (``log`` is
    required), once the call's scores are computed and logged but before they are returned: the
    batch's work is lost and Ray must run it again. ``marker`` (created with ``O_EXCL``) makes it once
    across processes and restarts; it holds the killed process id.
    """

    def __init__(self, marker: str, after: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not self.log:
            raise ValueError("KillOnce needs a log")
        self.marker, self.after = marker, after

    def score(self, requests: Sequence[ScoreRequest]) -> list[Score]:
        due = len(scored(self.log)) >= self.after if self.log else False
        out = super().score(requests)
        if due:
            try:
                fd = os.open(self.marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return out
            os.write(fd, f"{os.getpid()}\n".encode())
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
        return out


class Drifting(HashJudge):
    """A HashJudge whose provenance changes on its way to an actor (as on a node with other model files)."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, model="other-files")


def _node() -> str:
    """The Ray node this process runs on ("-" outside Ray)."""
    try:
        import ray

        return str(ray.get_runtime_context().get_node_id()) if ray.is_initialized() else "-"
    except ImportError:
        return "-"


def nodes(log: str | os.PathLike[str]) -> list[str]:
    """The Ray node of each scoring a HashJudge logged, in order."""
    return [line.split()[2] for line in Path(log).read_text().splitlines()]


def scored(log: str | os.PathLike[str]) -> list[str]:
    """The pair ids a HashJudge logged, one per scoring (repeats kept)."""
    path = Path(log)
    return [line.split()[1] for line in path.read_text().splitlines()] if path.is_file() else []


def calls(log: str | os.PathLike[str]) -> list[list[str]]:
    """The pair ids of each judge call a HashJudge logged, in call order per process."""
    out: dict[str, list[str]] = {}
    for line in Path(log).read_text().splitlines():
        call, pid = line.split()[:2]
        out.setdefault(call, []).append(pid)
    return list(out.values())
