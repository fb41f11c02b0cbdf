"""The trainer hooks, called the way each trainer calls them (trainers.py), compile-only."""

from __future__ import annotations

import asyncio
import math

import pytest

from conftest import unique
from tessera.hooks import skyrl, trl, verl
import trainers

TASK = "512x512x512"
VERL_KEYS = {"score", "masked", "format_ok", "compiled", "correct", "speedup", "performance", "bonus", "penalty", "status"}


def verl_rows(n: int) -> list[dict]:
    return [{"data_source": "tessera/hgemm", "reward_model": {"ground_truth": TASK}, "extra_info": {"index": i}} for i in range(n)]


def test_verl_compute_score_through_the_naive_manager(naive_kernel):
    responses = [f"```cuda\n{unique(naive_kernel, 'verl_a')}```", "no kernel"]
    rewards, extra = trainers.verl_naive_manager(verl.compute_score, verl_rows(2), responses)
    assert rewards == [0.0, -1.0]
    assert set(extra) == VERL_KEYS and all(len(v) == 2 for v in extra.values())
    assert extra["status"] == ["compiled", "format"] and extra["format_ok"] == [True, False]


def test_verl_batch_and_reward_loop(naive_kernel):
    out = trainers.verl_batch_manager(
        verl.compute_score_batch, verl_rows(3), [unique(naive_kernel, "verl_b"), "x", unique(naive_kernel, "verl_c")], masked_score=0.0
    )
    assert [o["score"] for o in out] == [0.0, -1.0, 0.0] and all(set(o) == VERL_KEYS for o in out)
    single = trainers.verl_reward_loop(verl.compute_score, verl_rows(1)[0], unique(naive_kernel, "verl_d"))
    assert single["score"] == 0.0 and single["status"] == "compiled"
    # A task object as JSON text in ground_truth.
    row = {"data_source": "x", "reward_model": {"ground_truth": '{"op": "hgemm", "m": 64, "n": 64, "k": 64}'}}
    assert trainers.verl_naive_manager(verl.compute_score, [row], ["x"])[0] == [-1.0]


def test_trl_sync_and_async_reward_functions(naive_kernel):
    inputs = [
        {"prompt": [{"role": "user", "content": "write a kernel"}], "task": TASK},
        {"prompt": [{"role": "user", "content": "write a kernel"}], "task": "256x256x256"},
    ]
    completions = [
        [{"role": "assistant", "content": f"```cuda\n{unique(naive_kernel, 'trl_a')}```"}],
        [{"role": "assistant", "content": "I cannot."}],
    ]
    columns, logged = trainers.trl_grpo_rewards([trl.reward_func, trl.async_reward_func], inputs, completions)
    assert columns == [[0.0, -1.0], [0.0, -1.0]]
    assert logged["tessera_status"] == ["compiled", "format"] * 2
    assert logged["tessera/masked_fraction"] == [0.0, 0.0]
    assert trl.reward_func.__name__ == "tessera_kernel_reward"
    with pytest.raises(ValueError, match="unknown setting"):
        trl.make_reward_func(max_turn=3)


def test_trl_masked_samples_are_none_then_nan(broken_pool, naive_kernel):
    f = trl.make_reward_func(task=TASK, pool=broken_pool, infra_retries=0)
    g = trl.make_async_reward_func(task=TASK, pool=broken_pool, infra_retries=0)
    inputs = [{"prompt": "p"}, {"prompt": "p"}]
    columns, logged = trainers.trl_grpo_rewards([f, g], inputs, [unique(naive_kernel, "trl_masked"), "no kernel"])
    assert math.isnan(columns[0][0]) and columns[0][1] == -1.0 and math.isnan(columns[1][0])
    assert logged["tessera/masked_fraction"] == [0.5, 0.5]
    assert asyncio.run(g(prompts=["p"], completions=["nothing"])) == [-1.0]


def test_skyrl_multi_turn_episode(naive_kernel):
    replies = iter([f"```cuda\n{unique(naive_kernel, 'skyrl_a')}```", "<<<<<<< SEARCH\n#define TILE 16\n=======\n#define TILE 8\n>>>>>>> REPLACE\n"])
    out = trainers.skyrl_episode(
        skyrl.TesseraTextEnv, {"infra_retries": 1}, {"task": TASK, "max_turns": 2}, [{"role": "user", "content": "dataset prompt"}],
        lambda chat: next(replies),
    )
    assert out["rewards"] == [0.0, 0.0]
    assert out["chat"][0]["role"] == "system" and "M = 512" in out["chat"][1]["content"]  # the env's task prompt
    assert out["chat"][3]["role"] == "user" and "# Turn 1 of 2" in out["chat"][3]["content"]
    assert out["metadata"][1]["action_kind"] == "diff" and out["chat"][-1]["role"] == "assistant"  # no observation after done
    with pytest.raises(ValueError, match="no task"):
        skyrl.TesseraTextEnv(env_config={}, extras={})


def test_skyrl_reads_the_task_from_reward_spec():
    env = skyrl.TesseraTextEnv(env_config=None, extras={"reward_spec": {"ground_truth": "64x64x64"}, "max_turns": 1})
    chat, info = env.init([])
    assert info["task_id"].startswith("hgemm_64x64x64") and len(chat) == 2
