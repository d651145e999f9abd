"""The Ray engine without a cluster: actor pools and the hangs they are checked against, the GPU route with
vLLM faked, shipping a prepared judge, the flags of ``tef extract``, and life without Ray installed."""

from __future__ import annotations

import json
import math
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ray_judges import HashJudge
from tefcore.mind import mind_task
from tefcore.cli import main
from tefcore.extraction.cache import provenance_id
from tefcore.extraction.ray_engine import (
    JudgeActor,
    JudgeShipment,
    RayOptions,
    Resources,
    check_fits,
    plan_resources,
    ship_prepared,
)
from tefcore.judges.registry import ModelSpec
from tefcore.extraction.run import Setting, build_requests, run_provenance, score_chunk
from tefcore.mind.load import mind_pair

TESTS = Path(__file__).resolve().parent

SETTING = Setting("en", mind_task("original"), "reference")
PAIRS = [mind_pair(f"en-{i}", "en", "Economy", "change" if i % 2 else "stability",
                        f"Markets decide prices number {i}. The state keeps out of it. Taxes should fall.")
         for i in range(4)]


# --- actor pools and the hangs ----------------------------------------------------------------------------
def test_actors_are_read_from_the_text_of_the_flag() -> None:
    assert RayOptions(actors="3").actors == (3, 3) and RayOptions(actors="2:6").actors == (2, 6)
    assert RayOptions(actors=(2, 6)) == RayOptions(actors="2:6")
    for bad in ("0", "3:2", "x", "1:", ":4", "-1", (0, 1), (3, 2)):
        with pytest.raises(ValueError, match="^--actors"):
            RayOptions(actors=bad)


def test_default_resources_per_judge() -> None:
    cluster = {"CPU": 10.0}
    llama = plan_resources("llama_cpp", RayOptions(), cluster, 16, {"n_threads": 2})
    assert (llama.cpus, llama.threads, llama.gpus, llama.actors, llama.pairs_per_batch) == (2.0, 2, 0.0, (4, 4), 8)
    e5 = plan_resources("e5-zeroshot", RayOptions(), cluster, 64)
    assert (e5.cpus, e5.threads, e5.actors, e5.pairs_per_batch) == (1.0, 1, (8, 8), 16)
    api = plan_resources("openai", RayOptions(), cluster, 64)
    assert api.cpus == 0.25 and api.threads == 1 and api.actors == (16, 16)  # capped: --actors is the budget
    mine = plan_resources("e5-crossfit", RayOptions(actors=(1, 3), cpus_per_actor=2.5, pairs_per_batch=5), cluster, 64)
    assert (mine.actors, mine.cpus, mine.threads, mine.pairs_per_batch) == ((1, 3), 2.5, 2, 5)
    assert plan_resources("e5-zeroshot", RayOptions(), {"CPU": 2.0}, 64).actors == (1, 1)  # at least one


def test_gpu_route_resources() -> None:
    cluster = {"CPU": 64.0, "GPU": 8.0}
    vllm = plan_resources("vllm", RayOptions(), cluster, 4096, {"tensor_parallel_size": 2})
    assert (vllm.gpus, vllm.actors, vllm.cpus, vllm.pairs_per_batch) == (2.0, (4, 4), 1.0, 1024)
    assert plan_resources("vllm", RayOptions(gpus_per_actor=1), cluster, 4096, {"tensor_parallel_size": 2}).gpus == 1
    with pytest.raises(ValueError, match="tensor_parallel_size 'auto'.*--gpus-per-actor"):
        plan_resources("vllm", RayOptions(), cluster, 4096, {"tensor_parallel_size": "auto"})
    assert plan_resources("vllm", RayOptions(gpus_per_actor=4), cluster, 4096,
                          {"tensor_parallel_size": "auto"}).actors == (2, 2)
    check_fits(vllm, cluster, resuming=True)
    with pytest.raises(ValueError, match="5 actors x 2 GPU need 10 GPUs; the cluster has 8"):
        check_fits(Resources((1, 5), 1.0, 2.0, 1, 8), cluster, resuming=False)


@given(cpus=st.integers(1, 64), actors=st.integers(1, 40), per_actor=st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.0]),
       resuming=st.booleans())
def test_check_fits_keeps_cpus_free_for_ray_data(cpus: int, actors: int, per_actor: float, resuming: bool) -> None:
    resources = Resources((1, actors), per_actor, 0.0, max(1, math.floor(per_actor)), 8)
    free = cpus - actors * per_actor
    try:
        check_fits(resources, {"CPU": float(cpus)}, resuming)
    except ValueError as exc:
        assert free < (2 if resuming else 1)
        assert f"{actors} actors x {per_actor:g} CPU" in str(exc) and "hangs" in str(exc)
    else:
        assert free >= (2 if resuming else 1)


def test_map_arguments() -> None:
    pytest.importorskip("ray.data")
    from tefcore.extraction.ray_engine import map_arguments

    fixed = map_arguments(Resources((2, 2), 1.0, 0.0, 1, 8))
    assert fixed["compute"].min_size == fixed["compute"].max_size == 2
    assert fixed["num_cpus"] == 1.0 and "num_gpus" not in fixed and fixed["batch_size"] is None
    scaling = map_arguments(Resources((1, 4), 1.0, 2.0, 1, 8))
    assert (scaling["compute"].min_size, scaling["compute"].max_size, scaling["num_gpus"]) == (1, 4, 2.0)


# --- the GPU route, vLLM faked ---------------------------------------------------------------------------
def test_vllm_actor_builds_the_users_vllm_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    from test_vllm import install

    made = install(monkeypatch, gpus="0,1")  # the two GPUs Ray gives an actor with num_gpus=2
    spec = ModelSpec("qwen2.5-7b", "vllm", {"model": "Qwen/Qwen2.5-7B-Instruct", "tensor_parallel_size": 2,
                                            "max_model_len": 4096, "seed": 0})
    resources = plan_resources("vllm", RayOptions(), {"CPU": 16.0, "GPU": 4.0}, 4096, spec.options)
    assert resources.gpus == 2 and resources.actors == (2, 2)
    driver_side = JudgeActor(JudgeShipment(spec=spec.with_options(reading="summed")), SETTING)
    pid = driver_side.provenance_id
    actor = JudgeActor(JudgeShipment(pid, spec=spec.with_options(reading="summed")), SETTING)
    assert type(actor.backend).__name__ == "VLLMBackend"
    assert made["llm"].model == "Qwen/Qwen2.5-7B-Instruct" and made["llm"].kwargs["tensor_parallel_size"] == 2
    assert actor.provenance_id == pid
    with pytest.raises(RuntimeError, match="another provenance"):
        JudgeActor(JudgeShipment(pid, spec=spec.with_options(reading="reference")), SETTING)


# --- shipping a prepared judge ------------------------------------------------------------------------------
def test_an_actor_scores_a_batch_as_the_local_loop() -> None:
    pa = pytest.importorskip("pyarrow")
    judge = HashJudge()
    pid = provenance_id(run_provenance(judge, SETTING))
    actor = JudgeActor(JudgeShipment(pid, ship_prepared(judge)), SETTING)
    rows = [{"pair_id": f"Economy/{p.post_id}", "seq": 10 + i, "chunk": i // 2, "post_id": p.post_id,
             "lang": p.lang, "dimension": p.dimension, "side": p.side, "text": p.text} for i, p in enumerate(PAIRS)]
    out = actor(pa.Table.from_pylist(rows)).to_pylist()
    assert [r["seq"] for r in out] == [10, 11, 12, 13] and [r["pair_id"] for r in out] == [r["pair_id"] for r in rows]
    for half in (PAIRS[:2], PAIRS[2:]):  # each chunk is one call, as in the local loop
        local = score_chunk(judge, [(p, build_requests(p, mind_task("original"), "reference")) for p in half])
        for (pair, scores), row in zip(local, [r for r in out if r["post_id"] in {p.post_id for p in half}]):
            want = [s.p_change for s in scores[1:]]
            assert [x if x is not None else math.nan for x in row["sentences"]] == pytest.approx(want, nan_ok=True)
            assert row["provenance_id"] == pid and row["text_sha256"]


def test_e5_judge_ships_without_its_engine() -> None:
    e5 = pytest.importorskip("tefcore.judges.e5")
    from tefcore.judges.e5_engine import E5Embedder

    judge = e5.E5ZeroShotBackend(temperature=0.05, embedder=E5Embedder())
    judge.embedder._model = object()  # stands for the loaded engine: a handle pickle cannot take
    judge.embedder._cache[("query", "x")] = __import__("numpy").ones(384, dtype="float32")
    copy = pickle.loads(ship_prepared(judge, threads=3))
    assert copy.embedder._model is None and copy.embedder.num_threads == 3
    assert (copy.embedder._cache[("query", "x")] == 1).all() and copy.temperature == 0.05


def test_a_judge_that_cannot_travel_is_refused() -> None:
    judge = HashJudge()
    judge.handle = lambda: None  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="cannot be sent to Ray actors"):
        ship_prepared(judge)


# --- the command line ------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["--actors", "2"], "--actors applies to --engine ray only"),
    (["--cpus-per-actor", "1", "--pairs-per-batch", "4"], "--cpus-per-actor, --pairs-per-batch apply to"),
    (["--engine", "ray", "--actors", "0"], "tef: error: --actors takes N or MIN:MAX with 1 <= MIN <= MAX, got '0'\n"),
    (["--engine", "ray", "--actors", "2:x"], "tef: error: --actors takes N or MIN:MAX (positive integers), got '2:x'\n"),
    (["--engine", "ray", "--cpus-per-actor", "0"], "--cpus-per-actor must be > 0"),
])
def test_ray_flags_are_checked(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ray.data")
    try:
        code = main(["extract", "--model", "e5-zeroshot", "--lang", "en", "--out", "/nonexistent", *argv])
    except SystemExit as stop:
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.splitlines()) == 1, err


_WALK = textwrap.dedent("""
    import json, sys
    from tefcore.cli import main

    class AtTheEngine(BaseException):  # not an Exception: tef's error handling lets it by
        pass

    door = {"local": "tefcore.extraction.run", "ray": "tefcore.extraction.ray_engine"}[sys.argv[1]]
    seen, walk, stopped = set(), [], []

    def record(frame, event, arg):
        module = frame.f_globals.get("__name__", "")
        if event != "call" or stopped or not module.startswith("tefcore"):
            return
        if module == door and frame.f_code.co_name == "session":
            stopped.append(True)
            raise AtTheEngine
        key = (module, frame.f_code.co_name, frame.f_code.co_firstlineno)
        if key not in seen:
            seen.add(key)
            if not walk or walk[-1] != module:
                walk.append(module)

    sys.setprofile(record)
    try:
        code = main(sys.argv[2:])
    except AtTheEngine:
        print(json.dumps(walk))
    else:
        sys.exit(f"tef ended with exit code {code} before the engine's session")
    finally:
        sys.setprofile(None)
""")


def test_the_ray_engine_walks_no_longer_from_the_arguments_to_its_session(tmp_path: Path) -> None:
    """From ``tef extract``'s arguments to the engine's session, Ray's walk is the local one's, the Ray engine's
    module in the place of the local engine's: no more stays, no more returns.

    The walk: the tefcore modules of the functions called, each function at its first call, a module repeated
    in a row counted once (a *stay*); a *return* is a stay in a module the walk has been in before. Each engine
    runs in a process of its own, as ``tef`` does (its modules imported on the way), stopped at the door of its
    ``session``. With ``--actors`` read by the parser (``type=`` a function of the Ray engine's module, imported
    there), Ray's walk began ``cli > extraction.ray_engine > cli``: 2 more stays (24 against 22) and one more
    return (14 against 13) than the local one's, and this test failed; so it did when ``_engine`` imported that
    module before reading the flags (a comprehension of cli's, a call of its own, came between).
    """
    pytest.importorskip("ray.data")  # RayEngine() imports it; no cluster is started
    lines = (TESTS.parent / "data" / "mind" / "mind_en.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "mind_en.jsonl").write_text("".join(lines[:4]), encoding="utf-8")
    argv = ["extract", "--model", "e5-zeroshot", "--lang", "en", "--data-dir", str(tmp_path),
            "--out", str(tmp_path / "out"), "--no-progress"]
    walks: dict[str, list[str]] = {}
    for engine, extra in (("local", []), ("ray", ["--engine", "ray", "--actors", "1"])):
        done = subprocess.run([sys.executable, "-c", _WALK, engine, *argv, *extra], capture_output=True, text=True,
                              timeout=180)
        assert done.returncode == 0, done.stderr
        walks[engine] = json.loads(done.stdout.splitlines()[-1])
    local, on_ray = walks["local"], walks["ray"]

    def returns(walk: list[str]) -> int:
        return len(walk) - len(set(walk))

    assert len(on_ray) <= len(local) and returns(on_ray) <= returns(local), (local, on_ray)
    as_local = ["tefcore.extraction.run" if m == "tefcore.extraction.ray_engine" else m for m in on_ray]
    assert [m for i, m in enumerate(as_local) if i == 0 or as_local[i - 1] != m] == local, (local, on_ray)
    assert not (tmp_path / "out").exists()  # stopped at the door: nothing written


def test_without_ray_the_library_imports_and_the_engine_says_what_to_install(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import sys
        sys.modules["ray"] = None  # as if Ray were not installed
        import tefcore, tefcore.extraction.run, tefcore.extraction.ray_engine
        from tefcore.cli import main
        sys.exit(main(["extract", "--model", "e5-zeroshot", "--engine", "ray", "--lang", "en", "--limit", "1",
                       "--out", sys.argv[1]]))
    """)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == "tef: error: --engine ray needs Ray Data: pip install 'tefcore[ray]'"
    assert not any(tmp_path.iterdir())
