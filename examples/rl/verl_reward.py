"""verl's custom reward function file. In the trainer's configuration (verl 0.9; 0.8 reads these
too, and the same keys without the leading "reward."):

    reward.custom_reward_function.path=examples/rl/verl_reward.py
    reward.custom_reward_function.name=compute_score
    # optional: reward.custom_reward_function.reward_kwargs.masked_score=0.0 (and reward / eval / infra_retries settings)

verl's reward loop calls compute_score once per sample, many at a time in threads: the
pool spreads them over every GPU. compute_score_batch serves the older batch manager.

Each dataset row: data_source "tessera/hgemm", reward_model.ground_truth the
task ("4096x4096x4096", "hgemm_4096x4096x4096_TN_none" or a task object as JSON), prompt from
tessera.Environment().reset(task)[1]["messages"].
"""

from tessera.hooks.verl import compute_score, compute_score_batch

__all__ = ["compute_score", "compute_score_batch"]
