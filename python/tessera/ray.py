"""Ray: one evaluator actor per GPU, and a pool over every actor of every node.

    import ray, tessera.ray
    ray.init(address="auto")                 # the cluster: `ray start --head`, workers `ray start --address=...`
    pool = tessera.ray.RayPool()             # one actor per GPU in the cluster (num_gpus=1 each)
    records = pool.evaluate_batch(sources, task="4096x4096x4096")   # in order, the judged record schema
    scored = pool.score_actions(replies, tasks)                       # policy replies -> {"reward", "info"}

An actor wraps ``tessera.Pool`` on the GPUs Ray gave it: Ray sets
CUDA_VISIBLE_DEVICES, so an actor of one GPU sees it as device 0, and its
sandbox worker inherits that variable (narrowed to the one device) and keeps
its context and baselines between calls. The pool splits a batch into chunks,
keeps every actor busy, and puts the answers back in request order. An actor
that dies (its node lost, killed) is replaced and its chunk is run again,
once, on another actor; a replacement takes work only once it has started
(it waits for a free GPU, which a lost node may not leave), and a chunk that
fails twice, or finds no actor that starts in time, comes back as
``infra_error`` (masked by the reward), never as an exception that loses the
batch. docs/serve.md has the multi-node set-up.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Callable, Iterable, Sequence

from . import _json

DEFAULT_INFLIGHT_PER_ACTOR = 2  # calls queued on an actor: the next chunk is there when one ends
MAX_CHUNK = 16  # items per call at most: a lost actor costs at most this many re-runs
CHUNK_RETRIES = 1  # a chunk whose actor died runs once more on another actor, then is infra_error
ACTOR_START_TIMEOUT_S = 600.0  # actors placed (a free GPU each) and their pools made
START_FAILURES_PER_CALL = 3  # replacements that die before answering, per batch, before a slot is left idle


def _ray():
    try:
        import ray
    except ImportError:  # pragma: no cover - depends on the machine
        raise ImportError("tessera.ray needs Ray: pip install ray") from None
    return ray


class _Evaluator:
    """The actor's body: a tessera.Pool over the GPUs Ray gave it (compile-only without one)."""

    def __init__(self, mode: str, sandbox: dict):
        import os

        import ray

        from tessera.pool import Pool

        # Ray gives each actor its GPUs through CUDA_VISIBLE_DEVICES: devices 0..n-1 here.
        gpus = len(ray.get_gpu_ids())
        self._pool = Pool(devices=list(range(gpus)) or [0], mode=mode, **sandbox)
        self._pid = os.getpid()
        self._devices: dict[str, dict] = {}  # uuid -> the DeviceSummary a record carried

    def _note_devices(self, records: list[dict]) -> None:
        # The worker reports its device on the first full evaluation: the record's result.device.
        for r in records:
            d = (r.get("result") or {}).get("device") or {}
            if d.get("uuid"):
                self._devices[d["uuid"]] = d

    def evaluate_batch(self, requests: list[dict], options: dict) -> list[dict]:
        records = self._pool.evaluate_batch(requests, **options)
        self._note_devices(records)
        return records

    def score_actions(self, requests: list[dict], config: dict) -> list[dict]:
        from tessera.env import score_actions

        scored = score_actions([r["action"] for r in requests], [r["task"] for r in requests],
                               previous=[r.get("previous") for r in requests], config=config or None, pool=self._pool)
        self._note_devices([s["info"] for s in scored])
        return scored

    def describe(self) -> str:
        import socket

        return f"{socket.gethostname()} pid {self._pid}: {self._pool.describe()[0]}"

    def device(self) -> dict:
        """Where this actor evaluates: its host and pid, the GPUs Ray gave it, what its pool says."""
        import os
        import socket

        import ray

        return {"starting": False, "host": socket.gethostname(), "pid": self._pid,
                "gpu_ids": [str(g) for g in ray.get_gpu_ids()],
                "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
                "describe": self._pool.describe(),
                # What its sandbox workers reported (name, uuid, arch, ...): empty before the first full evaluation.
                "devices": list(self._devices.values())}

    def pid(self) -> int:
        return self._pid


def evaluator_actor(num_gpus: float = 1, **actor_options: Any):
    """The actor class with its resources: ``num_gpus=1`` (one GPU each); 0 for compile-only actors."""
    ray = _ray()
    return ray.remote(num_gpus=num_gpus, max_restarts=0, **actor_options)(_Evaluator)


def _infra_record(request: dict, why: str) -> dict:
    """A masked failure in the judged record schema (docs/env.md), for an item no actor could finish."""
    task = request.get("task")
    result = {"status": "infra_error", "reason": why, "task": task, "candidate_name": request.get("name", ""),
              "mode": "", "phase_ms": {}, "fault": "infrastructure"}
    return {"status": "infra_error", "action_kind": "", "format_ok": True, "masked": True, "result": result,
            "reward": {"class": "infra_error", "status": "infra_error", "masked": True, "scalar": None},
            "attempts": [], "retried": False, "baseline_protocol": "none", "task_id": None}


def _masked_score(request: dict, why: str) -> dict:
    """score_actions's answer for an action no actor could finish: masked (no reward)."""
    return {"reward": None, "info": _infra_record(request, why)}


class RayPool:
    """Evaluator actors spread over the Ray cluster.

    ``num_actors``: default one per GPU in the cluster (give it when other
    jobs hold some of the GPUs; with ``num_gpus=0``: required). ``num_gpus``:
    each actor's GPUs (1; 2 makes each actor's pool two GPUs; 0 for
    compile-only actors). ``mode``: ``auto``, ``full`` or ``compile_only``.
    ``sandbox``: the Pool's sandbox settings. ``actor_options``: more
    ``ray.remote`` options (e.g. ``resources={"tessera": 1}`` to use only the
    nodes that offer it, ``runtime_env``). Raises when the actors cannot all
    start within ``start_timeout_s`` (too few free GPUs) rather than waiting
    forever; a replacement that cannot start within it leaves its chunks to
    the other actors.
    """

    def __init__(self, num_actors: int | None = None, num_gpus: float = 1, mode: str = "auto",
                 inflight_per_actor: int = DEFAULT_INFLIGHT_PER_ACTOR, actor_options: dict | None = None,
                 start_timeout_s: float = ACTOR_START_TIMEOUT_S, **sandbox: Any):
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
        self._start_timeout_s = start_timeout_s
        self._lock = threading.Lock()
        self._starting: dict[int, tuple] = {}  # slot -> (replacement, its first call) until that call answers
        self.actors = [self._new_actor() for _ in range(num_actors)]
        self.replacements = 0  # actors replaced after dying
        try:
            ray.get([a.describe.remote() for a in self.actors], timeout=start_timeout_s)
        except ray.exceptions.GetTimeoutError:
            self.shutdown()
            raise RuntimeError(f"{num_actors} evaluator actors ({num_gpus} GPU each) did not start within "
                               f"{start_timeout_s:.0f} s: not enough free resources in the cluster?") from None

    def _new_actor(self):
        return self._cls.remote(self._mode, self._sandbox)

    def __len__(self) -> int:
        return len(self.actors)

    def _each(self, method: str, starting: Any) -> list:
        """``method()`` of every actor; ``starting`` for a replacement not placed yet (no free GPU)."""
        ray = _ray()
        with self._lock:
            actors = list(self.actors)
            first = {k: ref for k, (_, ref) in self._starting.items()}
        refs = [getattr(a, method).remote() if k not in first or ray.wait([first[k]], timeout=0)[0] else None
                for k, a in enumerate(actors)]
        return [starting if ref is None else ray.get(ref) for ref in refs]

    def describe(self) -> list[str]:
        """One line per actor: host, pid and device."""
        return self._each("describe", "starting: waiting for a free GPU in the Ray cluster")

    def devices(self) -> list[dict]:
        """Per actor: host, pid, Ray's GPU ids, CUDA_VISIBLE_DEVICES, and the devices its workers
        reported (name, uuid, ...; known after the actor's first full evaluation). A replacement
        that has not started yet: ``starting`` true and nothing else known."""
        waiting = {"starting": True, "host": None, "pid": None, "gpu_ids": [], "cuda_visible_devices": None,
                   "describe": [], "devices": []}
        return self._each("device", waiting)

    def _replace(self, index: int, dead) -> None:
        """A fresh actor in slot ``index`` unless another call already replaced ``dead``.

        It takes work once its first call answers: placing it may wait for a
        free GPU (a lost node's GPUs are gone), and a chunk must not wait
        behind it while other actors are free.
        """
        ray = _ray()
        with self._lock:
            if self.actors[index] is dead:
                try:
                    ray.kill(dead)
                except Exception:  # already gone
                    pass
                fresh = self._new_actor()
                self.actors[index] = fresh
                self._starting[index] = (fresh, fresh.pid.remote())
                self.replacements += 1

    def _started(self, index: int, actor, ref) -> bool:
        """The replacement ``actor`` in ``index`` answered (True) or died starting (False: replaced again)."""
        ray = _ray()
        try:
            ray.get(ref)
            ok = True
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError):
            ok = False
        with self._lock:
            if self._starting.get(index, (None,))[0] is actor:
                del self._starting[index]
        if not ok:
            self._replace(index, actor)
        return ok

    def _chunks(self, n: int, chunk_size: int | None) -> list[range]:
        if chunk_size is None:
            # Two chunks per call slot keeps every actor busy to the end of the batch.
            chunk_size = max(1, min(MAX_CHUNK, math.ceil(n / (2 * len(self.actors) * self._inflight))))
        return [range(i, min(n, i + chunk_size)) for i in range(0, n, chunk_size)]

    def _run(self, method: str, requests: list[dict], argument: dict, chunk_size: int | None,
             lost: Callable[[dict, str], dict]) -> list[dict]:
        """Calls ``method(chunk, argument)`` on the actors for every chunk; the answers in order."""
        ray = _ray()
        answers: list[dict | None] = [None] * len(requests)
        todo = [(chunk, 0) for chunk in reversed(self._chunks(len(requests), chunk_size))]  # (chunk, retries used)
        running: dict = {}  # ObjectRef -> (chunk, retries used, actor index, actor)
        load = [0] * len(self.actors)
        idle = set()  # slots left out of this batch: their replacements kept dying as they started
        start_failures = 0

        def submit() -> None:
            while todo:
                with self._lock:
                    starting = set(self._starting)
                ready = [k for k in range(len(self.actors)) if k not in starting and k not in idle]
                if not ready:
                    return
                index = min(ready, key=lambda k: load[k])
                if load[index] >= self._inflight:
                    return
                chunk, used = todo.pop()
                actor = self.actors[index]
                ref = getattr(actor, method).remote([requests[i] for i in chunk], argument)
                running[ref] = (chunk, used, index, actor)
                load[index] += 1

        def give_up(why: str) -> None:
            while todo:
                chunk, _ = todo.pop()
                for i in chunk:
                    answers[i] = lost(requests[i], why)

        submit()
        while running or todo:
            with self._lock:
                starting = {ref: (k, actor) for k, (actor, ref) in self._starting.items() if k not in idle}
            if not running and not starting:
                give_up("no Ray actor is left to run it")
                break
            # Nothing running: only a replacement's start can move the batch on, within the start timeout.
            done, _ = ray.wait(list(running) + list(starting), num_returns=1,
                               timeout=None if running else self._start_timeout_s)
            if not done:
                give_up(f"no Ray actor started within {self._start_timeout_s:.0f} s to run it "
                        f"(no free GPU in the cluster?)")
                break
            ref = done[0]
            if ref in starting:
                index, actor = starting[ref]
                if not self._started(index, actor, ref):
                    start_failures += 1
                    if start_failures > START_FAILURES_PER_CALL:
                        idle.add(index)
                submit()
                continue
            chunk, used, index, actor = running.pop(ref)
            load[index] -= 1
            try:
                for i, answer in zip(chunk, ray.get(ref)):
                    answers[i] = answer
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as e:
                self._replace(index, actor)
                if used < CHUNK_RETRIES:
                    todo.append((chunk, used + 1))
                else:
                    for i in chunk:
                        answers[i] = lost(requests[i], f"the Ray actor died twice: {e}")
            submit()
        return answers  # type: ignore[return-value]

    def evaluate_batch(self, candidates: Iterable[str | dict], task: Any = None, chunk_size: int | None = None,
                       **options: Any) -> list[dict]:
        """Every candidate over every actor; the judged records (docs/env.md) in request order.

        A candidate is a kernel source (``task`` applies) or a dict with
        ``source``, ``task`` and optionally ``name`` and ``kind``, as for
        ``tessera.Pool.evaluate_batch``; ``options`` are the evaluation options.
        """
        requests = _json.batch_requests(candidates, task)
        return self._run("evaluate_batch", requests, options, chunk_size, _infra_record)

    def score_actions(self, actions: Sequence[str], tasks: Any, previous: Sequence[str | None] | None = None,
                      config: dict | None = None, chunk_size: int | None = None) -> list[dict]:
        """``tessera.score_actions`` over every actor: one turn per policy reply, ``{"reward", "info"}`` in order.

        ``tasks``: one task for all, or one per action; ``reward`` is None when masked.
        """
        actions = list(actions)
        tasks = [tasks] * len(actions) if isinstance(tasks, (str, dict)) else list(tasks)
        if len(tasks) != len(actions):
            raise ValueError(f"{len(actions)} actions but {len(tasks)} tasks")
        prev = list(previous) if previous is not None else [None] * len(actions)
        requests = [{"action": a, "task": t, "previous": p} for a, t, p in zip(actions, tasks, prev)]
        return self._run("score_actions", requests, config or {}, chunk_size, _masked_score)

    def shutdown(self) -> None:
        ray = _ray()
        for a in self.actors:
            try:
                ray.kill(a)
            except Exception:
                pass
        self.actors = []
        with self._lock:
            self._starting.clear()


def evaluate_batch(candidates: Sequence[str | dict], task: Any = None, pool: RayPool | None = None,
                   **options: Any) -> list[dict]:
    """RayPool.evaluate_batch on ``pool`` (default: a new pool of one actor per GPU in the cluster)."""
    return (pool or RayPool()).evaluate_batch(candidates, task, **options)
