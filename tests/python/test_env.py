"""tessera.Environment in compile-only mode: the scripted three-turn episode of
examples/rl (naive kernel, a SEARCH/REPLACE diff, a tile config), determinism,
masking, and the one-turn scorer."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import tessera
from conftest import REPO, unique

sys.path.insert(0, str(REPO / "examples" / "rl"))
import scripted_policy  # noqa: E402


def test_scripted_episode_compiles_every_turn(pool):
    env = tessera.Environment(pool=pool)
    obs, info = env.reset(scripted_policy.TASK, seed=0)
    assert "M = 1024, N = 1024, K = 1024" in obs and info["max_turns"] == 3
    assert info["device"].startswith("compile-only")
    kinds = []
    for turn, action in enumerate(scripted_policy.ACTIONS, start=1):
        obs, reward, terminated, truncated, info = env.step(action)
        kinds.append(info["action_kind"])
        assert info["turn"] == turn and not truncated
        assert info["format_ok"], info.get("format_error")
        assert info["result"]["status"] == "compiled", info["result"]["reason"]
        # Compile-only: it passed the format and compile gates, nothing was timed.
        assert reward == 0.0 and info["reward"]["class"] == "compiled" and info["baseline_protocol"] == "none"
        assert terminated == (turn == 3)
    assert kinds == ["device_only", "diff", "tile_config"]
    assert "The episode is over." in obs
    history = env.history
    assert [h["action_kind"] for h in history] == kinds
    assert "__shared__" in history[1]["source"]  # the diff's kernel, as evaluated
    assert env.done and env.best_speedup is None
    with pytest.raises(ValueError, match="episode is over"):
        env.step("more")


def test_format_failure_is_penalised_with_the_reason(pool):
    env = tessera.Environment(pool=pool, max_turns=1)
    env.reset("256x256x256")
    obs, reward, terminated, _, info = env.step("I would use bigger tiles.")
    assert reward == -1.0 and terminated and info["result"] is None
    assert "no kernel found" in info["format_error"] and "your reply is not a kernel" in obs


def test_same_seed_same_episode_start(pool):
    a = tessera.Environment(pool=pool, tasks="small_grid")
    b = tessera.Environment(pool=pool, tasks="small_grid")
    assert a.reset(seed=11) == b.reset(seed=11)
    ids = {a.reset(seed=s)[1]["task_id"] for s in range(40)}
    assert len(ids) > 10  # the seeds spread over the 24 tasks


def test_infra_failure_is_masked_not_penalised(broken_pool, naive_kernel):
    env = tessera.Environment(pool=broken_pool, infra_retries=1)
    env.reset("256x256x256")
    obs, reward, _, _, info = env.step(unique(naive_kernel, "masked_env"))
    assert reward is None and info["masked"] is True
    assert [a["status"] for a in info["attempts"]] == ["infra_error", "infra_error"] and info["retried"]
    assert "the machine failed, not your kernel" in obs


def test_score_actions_in_order(pool, naive_kernel):
    out = tessera.score_actions(
        [unique(naive_kernel, "score_a"), "not a kernel", unique(naive_kernel, "score_b")], "512x512x512", pool=pool
    )
    assert [o["reward"] for o in out] == [0.0, -1.0, 0.0]
    assert [o["info"]["action_kind"] for o in out] == ["device_only", "", "device_only"]
    with pytest.raises(ValueError, match="2 tasks"):
        tessera.score_actions(["a", "b", "c"], ["64x64x64", "64x64x64"], pool=pool)


def test_step_after_numpy_was_loaded_first(tmp_path):
    """Trainers import numpy (and torch) before tessera. Where the toolchain links
    libstdc++ into the module, an exported copy was half-bound by the libstdc++
    numpy had loaded, and the first step crashed in the action parser's regex
    (seen on the H200 machine). A fresh interpreter fixes the import order."""
    pytest.importorskip("numpy")
    script = (
        "import numpy, sys\n"
        "import tessera\n"
        f"sys.path.insert(0, {str(REPO / 'examples' / 'rl')!r})\n"
        "import scripted_policy\n"
        "pool = tessera.Pool(devices=[0], mode='compile_only')\n"
        "env = tessera.Environment(pool=pool)\n"
        "env.reset(scripted_policy.TASK, seed=0)\n"
        "_, _, _, _, info = env.step(scripted_policy.ACTIONS[0])\n"
        "print(info['action_kind'], info['result']['status'])\n"
    )
    env = dict(os.environ, TESSERA_MODE="compile_only")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["device_only", "compiled"]
