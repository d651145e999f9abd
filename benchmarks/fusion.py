"""Benchmark: fuse_many against one tef() call per document and against a numpy floor.

Usage: ``python benchmarks/fusion.py [--n 1000000] [--docs 200000] [--repeat 5]``

Documents get random lengths (1 to 2*mean-1 sentences) so that ~``--docs`` documents hold ``--n``
sentence probabilities. The floor is one ``np.add.reduceat`` over a precomputed array: a single
memory-bound pass that no fusion rule can beat. Prints the best-of-``--repeat`` times and both ratios.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tefcore.fusion import RULE_NAMES, fuse_many, tef, RULES


def make_corpus(n: int, docs: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random sentence probabilities and a sorted document index."""
    rng = np.random.default_rng(seed)
    mean = n / docs
    lengths = rng.integers(1, max(2, int(2 * mean)), size=2 * docs)
    lengths = lengths[: np.searchsorted(np.cumsum(lengths), n) + 1]
    doc_index = np.repeat(np.arange(lengths.size), lengths)[:n]
    return rng.random(doc_index.size), doc_index


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--docs", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    p, doc = make_corpus(args.n, args.docs)
    starts = np.flatnonzero(np.r_[True, np.diff(doc) != 0])
    n_docs = starts.size
    print(f"{p.size:,} sentence probabilities in {n_docs:,} documents")

    t_floor = best_of(lambda: np.add.reduceat(p, starts), args.repeat)
    t_batch = best_of(lambda: fuse_many(p, doc, "tef"), args.repeat)
    bounds = np.r_[starts, p.size]
    docs = [p[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    t_loop = best_of(lambda: [tef(d) for d in docs], 1)

    batch = fuse_many(p, doc, "tef")
    sample = np.random.default_rng(1).choice(n_docs, 1000, replace=False)
    assert all(batch.result(i) == tef(docs[i]) for i in sample), "fuse_many disagrees with tef()"

    print(f"numpy floor (one reduceat):   {t_floor * 1e3:9.1f} ms")
    print(f"fuse_many(rule='tef'):        {t_batch * 1e3:9.1f} ms")
    print(f"tef() once per document:      {t_loop * 1e3:9.1f} ms")
    print(f"speed-up of fuse_many over the per-document loop: {t_loop / t_batch:7.1f}x (target >= 100x)")
    print(f"fuse_many / floor:                                {t_batch / t_floor:7.1f}x (target <= 15x)")
    for rule in RULE_NAMES[1:]:
        if rule != "tef":
            t = best_of(lambda: fuse_many(p, doc, rule), args.repeat)
            print(f"  {rule:<22} {t * 1e3:8.1f} ms ({t / t_floor:5.1f}x floor)")
    assert set(RULES) == set(RULE_NAMES)


if __name__ == "__main__":
    main()
