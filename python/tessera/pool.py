"""Evaluator pools: one sandboxed evaluator per GPU, batches judged in request order."""

from __future__ import annotations

import os
import threading
from typing import Any, Iterable, Sequence

from . import _core, _json, _resources

# Environment variables the default pool reads (docs/env.md).
ENV_DEVICES = "TESSERA_DEVICES"  # "all" (default) or "0,1"
ENV_MODE = "TESSERA_MODE"  # auto (default) | full | compile_only


def _devices(devices: str | int | Sequence[int] | None) -> list[int]:
    if devices is None:
        devices = os.environ.get(ENV_DEVICES, "all")
    if isinstance(devices, int):
        return [devices]
    if isinstance(devices, str):
        if devices in ("all", "auto"):
            # No GPU: one evaluator, which runs compile-only.
            return list(range(max(1, _core.device_count())))
        try:
            return [int(d) for d in devices.split(",") if d.strip()]
        except ValueError:
            raise ValueError(f"devices are 'all' or ordinals like '0,1' (got '{devices}')") from None
    return [int(d) for d in devices]


class Pool:
    """One evaluator per device, each in its own sandbox worker process.

    ``mode``: ``auto`` (full where a GPU is visible, else compile-only),
    ``full`` or ``compile_only``; None reads $TESSERA_MODE. Other keyword
    arguments are the sandbox's settings, every key of the C++ SandboxOptions
    but two set elsewhere, ``device`` (``devices`` gives one evaluator each)
    and ``infra_retries`` (the judge retries: evaluate_batch's ``config``):
    ``arch``, ``self_exe``, ``log_dir``, ``heartbeat_timeout_s``,
    ``compile_timeout_s``, ``remeasure_baselines``, ``autotune_max_algos``,
    ``measure_peak``, ``remeasure_ceiling`` (``default_options()`` lists them
    with their defaults). An unknown name is a ValueError that names it.
    """

    def __init__(self, devices: str | int | Sequence[int] | None = None, mode: str | None = None, **sandbox: Any):
        self.devices = _devices(devices)
        options = {"mode": mode or os.environ.get(ENV_MODE, "auto"), "self_exe": str(_resources.binary_path())}
        options.update(sandbox)
        self.mode = options["mode"]
        self._native = _core.Pool(self.devices, _json.dump(options))

    def __len__(self) -> int:
        return self._native.size()

    # A pool owns its GPUs' workers: a copy (gymnasium deep-copies the
    # arguments of make()) is the same pool, and it does not cross processes,
    # where a second pool would time on the same GPUs at once.
    def __copy__(self) -> "Pool":
        return self

    def __deepcopy__(self, memo: dict) -> "Pool":
        return self

    def __reduce__(self):
        raise TypeError(
            "a tessera.Pool cannot be pickled: it owns its GPUs' workers. Share one pool in one process "
            "(gymnasium.vector.SyncVectorEnv, threads), or let each process make its own on other GPUs."
        )

    def describe(self) -> list[str]:
        """Where each evaluator runs ("NVIDIA H200 (sm_90a, 132 SMs) via sandbox worker", "compile-only ...")."""
        return list(self._native.describe())

    def evaluate_batch(self, candidates: Iterable[str | dict], task: Any = None, config: dict | None = None,
                       **options: Any) -> list[dict]:
        """Judges every candidate across every GPU; the records come back in order.

        A candidate is a kernel source (then ``task`` applies) or a dict with
        ``source``, ``task`` and optionally ``name`` and ``kind`` (auto,
        device_only or device, translation_unit or tu). Each is evaluated and
        paid by the environment's judge, as a step or a /v1/evaluate call
        would be: a record is the judged record of docs/env.md (``status``,
        ``reward``, ``masked``, ``attempts``, ..., with the harness's record
        under ``result``). ``config`` is an environment configuration
        (``infra_retries``, ``counters_in_feedback``, ``reuse_baselines``,
        ``reward``, ``eval``; default: the environment's, with the harness's
        evaluation defaults); ``options`` are the harness's evaluation options
        on top, every key of the C++ EvalOptions (``default_eval_options()``
        lists them with their defaults). An unknown name is a ValueError that
        names it. The GIL is released while the batch runs.
        """
        requests = _json.batch_requests(candidates, task)
        config_json = ""
        if config is not None:
            from .env import make_config  # env imports this module

            config_json = _json.dump(make_config(config))
        return _json.load(self._native.evaluate_batch(_json.dump(requests), _json.dump(options), config_json))

    def evaluate(self, source: str, task: Any, config: dict | None = None, **options: Any) -> dict:
        """One evaluation: its judged record as a dict."""
        return self.evaluate_batch([source], task, config, **options)[0]


def default_options() -> dict:
    """The sandbox settings Pool takes, with their defaults (C++ SandboxOptions)."""
    return _json.load(_core.default_pool_options())


def default_eval_options() -> dict:
    """The evaluation options evaluate_batch takes, with the harness's defaults (C++ EvalOptions)."""
    return _json.load(_core.default_eval_options())


_default: Pool | None = None
_default_lock = threading.Lock()


def default_pool() -> Pool:
    """The process's shared pool: every GPU ($TESSERA_DEVICES), mode $TESSERA_MODE."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Pool()
        return _default


def evaluate_batch(candidates: Iterable[str | dict], task: Any = None, pool: Pool | None = None,
                   config: dict | None = None, **options: Any) -> list[dict]:
    """Pool.evaluate_batch on ``pool`` (default: the shared pool of every GPU)."""
    return (pool or default_pool()).evaluate_batch(candidates, task, config, **options)
