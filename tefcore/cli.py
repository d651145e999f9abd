"""The ``tef`` command: ``extract``, ``evaluate``, ``fuse``, ``init``, ``validate``, ``download``, ``models``,
``cache``, and ``book``, ``reproduce`` and ``claims``, which run the book's tools in a subprocess
(``python -m tefbook``, ``python -m tefpaper``).

Examples
--------
::

    tef extract --model local --lang en --prompt original --limit 20 --out /tmp/caches
    tef evaluate --cache data/caches/e5-zeroshot/original
    tef evaluate --cache data/caches --format csv > scores.csv
    tef extract --model qwen2.5-7b --lang en zh --prompt original verbose minimal   # a GPU box
    DEEPSEEK_API_KEY=... tef extract --model deepseek-v3.2 --lang zh                 # an API

Paths (``--data-dir``, ``--out``, ``--cache``, ``--dest``, ``$MIND_DATA_DIR``) are read in the user's working
directory; with neither ``--data-dir`` nor ``$MIND_DATA_DIR`` the embedded MIND sample is read. Errors the
user can fix are one line on stderr naming the flags to change, exit code 2; Ctrl-C (or SIGTERM) during
``extract`` stops between two records, says how to resume, and exits with 130.
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import inspect
import logging
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import pandas as pd

import tefcore.extraction.run as extraction  # run_extraction and download_release are looked up when called
import tefcore.mind.release as release
from tefcore.evaluate import decisions
from tefcore.fusion import RULE_NAMES
from tefcore.judges import backend_class
from tefcore.extraction.cache import (INVALID_WARN_SHARE, cache_invalid_answers, cache_path, cache_skipped_answers,
                                      drop_invalid, read_cache_file)
from tefcore.judges.labels import READINGS
from tefcore.judges.local import MIN_CONTEXT
from tefcore.extraction.parts import merge_parts, parts_path
from tefcore.redact import redact
from tefcore.report import FEW_PAIRS, evaluate_file, format_scores, records, shown
from tefcore.judges.registry import REGISTRY_PATH, load_registry, resolve_model
from tefcore.mind.load import DATA_DIR_ENV, evaluation_pairs, load_posts, mind_filename, resolve_data_dir
from tefcore.mind.prompts import VARIANTS, mind_task
from tefcore.mind.schema import LANGS
from tefcore.tasks.segment import SEGMENTATION_RULES
from tefcore.tasks import Task, TaskError, init_task, load_task, recorded_sides, summary

__all__ = ["EXIT_USAGE", "FORMATS", "OneLineParser", "main",
           "user_path"]

EXIT_USAGE = 2
_EXIT_INTERRUPTED = 130
_EXIT_FAILS = 1
FORMATS: tuple[str, ...] = ("text", "csv", "json", "markdown")
"""Output formats of ``tef evaluate``."""


DATA_DIR_HELP = "folder with mind_<lang>.jsonl (default: $MIND_DATA_DIR, else the embedded sample)"


class OneLineParser(argparse.ArgumentParser):
    """argparse with one-line errors (the ``tef`` command's, and those of the commands it hands over to)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _build_parser() -> argparse.ArgumentParser:
    """The ``tef`` parser with its subcommands."""
    parser = OneLineParser(prog="tef", description="TEF Companion: extract, evaluate, build the book.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    ex = _command(
        sub, "extract", "score MIND pairs, or a task's texts, with a judge into a cache",
        "Score every evaluation pair (the whole post for Direct, each sentence for the fusion rules) with a "
        "judge. Reads mind_<lang>.jsonl from --data-dir, or a --task file; writes one cache per prompt and "
        "language under --out, one record per pair. Running the same command again resumes: pairs already "
        "there are skipped.",
        "tef extract --model e5-zeroshot --lang en --limit 5 --out /tmp/caches",
    )
    ex.add_argument("--model", required=True, help="registry name (see `tef models`) or a .gguf file")
    ex.add_argument("--task", type=user_path, metavar="TASK", help="a task file (see tef init) instead of MIND")
    ex.add_argument("--lang", nargs="+", choices=LANGS, default=None, help="languages (default: all of the data)")
    ex.add_argument("--prompt", nargs="+", choices=VARIANTS, help="MIND prompt variant(s) (default: original)")
    ex.add_argument("--data-dir", type=user_path, default=None, help=DATA_DIR_HELP)
    ex.add_argument("--fit-data", type=user_path, default=None, metavar="DIR",
                    help="cross-fitted judges (e5-crossfit*): fit the probe on DIR's labelled mind_<lang>.jsonl "
                    "and score --data-dir with it (a text found in both is left out of the fit)")
    ex.add_argument("--out", type=user_path, default="data/caches",
                    help="cache root: <out>/<model>/<prompt>/<lang>.jsonl (default: data/caches)")
    ex.add_argument("--limit", type=_non_negative, default=None, help="only the first N pairs per language")
    ex.add_argument("--rule", choices=SEGMENTATION_RULES, help="sentence segmentation (default: reference; a task's)")
    ex.add_argument("--reading", choices=READINGS, default="summed",
                    help="how P(change) is read from the answer token (LLM judges)")
    ex.add_argument("--batch-size", type=_positive, default=None, help="prompts per judge call")
    ex.add_argument("--n-ctx", type=_integer(MIN_CONTEXT, f"at least {MIN_CONTEXT} tokens"), metavar="N",
                    help="context length in tokens of a llama.cpp judge (default: the registry's, 4096 for "
                    "local); a longer prompt is recorded as an invalid answer and the run goes on")
    ex.add_argument("--no-progress", action="store_true", help="no progress bar")
    ex.add_argument("--retry-invalid", action="store_true",
                    help="first remove from the cache the pairs holding an invalid answer, so that they are scored "
                    "again (tef extract warns when more than 5%% of a cache's answers are invalid); a cache file "
                    "only: with --engine ray, merge the parts first (tef cache merge) and retry on the merged cache "
                    "with the local engine")
    ex.add_argument("--engine", choices=("local", "ray"), default="local",
                    help="local: this process (default); ray: a Ray cluster (pip install 'tefcore[ray]'); "
                    "<lang>.parts holds a Ray run's parts, merged into <lang>.jsonl at the end")
    ray = ex.add_argument_group("--engine ray")
    ray.add_argument("--address", default=None,
                     help="Ray cluster: auto, ray://host:10001, ... (default: start a local Ray)")
    # read by RayOptions, not here: the parser needs nothing of the Ray engine's module
    ray.add_argument("--actors", default=None, metavar="N|MIN:MAX",
                     help="judge actors: a fixed pool or an autoscaling one (default: as many as fit)")
    ray.add_argument("--cpus-per-actor", type=float, default=None, metavar="C",
                     help="logical CPUs per actor, also the threads of a llama.cpp or e5 judge")
    ray.add_argument("--gpus-per-actor", type=float, default=None, metavar="G",
                     help="GPUs per actor (default: a vLLM judge's tensor_parallel_size, else 0)")
    ray.add_argument("--pairs-per-batch", type=_positive, default=None, metavar="B",
                     help="pairs per actor call, one part file each (default: a quarter of --batch-size, >= 8)")

    ev = _command(
        sub, "evaluate", "accuracy and macro-F1 per dimension for every fusion rule",
        "Fuse the cached probabilities with every rule and score the predictions against the gold side. "
        "Reads a cache file, or every *.jsonl cache under a folder; writes nothing, prints one table per "
        f"cache and language: rules as rows, dimensions as columns, the Average last, '*' on the best "
        f"value of each column, n = pairs per dimension, scores on fewer than {FEW_PAIRS} pairs in "
        "parentheses, '!' on a rule that gives one side to nearly every text (never '*'). --intervals adds "
        "95% bootstrap intervals and paired tests against the strongest baseline. --format csv|json|markdown "
        "prints the same numbers for other programs.",
        "tef evaluate --cache data/caches/e5-zeroshot/original",
    )
    ev.add_argument("--rules", nargs="+", choices=RULE_NAMES, default=None)
    ev.add_argument("--intervals", action="store_true",
                    help="also 95%% percentile bootstrap intervals (2,000 resamples of the texts, seed 0) and each "
                    "rule against the strongest baseline (paired bootstrap and McNemar's test)")
    ev.add_argument("--format", choices=FORMATS, default="text",
                    help="text: compact tables under 100 columns (default); csv, json: one row per language, "
                    "rule and dimension; markdown: the text tables as Markdown")
    ev.add_argument("--data-dir", type=user_path, default=None,
                    help="MIND's folder the caches were made from: the gold is read from its data, not the cache; "
                    "where they differ, one line says so and the data's gold is scored (default: $MIND_DATA_DIR, "
                    "else the embedded sample, when it holds every pair of the cache)")
    ev.add_argument("--task", type=user_path, metavar="TASK",
                    help="the task file of a task's cache: its gold is read from the task's data, as with --data-dir "
                    "(without it, the gold the cache stored)")

    fu = _command(sub, "fuse", "per-text decisions, confidences and scores of fusion rules (no gold needed)",
                  "Reads a cache file, or every *.jsonl cache under a folder; writes nothing, prints one row per pair "
                  "(a text on a dimension) and rule: the decision, its confidence, the rule's score of every side "
                  "(general-K rules for K > 2 sides) and the gold side where there is one.",
                  "tef fuse --cache out/e5-zeroshot/prompt --rule tef --format csv > decisions.csv")
    fu.add_argument("--rule", nargs="+", choices=RULE_NAMES, default=["tef"], help="fusion rule(s) (default: tef)")
    for reader in (ev, fu):  # both read caches
        reader.add_argument("--cache", type=user_path, required=True, help="a cache file or a folder of caches")
        reader.add_argument("--invalid", choices=("drop", "reference"), default="drop",
                            help="unreadable answers: left out (drop) or 0.5 as in the reference release "
                            "(1/K with K sides)")
    fu.add_argument("--format", choices=("text", "csv", "json"), default="text")
    xp = _command(sub, "explain", "which sentences decided a text: each one's term of Eq. 3 beside the rules' decisions",
                  "Reads a cache file or folder and the texts it scored (MIND's --data-dir, or a task's --task file), "
                  "split by the segmentation the cache records; a text changed since the extraction is refused. "
                  "Prints, or writes to --out, per sentence its probability of each side, TEF's weight w and clipped "
                  "log-odds l, its contribution w*l to each side's score and its share of TEF's decision, and per "
                  "text what Direct, MV, SV and TEF decide; html: one self-contained report with an index of the "
                  "texts by how strongly the rules disagree.",
                  "tef explain --cache data/caches/e5-crossfit/original --format html --out report.html")
    xp.add_argument("--cache", type=user_path, required=True, help="a cache file or a folder of caches")
    which = xp.add_mutually_exclusive_group()
    which.add_argument("--id", nargs="+", metavar="ID", help="these texts, on every dimension (see --dimension)")
    which.add_argument("--all", action="store_true", help="every text (the default)")
    which.add_argument("--disagree", action="store_true", help="the texts where the rules disagree, most disputed first")
    xp.add_argument("--dimension", nargs="+", metavar="DIM", help="only these dimensions")
    xp.add_argument("--format", choices=("text", "csv", "json", "html"), default="text")
    xp.add_argument("--out", type=user_path, default=None, metavar="FILE", help="write to FILE instead of printing")
    xp.add_argument("--data-dir", type=user_path, default=None, help=DATA_DIR_HELP)
    xp.add_argument("--task", type=user_path, metavar="TASK", help="the task file of a task's cache")
    _command(sub, "init", "write an example task to start a study of your own",
             "Reads the example task shipped with tefcore; writes DIR/task.yaml (commented), DIR/posts.csv, "
             "DIR/prompt.txt and DIR/README.md, the task named after DIR; overwrites nothing.",
             "tef init my-study && tef validate my-study/task.yaml").add_argument("dir", type=user_path)
    _command(sub, "validate", "check a task: its file, prompt, data and gold labels",
             "Reads the task file, its prompt and its data; writes nothing; prints rows, languages, dimensions, "
             "sides and gold per dimension, or one line per problem (file, line or row, key or column) and exits 1.",
             "tef validate my-study/task.yaml").add_argument("task", type=user_path, help="the task's YAML file")

    dl = _command(
        sub, "download", "download the full MIND release",
        "Reads the full MIND release (mind_en.jsonl, mind_zh.jsonl) from the paper's GitHub repository at a "
        "pinned commit (needs the network). Writes <dest>/mind_<lang>.jsonl, each validated and replaced "
        "atomically; an existing file is kept unless --force. Then use it with --data-dir <dest> or "
        "MIND_DATA_DIR=<dest>.",
        "tef download --dest data/mind-full",
    )
    dl.add_argument("--dest", type=user_path, required=True, help="folder to write mind_<lang>.jsonl into")
    dl.add_argument("--lang", nargs="+", choices=LANGS, default=list(LANGS))
    dl.add_argument("--force", action="store_true", help="replace existing files")

    _command(sub, "models", "list the model registry",
             "Reads the model registry (tefcore/judges/models.yaml); writes nothing, prints each judge's name, "
             "backend and display name.", "tef models")

    sub.add_parser("claims", help="check the paper's claims (the claims ledger); exit 1 if a checked claim fails "
                   "(`tef claims --help`)", add_help=False)
    sub.add_parser("reproduce", help="extract a model's caches and rebuild the result chapters (5-9) with it "
                   "(`tef reproduce --help`)", add_help=False)
    sub.add_parser("book", help="execute the chapters and build the book (`tef book --help`)", add_help=False)
    ca = _command(
        sub, "cache", "merge the parts directory of a Ray run into a cache file",
        "`tef cache merge PARTS`: reads the Parquet parts that `tef extract --engine ray` wrote to "
        "<out>/<model>/<prompt>/<lang>.parts (committed parts only, one record per pair, two different copies "
        "of a pair are an error); writes the usual <lang>.jsonl beside it (or --out FILE), replacing it "
        "atomically. `tef extract --engine ray` does this itself at the end of a run.",
        "tef cache merge data/caches/e5-zeroshot/original/en.parts",
    )
    ca_sub = ca.add_subparsers(dest="cache_command", required=True, parser_class=OneLineParser)
    merge = ca_sub.add_parser("merge", help="parts directory -> <lang>.jsonl")
    merge.add_argument("parts", type=user_path, nargs="+", help="parts director(ies) <lang>.parts")
    merge.add_argument("--out", type=user_path, default=None, help="the cache file (one parts directory only)")
    return parser


def _command(sub: Any, name: str, summary: str, description: str, example: str) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` says what it reads and writes, with one example."""
    return sub.add_parser(name, help=summary, description=textwrap.fill(description, 88),
                          epilog=f"example:\n  {example}", formatter_class=argparse.RawDescriptionHelpFormatter)


def user_path(text: str) -> Path:
    """A path as the user typed it, made absolute against the working directory (``~`` expanded)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a path, got an empty string")
    return Path(text).expanduser().absolute()


def _integer(minimum: int, what: str) -> Callable[[str], int]:
    """An integer option's type: at least ``minimum`` (``what`` names the bound in the error)."""
    def integer(text: str) -> int:
        if int(text) < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        return int(text)
    return integer


_positive, _non_negative = _integer(1, "a positive integer"), _integer(0, "a non-negative integer")


# --- extract ----------------------------------------------------------------------------------
def _data_dir(data_dir: Path | None, langs: Sequence[str]) -> Path:
    """The MIND folder of ``--data-dir`` / ``$MIND_DATA_DIR`` / the embedded sample, checked to hold every language."""
    directory = resolve_data_dir(data_dir)
    missing = [mind_filename(lang) for lang in langs if not (directory / mind_filename(lang)).is_file()]
    if missing:
        where = "--data-dir" if data_dir is not None else f"${DATA_DIR_ENV}"
        raise FileNotFoundError(
            f"{' and '.join(missing)} not found in {directory} (from {where}); point --data-dir (or "
            f"${DATA_DIR_ENV}) at a folder holding mind_<lang>.jsonl, leave both unset for the embedded "
            f"sample, or fetch the full release with `tef download --dest DIR`")
    return directory


def _load_pairs(langs: Sequence[str], data_dir: Path | None) -> dict[str, list[Any]]:
    directory = _data_dir(data_dir, langs)
    return {lang: evaluation_pairs(load_posts(lang, directory)) for lang in langs}


def _scope(args: argparse.Namespace) -> tuple[list[Task], dict[str, list[Any]], str]:
    """``tef extract``'s tasks (MIND's, one per prompt, or the --task file's), pairs by language and rule: checked
    before a model loads."""
    if not args.task:
        args.lang = args.lang or list(LANGS)
        tasks = [mind_task(variant) for variant in args.prompt or ["original"]]
        return tasks, _load_pairs(args.lang, args.data_dir), args.rule or "reference"
    for flag in ("prompt", "data_dir", "fit_data"):
        if getattr(args, flag) is not None:
            raise ValueError(f"--{flag.replace('_', '-')} applies to MIND, not to --task (a task names its data)")
    task = load_task(args.task)
    pairs = task.pairs_by_language(args.lang)
    args.lang = list(pairs)
    return [task], pairs, args.rule or task.segmentation


def _judge_spec(args: argparse.Namespace) -> Any:
    """The registry entry with the options of the command line (cheap: nothing is loaded), checked to apply."""
    spec = resolve_model(args.model).with_options(reading=args.reading)
    if args.n_ctx is not None:
        if "n_ctx" not in inspect.signature(backend_class(spec.backend)).parameters:
            raise ValueError(f"--n-ctx applies to llama.cpp judges (such as local), not to {spec.name} "
                             f"({spec.backend} backend)")
        spec = spec.with_options(n_ctx=args.n_ctx)
    if args.fit_data is not None:
        if spec.backend != "e5-crossfit":
            raise ValueError(f"--fit-data applies to the cross-fitted judges (e5-crossfit...), not to {spec.name} "
                             f"({spec.backend} backend)")
        missing = [mind_filename(lang) for lang in args.lang if not (args.fit_data / mind_filename(lang)).is_file()]
        if missing:
            raise FileNotFoundError(f"{' and '.join(missing)} not found in {args.fit_data} (--fit-data)")
        spec = spec.with_options(fit_data=args.fit_data)
    return spec


_RAY_FLAGS = ("address", "actors", "cpus_per_actor", "gpus_per_actor", "pairs_per_batch")


def _engine(args: argparse.Namespace) -> Any:
    """The engine of ``--engine``: the local loop, or Ray (checked to be installed) with the Ray flags."""
    given = [f"--{f.replace('_', '-')}" for f in _RAY_FLAGS if getattr(args, f) is not None]
    if args.engine != "ray":
        if given:
            raise ValueError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to --engine ray only")
        return extraction.LocalEngine()
    # as typed (RayOptions reads and checks them), and read before the import: cli > ray_engine, no bounce back
    options = {f: getattr(args, f) for f in _RAY_FLAGS}
    from tefcore.extraction.ray_engine import RayEngine, RayOptions

    return RayEngine(RayOptions(**options))


def _cmd_extract(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """Run the extraction for every (prompt, language) asked for, with the engine of ``--engine``."""
    tasks, pairs, rule = _scope(args)  # fail on bad or missing data before loading a model
    spec = _judge_spec(args)
    if args.retry_invalid and args.engine == "ray":
        parts = parts_path(cache_path(args.out, spec.name, tasks[0].prompt_name, args.lang[0], rule, args.reading))
        raise ValueError(f"--retry-invalid works on a cache file, not on the parts of --engine ray: merge the parts "
                         f"first (tef cache merge {parts}), then retry on the merged cache without --engine ray")
    engine = _engine(args)
    for task in tasks:
        for lang in args.lang:
            out = cache_path(args.out, spec.name, task.prompt_name, lang, rule, args.reading)
            if args.retry_invalid and out.is_file():
                print(f"tef: {out}: {drop_invalid(out)} pair(s) with an invalid answer removed, to be scored again",
                      file=sys.stderr)
            try:
                report = extraction.run_extraction(spec, pairs[lang], out, task=task, rule=rule,
                                                   batch_size=args.batch_size, limit=args.limit,
                                                   progress=not args.no_progress, engine=engine)
            except extraction.ExtractionInterrupted as stop:
                r = stop.report
                print(f"tef: interrupted: {r.pairs_done} of {r.pairs_in_scope} {lang} pairs are in {r.store or r.path} "
                      f"({r.pairs_written} written by this run, no partial record). To resume, run the same "
                      f"command again:\n  tef {shlex.join(argv)}", file=sys.stderr)
                return _EXIT_INTERRUPTED
            print(report.summary())
            for detail, count in report.details.items():
                hint = "; raise --n-ctx to score them" if "context" in detail and spec.backend == "llama_cpp" else ""
                print(f"tef: warning: {count} answer(s) recorded as invalid: {detail}{hint}", file=sys.stderr)
            _warn_invalid(report.path, argv)
    return 0


def _warn_invalid(path: Path, argv: Sequence[str]) -> None:
    """One line when more than :data:`~tefcore.extraction.cache.INVALID_WARN_SHARE` of a cache's answers are
    invalid (an endpoint without usable log-probabilities, say), with the command that scores those pairs again; a
    learning judge's deliberate skips (too few labelled texts per side) are named apart, with what would help instead."""
    if not path.is_file():
        return
    bad, answers, pairs = cache_invalid_answers(path)
    if not answers or bad / answers <= INVALID_WARN_SHARE:
        return
    skipped, skipped_pairs = cache_skipped_answers(path)
    line = (f"tef: warning: {path}: {bad} of {answers} answers ({bad / answers:.1%}) are invalid, in {len(pairs)} "
            f"pair(s), more than {INVALID_WARN_SHARE:.0%}")
    if skipped:
        line += (f"; {skipped} of them, in {len(skipped_pairs)} pair(s), are the judge's deliberate skips (too few "
                 "labelled texts per side), which scoring again cannot change: give more texts a gold side on "
                 "each side of those dimensions, or use a judge that needs no labels (e5-zeroshot or an LLM judge)")
    if skipped < bad:
        again = [*argv, *([] if "--retry-invalid" in argv else ["--retry-invalid"])]
        line += (f"; once the judge answers again, score {'the other' if skipped else 'those'} pairs again with: "
                 f"tef {shlex.join(again)}")
    print(line, file=sys.stderr)


def _cmd_cache(args: argparse.Namespace) -> int:
    """``tef cache merge``: parts directories -> cache files."""
    if args.out is not None and len(args.parts) > 1:
        raise ValueError("--out takes one parts directory; give several without --out")
    for parts in args.parts:
        target = merge_parts(parts, args.out)
        print(f"{target}: {len(read_cache_file(target)[0])} pairs from {parts}")
    return 0


# --- evaluate ---------------------------------------------------------------------------------
def _cache_files(root: Path) -> list[Path]:
    """The cache file ``--cache`` names, or every ``*.jsonl`` under the folder it names."""
    if root.is_dir():
        files = sorted(root.rglob("*.jsonl"))
        if not files:
            raise FileNotFoundError(f"no *.jsonl cache under {root} (--cache)")
        return files
    if not root.is_file():
        raise FileNotFoundError(f"cache {root} not found (--cache)")
    return [root]


def _cmd_evaluate(args: argparse.Namespace) -> int:
    """Print accuracy / macro-F1 per dimension and rule for each cache file, against the gold of its data."""
    scored, empty, task = [], [], load_task(args.task) if args.task else None
    for file in _cache_files(args.cache):
        result = evaluate_file(file, args.rules, args.invalid, args.intervals, data_dir=args.data_dir, task=task)
        (empty if result is None else scored).append(file if result is None else result)
    if not scored:
        what = f"{empty[0]} holds" if len(empty) == 1 else f"the {len(empty)} caches under {args.cache} hold"
        raise ValueError(f"nothing to evaluate: {what} no scored pair, only a header (an extraction that stopped "
                         f"before its first pair); run its `tef extract` again")
    for file in empty:
        print(f"tef: warning: {file} holds no scored pair (only a header); left out", file=sys.stderr)
    print(format_scores(pd.concat(scored, ignore_index=True), args.format, args.invalid))
    return 0


# --- a task of one's own ----------------------------------------------------------------------
def _cmd_fuse(args: argparse.Namespace) -> int:
    """One row per pair and rule: the decision, its confidence, every side's score and the gold side."""
    parts = [decisions(frame, args.rule, args.invalid, classes=recorded_sides(prov), flat=args.format != "json")
             .assign(cache=shown(str(file))) for file in _cache_files(args.cache)
             for frame, prov in [read_cache_file(file)] if not frame.empty]
    if not parts:
        raise ValueError(f"nothing to fuse: no scored pair under {args.cache} (--cache)")
    out = pd.concat(parts, ignore_index=True).pipe(lambda t: t[["cache", *t.columns.drop("cache")]])
    if args.format == "text":  # one table per cache and dimension, with that dimension's sides
        print("\n\n".join(f"{cache}, {dim}:\n" + g.dropna(axis=1, how="all").drop(columns=["cache", "dimension"])
                           .to_string(index=False, na_rep="", float_format="{:.3f}".format)
                           for (cache, dim), g in out.groupby(["cache", "dimension"], sort=False)))
    else:
        print(records(out, args.format))
    return 0


def _cmd_explain(args: argparse.Namespace) -> int:
    """Each sentence's term of Eq. 3 and the rules' decisions, for the texts asked for (:mod:`tefcore.explain`)."""
    from tefcore.explain import explain_file, render, select

    view = select(explain_file(args.cache, data_dir=args.data_dir, task=args.task), ids=args.id,
                  dimensions=args.dimension, disagree=args.disagree)
    if view.empty:
        raise ValueError(f"no text of {args.cache} to explain: the rules agree on every one (--disagree)")
    page = render(view, args.format, title=f"TEF evidence view: {shown(str(args.cache))}")
    if args.out is None:
        print(page.rstrip("\n"))
        return 0
    args.out.write_text(page, encoding="utf-8")
    print(f"wrote {shown(str(args.out))}: {int((view['sentence'] == 1).sum()):,} texts, {len(view):,} sentences")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    """What the task holds, or one line per problem and exit code 1."""
    try:
        print("\n".join(summary(load_task(args.task))))
    except TaskError as bad:
        print("\n".join(f"tef: error: {problem}" for problem in bad.problems), file=sys.stderr)
        return _EXIT_FAILS
    return 0


# --- the rest ---------------------------------------------------------------------------------
def _cmd_download(args: argparse.Namespace) -> int:
    """Download the release files into ``--dest``."""
    for lang, (path, digest) in release.download_release(args.dest, args.lang, force=args.force).items():
        print(f"{lang}: {path} sha256={digest}")
    return 0


def _cmd_models() -> int:
    """List the registry: name, backend, display name."""
    for name, entry in load_registry().items():
        print(f"{name:16s} {entry['backend']:12s} {entry.get('display_name', '')}")
    print(f"(registry: {REGISTRY_PATH}; a path to a .gguf file also works)")
    return 0


def _hand_over(module: str, args: Sequence[str]) -> int:
    """Run ``python -m <module> ARGS`` of the book's distribution in a subprocess (``tef book`` and
    ``tef reproduce``: :mod:`tefbook`; ``tef claims``: :mod:`tefpaper`); the library never imports them."""
    if importlib.util.find_spec(module) is None:
        raise ImportError(f"{module} is not installed: it comes with the book's tools; from the repository, "
                          "pip install -e ./book (scripts/setup.sh does)")
    return subprocess.call([sys.executable, "-m", module, *args])


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tef`` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["book"]:  # every later argument belongs to `python -m tefbook`
        return _guarded(lambda: _hand_over("tefbook", argv[1:]))
    if argv[:1] == ["reproduce"]:  # every later argument belongs to `python -m tefbook reproduce`
        return _guarded(lambda: _hand_over("tefbook", argv))
    if argv[:1] == ["claims"]:  # every later argument belongs to `python -m tefpaper`
        return _guarded(lambda: _hand_over("tefpaper", argv[1:]))
    args = _build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="tef: %(levelname)s: %(message)s")
    commands: dict[str, Callable[[], int]] = {
        "extract": lambda: _cmd_extract(args, argv),
        "evaluate": lambda: _cmd_evaluate(args),
        "download": lambda: _cmd_download(args),
        "models": _cmd_models,
        "cache": lambda: _cmd_cache(args),
        "fuse": lambda: _cmd_fuse(args),
        "init": lambda: _init(args.dir),
        "validate": lambda: _cmd_validate(args),
        "explain": lambda: _cmd_explain(args),
    }
    return _guarded(commands[args.command])


def _init(folder: Path) -> int:
    """``tef init DIR`` (:func:`tefcore.tasks.init_task`)."""
    task = shown(str(init_task(folder) / "task.yaml"))
    print(f"wrote {task}, and posts.csv, prompt.txt, README.md beside it; next: tef validate {task}")
    return 0


STOP_GRACE = 5.0
"""Seconds ``tef`` gives the work, after Ctrl-C or SIGTERM, to reach a point where it stops (between two records
or batches). A judge inside one long computation (a C call that never returns to Python) is not waited for:
past them the process ends with exit code 130; the cache holds whole records, and the same command resumes it."""

_TAKEN_UP = threading.Event()  # the main thread has taken up the signal (or the command has ended)


def _terminate(signum: int, frame: Any) -> None:
    """SIGTERM stops like Ctrl-C: between two records, with the resume hint."""
    _TAKEN_UP.set()
    raise KeyboardInterrupt


def _interrupt(signum: int, frame: Any) -> None:
    """Ctrl-C: Python's own KeyboardInterrupt, noted for :class:`_SignalWatch`."""
    _TAKEN_UP.set()
    raise KeyboardInterrupt


class _SignalWatch:
    """A thread that sees Ctrl-C and SIGTERM even while the main thread is inside a C call.

    Python writes every signal it handles to the file of :func:`signal.set_wakeup_fd` at once, from C; the
    thread reads it there, and when the main thread has not taken the signal up within :data:`STOP_GRACE`
    seconds it ends the process (exit code 130) with one line. :meth:`stop` puts everything back.
    """

    def __init__(self) -> None:
        self.read, self.write = os.pipe()
        os.set_blocking(self.write, False)
        self.previous_fd = signal.set_wakeup_fd(self.write, warn_on_full_buffer=False)
        self.previous_int = signal.getsignal(signal.SIGINT)
        if self.previous_int is signal.default_int_handler:  # an ignored SIGINT (a background job) stays ignored
            signal.signal(signal.SIGINT, _interrupt)
        _TAKEN_UP.clear()
        self.thread = threading.Thread(target=self._watch, name="tef-signal-watch", daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while data := os.read(self.read, 64):
            if {signal.SIGINT, signal.SIGTERM} & set(data) and not _TAKEN_UP.wait(STOP_GRACE):
                print(f"tef: interrupted inside a long computation, not waited for past {STOP_GRACE:.0f} s; the cache "
                      "holds whole records: to resume, run the same command again", file=sys.stderr, flush=True)
                os._exit(_EXIT_INTERRUPTED)

    def stop(self) -> None:
        """Restore the wakeup file and Ctrl-C's handler; end the thread."""
        _TAKEN_UP.set()
        signal.set_wakeup_fd(self.previous_fd)
        if signal.getsignal(signal.SIGINT) is _interrupt:
            signal.signal(signal.SIGINT, self.previous_int)
        os.close(self.write)  # the thread reads the end of the pipe
        self.thread.join(timeout=1.0)
        os.close(self.read)


def _guarded(command: Callable[[], int]) -> int:
    """Run a command; user errors become one line and exit code 2, Ctrl-C (or SIGTERM) exit code 130."""
    watch = None
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
        watch = _SignalWatch()
    try:
        return command()
    except KeyboardInterrupt:
        _TAKEN_UP.set()
        print("tef: interrupted", file=sys.stderr)
        return _EXIT_INTERRUPTED
    except BrokenPipeError:  # `tef evaluate ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # errors raised on purpose: bad values, missing files or packages, tefcore's own
        if not (isinstance(exc, (ValueError, OSError, ImportError))
                or any(cls.__module__.startswith("tefcore.") for cls in type(exc).__mro__)):
            raise
        text = _os_message(exc) if isinstance(exc, OSError) else str(exc)
        print(f"tef: error: {redact(' '.join(text.split()) or type(exc).__name__)}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if watch is not None:
            watch.stop()


_OS_HINTS = {errno.ENOSPC: "the disk is full: free some space, then run the same command again",
             errno.EDQUOT: "the disk quota is used up: free some space, then run the same command again",
             errno.EROFS: "the file system is read-only: choose another folder",
             errno.EACCES: "no permission to write there: choose another folder",
             errno.EPERM: "no permission to write there: choose another folder",
             errno.ENOTDIR: "a part of the path is a file, not a folder",
             errno.EISDIR: "it is a folder, not a file"}


def _os_message(exc: OSError) -> str:
    """One line for an operating-system error: the path, the cause and what to do, never a traceback.

    Examples
    --------
    >>> _os_message(OSError(errno.ENOSPC, "No space left on device", "runs/local/original/en.jsonl"))
    'runs/local/original/en.jsonl: No space left on device (the disk is full: free some space, then run the same command again)'
    >>> _os_message(NotADirectoryError(errno.ENOTDIR, "Not a directory", "notes.txt/out"))
    'notes.txt/out: Not a directory (a part of the path is a file, not a folder)'
    """
    if exc.filename is None or not exc.strerror:
        return str(exc)
    where = f"{exc.filename} -> {exc.filename2}" if exc.filename2 is not None else str(exc.filename)
    hint = _OS_HINTS.get(exc.errno) if exc.errno is not None else None
    return f"{where}: {exc.strerror}" + (f" ({hint})" if hint else "")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
