"""How each trainer calls a reward function or an environment, reduced to the call itself.

Installing verl, TRL or SkyRL in CI would pull torch and CUDA wheels for a few
lines of calling convention, so these stand-ins reproduce what the trainers'
own code does at the call (read from their sources; file and function named
in each docstring) and the checks they apply to what comes back.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import threading
from collections import defaultdict
from typing import Any, Callable


def verl_naive_manager(compute_score: Callable, rows: list[dict], responses: list[str]) -> tuple[list[float], dict]:
    """verl/workers/reward_manager/naive.py, NaiveRewardManager.__call__: one call per sample,
    keyword arguments, extra_info gains num_turns and rollout_reward_scores; a dict result gives
    "score" and every key is appended to reward_extra_info (a column per key)."""
    rewards, extra = [], defaultdict(list)
    for row, response in zip(rows, responses):
        extra_info = dict(row.get("extra_info", {}))
        extra_info["num_turns"] = None
        extra_info["rollout_reward_scores"] = {}
        score = compute_score(
            data_source=row["data_source"],
            solution_str=response,
            ground_truth=row["reward_model"]["ground_truth"],
            extra_info=extra_info,
        )
        if isinstance(score, dict):
            reward = score["score"]
            for key, value in score.items():
                extra[key].append(value)
        else:
            reward = score
        rewards.append(float(reward))  # written into a float32 tensor
    return rewards, dict(extra)


def verl_batch_manager(compute_score: Callable, rows: list[dict], responses: list[str], **reward_kwargs: Any) -> list:
    """verl/workers/reward_manager/batch.py, BatchRewardManager.verify: one call for the batch."""
    extras = [dict(r.get("extra_info", {}), rollout_reward_scores={}) for r in rows]
    return compute_score(
        data_sources=[r["data_source"] for r in rows],
        solution_strs=responses,
        ground_truths=[r["reward_model"].get("ground_truth") for r in rows],
        extra_infos=extras,
        **reward_kwargs,
    )


def verl_reward_loop(compute_score: Callable, row: dict, response: str) -> dict:
    """verl/experimental/reward_loop/reward_manager/naive.py, run_single: a sync compute_score
    runs in the event loop's default executor."""

    async def run() -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            None,
            lambda: compute_score(
                data_source=row["data_source"],
                solution_str=response,
                ground_truth=row["reward_model"]["ground_truth"],
                extra_info=dict(row.get("extra_info", {})),
            ),
        )

    return asyncio.run(run())


class _TrainerState:
    global_step = 7


def trl_grpo_rewards(reward_funcs: list[Callable], inputs: list[dict], completions: list) -> tuple[list[list[float]], dict]:
    """trl/trainer/grpo_trainer.py, GRPOTrainer._calculate_rewards: dataset columns (all but
    prompt/completion/completion_ids) become keyword lists, plus trainer_state, log_extra and
    log_metric; sync functions are called directly, async ones gathered on a loop in a daemon
    thread; None becomes NaN."""
    prompts = [x["prompt"] for x in inputs]
    keys = [k for k in inputs[0] if k not in ("prompt", "completion", "completion_ids")]
    reward_kwargs: dict[str, Any] = {k: [x[k] for x in inputs] for k in keys}
    logged: dict[str, list] = defaultdict(list)
    reward_kwargs["trainer_state"] = _TrainerState()
    reward_kwargs["log_extra"] = lambda column, values: logged[column].extend(values)
    reward_kwargs["log_metric"] = lambda name, value: logged[name].append(value)
    completion_ids = [[1, 2, 3] for _ in completions]
    columns: list[list[float]] = [[] for _ in reward_funcs]
    async_funcs = []
    for i, f in enumerate(reward_funcs):
        if inspect.iscoroutinefunction(f):
            async_funcs.append((i, f))
        else:
            out = f(prompts=prompts, completions=completions, completion_ids=completion_ids, **reward_kwargs)
            columns[i] = [math.nan if r is None else float(r) for r in out]
    if async_funcs:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()

        async def gather():
            outs = await asyncio.gather(
                *[f(prompts=prompts, completions=completions, completion_ids=completion_ids, **reward_kwargs) for _, f in async_funcs]
            )
            return [(i, out) for (i, _), out in zip(async_funcs, outs)]

        for i, out in asyncio.run_coroutine_threadsafe(gather(), loop).result():
            columns[i] = [math.nan if r is None else float(r) for r in out]
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
    return columns, dict(logged)


def skyrl_episode(env_cls: type, env_config: dict, extras: dict, prompt: list, policy: Callable[[list], str]) -> dict:
    """skyrl/train/generators/skyrl_gym_generator.py, agent_loop: skyrl_gym.make(env_class,
    env_config=..., extras=...) with extras["max_turns"] set by the generator; init(chat_history)
    returns the first prompt; each output goes to step(), whose observations are appended to the
    chat until done."""
    extras = dict(extras, max_turns=extras.get("max_turns", 1))
    env = env_cls(env_config=env_config, extras=extras)
    chat, _ = env.init(list(prompt))
    rewards, metadata = [], []
    done = False
    while not done:
        output = policy(chat)
        out = env.step(output)
        assert set(out) >= {"observations", "reward", "done", "metadata"}
        rewards.append(float(out["reward"]))
        metadata.append(out["metadata"])
        done = out["done"]
        chat = chat + [{"role": "assistant", "content": output}] + list(out["observations"])
    env.close()
    return {"chat": chat, "rewards": rewards, "metadata": metadata}
