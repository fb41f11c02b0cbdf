"""tessera: HGEMM kernels compiled, verified and timed against cuBLAS, as an RL environment.

    import tessera
    env = tessera.Environment(tasks="small_grid")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(policy(obs))

docs/env.md has the API, the observations, the info record, the reward and
the trainer hooks (tessera.hooks.verl, .trl, .skyrl); ``gymnasium.make(
"tessera/HGEMM-v0")`` works once gymnasium is installed.
"""

from __future__ import annotations

import importlib.util
import os

from ._resources import binary_path, cost_model_dir, datasets_dir

# The C++ side looks for learned cost models here when the cache holds none
# (tile/learned_model.hpp); the source tree's copy is not there once installed.
os.environ.setdefault("TESSERA_COST_MODEL_DIR", str(cost_model_dir()))
from .env import Environment, default_config, make_config, parse_action, score_actions
from .pool import Pool, default_pool, evaluate_batch

__version__ = "0.1.0"

__all__ = [
    "Environment",
    "Pool",
    "binary_path",
    "datasets_dir",
    "default_config",
    "default_pool",
    "evaluate_batch",
    "make_config",
    "parse_action",
    "score_actions",
]

if importlib.util.find_spec("gymnasium") is not None:
    from . import gym as _gym  # registers tessera/HGEMM-v0

    _gym.register()
