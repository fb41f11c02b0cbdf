"""Ray: one evaluator actor per GPU, and a pool over every actor of every node.

    import ray, tessera.ray
    ray.init(address="auto")                 # the cluster: `ray start --head`, workers `ray start --address=...`
    pool = tessera.ray.RayPool()             # one actor per GPU in the cluster (num_gpus=1 each)
    records = pool.evaluate_batch(sources, task="4096x4096x4096")   # in order, the harness's record schema

An actor wraps ``tessera.Pool`` on the GPU Ray gave it (Ray sets
CUDA_VISIBLE_DEVICES, so the actor sees it as device 0); its sandbox worker
keeps its context and baselines between calls. The pool splits a batch into
chunks, keeps every actor busy, and puts the records back in request order.
An actor that dies (its node lost, killed) is replaced and its chunk is run
again on the fresh actor, once; a chunk that fails on the fresh actor too
comes back as ``infra_error`` records (masked by the reward), never as an
exception that loses the batch. docs/serve.md has the multi-node set-up.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Iterable, Sequence

DEFAULT_INFLIGHT_PER_ACTOR = 2  # calls queued on an actor: the next chunk is there when one ends
MAX_CHUNK = 16  # candidates per call at most: a lost actor costs at most this many re-runs
CHUNK_RETRIES = 1  # a chunk whose actor died runs once more on a fresh actor, then is infra_error


def _ray():
    try:
        import ray
    except ImportError:  # pragma: no cover - depends on the machine
        raise ImportError("tessera.ray needs Ray: pip install ray") from None
    return ray


class _Evaluator:
    """The actor's body: a one-GPU tessera.Pool (compile-only without a GPU)."""

    def __init__(self, mode: str, sandbox: dict):
        import os

        from tessera.pool import Pool

        # Ray gives each actor its GPU through CUDA_VISIBLE_DEVICES: it is device 0 here.
        self._pool = Pool(devices=[0], mode=mode, **sandbox)
        self._pid = os.getpid()

    def evaluate_batch(self, requests: list[dict], options: dict) -> list[dict]:
        return self._pool.evaluate_batch(requests, **options)

    def describe(self) -> str:
        import socket

        return f"{socket.gethostname()} pid {self._pid}: {self._pool.describe()[0]}"

    def pid(self) -> int:
        return self._pid


def evaluator_actor(num_gpus: float = 1, **actor_options: Any):
    """The actor class with its resources: ``num_gpus=1`` (one GPU each); 0 for compile-only actors."""
    ray = _ray()
    return ray.remote(num_gpus=num_gpus, max_restarts=0, **actor_options)(_Evaluator)


def _infra_record(request: dict, why: str) -> dict:
    """A masked failure in the record schema, for a chunk no actor could finish."""
    return {"status": "infra_error", "reason": why, "task": request.get("task"),
            "candidate_name": request.get("name", ""), "mode": "", "phase_ms": {}}


class RayPool:
    """Evaluator actors spread over the Ray cluster; ``evaluate_batch`` like ``tessera.Pool``'s.

    ``num_actors``: default one per GPU in the cluster (with ``num_gpus=0``:
    required). ``mode``: ``auto``, ``full`` or ``compile_only``. ``sandbox``:
    the Pool's sandbox settings. ``actor_options``: more ``ray.remote``
    options (e.g. ``resources``, ``runtime_env``).
    """

    def __init__(self, num_actors: int | None = None, num_gpus: float = 1, mode: str = "auto",
                 inflight_per_actor: int = DEFAULT_INFLIGHT_PER_ACTOR, actor_options: dict | None = None, **sandbox: Any):
        ray = _ray()
        if not ray.is_initialized():
            ray.init()
        if num_actors is None:
            gpus = ray.cluster_resources().get("GPU", 0)
            if num_gpus <= 0 or gpus < num_gpus:
                raise ValueError("no GPUs in the Ray cluster: give num_actors (and num_gpus=0 for compile-only actors)")
            num_actors = int(gpus // num_gpus)
        if num_actors < 1:
            raise ValueError("a RayPool needs at least one actor")
        options = {"scheduling_strategy": "SPREAD"}
        options.update(actor_options or {})
        self._cls = evaluator_actor(num_gpus, **options)
        self._mode, self._sandbox = mode, sandbox
        self._inflight = max(1, inflight_per_actor)
        self._lock = threading.Lock()
        self.actors = [self._new_actor() for _ in range(num_actors)]
        self.replacements = 0  # actors replaced after dying

    def _new_actor(self):
        return self._cls.remote(self._mode, self._sandbox)

    def __len__(self) -> int:
        return len(self.actors)

    def describe(self) -> list[str]:
        ray = _ray()
        return ray.get([a.describe.remote() for a in self.actors])

    def _replace(self, index: int, dead) -> None:
        """A fresh actor in slot ``index`` unless another call already replaced ``dead``."""
        ray = _ray()
        with self._lock:
            if self.actors[index] is dead:
                try:
                    ray.kill(dead)
                except Exception:  # already gone
                    pass
                self.actors[index] = self._new_actor()
                self.replacements += 1

    def _chunks(self, n: int, chunk_size: int | None) -> list[range]:
        if chunk_size is None:
            # Two chunks per call slot keeps every actor busy to the end of the batch.
            chunk_size = max(1, min(MAX_CHUNK, math.ceil(n / (2 * len(self.actors) * self._inflight))))
        return [range(i, min(n, i + chunk_size)) for i in range(0, n, chunk_size)]

    def evaluate_batch(self, candidates: Iterable[str | dict], task: Any = None, chunk_size: int | None = None,
                       **options: Any) -> list[dict]:
        """Every candidate over every actor; the records in request order.

        A candidate is a kernel source (``task`` applies) or a dict with
        ``source``, ``task`` and optionally ``name`` and ``kind``, as for
        ``tessera.Pool.evaluate_batch``; ``options`` are the evaluation options.
        """
        ray = _ray()
        requests = []
        for i, c in enumerate(candidates):
            r = {"source": c} if isinstance(c, str) else dict(c)
            r.setdefault("task", task)
            if r["task"] is None:
                raise ValueError(f"candidate {i} has no task (give task=... or a 'task' key)")
            requests.append(r)
        records: list[dict | None] = [None] * len(requests)
        todo = [(chunk, 0) for chunk in reversed(self._chunks(len(requests), chunk_size))]  # (chunk, retries used)
        running: dict = {}  # ObjectRef -> (chunk, retries, actor index, actor)
        load = [0] * len(self.actors)

        def submit() -> None:
            while todo:
                index = min(range(len(self.actors)), key=lambda k: load[k])
                if load[index] >= self._inflight:
                    return
                chunk, used = todo.pop()
                actor = self.actors[index]
                ref = actor.evaluate_batch.remote([requests[i] for i in chunk], options)
                running[ref] = (chunk, used, index, actor)
                load[index] += 1

        submit()
        while running:
            done, _ = ray.wait(list(running), num_returns=1)
            ref = done[0]
            chunk, used, index, actor = running.pop(ref)
            load[index] -= 1
            try:
                for i, rec in zip(chunk, ray.get(ref)):
                    records[i] = rec
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as e:
                self._replace(index, actor)
                if used < CHUNK_RETRIES:
                    todo.append((chunk, used + 1))
                else:
                    for i in chunk:
                        records[i] = _infra_record(requests[i], f"the Ray actor died twice: {e}")
            submit()
        return records  # type: ignore[return-value]

    def shutdown(self) -> None:
        ray = _ray()
        for a in self.actors:
            try:
                ray.kill(a)
            except Exception:
                pass
        self.actors = []


def evaluate_batch(candidates: Sequence[str | dict], task: Any = None, pool: RayPool | None = None,
                   **options: Any) -> list[dict]:
    """RayPool.evaluate_batch on ``pool`` (default: a new pool of one actor per GPU in the cluster)."""
    return (pool or RayPool()).evaluate_batch(candidates, task, **options)
