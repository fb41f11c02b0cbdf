"""The multi-turn environment (reset/step) and one-turn scoring, over the C++ core."""

from __future__ import annotations

import os
from typing import Any, Iterable, Sequence

from . import _core, _json, _resources
from .pool import Pool, default_pool


def default_config() -> dict:
    """The environment's defaults (docs/env.md): 3 turns, log-speedup reward, baselines in every run."""
    return _json.load(_core.default_config())


def make_config(config: dict | None = None, **overrides: Any) -> dict:
    """A configuration for the core: ``config`` updated by ``overrides``.

    ``tasks`` may be a list of tasks or the name/path of a task file (read as
    ``tasks_file``); the packaged prompt templates and ABI header are used
    unless the configuration or the environment variables name others.
    """
    c = dict(config or {})
    c.update({k: v for k, v in overrides.items() if v is not None})
    tasks = c.get("tasks")
    if isinstance(tasks, (str, os.PathLike)):
        del c["tasks"]
        c["tasks_file"] = str(_resources.dataset(tasks))
    elif "tasks_file" in c:
        c["tasks_file"] = str(_resources.dataset(c["tasks_file"]))
    c.setdefault("prompt_dir", str(_resources.prompt_dir()))
    c.setdefault("abi_header", str(_resources.abi_header()))
    return c


class Environment:
    """reset(task, seed) -> (observation, info); step(action) -> (observation, reward, terminated, truncated, info).

    ``reward`` is None for a masked step (the machine failed, not the policy).
    Evaluations run on ``pool`` (default: the shared pool of every GPU) and
    release the GIL. Settings: ``config`` and keyword overrides (``max_turns``,
    ``tasks``, ``reward``, ``eval``, ``infra_retries``, ``reuse_baselines``, ...).
    """

    def __init__(self, config: dict | None = None, pool: Pool | None = None, **overrides: Any):
        self.pool = pool or default_pool()
        self._native = _core.Environment(_json.dump(make_config(config, **overrides)), self.pool._native)

    def reset(self, task: Any = None, seed: int = 0, options: dict | None = None) -> tuple[str, dict]:
        obs, info = self._native.reset(None if task is None else _json.task_json(task), int(seed), _json.dump(options or {}))
        return _json.text(obs), _json.load(info)

    def step(self, action: str) -> tuple[str, float | None, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self._native.step(action)
        return _json.text(obs), reward, terminated, truncated, _json.load(info)

    @property
    def turn(self) -> int:
        return self._native.turn

    @property
    def max_turns(self) -> int:
        return self._native.max_turns

    @property
    def done(self) -> bool:
        return self._native.done

    @property
    def best_speedup(self) -> float | None:
        return self._native.best_speedup

    @property
    def best_turn(self) -> int | None:
        return self._native.best_turn

    @property
    def history(self) -> list[dict]:
        """Every turn of the episode: action, kind, the kernel, its record and reward components."""
        return _json.load(self._native.history_json())

    @property
    def config(self) -> dict:
        return _json.load(self._native.config_json())


def parse_action(text: str, previous: str | None = None, task: Any = "4096x4096x4096", actions: dict | None = None) -> dict:
    """What the environment makes of a reply: ok, kind, error, the kernel source (no evaluation)."""
    return _json.load(_core.parse_action(text, previous, _json.task_json(task), _json.dump(actions or {})))


def score_actions(
    actions: Sequence[str],
    tasks: Any | Sequence[Any],
    previous: Sequence[str | None] | None = None,
    config: dict | None = None,
    pool: Pool | None = None,
    **overrides: Any,
) -> list[dict]:
    """One turn for each action, evaluated as one batch over every GPU; results in order.

    ``tasks`` is one task for all or one per action. Each result is
    ``{"reward": float | None, "info": {...}}`` (None: masked); ``info`` is the
    judged record of docs/env.md, the one a step's info, ``Pool.evaluate_batch``
    and the service answer with.
    """
    actions = list(actions)
    if isinstance(tasks, (str, dict)):
        tasks = [tasks] * len(actions)
    tasks = list(tasks)
    if len(tasks) != len(actions):
        raise ValueError(f"{len(actions)} actions but {len(tasks)} tasks")
    prev: Iterable[str | None] = previous if previous is not None else [None] * len(actions)
    requests = [{"action": a, "task": t, "previous": p} for a, t, p in zip(actions, tasks, prev)]
    cfg = make_config(config, **overrides)
    return _json.load(_core.score_actions(_json.dump(requests), _json.dump(cfg), (pool or default_pool())._native))
