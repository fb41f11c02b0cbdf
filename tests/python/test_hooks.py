"""The trainer hooks' own logic, without the trainers' packages (the real
trainers run them in test_trainer_*.py): verl's per-sample dict, TRL's masked
None, SkyRL's row formats. Compile-only."""

from __future__ import annotations

import asyncio

import pytest

from conftest import unique
from tessera.hooks import skyrl, trl, verl

TASK = "512x512x512"
VERL_KEYS = {"score", "masked", "format_ok", "compiled", "correct", "speedup", "performance", "bonus", "penalty", "status"}


def test_verl_scores_have_the_same_keys_for_every_sample(naive_kernel):
    out = verl.compute_score_batch(["tessera/hgemm"] * 3, [unique(naive_kernel, "hook_a"), "x", "y"],
                                   [TASK, "hgemm_512x512x512_TN_none", '{"op": "hgemm", "m": 64, "n": 64, "k": 64}'])
    assert [o["score"] for o in out] == [0.0, -1.0, -1.0] and all(set(o) == VERL_KEYS for o in out)
    assert [o["status"] for o in out] == ["compiled", "format_error", "format_error"]
    one = verl.compute_score_batch(data_source="x", solution_str="no kernel", ground_truth=TASK, extra_info={})
    assert one["score"] == -1.0 and set(one) == VERL_KEYS  # the per-sample call a default manager makes
    with pytest.raises(TypeError):
        verl.compute_score_batch(["x"])


def test_trl_masked_is_none_and_settings_are_checked(broken_pool, naive_kernel):
    f = trl.make_reward_func(task=TASK, pool=broken_pool, infra_retries=0)
    assert f(prompts=["p", "p"], completions=[unique(naive_kernel, "hook_masked"), "no kernel"]) == [None, -1.0]
    assert asyncio.run(trl.async_reward_func(prompts=["p"], completions=["nothing"], task=[TASK])) == [-1.0]
    with pytest.raises(ValueError, match="unknown setting"):
        trl.make_reward_func(max_turn=3)
    with pytest.raises(ValueError, match="no task"):
        trl.reward_func(prompts=["p"], completions=["x"])


@pytest.mark.parametrize("extras", [
    {"task": "hgemm_64x64x64_TN_none"},
    {"reward_spec": {"ground_truth": "64x64x64"}},
    {"extras": {"task": "64x64x64"}, "task": None},  # a nested extras column
])
def test_skyrl_reads_each_row_format(extras):
    env = skyrl.TesseraTextEnv(env_config=None, extras=dict(extras, max_turns=2))
    chat, info = env.init([])
    assert info["task_id"] == "hgemm_64x64x64_TN_none" and len(chat) == 2 and env.max_turns == 2
    assert skyrl.TesseraTextEnv(env_config={"max_turns": 1}, extras=dict(extras, max_turns=2)).max_turns == 1
    with pytest.raises(ValueError, match="no task"):
        skyrl.TesseraTextEnv(env_config={}, extras={"max_turns": 1})
