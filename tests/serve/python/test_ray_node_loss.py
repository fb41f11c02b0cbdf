"""tessera.ray when a node dies: a three-node local Ray cluster (ray.cluster_utils),
compile-only actors that need a resource only two worker nodes offer. The node of
one actor is removed mid-batch and nothing is left to place its replacement on:
the batch still comes back whole, in order, from the surviving actors. When a
node joins again the replacement starts there and takes work."""

from __future__ import annotations

import os
import threading
import time

import pytest

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

from tessera.ray import RayPool  # noqa: E402

from conftest import ROOT, TASK  # noqa: E402

SLOT = {"tessera_slot": 1}  # each actor's share of a worker node (the stand-in for its GPU)
BATCH = 60  # about 5 s of compiles on two cores: the node goes long before the batch ends
REMOVE_AFTER_S = 1.0  # into the batch: every actor is busy
JOIN_TIMEOUT_S = 60.0  # for the replacement to start on a node that joined


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    os.environ["TESSERA_CACHE_DIR"] = str(tmp_path_factory.mktemp("ray-node-loss-cache"))  # the actors inherit it
    if ray.is_initialized():
        ray.shutdown()
    c = cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        c.add_node(num_cpus=3, resources={"tessera_slot": 2})
        lost = c.add_node(num_cpus=2, resources={"tessera_slot": 1})
        ray.init(address=c.address, log_to_driver=False)
        c.wait_for_nodes()
        yield c, lost
    finally:
        ray.shutdown()
        c.shutdown()


def candidates(n: int) -> list[dict]:
    naive = (ROOT / "examples" / "hgemm_naive.cu").read_text()
    bad = "extern \"C\" __global__ void tessera_hgemm() { this is not CUDA; }"
    return [{"source": naive if i % 2 == 0 else bad, "task": TASK, "name": f"c{i}"} for i in range(n)]


def test_a_lost_node_leaves_its_work_to_the_surviving_actors(cluster):
    c, lost = cluster
    # One compile process per candidate: the batch is still running when the node goes (through
    # compile servers it could end first, and nothing would be replaced).
    pool = RayPool(num_actors=3, num_gpus=0, mode="compile_only",
                   actor_options={"resources": SLOT, "runtime_env": {"env_vars": {"TESSERA_COMPILE_SERVER": "off"}}},
                   start_timeout_s=120)
    try:
        assert len({d["pid"] for d in pool.devices()}) == 3
        batch = candidates(BATCH)
        out: dict = {}
        t = threading.Thread(target=lambda: out.update(recs=pool.evaluate_batch(batch, chunk_size=1)))
        t.start()
        time.sleep(REMOVE_AFTER_S)
        c.remove_node(lost)
        t.join(timeout=300)
        assert not t.is_alive(), "the batch waited for a replacement that has nowhere to start"
        recs = out["recs"]
        assert [r["result"]["candidate_name"] for r in recs] == [f"c{i}" for i in range(BATCH)]
        assert [r["status"] for r in recs] == ["compiled", "compile_error"] * (BATCH // 2)
        assert pool.replacements == 1
        assert [d["starting"] for d in pool.devices()].count(True) == 1, "the replacement waits for a node"
        # A node joins: the waiting replacement starts there, and every actor answers again.
        c.add_node(num_cpus=2, resources={"tessera_slot": 1})
        recs = pool.evaluate_batch(candidates(6), chunk_size=1)
        assert [r["status"] for r in recs] == ["compiled", "compile_error"] * 3
        deadline = time.monotonic() + JOIN_TIMEOUT_S
        while any(d["starting"] for d in pool.devices()) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert len({d["pid"] for d in pool.devices()} - {None}) == 3
    finally:
        pool.shutdown()
