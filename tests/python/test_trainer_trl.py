"""TRL's own GRPOTrainer with tessera's reward functions: two optimizer steps of a
tiny random GPT-2 on tessera's task prompts (compile-only), the sync and async
reward functions side by side, a masked (None) reward, and hand-written replies
scored through the trainer's own _calculate_rewards."""

from __future__ import annotations

import math

import pytest

import tessera
from conftest import REPO, unique
from trainer_kit import need, tiny_model, tokenizer

TASKS = ["512x512x512", "hgemm_256x256x256_TN_none"]  # both spellings tessera prints


def grpo_trainer(tmp_path, reward_funcs):
    need("trl")
    datasets = need("datasets")
    from trl import GRPOConfig, GRPOTrainer

    env = tessera.Environment(max_turns=1)
    rows = [{"prompt": env.reset(t)[1]["messages"], "task": t} for t in TASKS]
    args = GRPOConfig(
        output_dir=str(tmp_path / "grpo"), use_cpu=True, report_to="none", save_strategy="no", logging_steps=1,
        max_steps=2, per_device_train_batch_size=2, num_generations=2, max_completion_length=12,
        learning_rate=1e-3, seed=0, dataloader_num_workers=0,
    )
    return GRPOTrainer(
        model=tiny_model(), reward_funcs=reward_funcs, args=args,
        train_dataset=datasets.Dataset.from_list(rows), processing_class=tokenizer(),
    )


def test_grpo_trains_two_steps_with_sync_async_and_masked_rewards(tmp_path, broken_pool):
    from tessera.hooks.trl import async_reward_func, make_reward_func, reward_func

    masked = make_reward_func(pool=broken_pool, infra_retries=0)  # the machine fails every evaluation
    trainer = grpo_trainer(tmp_path, [reward_func, async_reward_func, masked])
    result = trainer.train()
    assert trainer.state.global_step == 2 and math.isfinite(result.training_loss)
    steps = [h for h in trainer.state.log_history if "tessera/masked_fraction" in h]
    assert [h["step"] for h in steps] == [1, 2], trainer.state.log_history
    # A random policy writes no kernel: every function pays each completion the format penalty, the
    # broken pool included (a format failure is never evaluated, so it is never masked).
    for h in steps:
        assert h["reward"] == pytest.approx(-3.0) and h["tessera/masked_fraction"] == 0.0
        assert h["tessera/correct_fraction"] == 0.0 and h["completions/mean_length"] > 0


def test_handwritten_replies_through_trls_calculate_rewards(tmp_path, broken_pool, naive_kernel):
    from tessera.hooks.trl import async_reward_func, make_reward_func, reward_func

    # The masked function runs first, so the kernel reaches its broken pool before the compile cache has it.
    masked = make_reward_func(pool=broken_pool, infra_retries=0)
    trainer = grpo_trainer(tmp_path, [masked, reward_func, async_reward_func])
    kernel = f"```cuda\n{unique(naive_kernel, 'trl_real')}```"
    inputs = [{"prompt": "p", "task": TASKS[0]}, {"prompt": "p", "task": TASKS[1]}]
    completions = [[{"role": "assistant", "content": kernel}], [{"role": "assistant", "content": "I cannot."}]]
    rewards = trainer._calculate_rewards(inputs, ["p", "p"], completions, [[1, 2], [3]])
    assert math.isnan(rewards[0, 0].item()) and rewards[1, 0].item() == -1.0  # masked: None -> NaN; a format failure is paid
    assert rewards[:, 1].tolist() == [0.0, -1.0]  # compiled (compile-only), format failure
    assert rewards[:, 2].tolist() == [0.0, -1.0]  # the async function agrees
    assert trainer._pending_extra_logs["tessera_status"] == ["infra_error", "format_error"] + ["compiled", "format_error"] * 2
    assert trainer._pending_metrics["tessera/masked_fraction"] == [0.5, 0.0, 0.0]
