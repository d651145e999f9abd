"""``tef extract --engine ray`` on a local Ray (4 logical CPUs on 2 cores): identical to the local loop,
exactly once under a killed actor and a killed driver, refusals before Ray runs.

Every test here has a timeout: a Ray Data pipeline that cannot schedule its tasks hangs silently.
The judges of the fault tests are the deterministic :mod:`ray_judges` (the workers find it through
``PYTHONPATH``).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytest.importorskip("ray.data", reason="the Ray engine's tests need Ray Data: pip install 'tefcore[ray]'")

import ray  # noqa: E402

from ray_judges import Drifting, HashJudge, KillOnce, scored  # noqa: E402
from tefcore.mind import mind_task  # noqa: E402
from tefcore.cli import main  # noqa: E402
from tefcore.extraction.cache import CacheError, ProvenanceMismatch, read_cache  # noqa: E402
from tefcore.extraction.parts import committed_parts, pair_id, parts_path  # noqa: E402
from tefcore.extraction.ray_engine import RayEngine, RayOptions  # noqa: E402
from tefcore.extraction.run import Setting, chunks, run_extraction  # noqa: E402
from tefcore.mind.load import EvaluationPair, mind_pair, evaluation_pairs, load_posts  # noqa: E402

pytestmark = pytest.mark.slow
TESTS = Path(__file__).resolve().parent
SAMPLE = TESTS.parent / "data" / "mind"


@pytest.fixture(scope="module")
def cluster() -> dict[str, str]:
    """A local Ray: 4 logical CPUs on this 2-core machine (two stay free for Ray Data's own tasks)."""
    ray.init(num_cpus=4, include_dashboard=False, logging_level="WARNING", object_store_memory=200 * 2**20,
             runtime_env={"env_vars": {"PYTHONPATH": str(TESTS)}})
    yield {"address": ray.get_runtime_context().gcs_address}
    ray.shutdown()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 30 English and 20 Chinese posts of the embedded sample (one pair each)."""
    folder = tmp_path_factory.mktemp("mind")
    for lang, n in (("en", 30), ("zh", 20)):
        lines = (SAMPLE / f"mind_{lang}.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)[:n]
        (folder / f"mind_{lang}.jsonl").write_text("".join(lines), encoding="utf-8")
    return folder


def run_extraction_ray(judge, pairs, out, *, options=None, **kwargs):  # type: ignore[no-untyped-def]
    """:func:`run_extraction` with the Ray engine."""
    return run_extraction(judge, pairs, out, engine=RayEngine(options), **kwargs)


def en_pairs(n: int) -> list[EvaluationPair]:
    return evaluation_pairs(load_posts("en", SAMPLE))[:n]


def pair_lines(path: Path) -> list[str]:
    """The pair records of a cache file (its header, which holds the start time, left out)."""
    return path.read_text(encoding="utf-8").splitlines()[1:]


def raw_ids(parts: Path) -> list[str]:
    """Every pair id in the committed part files, duplicates kept."""
    return [i for f in committed_parts(parts) for i in pq.read_table(f, columns=["pair_id"])["pair_id"].to_pylist()]


def tables(capsys: pytest.CaptureFixture[str], cache: Path) -> str:
    """What `tef evaluate` prints for the caches under ``cache``, the folder name taken out."""
    capsys.readouterr()
    assert main(["evaluate", "--cache", str(cache)]) == 0
    return capsys.readouterr().out.replace(str(cache), "<out>")


# --- identical to the local loop ------------------------------------------------------------------------
@pytest.mark.timeout(420)
def test_e5_zeroshot_on_ray_equals_the_local_loop(cluster: dict, data_dir: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    common = ["extract", "--model", "e5-zeroshot", "--lang", "en", "zh", "--data-dir", str(data_dir), "--no-progress"]
    started = time.perf_counter()
    assert main([*common, "--out", str(tmp_path / "ray"), "--engine", "ray", "--actors", "2",
                 "--pairs-per-batch", "8"]) == 0
    ray_seconds = time.perf_counter() - started
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    for lang, n in (("en", 30), ("zh", 20)):
        on_ray = tmp_path / "ray" / "e5-zeroshot" / "original" / f"{lang}.jsonl"
        local = tmp_path / "local" / "e5-zeroshot" / "original" / f"{lang}.jsonl"
        assert len(pair_lines(on_ray)) == n
        assert pair_lines(on_ray) == pair_lines(local)  # value for value, in the same order
        (a, prov_a), (b, prov_b) = read_cache(on_ray), read_cache(local)
        assert prov_a["provenance_id"] == prov_b["provenance_id"] and a.equals(b)
        assert sorted(raw_ids(parts_path(on_ray))) == sorted(pair_id(p, d) for p, d in zip(b["post_id"], b["dimension"]))
    assert tables(capsys, tmp_path / "ray") == tables(capsys, tmp_path / "local")
    print(f"\ne5-zeroshot, 50 pairs, 2 actors: ray {ray_seconds:.1f} s (with Ray Data start-up)")


@pytest.mark.timeout(420)
def test_a_task_with_three_sides_on_ray_equals_the_local_loop(cluster: dict, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The example task of the book (Housing: two sides; Transport: three, whose records carry the
    distributions): Ray's merged cache holds the local loop's records, value for value."""
    task = str(TESTS.parent / "data" / "examples" / "harbour-town" / "task.yaml")
    common = ["extract", "--task", task, "--model", "e5-zeroshot", "--no-progress"]
    assert main([*common, "--out", str(tmp_path / "ray"), "--engine", "ray", "--actors", "2",
                 "--pairs-per-batch", "8"]) == 0
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    for lang in ("en", "zh"):
        on_ray, local = (tmp_path / where / "e5-zeroshot" / "original" / f"{lang}.jsonl" for where in ("ray", "local"))
        assert pair_lines(on_ray) == pair_lines(local)  # value for value, in the same order
        assert sum('"sentence_probs"' in line for line in pair_lines(local)) == len(pair_lines(local)) // 2
    assert tables(capsys, tmp_path / "ray") == tables(capsys, tmp_path / "local")


@pytest.mark.timeout(300)
def test_embedded_llm_on_ray_equals_the_local_loop(cluster: dict, data_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp",
                        reason="llama-cpp-python is not installed (bash scripts/setup.sh --local-llm adds it)")
    from tefcore.judges.gguf import default_model_path

    try:
        default_model_path()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    common = ["extract", "--model", "local", "--lang", "en", "--limit", "3", "--data-dir", str(data_dir),
              "--no-progress"]
    # one thread per actor, two in the local loop: the numbers do not depend on it
    assert main([*common, "--out", str(tmp_path / "ray"), "--engine", "ray", "--actors", "1",
                 "--cpus-per-actor", "1"]) == 0
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    on_ray = pair_lines(tmp_path / "ray" / "local" / "original" / "en.jsonl")
    assert len(on_ray) == 3 and on_ray == pair_lines(tmp_path / "local" / "local" / "original" / "en.jsonl")
    assert all(json.loads(line)["direct_source"] == "logprobs" for line in on_ray)


# --- faults ---------------------------------------------------------------------------------------
@pytest.mark.timeout(300)
def test_a_killed_actor_loses_and_duplicates_no_pair(cluster: dict, tmp_path: Path) -> None:
    pairs, log, marker = en_pairs(60), tmp_path / "scored.log", tmp_path / "killed"
    judge = KillOnce(str(marker), after=12, delay=0.05, log=str(log))
    out = tmp_path / "ray" / "en.jsonl"
    report = run_extraction_ray(judge, pairs, out, variant="original", progress=False,
                                options=RayOptions(actors=(2, 2), pairs_per_batch=6))
    assert marker.is_file()  # one actor was SIGKILLed in the middle of a call
    ids = raw_ids(parts_path(out))
    everything = {pair_id(p.post_id, p.dimension) for p in pairs}
    assert len(ids) == len(set(ids)) == 60 and set(ids) == everything  # none lost, none twice
    again = [i for i, n in Counter(scored(log)).items() if n > 1]
    assert again  # the killed call's pairs were scored again ...
    assert report.pairs_written == 60 and report.prompts == sum(len(r) for _, r in _requests(pairs))
    local = tmp_path / "local.jsonl"
    run_extraction(HashJudge(), pairs, local, variant="original", progress=False)
    assert pair_lines(out) == pair_lines(local)  # ... and the records are those of an undisturbed run
    print(f"\nkilled actor: 60 pairs, 2 actors, 1 kill, {len(again)} pairs scored twice, "
          f"0 lost, {len(ids) - len(set(ids))} duplicates")


def _requests(pairs: list[EvaluationPair]) -> list:
    return [r for chunk in chunks(pairs, Setting("en", mind_task("original")), 8) for r in chunk]


DRIVER = """
import sys
sys.path.insert(0, {tests!r})
import ray
ray.init(address={address!r}, runtime_env={{"env_vars": {{"PYTHONPATH": {tests!r}}}}}, logging_level="WARNING")
from ray_judges import HashJudge
from tefcore.extraction.ray_engine import RayEngine, RayOptions
from tefcore.extraction.run import run_extraction
from tefcore.mind.load import evaluation_pairs, load_posts
pairs = evaluation_pairs(load_posts("en", {sample!r}))[:40]
run_extraction(HashJudge(delay=0.4, log={log!r}), pairs, {out!r}, variant="original", progress=False,
               engine=RayEngine(RayOptions(actors=(1, 1), pairs_per_batch=4)))
"""


def _committed(parts: Path) -> int:
    folder = parts / "checkpoint"
    return sum(not f.name.endswith(".pending.parquet") for f in folder.glob("*.parquet")) if folder.is_dir() else 0


def _quiet(log: Path, seconds: float = 4.0, limit: float = 60.0) -> None:
    """Wait until ``log`` has not grown for ``seconds`` (the dead driver's actor has stopped)."""
    end, size, since = time.monotonic() + limit, -1, time.monotonic()
    while time.monotonic() < end:
        now = log.stat().st_size if log.exists() else 0
        if now != size:
            size, since = now, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return
        time.sleep(0.5)
    raise AssertionError(f"{log} kept growing")


@pytest.mark.timeout(400)
def test_a_killed_driver_resumes_with_only_the_missing_pairs(cluster: dict, tmp_path: Path) -> None:
    out, first_log, second_log = tmp_path / "ray" / "en.jsonl", tmp_path / "first.log", tmp_path / "second.log"
    parts = parts_path(out)
    script = DRIVER.format(tests=str(TESTS), address=cluster["address"], sample=str(SAMPLE), log=str(first_log),
                           out=str(out))
    driver = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while _committed(parts) < 2:
            assert driver.poll() is None, driver.stderr.read().decode()[-2000:] if driver.stderr else ""
            assert time.monotonic() < deadline, "the first run committed nothing"
            time.sleep(0.2)
    finally:
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
    _quiet(first_log)
    before = set(raw_ids(parts))
    assert 0 < len(before) < 40  # the driver died mid-run
    pairs = en_pairs(40)
    report = run_extraction_ray(HashJudge(log=str(second_log)), pairs, out, variant="original", progress=False,
                                options=RayOptions(actors=(1, 1), pairs_per_batch=4))
    rescored = scored(second_log)
    everything = {pair_id(p.post_id, p.dimension) for p in pairs}
    assert sorted(rescored) == sorted(everything - before)  # only the missing pairs, each once
    assert report.pairs_skipped == len(before) and report.pairs_written == 40 - len(before)
    ids = raw_ids(parts)
    assert len(ids) == len(set(ids)) == 40 and set(ids) == everything
    local = tmp_path / "local.jsonl"
    run_extraction(HashJudge(), pairs, local, variant="original", progress=False)
    assert pair_lines(out) == pair_lines(local)
    again = run_extraction_ray(HashJudge(log=str(second_log)), pairs, out, variant="original", progress=False,
                               options=RayOptions(actors=(1, 1), pairs_per_batch=4))
    assert again.pairs_written == 0 and again.pairs_skipped == 40 and len(scored(second_log)) == len(rescored)
    print(f"\nkilled driver: 40 pairs, 1 actor, 1 kill, {len(before)} committed before it, "
          f"{len(rescored)} scored on resume, 0 lost, {len(ids) - len(set(ids))} duplicates")


# --- refusals before Ray runs ---------------------------------------------------------------------------
@pytest.mark.timeout(300)
def test_changed_provenance_or_text_is_refused_before_ray_runs(cluster: dict, tmp_path: Path) -> None:
    pairs, out = en_pairs(12), tmp_path / "ray" / "en.jsonl"
    run_extraction_ray(HashJudge(), pairs, out, variant="original", progress=False,
                       options=RayOptions(actors=(1, 1), pairs_per_batch=6))
    parts = parts_path(out)
    files = sorted(p.name for p in parts.rglob("*"))
    log = tmp_path / "never.log"
    with pytest.raises(ProvenanceMismatch, match="differs in: model"):
        run_extraction_ray(HashJudge(model="another", log=str(log)), pairs, out, variant="original", progress=False)
    with pytest.raises(ProvenanceMismatch, match="prompt_variant"):
        run_extraction_ray(HashJudge(log=str(log)), pairs, out, variant="minimal", progress=False)
    changed = [mind_pair(p.post_id, p.lang, p.dimension, p.side, p.text + " One more sentence here.")
               for p in pairs]
    with pytest.raises(CacheError, match="scored from another text"):
        run_extraction_ray(HashJudge(log=str(log)), changed, out, variant="original", progress=False)
    assert not log.exists() and sorted(p.name for p in parts.rglob("*")) == files  # nothing ran, nothing written
    with open(parts / ".lock") as held:  # another driver running into the same parts
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(CacheError, match="being written by another run"):
            run_extraction_ray(HashJudge(log=str(log)), pairs, out, variant="original", progress=False)
    assert not log.exists()


@pytest.mark.timeout(300)
def test_a_pair_in_the_checkpoint_but_in_no_part_is_reported(cluster: dict, tmp_path: Path) -> None:
    pairs, out = en_pairs(12), tmp_path / "ray" / "en.jsonl"
    options = RayOptions(actors=(1, 1), pairs_per_batch=6)
    run_extraction_ray(HashJudge(), pairs, out, variant="original", progress=False, options=options)
    parts = parts_path(out)
    lost = committed_parts(parts)[0]
    n = pq.read_metadata(lost).num_rows
    lost.unlink()  # a part removed by hand: Ray's checkpoint still lists its pairs
    with pytest.raises(CacheError, match=f"{n} pair\\(s\\) .* are in Ray's checkpoint but in no part"):
        run_extraction_ray(HashJudge(), pairs, out, variant="original", progress=False, options=options)


@pytest.mark.timeout(120)
def test_a_pool_that_would_hang_is_refused(cluster: dict, tmp_path: Path) -> None:
    pairs, out = en_pairs(6), tmp_path / "en.jsonl"
    with pytest.raises(ValueError, match="leave 0 of the cluster's 4 logical CPUs free; Ray Data needs 1"):
        run_extraction_ray(HashJudge(), pairs, out, variant="original", options=RayOptions(actors=(4, 4)))
    with pytest.raises(ValueError, match="need 1 GPUs; the cluster has 0"):
        run_extraction_ray(HashJudge(), pairs, out, variant="original",
                           options=RayOptions(actors=(1, 1), gpus_per_actor=1))
    run_extraction_ray(HashJudge(), pairs[:3], out, variant="original", progress=False,
                       options=RayOptions(actors=(1, 1)))
    # resuming: the checkpoint filter needs a second free CPU
    with pytest.raises(ValueError, match="Ray Data needs 2 free .*when resuming"):
        run_extraction_ray(HashJudge(), pairs, out, variant="original", options=RayOptions(actors=(3, 3)))


@pytest.mark.timeout(120)
def test_an_actor_whose_judge_differs_refuses_to_score(cluster: dict, tmp_path: Path) -> None:
    log = tmp_path / "never.log"
    with pytest.raises(RuntimeError, match="judge built in a Ray actor has another provenance"):
        run_extraction_ray(Drifting(log=str(log)), en_pairs(4), tmp_path / "en.jsonl", variant="original",
                           progress=False, options=RayOptions(actors=(1, 1)))
    assert not log.exists()
