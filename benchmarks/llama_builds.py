"""Which llama.cpp build reproduces each committed cache of the embedded SmolLM2 judge.

Usage: ``python benchmarks/llama_builds.py [--pairs 2] [--out data/engines/llama-cpp-builds.json]``

Scores the first ``--pairs`` pairs of every dimension of each committed ``data/caches/local/*/*.jsonl`` again
with the llama.cpp build that Python imports (under the chat rendering each cache records) and writes, for
that build, the largest difference from the committed probabilities, and how much the reuse of a prompt's
shared prefix and the thread count move one pair's probabilities, merged into the record under the build's
CPU features (``llama_cpp_cpu``). Run it once per build, e.g. a second time with
``PYTHONPATH=<dir of a llama-cpp-python built with -DGGML_NATIVE=ON>``. Chapter 4 reads the record: a cache
whose header names a build must be reproduced by that build (difference at most 1e-9).
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

from tefcore.judges.cache import read_cache
from tefcore.judges.llama_build import build_features
from tefcore.judges.local import LocalBackend, _import_llama_cpp
from tefcore.judges.run import build_requests
from tefcore.mind.load import evaluation_pairs, load_posts

ROOT = Path(__file__).resolve().parents[1]


def measure(path: Path, per_dimension: int) -> dict[str, object]:
    """Re-score ``per_dimension`` pairs of every dimension of one cache; the largest |Δ| of any probability."""
    committed, header = read_cache(path)
    variant, lang = path.parent.name, path.stem
    judge = LocalBackend(keep_default_system=header["system_prompt"].startswith("template default"))
    if judge.provenance()["system_prompt"] != header["system_prompt"]:
        raise SystemExit(f"{path}: its chat rendering {header['system_prompt']!r} cannot be set here")
    pairs = evaluation_pairs(load_posts(lang, None))
    chosen = [p for d in sorted({p.dimension for p in pairs}) for p in [q for q in pairs if q.dimension == d][
        :per_dimension]]
    rows = committed.set_index(["post_id", "dimension"])
    worst, prompts, start = 0.0, 0, time.perf_counter()
    for pair in chosen:
        row = rows.loc[(pair.post_id, pair.dimension)]
        old = np.array([row["direct"], *row["sentences"]], dtype=float)
        new = np.array([s.p_change for s in judge.score(build_requests(pair, variant, "reference"))])
        worst, prompts = max(worst, float(np.nanmax(np.abs(new - old)))), prompts + new.size
    return {"cache": f"local/{variant}/{lang}", "recorded_build": header.get("llama_cpp_cpu"),
            "system_prompt": header["system_prompt"], "pairs": len(chosen), "prompts": prompts,
            "max_abs_difference": worst, "seconds": round(time.perf_counter() - start, 1)}


def settings(path: Path) -> dict[str, object]:
    """One pair of a cache scored under the default setting and with the shared prefix rebuilt for every
    prompt, with one thread, and both: the largest |Δ| of each from the default."""
    committed, header = read_cache(path)
    variant, lang = path.parent.name, path.stem
    pair = evaluation_pairs(load_posts(lang, None))[0]
    requests = build_requests(pair, variant, "reference")
    keep = header["system_prompt"].startswith("template default")
    options = {"default": {}, "no prefix reuse": {"reuse_prefix": False}, "one thread": {"n_threads": 1},
               "no prefix reuse, one thread": {"reuse_prefix": False, "n_threads": 1}}
    p = {name: np.array([s.p_change for s in LocalBackend(keep_default_system=keep, **kw).score(requests)])
         for name, kw in options.items()}
    return {"cache": f"local/{variant}/{lang}", "post_id": pair.post_id, "dimension": pair.dimension,
            "prompts": len(requests),
            "max_abs_difference_from_default": {k: float(np.max(np.abs(v - p["default"]))) for k, v in p.items()
                                                if k != "default"}}


def machine() -> dict[str, object]:
    """The processor's model name and its AVX-512 support (from /proc/cpuinfo), the CPU count and the system."""
    info = Path("/proc/cpuinfo").read_text(encoding="utf-8") if Path("/proc/cpuinfo").is_file() else ""
    names = [line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")]
    return {"processor": names[0] if names else platform.machine(), "cpus": os.cpu_count(),
            "avx512f": " avx512f" in info, "system": f"{platform.system()} {platform.machine()}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2, help="pairs per dimension of each cache")
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "engines" / "llama-cpp-builds.json")
    args = parser.parse_args()
    build = build_features(_import_llama_cpp())
    record = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {
        "about": __doc__.splitlines()[0], "machine": machine(), "builds": {}}
    results = []
    for path in sorted((ROOT / "data" / "caches" / "local").glob("*/??.jsonl")):
        results.append(measure(path, args.pairs))
        print(json.dumps(results[-1]), flush=True)
    varied = settings(ROOT / "data" / "caches" / "local" / "minimal" / "en.jsonl")
    print(json.dumps(varied), flush=True)
    record["builds"][build] = {"written_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                               "caches": results, "settings": varied}
    args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
