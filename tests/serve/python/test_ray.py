"""tessera.ray on a local Ray cluster: compile-only actors (num_gpus=0 here),
records in request order, a killed actor replaced without losing a request."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

ray = pytest.importorskip("ray")

from tessera.ray import RayPool  # noqa: E402

from conftest import ROOT, TASK  # noqa: E402

ACTORS = 3
# Distinct candidates, each compiled by a process of its own (a few hundred ms
# each), keep a batch running when its actor is killed: through compile servers
# a batch of 36 could end before the kill, and so could one of cache hits on a
# GPU machine's 64 cores; then nothing would be replaced.
ONE_SHOT_COMPILES = {"runtime_env": {"env_vars": {"TESSERA_COMPILE_SERVER": "off"}}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    os.environ["TESSERA_CACHE_DIR"] = str(tmp_path_factory.mktemp("ray-cache"))  # the actors inherit it
    ray.init(num_cpus=ACTORS + 1, num_gpus=0, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def candidates(n: int, distinct: str = "") -> list[dict]:
    """``n`` candidates cycling over two kernels and one that does not compile; with ``distinct``
    each has a comment of its own, so each is a compile of its own (no cache hit)."""
    naive = (ROOT / "examples" / "hgemm_naive.cu").read_text()
    wmma = (ROOT / "examples" / "hgemm_wmma.cu").read_text()
    bad = "extern \"C\" __global__ void tessera_hgemm() { this is not CUDA; }"
    srcs = [naive, wmma, bad]
    return [{"source": (f"// {distinct} {i}\n" if distinct else "") + srcs[i % 3], "task": TASK, "name": f"c{i}"}
            for i in range(n)]


def test_records_come_back_in_request_order_from_every_actor(cluster):
    pool = RayPool(num_actors=ACTORS, num_gpus=0, mode="compile_only")
    try:
        assert len(pool.describe()) == ACTORS
        recs = pool.evaluate_batch(candidates(18), chunk_size=2)
        assert [r["result"]["candidate_name"] for r in recs] == [f"c{i}" for i in range(18)]
        assert [r["status"] for r in recs] == ["compiled", "compiled", "compile_error"] * 6
        assert {"status", "reason", "task", "compile", "phase_ms", "mode"} <= set(recs[0]["result"])
        # Policy replies (text) scored as one turn each, as a trainer's reward function would.
        naive = (ROOT / "examples" / "hgemm_naive.cu").read_text()
        scored = pool.score_actions([f"```cuda\n{naive}\n```", "no kernel here"] * 3, TASK, chunk_size=1)
        assert [s["reward"] for s in scored] == [0.0, -1.0] * 3  # compile-only: compiled earns 0; no kernel: format
        assert all(s["info"]["masked"] is False for s in scored)
    finally:
        pool.shutdown()


def test_a_killed_actor_is_replaced_and_no_request_is_lost(cluster):
    pool = RayPool(num_actors=ACTORS, num_gpus=0, mode="compile_only", actor_options=ONE_SHOT_COMPILES)
    try:
        victim = ray.get(pool.actors[0].pid.remote())
        batch = candidates(36, distinct=f"kill {time.time_ns()}")
        out = {}
        t = threading.Thread(target=lambda: out.update(recs=pool.evaluate_batch(batch, chunk_size=1)))
        t.start()
        time.sleep(0.5)  # the batch is running on every actor
        os.kill(victim, signal.SIGKILL)
        t.join(timeout=600)
        assert not t.is_alive()
        recs = out["recs"]
        assert [r["result"]["candidate_name"] for r in recs] == [f"c{i}" for i in range(36)]
        assert [r["status"] for r in recs] == ["compiled", "compiled", "compile_error"] * 12
        assert pool.replacements == 1
        assert len(pool.describe()) == ACTORS
    finally:
        pool.shutdown()
