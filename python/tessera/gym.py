"""gymnasium.make("tessera/HGEMM-v0"): the environment as a gymnasium.Env with Text spaces.

Gymnasium wants a float reward on every step, so a masked step (the machine
failed, not the policy) returns ``masked_reward`` (0.0) with
``info["masked"] = True``: filter those transitions out of training.
"""

from __future__ import annotations

import re
from typing import Any

import gymnasium
from gymnasium import spaces

from .env import Environment
from .pool import Pool

ENV_ID = "tessera/HGEMM-v0"

# Texts are Unicode's basic plane (the core's text is UTF-8 and decoded with
# replacement); a character beyond it becomes U+FFFD so every observation is
# in the space.
CHARSET = frozenset(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF)
_BEYOND_BMP = re.compile("[\U00010000-\U0010ffff]")
MAX_OBSERVATION_CHARS = 1 << 20
MAX_ACTION_CHARS = 256 * 1024  # env::kMaxActionChars: longer replies are format failures
DEFAULT_TASKS = "default"  # datasets/default.json: 4096^3 TN


def _in_charset(text: str) -> str:
    return _BEYOND_BMP.sub("\ufffd", text)


class HGEMMEnv(gymnasium.Env):
    """A policy writes HGEMM kernels (text); tessera compiles, verifies and times them against cuBLAS.

    Keyword arguments are the environment's settings (``tasks``, ``max_turns``,
    ``reward``, ``eval``, ``infra_retries``, ``reuse_baselines``, ...) plus
    ``pool`` (a tessera.Pool; default: the shared pool of every GPU, compile-
    only without one) and ``masked_reward``. ``options`` of reset():
    ``{"task": "MxNxK" | {...}, "max_turns": n}``.
    """

    # A text environment has no frame rate; gymnasium warns when none is declared.
    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        config: dict | None = None,
        pool: Pool | None = None,
        render_mode: str | None = None,
        masked_reward: float = 0.0,
        **overrides: Any,
    ):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} (got {render_mode!r})")
        if "tasks" not in (config or {}) and "tasks_file" not in (config or {}):
            overrides.setdefault("tasks", DEFAULT_TASKS)
        self.render_mode = render_mode
        self.masked_reward = float(masked_reward)
        self.env = Environment(config, pool, **overrides)
        self.observation_space = spaces.Text(max_length=MAX_OBSERVATION_CHARS, min_length=0, charset=CHARSET)
        self.action_space = spaces.Text(max_length=MAX_ACTION_CHARS, min_length=0, charset=CHARSET)
        self._last = ""

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        # The episode's seed comes from the env's generator: reset(seed=s)
        # repeats an episode, reset() continues the sequence.
        episode_seed = int(self.np_random.integers(0, 2**63 - 1))
        obs, info = self.env.reset(None, episode_seed, options)
        self._last = _in_charset(obs)
        return self._last, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(str(action))
        self._last = _in_charset(obs)
        return self._last, self.masked_reward if reward is None else float(reward), bool(terminated), bool(truncated), info

    def render(self) -> str | None:
        return self._last if self.render_mode == "ansi" else None


def register() -> None:
    """Registers tessera/HGEMM-v0 with gymnasium (import tessera does this)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="tessera.gym:HGEMMEnv")


__all__ = ["CHARSET", "ENV_ID", "HGEMMEnv", "register"]
