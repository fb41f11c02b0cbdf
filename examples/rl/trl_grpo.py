#!/usr/bin/env python3
"""TRL GRPO with tessera as the reward (needs `pip install trl` and a GPU for the policy).

Each dataset row has the chat prompt and a "task" column; TRL passes the
column to the reward function. Masked samples (the machine failed) come back
as None and TRL leaves them out of the group's statistics.
"""

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

import tessera
from tessera.hooks.trl import async_reward_func  # or reward_func

TASKS = ["1024x1024x1024", "4096x4096x4096", "128x4096x4096"]
env = tessera.Environment()  # only to write the prompts
rows = [{"prompt": env.reset(t)[1]["messages"], "task": t} for t in TASKS]

trainer = GRPOTrainer(
    model="Qwen/Qwen2.5-Coder-7B-Instruct",
    reward_funcs=[async_reward_func],
    args=GRPOConfig(output_dir="runs/grpo-tessera", num_generations=8, max_completion_length=4096),
    train_dataset=Dataset.from_list(rows),
)
trainer.train()
