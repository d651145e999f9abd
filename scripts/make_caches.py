"""Make committed caches: judges of the registry on the MIND data, every judge in one process.

The e5 judges share one embedder, so each text is embedded once (about 10,000 texts for the embedded sample,
4 to 5 minutes on 2 cores), with the deterministic engine build (tefcore.judges.e5_engine). Each cache is
written to <out>/<judge>/<prompt>/<lang>.jsonl; an existing cache of the same provenance is resumed, one of
another provenance is refused (move it away first). ``--per-dimension N`` keeps the first N pairs of every
dimension (in data order), for a judge too slow for the whole sample. The committed caches were made with:

    python scripts/make_caches.py --judges e5-zeroshot e5-crossfit e5-crossfit-std e5-crossfit-raw
    python scripts/make_caches.py --judges local --prompts minimal --per-dimension 20
    python scripts/make_caches.py --judges local --prompts verbose --lang en --per-dimension 20
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from tefcore.judges import make_backend
from tefcore.extraction.cache import cache_path
from tefcore.extraction.run import run_extraction
from tefcore.mind.load import EvaluationPair, evaluation_pairs, load_posts


def first_per_dimension(pairs: Sequence[EvaluationPair], n: int | None) -> list[EvaluationPair]:
    """The first ``n`` pairs of every dimension, in data order (all of them when ``n`` is None)."""
    if n is None:
        return list(pairs)
    seen: dict[str, int] = {}
    kept: list[EvaluationPair] = []
    for pair in pairs:
        seen[pair.dimension] = seen.get(pair.dimension, 0) + 1
        if seen[pair.dimension] <= n:
            kept.append(pair)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", nargs="+", required=True, help="registry names")
    parser.add_argument("--prompts", nargs="+", default=["original"])
    parser.add_argument("--lang", nargs="+", default=["en", "zh"])
    parser.add_argument("--per-dimension", type=int, default=None, help="the first N pairs of every dimension")
    parser.add_argument("--out", default="data/caches")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    judges = {name: make_backend(name) for name in args.judges}
    for lang in args.lang:
        pairs = first_per_dimension(evaluation_pairs(load_posts(lang, args.data_dir)), args.per_dimension)
        for name, judge in judges.items():
            for prompt in args.prompts:
                start = time.perf_counter()
                report = run_extraction(judge, pairs, cache_path(args.out, name, prompt, lang), variant=prompt,
                                        progress=False)
                print(f"{name} {prompt} {lang}: {report.summary()} ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
