"""``python -m tefpaper``, which ``tef claims`` runs: check every claim of the paper the ledger lists.

Reads the paper's tables (``--paper-dir``), the MIND data (``--data-dir``) and the caches of the paper's models
under ``--cache-dir``; writes nothing, prints the verdicts, and exits 1 when a checked claim does not give its
recorded verdict, 2 on a usage error (one line).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

from tefcore.cli import DATA_DIR_HELP, EXIT_USAGE, OneLineParser, user_path
from tefpaper import tables as paper
from tefpaper.ledger import FORMATS, describe_claim, evaluate_ledger, failures, find_claim, format_ledger

EXIT_FAIL = 1
DESCRIPTION = (
    "Check every claim of the paper the ledger lists. Reads the paper's tables (--paper-dir), the MIND data "
    "(--data-dir) and the caches of the paper's models under --cache-dir (after `tef reproduce`, the rows about "
    "that model are checked on them); writes nothing, prints the verdicts per kind of evidence and the ledger by "
    "the paper's sections, and exits 1 when a checked claim does not give its recorded verdict. With a claim's id, "
    "prints that claim in full (its words, where the paper says it, the kind of evidence, the chapter, the check "
    "and the verdict) and exits 1 only when that claim fails."
)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``tef claims``."""
    parser = OneLineParser(prog="tef claims", description=textwrap.fill(DESCRIPTION, 88),
                           epilog="examples:\n  tef claims --cache-dir data/caches --format markdown > claims.md\n"
                                  "  tef claims table3-floors",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("claim", nargs="?", default=None,
                        help="a claim's id (as the ledger lists it): print that claim in full")
    parser.add_argument("--format", choices=FORMATS, default="text", help="text: compact, under 100 columns")
    parser.add_argument("--paper-dir", type=user_path, default=None,
                        help="folder with the paper's table*.csv (default: the repository's data/paper)")
    parser.add_argument("--data-dir", type=user_path, default=None, help=DATA_DIR_HELP)
    parser.add_argument("--cache-dir", type=user_path, default=None,
                        help="root of caches <model>/<prompt>/<lang>.jsonl (default: data/caches when it exists)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Print the claims ledger; exit code 1 when a checked claim fails, 2 on a usage error."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    cache_dir = args.cache_dir or (Path("data/caches").absolute() if Path("data/caches").is_dir() else None)
    if args.data_dir is not None and not args.data_dir.is_dir():
        print(f"tef claims: error: --data-dir {args.data_dir}: no such folder", file=sys.stderr)
        return EXIT_USAGE
    try:
        claims = None if args.claim is None else [find_claim(args.claim)]
        tables = paper.load_tables(args.paper_dir)  # read first: a wrong --paper-dir is one line, not 31 failed checks
        ledger = evaluate_ledger(claims, tables=tables, data_dir=args.data_dir, cache_dir=cache_dir)
    except (ValueError, OSError) as exc:
        print(f"tef claims: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_USAGE
    if "data_problem" in ledger.attrs and args.data_dir is not None:  # the data asked for cannot be read
        print(f"tef claims: error: --data-dir {args.data_dir}: {' '.join(str(ledger.attrs['data_problem']).split())}",
              file=sys.stderr)
        return EXIT_USAGE
    print(describe_claim(ledger.iloc[0]) if args.claim is not None else format_ledger(ledger, args.format))
    if "data_problem" in ledger.attrs:
        print(f"tef: warning: the data-card rows are not checked: {ledger.attrs['data_problem']}", file=sys.stderr)
    bad = failures(ledger)
    if len(bad):
        print(f"tef: {len(bad)} claim(s) fail: {', '.join(bad['id'])}", file=sys.stderr)
        return EXIT_FAIL
    return 0


if __name__ == "__main__":
    sys.exit(main())
