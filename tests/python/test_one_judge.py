"""One EnvConfig, one judge (env/judge.hpp): Environment.step, score_actions and
Pool.evaluate_batch retry as the configuration says and answer with one
record. The service's side: tests/serve/python/test_serve_judge.py; the C++
side, with the counters: tests/serve/one_judge_test.cpp."""

from __future__ import annotations

import pytest

import tessera

TASK = "256x256x256"
EPISODE_KEYS = {"turn", "max_turns", "best_speedup", "best_turn"}  # a step's own, beside the judged record


def judged_three_ways(config: dict, pool: tessera.Pool, source: str, tag: str) -> tuple[dict, dict, dict]:
    """The record of one kernel from a step, score_actions and Pool.evaluate_batch (a distinct text each)."""
    text = lambda path: f"// {tag} {path}\n{source}"  # noqa: E731
    env = tessera.Environment(config, pool=pool)
    env.reset(TASK)
    step = env.step(text("step"))[4]
    scored = tessera.score_actions([text("score")], TASK, config=config, pool=pool)[0]["info"]
    batch = pool.evaluate_batch([text("pool")], TASK, config=config)[0]
    return step, scored, batch


@pytest.mark.parametrize("retries", [0, 2])
def test_the_configs_retries_apply_to_every_path(broken_pool, naive_kernel, retries):
    for record in judged_three_ways({"infra_retries": retries}, broken_pool, naive_kernel, f"retries_{retries}"):
        assert [a["status"] for a in record["attempts"]] == ["infra_error"] * (1 + retries)
        assert record["masked"] is True and record["reward"]["scalar"] is None
        assert record["retried"] is (retries > 0)


def test_every_path_answers_with_one_record(pool, naive_kernel):
    config = {"infra_retries": 2, "counters_in_feedback": False, "max_turns": 2}
    step, scored, batch = judged_three_ways(config, pool, naive_kernel, "schema")
    record = set(batch)
    assert set(scored) == record and set(step) - EPISODE_KEYS == record
    assert {"status", "action_kind", "format_ok", "reward", "masked", "result", "attempts", "retried",
            "baseline_protocol", "task_id"} <= record
    for r in (step, scored, batch):
        assert r["status"] == "compiled" and r["reward"]["scalar"] == 0.0 and len(r["attempts"]) == 1
        assert r["action_kind"] == "device_only" and r["task_id"] == step["task_id"]


def test_evaluate_batch_reads_the_config_as_strictly_as_the_environment(pool, naive_kernel):
    for config in ({"infra_retry": 1}, {"infra_retries": 99}):
        with pytest.raises(ValueError, match="infra_retr"):
            pool.evaluate_batch([naive_kernel], TASK, config=config)
        with pytest.raises(ValueError, match="infra_retr"):
            tessera.Environment(config, pool=pool)
