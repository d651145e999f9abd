"""Benchmark: time to first token of the embedded SmolLM2 judge, and the fusion rules, on the MIND sample.

Usage: ``python benchmarks/ttft.py [--sample 40] [--modes warm,cold] [--out benchmarks/records/ttft-local.json]``

Times ``--sample`` Direct and as many sentence queries of the MIND sample (drawn at random with ``--seed``,
English and Chinese, the original prompt), sent one at a time to the in-process llama.cpp judge in each
mode (``warm``: the instruction shared by a language and dimension cached first, as ``tef extract``
runs; ``cold``: every prompt from an empty cache), and ``fuse_many`` over every pair of the sample at
once for each sentence-level rule (best of 5 repeats). Each query's prompt tokens are counted with the
judge's own tokenizer and chat template. The record says which machine ran it and how busy it was (the
load average before and after, the number of CPUs): chapter 8 of the book reads it, so that the book
build times nothing (``tef book -p 08.live_timing=true`` times again on the machine at hand).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from tefbook.chapters.ch08 import count_tokens, query_table, time_fusion, time_judge, timing_sample, token_counter
from tefcore import __version__
from tefcore.judges.registry import resolve_model
from tefcore.mind.load import evaluation_pairs, load_posts
from tefcore.mind.release import describe_data

DEFAULT_OUT = Path(__file__).resolve().parent / "records" / "ttft-local.json"


def machine() -> dict[str, object]:
    """The machine: processor, CPUs, memory, load average (1, 5, 15 minutes) and the Python build."""
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor() or "unknown")
    memory = next((int(line.split()[1]) / 2**20 for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal")), None)
    return {"processor": cpu, "cpus": os.cpu_count(), "memory_gib": round(memory, 1) if memory else None,
            "platform": platform.platform(), "python": platform.python_version(),
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local", help="registry name of a llama.cpp judge (default local)")
    parser.add_argument("--sample", type=int, default=40, help="queries of each kind (Direct, sentence)")
    parser.add_argument("--modes", default="warm,cold", help="warm and/or cold (comma-separated)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    spec = resolve_model(args.model)
    langs = ["en", "zh"]
    data = describe_data(langs=langs)
    pairs = [p for lang in langs for p in evaluation_pairs(load_posts(lang))]
    queries = query_table(pairs, variant="original")
    sample = count_tokens(timing_sample(queries, args.sample, args.seed), token_counter(spec))
    before = machine()
    started = time.perf_counter()
    timing = time_judge(spec, sample, [m.strip() for m in args.modes.split(",") if m.strip()])
    seconds = time.perf_counter() - started
    sizes = queries[queries["kind"] == "sentence"].groupby("pair").size().to_numpy()  # sentences per pair
    doc = np.repeat(np.arange(sizes.size), sizes)
    fusion = time_fusion(np.random.default_rng(args.seed).uniform(size=doc.size), doc)
    after = os.getloadavg()
    record = {
        "what": "time to first token of one judge on a sample of MIND queries, one request at a time, and "
                "fuse_many over every pair of the MIND sample at once",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {**before, "load_average_after": [round(x, 2) for x in after]},
        "judge": {k: v for k, v in timing.provenance.items() if k not in ("started_at",)},
        "setting": timing.setting, "concurrency": timing.concurrency, "tefcore_version": __version__,
        "data": {"kind": data.kind, "pairs": data.pairs, "sha256": data.sha256},
        "sample": {"per_kind": args.sample, "seed": args.seed, "prompt": "original", "modes": args.modes,
                   "seconds_spent": round(seconds, 1)},
        "requests": timing.timed[["mode", "kind", "lang", "dimension", "post_id", "tokens", "seconds"]]
        .to_dict("records"),
        "fusion": fusion.to_dict("records"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1, default=float) + "\n", encoding="utf-8")
    ms = timing.timed.groupby(["mode", "kind"])["seconds"].mean() * 1e3
    print(f"wrote {args.out}: load {before['load_average']} -> {[round(x, 2) for x in after]}")
    print(ms.round(1).to_string())


if __name__ == "__main__":
    main()
