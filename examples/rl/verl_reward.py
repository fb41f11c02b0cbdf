"""verl's custom reward function file. In the trainer's configuration:

    custom_reward_function.path=examples/rl/verl_reward.py
    custom_reward_function.name=compute_score
    # or, every sample of a step as one batch across all GPUs:
    reward_model.reward_manager=batch custom_reward_function.name=compute_score_batch
    # optional: custom_reward_function.reward_kwargs.masked_score=0.0 (and reward / eval / infra_retries settings)

Each dataset row: data_source "tessera/hgemm", reward_model.ground_truth the
task ("4096x4096x4096" or a task object as JSON), prompt from
tessera.Environment().reset(task)[1]["messages"].
"""

from tessera.hooks.verl import compute_score, compute_score_batch

__all__ = ["compute_score", "compute_score_batch"]
