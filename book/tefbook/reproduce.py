"""``tef reproduce MODEL``: one command from a model to the result chapters that show it.

:func:`tefbook.commands.plan` builds and checks the steps (extraction, ``vllm serve`` for a
vLLM model, the result chapters 5-9 rebuilt with the model added); this module runs them, each as a
subprocess in the project folder, and is the ``tef reproduce`` command line (``tef reproduce ...`` runs
``python -m tefbook reproduce ...``). ``--dry-run`` prints the steps and their checks and loads no model.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tefbook.commands import RESULT_CHAPTERS, Plan, Step, option_value, plan

__all__ = ["add_arguments", "build_parser", "cmd_reproduce", "main", "run_plan", "run_step"]


# --------------------------------------------------------------------------------------------------
# running a plan
# --------------------------------------------------------------------------------------------------
def _executable(argv: Sequence[str]) -> list[str]:
    """``tef ...`` runs as this interpreter's ``python -m tefcore.cli ...`` (the same program)."""
    if argv and argv[0] == "tef":
        return [sys.executable, "-m", "tefcore.cli", *argv[1:]]
    return list(argv)


def _wait_until_ready(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    """Poll ``<url>/models`` until the server answers (it may take minutes to load a model)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"vllm serve exited with code {process.returncode} before it answered at {url}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(2.0)
    raise TimeoutError(f"vllm serve did not answer at {url}/models within {timeout:.0f} s")


@contextmanager
def _background(step: Step, root: Path, url: str, timeout: float) -> Iterator[None]:
    """Run a background step until the block ends; it must answer at ``url`` first."""
    process = subprocess.Popen(_executable(step.argv), cwd=root, env={**os.environ, **dict(step.env)})
    try:
        _wait_until_ready(url, process, timeout)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_plan(planned: Plan, serve_timeout: float = 1800.0) -> int:
    """Run the steps in order (each a subprocess in the project folder); return the first failing exit code.

    Raises
    ------
    ValueError
        When the plan has problems (nothing is run).
    """
    if planned.problems:
        raise ValueError("the plan cannot run: " + "; ".join(planned.problems))
    server = next((s for s in planned.steps if s.background), None)
    for step in planned.steps:
        if step.background:
            continue
        print(f"tef reproduce: {step.note}\n  {step.command()}", flush=True)
        if step.name == "book" and server is not None:
            url = f"http://{option_value(server.argv, '--host')}:{option_value(server.argv, '--port')}/v1"
            print(f"tef reproduce: starting {shlex.join(server.argv)}", flush=True)
            with _background(server, planned.root, url, serve_timeout):
                code = run_step(step, planned.root)
        else:
            code = run_step(step, planned.root)
        if code != 0:
            return code
    return 0


def run_step(step: Step, root: str | os.PathLike[str]) -> int:
    """Run one foreground step in the project folder (``tef`` as this interpreter's ``tefcore.cli``);
    return its exit code."""
    return subprocess.call(_executable(step.argv), cwd=root, env={**os.environ, **dict(step.env)})


# --------------------------------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------------------------------
def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``tef reproduce``."""
    parser.add_argument("model", help="registry name (see `tef models`), e.g. qwen2.5-7b")
    parser.add_argument("--prompts", type=_names, default=["original"],
                        help="prompt variants, comma-separated (original,verbose,minimal)")
    parser.add_argument("--langs", type=_names, default=["en", "zh"], help="languages, comma-separated")
    parser.add_argument("--data-dir", default=None,
                        help="folder with mind_<lang>.jsonl (default: $MIND_DATA_DIR, else the embedded sample)")
    parser.add_argument("--reading", choices=("summed", "reference"), default="summed",
                        help="how P(change) is read: summed (tefcore) or reference (the reference release)")
    parser.add_argument("--out", default=None,
                        help="cache root, where the chapters read them (default: the project's data/caches)")
    parser.add_argument("--chapters", type=_names, default=list(RESULT_CHAPTERS),
                        help="result chapters to rebuild, comma-separated (default 05,06,07,08,09)")
    parser.add_argument("--exact-labels", choices=("auto", "always", "never"), default=None,
                        help="vLLM: exact label-token log-probabilities or the top-20 (default: the registry's)")
    parser.add_argument("--port", type=int, default=8000, help="port of `vllm serve` (chapter 8)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print every step's command and check them; load no model")


def cmd_reproduce(args: argparse.Namespace) -> int:
    """``tef reproduce``: print the plan (``--dry-run``) or run it; 2 when a check fails."""
    # a path typed on the command line means the working directory; the default cache root is the project's
    typed = {name: None if value is None else Path(value).expanduser().absolute()
             for name, value in (("data_dir", args.data_dir), ("out", args.out))}
    planned = plan(args.model, args.prompts, args.langs, data_dir=typed["data_dir"], reading=args.reading,
                   out=typed["out"] or "data/caches", chapters=args.chapters, exact_labels=args.exact_labels,
                   port=args.port)
    if args.dry_run or planned.problems:
        print(planned.report())
        return 0 if planned.ok else 2
    for note in planned.notes:
        print(f"tef reproduce: note: {note}")
    return run_plan(planned)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``tef reproduce`` (``python -m tefbook reproduce``)."""
    parser = argparse.ArgumentParser(
        prog="tef reproduce",
        description=textwrap.fill(
            "Run the paper's setting for one model: `tef extract` over every pair of the data (reference prompt "
            "rendering, the reading named), writing <out>/<model>/<prompt>/<lang>.jsonl where the chapters read "
            "them; for a vLLM model `vllm serve` for chapter 8's timings; then `tef book` of chapters 05-09 with "
            "the model added. Every step is checked first (chapter parameters, paths, each output being the next "
            "step's input); --dry-run prints the commands and the checks and loads no model.", 88),
        epilog="example:\n  tef reproduce qwen2.5-7b --prompts original,verbose,minimal --dry-run",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tefbook reproduce ...``: run :func:`cmd_reproduce`; a bad value is one line and exit code 2,
    Ctrl-C exit code 130."""
    args = build_parser().parse_args(argv)
    try:
        return cmd_reproduce(args)
    except KeyboardInterrupt:
        print("tef reproduce: interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError, ImportError) as exc:
        print(f"tef reproduce: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
