"""gymnasium.make("tessera/HGEMM-v0") passes gymnasium's own env checker (compile-only)."""

from __future__ import annotations

import warnings

import pytest

gymnasium = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

import tessera  # noqa: E402,F401  (registers the environment)
from conftest import unique  # noqa: E402


def test_check_env_passes(pool, capsys):
    env = gymnasium.make("tessera/HGEMM-v0", pool=pool, tasks="small_grid")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    # Printed so the CI log shows what the checker said besides passing.
    with capsys.disabled():
        print(f"\ncheck_env(tessera/HGEMM-v0): passed, {len(caught)} warning(s)")
        for w in caught:
            print(f"  warning: {w.message}")
    env.close()


def test_an_episode_through_gymnasium(pool, naive_kernel):
    env = gymnasium.make("tessera/HGEMM-v0", pool=pool, tasks=["256x256x256"], max_turns=2, render_mode="ansi")
    obs, info = env.reset(seed=3)
    assert obs in env.observation_space and info["task_id"].startswith("hgemm_256x256x256")
    obs, reward, terminated, truncated, info = env.step(f"```cuda\n{naive_kernel}```")
    assert isinstance(reward, float) and reward == 0.0 and not terminated
    assert obs == env.render()
    obs, reward, terminated, truncated, info = env.step("hello")
    assert reward == -1.0 and terminated and not truncated


def test_masked_steps_pay_the_masked_reward_and_say_so(broken_pool, naive_kernel):
    env = gymnasium.make("tessera/HGEMM-v0", pool=broken_pool, tasks=["256x256x256"], masked_reward=0.0, infra_retries=0)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(unique(naive_kernel, "masked_gym"))
    assert reward == 0.0 and info["masked"] is True and info["reward"]["scalar"] is None
