"""TRL: GRPO reward functions.

    from tessera.hooks.trl import reward_func            # or async_reward_func
    trainer = GRPOTrainer(model=..., reward_funcs=[reward_func], train_dataset=dataset, ...)

The dataset has a ``task`` column ("4096x4096x4096" or a task dict); TRL passes
dataset columns to reward functions as keyword arguments. A masked sample (the
machine failed, not the policy) is ``None``: TRL leaves it out of the reward.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from ..env import score_actions
from ..pool import Pool
from ._common import completion_text, config_overrides, task_of


def _rewards(completions: list, kwargs: dict, task: Any, task_column: str, pool: Pool | None, config: dict) -> list[float | None]:
    column = kwargs.get(task_column)
    if column is None and task is None:
        raise ValueError(f"no task: give the dataset a '{task_column}' column or make_reward_func(task=...)")
    tasks = [task_of(t) for t in column] if column is not None else [task_of(task)] * len(completions)
    scored = score_actions([completion_text(c) for c in completions], tasks, pool=pool, **config)
    rewards = [s["reward"] for s in scored]
    _log(scored, kwargs)
    return rewards


def _log(scored: list[dict], kwargs: dict) -> None:
    """The masked and correct fractions as metrics, the status as a column of the completions table."""
    log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
    n = max(1, len(scored))
    if callable(log_metric):
        log_metric("tessera/masked_fraction", sum(s["reward"] is None for s in scored) / n)
        log_metric("tessera/correct_fraction", sum(bool(s["info"]["reward"]["correct"]) for s in scored) / n)
    if callable(log_extra):
        log_extra("tessera_status", [s["info"]["reward"]["status"] for s in scored])


def make_reward_func(task: Any = None, task_column: str = "task", pool: Pool | None = None, **config: Any) -> Callable:
    """A reward function ``(prompts, completions, **kwargs) -> list[float | None]``."""
    settings = config_overrides(config, strict=True)

    def tessera_kernel_reward(prompts: list, completions: list, **kwargs: Any) -> list[float | None]:
        return _rewards(completions, kwargs, task, task_column, pool, settings)

    return tessera_kernel_reward


def make_async_reward_func(task: Any = None, task_column: str = "task", pool: Pool | None = None, **config: Any) -> Callable:
    """The same as an ``async def``: the batch runs in a thread (the GIL is released while it evaluates)."""
    sync = make_reward_func(task, task_column, pool, **config)

    async def tessera_kernel_reward(prompts: list, completions: list, **kwargs: Any) -> list[float | None]:
        return await asyncio.to_thread(sync, prompts, completions, **kwargs)

    return tessera_kernel_reward


reward_func = make_reward_func()
async_reward_func = make_async_reward_func()
