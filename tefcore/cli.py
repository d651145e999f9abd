"""The ``tef`` command line: ``extract``, ``evaluate``, ``download``, ``models`` and ``book``.

Examples
--------
::

    tef extract --model local --lang en zh --prompt original --data-dir ../shared/data/mind
    tef evaluate --cache data/caches/local/original
    tef extract --model qwen2.5-7b --lang en zh --prompt original verbose minimal   # a GPU box
    DEEPSEEK_API_KEY=... tef extract --model deepseek-v3.2 --lang zh                 # an API

Errors the user can fix (unknown model, missing data or key, bad arguments, a cache of another
provenance) are one line on stderr and exit code 2; Ctrl-C (or SIGTERM) during ``extract`` stops
between two records, says how far it got and how to resume, and exits with 130.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_CLAIMS_FAIL = 1


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``tef`` parser with its subcommands."""
    from tefcore.fusion import RULE_NAMES
    from tefcore.mind.prompts import VARIANTS
    from tefcore.mind.schema import LANGS
    from tefcore.mind.segment import SEGMENTATION_RULES

    parser = _Parser(prog="tef", description="TEF Companion: extract, evaluate, build the book.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ex = sub.add_parser("extract", help="score MIND pairs with a judge into a cache")
    ex.add_argument("--model", required=True, help="registry name (see `tef models`) or a .gguf file")
    ex.add_argument("--lang", nargs="+", choices=LANGS, default=list(LANGS))
    ex.add_argument("--prompt", nargs="+", choices=VARIANTS, default=["original"], help="prompt variant(s)")
    ex.add_argument("--data-dir", default=None, help="folder with mind_<lang>.jsonl (default: $MIND_DATA_DIR)")
    ex.add_argument("--out", default="data/caches", help="cache root: <out>/<model>/<prompt>/<lang>.jsonl")
    ex.add_argument("--limit", type=_non_negative, default=None, help="only the first N pairs per language")
    ex.add_argument("--rule", choices=SEGMENTATION_RULES, default="reference", help="sentence segmentation")
    ex.add_argument("--reading", choices=("summed", "reference"), default="summed",
                    help="how P(change) is read from the answer token (LLM judges)")
    ex.add_argument("--batch-size", type=_positive, default=None, help="prompts per judge call")
    ex.add_argument("--no-progress", action="store_true", help="no progress bar")

    ev = sub.add_parser("evaluate", help="accuracy and macro-F1 per dimension for every fusion rule")
    ev.add_argument("--cache", required=True, help="a cache file or a folder of caches")
    ev.add_argument("--rules", nargs="+", choices=RULE_NAMES, default=None)
    ev.add_argument("--invalid", choices=("drop", "reference"), default="drop",
                    help="unreadable answers: left out (drop) or 0.5 as in the reference release")

    dl = sub.add_parser("download", help="download the MIND release files")
    dl.add_argument("--dest", required=True)
    dl.add_argument("--lang", nargs="+", choices=LANGS, default=list(LANGS))
    dl.add_argument("--force", action="store_true", help="replace existing files")

    sub.add_parser("models", help="list the model registry")

    from tefcore.chapters.claims import FORMATS

    cl = sub.add_parser(
        "claims", help="check the paper's claims (the claims ledger); exit 1 if a checked claim fails",
        description="Check every claim of the paper the ledger lists: reads the paper's tables (package data, "
        "or --paper-dir) and the MIND data (--data-dir, else $MIND_DATA_DIR, else the embedded sample); "
        "prints the ledger on stdout and exits 1 when a checked claim does not give its recorded verdict. "
        "Example: tef claims --format markdown > claims.md",
    )
    cl.add_argument("--format", choices=FORMATS, default="text", help="text: compact, under 100 columns")
    cl.add_argument("--paper-dir", default=None, help="folder with the paper's table*.csv (default: shipped)")
    cl.add_argument("--data-dir", default=None, help="folder with mind_<lang>.jsonl (default: $MIND_DATA_DIR)")
    sub.add_parser("book", help="execute the chapters and build the book (`tef book --help`)", add_help=False)
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text}")
    return value


# --- extract ----------------------------------------------------------------------------------
def _load_pairs(langs: Sequence[str], data_dir: str | None) -> dict[str, list[Any]]:
    from tefcore.mind.load import evaluation_pairs, load_posts

    return {lang: evaluation_pairs(load_posts(lang, data_dir)) for lang in langs}


def _spec(model: str, reading: str) -> Any:
    """Resolve the model (cheap: nothing is loaded) and check that ``--reading`` applies to it."""
    from tefcore.judges.registry import LLM_BACKENDS, resolve_model

    spec = resolve_model(model)
    if spec.backend not in LLM_BACKENDS and reading != "summed":
        raise ValueError(f"--reading applies to LLM judges; {spec.name} is a {spec.backend} judge")
    return spec


def _judge(spec: Any, reading: str) -> Any:
    """Build the judge (loads the model or checks the API key)."""
    from tefcore.judges import make_backend
    from tefcore.judges.registry import LLM_BACKENDS

    return make_backend(spec, **({"reading": reading} if spec.backend in LLM_BACKENDS else {}))


def _resume_hint(argv: Sequence[str]) -> str:
    return "tef " + shlex.join(argv)


def cmd_extract(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """Run the extraction for every (prompt, language) asked for."""
    from tefcore.judges.run import ExtractionInterrupted, cache_path, run_extraction

    spec = _spec(args.model, args.reading)
    pairs = _load_pairs(args.lang, args.data_dir)  # fail on missing data before loading a model
    backend = _judge(spec, args.reading)
    for variant in args.prompt:
        for lang in args.lang:
            out = cache_path(args.out, spec.name, variant, lang, args.rule, args.reading)
            try:
                report = run_extraction(backend, pairs[lang], out, variant=variant, rule=args.rule,
                                        batch_size=args.batch_size, limit=args.limit,
                                        progress=not args.no_progress)
            except ExtractionInterrupted as stop:
                r = stop.report
                print(f"tef: interrupted: {r.pairs_done} of {r.pairs_in_scope} {lang} pairs are in {out} "
                      f"({r.pairs_written} written by this run, no partial record). To resume, run the "
                      f"same command again:\n  {_resume_hint(argv)}", file=sys.stderr)
                return EXIT_INTERRUPTED
            print(report.summary())
    return 0


# --- evaluate ---------------------------------------------------------------------------------
def cmd_evaluate(args: argparse.Namespace) -> int:
    """Print accuracy / macro-F1 per dimension and rule for each cache file."""
    from pathlib import Path

    from tefcore.judges.cache import read_cache_file
    from tefcore.evaluate import predict_pairs, score_table, wide_table

    root = Path(args.cache)
    files = sorted(root.rglob("*.jsonl")) if root.is_dir() else [root]
    if not files:
        raise FileNotFoundError(f"no *.jsonl cache under {root}")
    for file in files:
        frame, prov = read_cache_file(file)
        pred = predict_pairs(frame, rules=args.rules, invalid=args.invalid)
        table = wide_table(score_table(pred))
        n_invalid = int(pred.drop_duplicates(["post_id", "dimension"])["n_invalid"].sum())
        print(f"== {file}  judge={prov.get('judge', prov.get('model'))} prompt={prov.get('prompt_variant')} "
              f"pairs={len(frame)} invalid sentences={n_invalid} (invalid={args.invalid})")
        print(table.to_string())
        print()
    return 0


# --- the rest ---------------------------------------------------------------------------------
def cmd_download(args: argparse.Namespace) -> int:
    """Download the release files into ``--dest``."""
    from tefcore.mind.release import download_release

    for lang, (path, digest) in download_release(args.dest, args.lang, force=args.force).items():
        print(f"{lang}: {path} sha256={digest}")
    return 0


def cmd_claims(args: argparse.Namespace) -> int:
    """Print the claims ledger; exit code 1 when a checked claim fails."""
    from tefcore.chapters.claims import evaluate_ledger, failures, format_ledger

    ledger = evaluate_ledger(paper_dir=args.paper_dir, data_dir=args.data_dir)
    print(format_ledger(ledger, args.format))
    bad = failures(ledger)
    if len(bad):
        print(f"tef: {len(bad)} claim(s) fail: {', '.join(bad['id'])}", file=sys.stderr)
        return EXIT_CLAIMS_FAIL
    return 0


def cmd_models() -> int:
    """List the registry: name, backend, display name."""
    from tefcore.judges.registry import REGISTRY_PATH, load_registry

    for name, entry in load_registry().items():
        print(f"{name:16s} {entry['backend']:12s} {entry.get('display_name', '')}")
    print(f"(registry: {REGISTRY_PATH}; a path to a .gguf file also works)")
    return 0


def cmd_book(book_args: Sequence[str]) -> int:
    """Hand over to the book build tool, ``python -m tefbook`` (a separate package the library never imports)."""
    import importlib.util
    import subprocess

    if importlib.util.find_spec("tefbook") is None:
        raise ImportError("`tef book` needs the book build tool: install the project from its repository "
                          "with pip install -e '.[book]'")
    return subprocess.call([sys.executable, "-m", "tefbook", *book_args])


def _is_user_error(exc: BaseException) -> bool:
    """Errors raised on purpose: bad values, missing files or packages, any tefcore exception."""
    if isinstance(exc, (ValueError, FileNotFoundError, ImportError, PermissionError)):
        return True
    return any(cls.__module__.startswith("tefcore.") for cls in type(exc).__mro__)


def _one_line(exc: BaseException) -> str:
    from tefcore.judges.redact import redact

    text = " ".join(str(exc).split()) or type(exc).__name__
    return str(redact(text))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tef`` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["book"]:  # every later argument belongs to `tefbook.build`
        return _guarded(lambda: cmd_book(argv[1:]))
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="tef: %(levelname)s: %(message)s")
    commands: dict[str, Callable[[], int]] = {
        "extract": lambda: cmd_extract(args, argv),
        "evaluate": lambda: cmd_evaluate(args),
        "download": lambda: cmd_download(args),
        "models": cmd_models,
        "claims": lambda: cmd_claims(args),
    }
    return _guarded(commands[args.command])


def _terminate(signum: int, frame: Any) -> None:
    """SIGTERM stops like Ctrl-C: between two records, with the resume hint."""
    raise KeyboardInterrupt


def _guarded(command: Callable[[], int]) -> int:
    """Run a command; user errors become one line and exit code 2, Ctrl-C (or SIGTERM) exit code 130."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        return command()
    except KeyboardInterrupt:
        print("tef: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if not _is_user_error(exc):
            raise
        print(f"tef: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
