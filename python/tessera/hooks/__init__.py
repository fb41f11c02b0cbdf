"""Adapters for RL trainers, each a few lines over tessera.score_actions / tessera.Environment.

- ``tessera.hooks.verl``: ``compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs)``
  and the batch form ``compute_score_batch``;
- ``tessera.hooks.trl``: GRPO reward functions ``(prompts, completions, **kwargs) -> list[float | None]``,
  sync and async;
- ``tessera.hooks.skyrl``: a SkyRL text environment, ``init(prompt)`` / ``step(action)``.

docs/env.md shows each with the trainer's configuration.
"""
