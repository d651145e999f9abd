"""``tef extract --engine ray`` on a simulated two-node cluster (``ray.cluster_utils.Cluster``): a node that
holds a judge actor is removed mid-run, and every pair is still scored into the parts exactly once."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("ray.data", reason="the Ray engine's tests need Ray Data: pip install 'tefcore[ray]'")

import pyarrow.parquet as pq  # noqa: E402
import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from ray_judges import HashJudge, nodes  # noqa: E402
from tefcore.extraction.parts import committed_parts, pair_id, parts_path  # noqa: E402
from tefcore.extraction.ray_engine import RayEngine, RayOptions  # noqa: E402
from tefcore.extraction.run import run_extraction  # noqa: E402
from tefcore.mind.load import evaluation_pairs, load_posts  # noqa: E402

pytestmark = pytest.mark.slow
TESTS = Path(__file__).resolve().parent
SAMPLE = TESTS.parent / "data" / "mind"
STORE = 100 * 2**20


@pytest.fixture
def two_nodes() -> Cluster:
    """A head that runs nothing (0 CPUs) and two worker nodes of 3 logical CPUs."""
    if ray.is_initialized():
        ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "object_store_memory": STORE})
    for _ in range(2):
        cluster.add_node(num_cpus=3, object_store_memory=STORE)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, logging_level="WARNING", runtime_env={"env_vars": {"PYTHONPATH": str(TESTS)}})
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def _remove_a_busy_node(cluster: Cluster, parts: Path, log: Path, removed: list[str]) -> None:
    """Once a part is committed, remove a worker node on which the judge has scored."""
    workers = {node.node_id: node for node in cluster.worker_nodes}
    deadline = time.monotonic() + 200
    while time.monotonic() < deadline:
        busy = [n for n in (nodes(log) if log.exists() else []) if n in workers]
        if busy and committed_parts(parts):
            cluster.remove_node(workers[busy[-1]])
            removed.append(busy[-1])
            return
        time.sleep(0.2)


@pytest.mark.timeout(400)
def test_a_removed_node_loses_and_duplicates_no_pair(two_nodes: Cluster, tmp_path: Path) -> None:
    pairs = evaluation_pairs(load_posts("en", SAMPLE))[:60]
    out, log = tmp_path / "ray" / "en.jsonl", tmp_path / "scored.log"
    removed: list[str] = []
    remover = threading.Thread(target=_remove_a_busy_node, args=(two_nodes, parts_path(out), log, removed))
    remover.start()
    report = run_extraction(HashJudge(delay=0.5, log=str(log)), pairs, out, variant="original", progress=False,
                            engine=RayEngine(RayOptions(actors=(2, 2), pairs_per_batch=3)))
    remover.join()
    assert len(removed) == 1  # a node that held an actor was removed during the run
    after = nodes(log)[nodes(log).index(removed[0]):]
    assert any(n != removed[0] for n in after)  # the work went on elsewhere
    ids = [i for f in committed_parts(parts_path(out)) for i in pq.read_table(f, columns=["pair_id"])["pair_id"].to_pylist()]
    everything = {pair_id(p.post_id, p.dimension) for p in pairs}
    assert len(ids) == len(set(ids)) == 60 and set(ids) == everything  # none lost, none twice
    assert report.pairs_written == 60
    local = tmp_path / "local.jsonl"
    run_extraction(HashJudge(), pairs, local, variant="original", progress=False)
    assert out.read_text().splitlines()[1:] == local.read_text().splitlines()[1:]
    print(f"\nremoved node: 60 pairs, 2 actors on 2 nodes, 1 node removed, {len(nodes(log)) - 60} pairs scored "
          f"again, 0 lost, {len(ids) - len(set(ids))} duplicates")
