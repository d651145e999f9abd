"""The committed caches read as they did, and MIND's prompts and provenance are the same, across refactors.

``tests/fixtures/unchanged.json`` was written from the code before MIND became one task among others
(``python tests/test_unchanged.py`` writes it again; do so only when a change of numbers is intended).
It holds, for every cache under ``data/caches``, the recorded and recomputed provenance ids, a hash of
the frame read and the rounded score table of every rule; and for MIND the hash of each template, of
each prompt of a fixed text, and each run setting's provenance.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tefcore.evaluate import predict_pairs, score_table
from tefcore.extraction.cache import provenance_id, read_cache_file
from tefcore.mind.prompts import VARIANTS, build_prompt, template_hash
from tefcore.mind.schema import DIMENSIONS, LANGS

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "unchanged.json"
CACHES = sorted((ROOT / "data" / "caches").rglob("*.jsonl"))
TEXT = {"en": "  Taxes should fall. Schools need money.  ", "zh": " 应当减税。学校需要资金。 "}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_snapshot(path: Path) -> dict[str, Any]:
    """What one cache reads to: its ids, a hash of its frame, and its score table (rounded)."""
    frame, prov = read_cache_file(path)
    table = score_table(predict_pairs(frame)).round(9)
    return {"provenance_id": prov["provenance_id"],
            "recomputed_id": provenance_id({k: v for k, v in prov.items() if k != "provenance_id"}),
            "frame_sha256": _sha(frame.to_json(orient="records", double_precision=15)),
            "table": json.loads(table.to_json(orient="records", double_precision=9))}


def mind_snapshot() -> dict[str, Any]:
    """MIND's template hashes, prompt hashes and the setting part of a run's provenance."""
    from tefcore.extraction.run import Setting
    from tefcore.mind import mind_task

    out: dict[str, Any] = {}
    for lang in LANGS:
        for variant in VARIANTS:
            prompts = "\n".join(build_prompt(TEXT[lang], d.name, lang, variant) for d in DIMENSIONS)
            out[f"{lang}/{variant}"] = {"template_sha256": template_hash(lang, variant),
                                        "prompts_sha256": _sha(prompts),
                                        "setting": Setting(lang, mind_task(variant)).provenance()}
    return out


def task_snapshot() -> dict[str, Any]:
    """The example task's prompts (hashed) and the setting part of a run's provenance, per language."""
    from tefcore.extraction.run import Setting
    from tefcore.tasks import example_dir, load_task

    task = load_task(example_dir() / "task.yaml")
    out: dict[str, Any] = {}
    for lang in LANGS:
        prompts = "\n".join(task.prompt(TEXT[lang], c.dimension, lang) for c in task.dimensions)
        out[lang] = {"prompts_sha256": _sha(prompts), "setting": Setting(lang, task, "reference").provenance()}
    return out


def snapshot() -> dict[str, Any]:
    caches = {str(p.relative_to(ROOT)): cache_snapshot(p) for p in CACHES}
    return {"caches": caches, "mind": mind_snapshot(), "task": task_snapshot()}


@pytest.mark.skipif(not CACHES, reason="no committed cache under data/caches")
@pytest.mark.parametrize("path", CACHES, ids=lambda p: str(p.relative_to(ROOT / "data" / "caches")))
def test_a_committed_cache_reads_as_before(path: Path) -> None:
    want = json.loads(FIXTURE.read_text(encoding="utf-8"))["caches"][str(path.relative_to(ROOT))]
    got = cache_snapshot(path)
    assert got["provenance_id"] == got["recomputed_id"] == want["provenance_id"]
    assert got["frame_sha256"] == want["frame_sha256"]
    assert got["table"] == want["table"]


def test_mind_prompts_and_provenance_are_as_before() -> None:
    want = json.loads(FIXTURE.read_text(encoding="utf-8"))["mind"]
    assert mind_snapshot() == want


def test_a_task_s_prompts_and_provenance_are_as_before() -> None:
    want = json.loads(FIXTURE.read_text(encoding="utf-8"))["task"]
    assert task_snapshot() == want


def test_the_snapshot_sees_a_changed_number(tmp_path: Path) -> None:
    """A cache whose one probability moved reads to another frame hash: the comparison above can fail."""
    path = CACHES[0] if CACHES else pytest.skip("no committed cache")
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["direct"] = 0.5 if record["direct"] != 0.5 else 0.25
    moved = tmp_path / "moved.jsonl"
    moved.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n", encoding="utf-8")
    assert cache_snapshot(moved)["frame_sha256"] != cache_snapshot(path)["frame_sha256"]


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(snapshot(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    sys.exit(0)
