"""Benchmark: how far `tef extract` walks through tefcore's modules, with the local engine and with Ray.

Usage: ``python benchmarks/walk.py [--posts 6] [--data-dir data/mind]``

Each engine runs ``tef extract --model e5-zeroshot --lang en`` on the first ``--posts`` English posts of
``--data-dir`` in a Python process of its own, as ``tef`` does (every module imported on the way), under
:func:`sys.setprofile`; Ray: ``--engine ray --actors 1`` on a local Ray of 4 logical CPUs that the
process starts first. The profiler sees the driver's main thread only: Ray Data's threads and the actors
are not traced.

The *walk* is the tefcore modules of the functions called, each function counted at its first call only
(a loop over posts or records adds nothing), in the order of those calls:

- a *stay* is a run of consecutive calls in one module (``cli > extraction.run > cli`` is three stays);
- a *return* is a stay in a module the walk has been in before (there: one, the second ``cli``).

A walk whose stays are few reads in a line; each return is a bounce, a module left and come back to.
Printed for each engine, as ``stays / returns``:

- *to session*: from ``tef extract``'s arguments up to the first call of the engine's ``session`` (where
  the engine takes over: the judge is built and the store opened), that call left out;
- *whole run*: the run to its end;

each over every tefcore module (``all``) and over the machinery alone (``machinery``: ``tefcore.cli`` and
``tefcore.extraction.*``; the judges, the data and the prompts left out); then the machinery walk of the
whole run, module by module.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

MACHINERY = ("tefcore.cli", "tefcore.extraction.")
"""The modules of the machinery: the command line and the extraction's engines and stores."""

ENGINE_MODULES = {"local": "tefcore.extraction.run", "ray": "tefcore.extraction.ray_engine"}
"""The module of each engine's ``session``."""


def first_calls(argv: Sequence[str]) -> list[tuple[str, str]]:
    """``(module, function)`` of every tefcore function ``tef argv`` calls, at its first call, in order."""
    from tefcore.cli import main

    calls: list[tuple[str, str]] = []
    seen: set[tuple[str, str, int]] = set()

    def record(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        key = (module, frame.f_code.co_name, frame.f_code.co_firstlineno)
        if module.startswith("tefcore") and key not in seen:
            seen.add(key)
            calls.append((module, frame.f_code.co_name))

    sys.setprofile(record)
    try:
        code = main(list(argv))
    finally:
        sys.setprofile(None)
    if code != 0:
        raise SystemExit(f"tef {' '.join(argv)} ended with exit code {code}")
    return calls


def walk(calls: Sequence[Sequence[str]], keep: Callable[[str], bool] = lambda module: True) -> list[str]:
    """The stays of ``calls`` (``(module, function)``): the modules kept, each run of one module counted once.

    Examples
    --------
    >>> walk([("a", "f"), ("a", "g"), ("b", "h"), ("a", "k")])
    ['a', 'b', 'a']
    """
    stays: list[str] = []
    for module, _ in calls:
        if keep(module) and (not stays or stays[-1] != module):
            stays.append(module)
    return stays


def counted(stays: Sequence[str]) -> str:
    """``stays / returns``."""
    return f"{len(stays)} / {len(stays) - len(set(stays))}"


def machinery(module: str) -> bool:
    return module.startswith(MACHINERY)


def engine_run(engine: str, folder: Path) -> None:
    """One engine's run (in a process of its own): print its first calls as JSON, on the last line."""
    argv = ["extract", "--model", "e5-zeroshot", "--lang", "en", "--data-dir", str(folder), "--no-progress",
            "--out", str(folder / engine), "--engine", engine]
    if engine == "ray":
        import ray

        ray.init(num_cpus=4, include_dashboard=False, logging_level="ERROR", object_store_memory=200 * 2**20)
        argv += ["--actors", "1"]
    calls = first_calls(argv)
    print("\n" + json.dumps(calls))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=6, help="English posts to score (default: 6)")
    parser.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parents[1] / "data" / "mind")
    parser.add_argument("--engine-run", nargs=2, metavar=("ENGINE", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.engine_run:
        engine_run(args.engine_run[0], Path(args.engine_run[1]))
        return

    folder = Path(tempfile.mkdtemp(prefix="tef-walk-"))
    lines = (args.data_dir / "mind_en.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (folder / "mind_en.jsonl").write_text("".join(lines[:args.posts]), encoding="utf-8")
    rows, walks = [], {}
    for engine, module in ENGINE_MODULES.items():
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--engine-run", engine, str(folder)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"the {engine} run failed:\n{done.stderr}")
        calls = json.loads(done.stdout.splitlines()[-1])
        door = next(i for i, (m, name) in enumerate(calls) if m == module and name == "session")
        rows.append((engine, counted(walk(calls[:door])), counted(walk(calls[:door], machinery)),
                     counted(walk(calls)), counted(walk(calls, machinery))))
        walks[engine] = walk(calls, machinery)
    print(f"{args.posts} posts; stays / returns of the walk (the driver's main thread)")
    print(f"{'engine':8}{'to session: all':>18}{'machinery':>12}{'whole run: all':>18}{'machinery':>12}")
    for engine, *numbers in rows:
        print(f"{engine:8}{numbers[0]:>18}{numbers[1]:>12}{numbers[2]:>18}{numbers[3]:>12}")
    for engine, stays in walks.items():
        print(f"\n{engine}, whole run, machinery:\n  " + " > ".join(m.removeprefix("tefcore.") for m in stays))


if __name__ == "__main__":
    main()
