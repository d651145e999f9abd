"""Benchmark: the local backend (a) one prompt at a time with nothing reused vs (b) as `tef extract` runs it.

Usage: ``python benchmarks/extraction.py [--n 200] [--lang en] [--prompt original] [--threads 2] [--workers 1] [--block 20]
[--data-dir DIR]``

The same ``--n`` MIND prompts (the first ones `tef extract` would score: pairs grouped by dimension,
the whole post then its sentences, prompt variant ``--prompt``, original by default) are scored

(a) one at a time, each evaluated from an empty KV cache (``reuse_prefix=False``, one context with
    ``--threads`` threads), and
(b) the way `tef extract --model local` does it: the registry's settings (the shared prompt prefix
    evaluated once and reused; ``--workers`` contexts, 1 by default), chunks of the backend's
    ``preferred_batch_size`` prompts.

The modes run in turn in blocks of ``--block`` prompts so that a changing machine load hits
both alike. Printed: prompts per second (wall clock) of each mode and their ratio, the CPU seconds per
prompt of this process (less sensitive to other processes on a shared machine), the tokens evaluated
per prompt, and the largest difference in P(change) between the modes (0: bitwise equal).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

from tefcore.mind import mind_task
from tefcore.judges import make_backend
from tefcore.judges.base import Score, ScoreRequest
from tefcore.judges.local import LocalBackend
from tefcore.mind.load import evaluation_pairs, load_posts, resolve_data_dir
from tefcore.extraction.run import Setting, chunks
from tefcore.mind.prompts import VARIANTS


def mind_prompts(lang: str, n: int, data_dir: str | None, variant: str = "original") -> list[ScoreRequest]:
    """The first ``n`` requests in `tef extract`'s order."""
    pairs = evaluation_pairs(load_posts(lang, data_dir))
    requests: list[ScoreRequest] = []
    for chunk in chunks(pairs, Setting(lang, mind_task(variant)), batch_size=1):
        requests += [r for _, reqs in chunk for r in reqs]
        if len(requests) >= n:
            break
    return requests[:n]


def default_data_dir() -> str:
    """``$MIND_DATA_DIR`` when set, else the embedded MIND sample (:func:`tefcore.mind.load.resolve_data_dir`)."""
    return str(resolve_data_dir())


def timed(fn: Callable[[], list[Score]]) -> tuple[list[Score], float, float]:
    """Run ``fn``; return its scores, wall seconds and CPU seconds of this process."""
    wall, cpu = time.perf_counter(), time.process_time()
    scores = fn()
    return scores, time.perf_counter() - wall, time.process_time() - cpu


def compare(requests: Sequence[ScoreRequest], threads: int, workers: int,
            block: int) -> dict[str, dict[str, float]]:
    """Score ``requests`` in both modes, taking turns block by block; return the figures."""
    judges = {
        "a": LocalBackend(n_threads=threads, reuse_prefix=False),
        "b": make_backend("local", n_threads=threads, workers=workers),
    }
    modes = list(judges)
    figures = {m: {"wall": 0.0, "cpu": 0.0} for m in modes}
    max_dp = 0.0
    for i, start in enumerate(range(0, len(requests), block)):
        part = list(requests[start:start + block])
        got = {}
        for mode in modes[i % 2:] + modes[:i % 2]:
            judge = judges[mode]
            if mode == "a":
                run = lambda: [judge.score([r])[0] for r in part]  # noqa: E731
            else:
                size = judge.preferred_batch_size
                run = lambda: [s for j in range(0, len(part), size) for s in judge.score(part[j:j + size])]  # noqa: E731
            got[mode], wall, cpu = timed(run)
            figures[mode]["wall"] += wall
            figures[mode]["cpu"] += cpu
        max_dp = max(max_dp, *(abs(x.p_change - y.p_change) for x, y in zip(got["a"], got["b"])))
    for mode, judge in judges.items():
        figures[mode]["tokens"] = judge.tokens_evaluated / len(requests)
        figures[mode]["prefix_builds"] = judge.prefix_builds
    figures["all"] = {"max_dp": max_dp}
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--lang", default="en", choices=("en", "zh"))
    ap.add_argument("--prompt", default="original", choices=VARIANTS, help="prompt variant")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--block", type=int, default=20)
    ap.add_argument("--data-dir", default=default_data_dir(),
                    help="MIND folder (default: $MIND_DATA_DIR, else the repository's sibling ../shared/data/mind)")
    args = ap.parse_args()
    requests = mind_prompts(args.lang, args.n, args.data_dir, args.prompt)
    n = len(requests)
    t = compare(requests, args.threads, args.workers, args.block)
    rate = {m: n / t[m]["wall"] for m in "ab"}
    print(f"{n} MIND prompts ({args.lang}, {args.prompt}), SmolLM2-135M-Instruct Q4_1, {args.threads} threads, "
          f"(b) with {args.workers} worker(s)")
    labels = {"a": "(a) one at a time, nothing reused", "b": "(b) as `tef extract` does it"}
    for m in "ab":
        print(f"{labels[m]:36s}: {rate[m]:7.2f} prompts/s  {t[m]['cpu'] / n * 1e3:7.1f} CPU ms/prompt  "
              f"{t[m]['tokens']:6.1f} tokens/prompt  ({t[m]['prefix_builds']} prefix evaluations)")
    print(f"ratio (b)/(a): {rate['b'] / rate['a']:.2f}x prompts/s; "
          f"CPU time per prompt (a)/(b): {t['a']['cpu'] / t['b']['cpu']:.2f}x; "
          f"largest |P(change) difference| between the modes: {t['all']['max_dp']:.2g}")

if __name__ == "__main__":
    main()
