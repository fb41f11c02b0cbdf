"""SkyRL: a text environment for skyrl-gym.

    from tessera.hooks.skyrl import register
    register()                        # env_class "tessera-hgemm" in the dataset

SkyRL's ``PromptDataset`` passes every column of a row except ``prompt`` and
``env_class`` to the environment as ``extras``, so a row names its task in a
``task`` column ("4096x4096x4096", a task id such as
"hgemm_4096x4096x4096_TN_none", or a task object as JSON), or in
``reward_spec.ground_truth``; a column ``extras`` holding those keys is read
too. Optional columns: ``seed`` and ``use_env_prompt`` (default True: ``init``
replaces the dataset's prompt with the environment's task prompt).

Turns per episode: ``max_turns`` in the environment's config where SkyRL
passes one, else SkyRL's ``generator.max_turns`` (its generator writes it into
``extras`` for every episode), else 3. SkyRL takes a float reward: a masked
step scores ``masked_reward`` (0.0) with ``metadata["masked"] = True``.
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
DEFAULT_MAX_TURNS = 3


def _row_values(extras: dict) -> list[dict]:
    """Where a row's values may be: the extras themselves, then a nested ``extras`` column."""
    nested = extras.get("extras")
    return [extras, nested] if isinstance(nested, dict) else [extras]


def _task(extras: dict) -> Any:
    for values in _row_values(extras):
        task = values.get("task") or (values.get("reward_spec") or {}).get("ground_truth")
        if task:
            return task_of(task)
    raise ValueError(
        "no task: give the dataset a 'task' column (or reward_spec.ground_truth); SkyRL passes every column "
        f"except prompt and env_class to the environment (got the keys {sorted(extras)})"
    )


def _setting(extras: dict, key: str, default: Any) -> Any:
    for values in _row_values(extras):
        if values.get(key) is not None:
            return values[key]
    return default


class TesseraTextEnv(_Base):
    def __init__(self, env_config: Any = None, extras: dict | None = None):
        if _Base is not object:
            super().__init__()
        cfg = plain(env_config) or {}
        extras = plain(extras) or {}
        self.task = _task(extras)
        self.seed = int(_setting(extras, "seed", 0))
        self.max_turns = int(cfg.get("max_turns") or extras.get("max_turns") or DEFAULT_MAX_TURNS)
        self.masked_reward = float(cfg.get("masked_reward", 0.0))
        self.use_env_prompt = bool(_setting(extras, "use_env_prompt", True))
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
    """Registers the environment with skyrl-gym under ``env_class`` (once: a second call does nothing)."""
    import skyrl_gym
    from skyrl_gym.envs.registration import registry

    if env_class in registry:
        return
    skyrl_gym.register(id=env_class, entry_point="tessera.hooks.skyrl:TesseraTextEnv")
