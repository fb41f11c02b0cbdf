"""tessera.ray on the GPUs of one machine: a local Ray cluster of every GPU, one
full-mode actor each. Each actor evaluates on its own GPU and together they
cover every GPU once; an actor killed mid-batch is replaced (on a GPU again)
without losing a request; and evaluations per minute with one actor against
all of them (printed, and written as JSON to $TESSERA_RAY_SCALE_JSON).

Needs at least two GPUs, nvidia-smi and Ray; skips, saying which is missing,
elsewhere (CI has no GPU). On the GPU machine: scripts/gpu_ray.sh."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
import uuid

import pytest

from tessera import _core

from conftest import ROOT

GPUS = _core.device_count()
if GPUS < 2:
    pytest.skip(f"needs at least 2 GPUs for one Ray actor per GPU; CUDA sees {GPUS}", allow_module_level=True)
if shutil.which("nvidia-smi") is None:
    pytest.skip("needs nvidia-smi to tell the GPUs apart (UUID, PCI bus id)", allow_module_level=True)
try:
    import ray
except ImportError:
    pytest.skip("Ray is not installed (scripts/gpu_ray.sh installs the carried wheel)", allow_module_level=True)

from tessera.ray import RayPool  # noqa: E402

SHAPE = "2048x2048x2048"
OPTIONS = {"counters": False}  # as `tessera bench harness` evaluates
OBJECT_STORE_BYTES = 256 * 1024**2  # records only: the default (a share of RAM) is far more than needed
KILL_PER_ACTOR = 12  # evaluations per actor in the killed-actor batch: the victim is busy when it dies
KILL_AFTER_S = 2.0  # into that batch (an evaluation with its compile takes about a second)
SCALE_PER_ACTOR = int(os.environ.get("TESSERA_RAY_SCALE_PER_ACTOR", "48"))  # evaluations per actor per phase
BATCH_TIMEOUT_S = 600.0
BAD = 'extern "C" __global__ void tessera_hgemm() { this is not CUDA; }'
WMMA = (ROOT / "examples" / "hgemm_wmma.cu").read_text()
# The compile cache outlives a run (gpu_check keeps it in the build folder): every run's sources are new.
_SESSION = uuid.uuid4().hex[:12]


def candidates(n: int, tag: str, bad_every: int = 0) -> list[dict]:
    """``n`` distinct kernels as `tessera bench harness` makes them (a define the kernel never
    reads); with ``bad_every``, every such one is a kernel that does not compile."""
    out = []
    for i in range(n):
        if bad_every and i % bad_every == bad_every - 1:
            out.append({"source": f"// {tag} {_SESSION} {i}\n{BAD}", "task": SHAPE, "name": f"{tag}{i}"})
        else:
            src = f"#define TESSERA_BENCH_VARIANT {i}\n// {tag} {_SESSION}\n{WMMA}"
            out.append({"source": src, "task": SHAPE, "name": f"{tag}{i}", "kind": "device"})
    return out


def expected_status(c: dict) -> str:
    return "compile_error" if BAD in c["source"] else "ok"


def nvidia_smi() -> list[dict]:
    """The GPUs as nvidia-smi lists them (its index is the PCI bus order)."""
    out = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id,name", "--format=csv,noheader"],
                         capture_output=True, text=True, check=True).stdout
    rows = [[f.strip() for f in line.split(",")] for line in out.splitlines() if line.strip()]
    return [{"index": r[0], "uuid": r[1], "pci": r[2], "name": r[3]} for r in rows]


def visible_gpus() -> list[dict]:
    """nvidia-smi's GPUs that this process's CUDA_VISIBLE_DEVICES leaves (every one when unset)."""
    gpus = nvidia_smi()
    vis = os.environ.get("CUDA_VISIBLE_DEVICES")
    if vis is None:
        return gpus
    return [g for v in vis.split(",") for g in gpus if v.strip() in (g["index"], g["uuid"])]


def gpu_of(visible: str, gpus: list[dict]) -> dict | None:
    """The GPU an actor's CUDA_VISIBLE_DEVICES (an index or a UUID) names."""
    return next((g for g in gpus if visible in (g["index"], g["uuid"])), None)


def warm(pool: RayPool, tag: str) -> None:
    """One evaluation on every actor: its worker started, its ceiling and baselines in place."""
    recs = ray.get([a.evaluate_batch.remote([c], OPTIONS) for a, c in zip(pool.actors, candidates(len(pool), tag))],
                   timeout=BATCH_TIMEOUT_S)
    assert [r[0]["status"] for r in recs] == ["ok"] * len(pool), [r[0]["result"].get("reason") for r in recs]


def actor_uuids(pool: RayPool) -> list[str]:
    infos = pool.devices()
    assert all(len(i["devices"]) == 1 for i in infos), infos
    return [i["devices"][0]["uuid"] for i in infos]


def run_batch(pool: RayPool, batch: list[dict], **kwargs) -> tuple[list[dict], float]:
    t0 = time.monotonic()
    recs = pool.evaluate_batch(batch, **kwargs, **OPTIONS)
    return recs, time.monotonic() - t0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    saved = {k: os.environ.get(k) for k in ("TESSERA_CACHE_DIR", "CUDA_DEVICE_ORDER")}
    # The actors inherit both. gpu_check's cache folder keeps the GPUs' measured ceilings.
    os.environ.setdefault("TESSERA_CACHE_DIR", str(tmp_path_factory.mktemp("ray-gpu-cache")))
    # CUDA's ordinals in PCI bus order, as nvidia-smi's indices (and so Ray's GPU ids) are.
    os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_gpus=GPUS, num_cpus=2 * GPUS + 2, include_dashboard=False, log_to_driver=False,
             object_store_memory=OBJECT_STORE_BYTES)
    yield
    ray.shutdown()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="class")
def pool(cluster):
    """Every GPU, warmed; shut down after the class, whose GPUs the scaling test needs."""
    p = RayPool(mode="full")  # the default: one actor per GPU of the cluster
    try:
        warm(p, "start")
        yield p
    finally:
        p.shutdown()


class TestOneActorPerGpu:
    def test_each_actor_evaluates_on_its_own_gpu(self, pool):
        gpus = visible_gpus()
        assert len(pool) == GPUS == len(gpus)
        seen = []
        for info in pool.devices():
            assert len(info["devices"]) == 1, info
            reported = info["devices"][0]
            cvd = info["cuda_visible_devices"] or ""
            assert cvd and "," not in cvd, f"Ray gave the actor one GPU: CUDA_VISIBLE_DEVICES={cvd!r}"
            assert info["gpu_ids"] == [cvd]
            gpu = gpu_of(cvd, gpus)
            assert gpu is not None, f"CUDA_VISIBLE_DEVICES={cvd} names no GPU of {gpus}"
            # The sandbox worker's own device (its CUDA properties) is the one Ray gave the actor.
            assert reported["uuid"] == gpu["uuid"], (info, gpu)
            print(f"  actor pid {info['pid']} on {info['host']}: CUDA_VISIBLE_DEVICES={cvd} -> {gpu['uuid']} "
                  f"(PCI {gpu['pci']}, {reported['name']}); {info['describe'][0]}")
            seen.append(reported["uuid"])
        assert sorted(seen) == sorted(g["uuid"] for g in gpus), "every GPU once"

    def test_a_killed_actor_is_replaced_on_a_gpu_and_no_request_is_lost(self, pool):
        slot = len(pool) - 1
        victim = ray.get(pool.actors[slot].pid.remote())
        before = pool.replacements
        batch = candidates(KILL_PER_ACTOR * len(pool), "kill", bad_every=4)
        out: dict = {}
        t = threading.Thread(target=lambda: out.update(recs=run_batch(pool, batch, chunk_size=1)[0]))
        t.start()
        time.sleep(KILL_AFTER_S)
        os.kill(victim, signal.SIGKILL)
        t.join(timeout=BATCH_TIMEOUT_S)
        assert not t.is_alive(), "the batch did not finish"
        recs = out["recs"]
        assert [r["result"]["candidate_name"] for r in recs] == [c["name"] for c in batch]
        assert [r["status"] for r in recs] == [expected_status(c) for c in batch], \
            [(r["status"], r["result"].get("reason")) for r in recs if r["status"] not in ("ok", "compile_error")]
        assert pool.replacements == before + 1, "the victim died mid-batch and was replaced once"
        assert ray.get(pool.actors[slot].pid.remote()) != victim
        # The replacement holds a GPU again (the one freed): every GPU once, each evaluating.
        warm(pool, "after-kill")
        assert sorted(actor_uuids(pool)) == sorted(g["uuid"] for g in visible_gpus())


def phase(actors: int, tag: str) -> dict:
    """A RayPool of ``actors`` GPUs, warmed, then SCALE_PER_ACTOR distinct kernels per actor, timed."""
    pool = RayPool(num_actors=actors, mode="full")
    try:
        # Warmed by a batch of the measured batch's size (other kernels): each actor's pool starts its
        # compile servers as its compiles ahead need them, which a trainer's first step pays once and
        # the steps after it do not (bench scale warms its pool and service the same way). The
        # measured batch then compiles every kernel cold on running servers.
        run_batch(pool, candidates(SCALE_PER_ACTOR * actors, f"{tag}-warm"))
        batch = candidates(SCALE_PER_ACTOR * actors, tag)
        recs, wall = run_batch(pool, batch)
        statuses: dict[str, int] = {}
        for r in recs:
            statuses[r["status"]] = statuses.get(r["status"], 0) + 1
        return {"actors": actors, "evals": len(batch), "wall_s": round(wall, 2),
                "evals_per_min": round(60.0 * len(batch) / wall, 1), "statuses": statuses,
                "device": pool.devices()[0]["devices"][0]["name"]}
    finally:
        pool.shutdown()


def test_evaluations_per_minute_one_actor_against_one_per_gpu(cluster):
    one = phase(1, "one")
    every = phase(GPUS, "all")
    speedup = every["evals_per_min"] / one["evals_per_min"]
    figures = {"kernel": "examples/hgemm_wmma.cu (distinct by #define TESSERA_BENCH_VARIANT)", "shape": SHAPE,
               "options": OPTIONS, "gpus": GPUS, "device": one["device"], "ray": ray.__version__,
               "per_actor": SCALE_PER_ACTOR, "one_actor": one, "all_actors": every,
               "speedup": round(speedup, 2), "per_gpu_efficiency": round(speedup / GPUS, 3)}
    print(f"\n  RayPool scaling on {GPUS} x {one['device']}, {SCALE_PER_ACTOR} distinct hgemm_wmma.cu per actor "
          f"at {SHAPE}, cold compiles, counters off:")
    for p in (one, every):
        print(f"    {p['actors']} actor(s): {p['evals']:4d} evals in {p['wall_s']:7.1f} s = "
              f"{p['evals_per_min']:7.1f} evals/min  {p['statuses']}")
    print(f"    speedup {speedup:.2f}x, {speedup / GPUS:.0%} per GPU")
    if os.environ.get("TESSERA_RAY_SCALE_JSON"):
        with open(os.environ["TESSERA_RAY_SCALE_JSON"], "w") as f:
            json.dump(figures, f, indent=2)
    assert one["statuses"] == {"ok": one["evals"]} and every["statuses"] == {"ok": every["evals"]}, figures
    # A benchmark figure, not a test of speed: only that more GPUs are not slower.
    assert every["evals_per_min"] >= one["evals_per_min"], figures
