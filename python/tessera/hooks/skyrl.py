"""SkyRL: a text environment for skyrl-gym.

    from tessera.hooks.skyrl import register
    register()                        # env_class "tessera-hgemm" in the dataset

Each dataset row names the task in ``extras`` ("task", or SkyRL's
``reward_spec.ground_truth``); SkyRL passes ``max_turns`` there too. ``init``
replaces the dataset's prompt with the environment's task prompt (system and
user messages) unless ``extras["use_env_prompt"]`` is False. SkyRL takes a
float reward: a masked step scores ``masked_reward`` (0.0) with
``metadata["masked"] = True``.
"""

from __future__ import annotations

from typing import Any

from ..env import Environment
from ._common import config_overrides, plain, task_of

try:  # subclass SkyRL's base where it is installed; the interface is the same without it
    from skyrl_gym.envs.base_text_env import BaseTextEnv as _Base
except ImportError:  # pragma: no cover - depends on the machine
    _Base = object

ENV_CLASS = "tessera-hgemm"


class TesseraTextEnv(_Base):
    def __init__(self, env_config: Any = None, extras: dict | None = None):
        if _Base is not object:
            super().__init__()
        cfg = plain(env_config) or {}
        extras = plain(extras) or {}
        task = extras.get("task") or (extras.get("reward_spec") or {}).get("ground_truth")
        if task is None:
            raise ValueError("no task: put 'task' (or reward_spec.ground_truth) in the row's extras")
        self.task = task_of(task)
        self.seed = int(extras.get("seed", 0))
        self.max_turns = int(extras.get("max_turns", cfg.get("max_turns", 3)))
        self.masked_reward = float(cfg.get("masked_reward", 0.0))
        self.use_env_prompt = bool(extras.get("use_env_prompt", True))
        self.env = Environment(max_turns=self.max_turns, **config_overrides(cfg))

    def init(self, prompt: list) -> tuple[list, dict]:
        _, info = self.env.reset(self.task, self.seed)
        return (info["messages"] if self.use_env_prompt or not prompt else prompt), info

    def step(self, action: str) -> dict:
        obs, reward, terminated, truncated, info = self.env.step(action)
        done = terminated or truncated
        return {
            "observations": [] if done else [{"role": "user", "content": obs}],
            "reward": self.masked_reward if reward is None else float(reward),
            "done": done,
            "metadata": info,
        }

    def close(self) -> None:
        pass


def register(env_class: str = ENV_CLASS) -> None:
    """Registers the environment with skyrl-gym under ``env_class``."""
    import skyrl_gym

    skyrl_gym.register(id=env_class, entry_point="tessera.hooks.skyrl:TesseraTextEnv")
