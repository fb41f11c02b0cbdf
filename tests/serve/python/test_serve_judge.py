"""One EnvConfig, one judge (env/judge.hpp), through `tessera serve
--env-config`: the service retries as the configuration says and answers with
the record Pool.evaluate_batch gives for the same configuration (in process:
tests/python/test_one_judge.py; C++: tests/serve/one_judge_test.cpp)."""

from __future__ import annotations

import json
import os

import pytest

import tessera
from tessera.client_local import LocalServer

from conftest import ROOT, TASK, kernel

SERVICE_KEYS = {"latency_ms"}  # the service's own, beside the judged record


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> tessera.Pool:
    # Its compiles land in a cache of the test's own (read when the pool is made).
    os.environ.setdefault("TESSERA_CACHE_DIR", str(tmp_path_factory.mktemp("judge-cache")))
    return tessera.Pool(devices=[0], mode="compile_only")


def serve(config: dict, tmp_path, *args: str) -> LocalServer:
    """`tessera serve` on one compile-only slot under `config`, its compiles in a cache of its own."""
    config_file = tmp_path / "env.json"
    config_file.write_text(json.dumps(config))
    env = dict(os.environ, TESSERA_CACHE_DIR=str(tmp_path / "cache"))
    return LocalServer(["--mode", "compile_only", "--gpus", "0", "--env-config", str(config_file), *args], env=env)


def test_the_service_answers_with_the_judged_record(pool, tmp_path):
    config = {"infra_retries": 2, "counters_in_feedback": False}
    with serve(config, tmp_path) as server, server.client() as c:
        served = c.evaluate(TASK, kernel())
    naive = (ROOT / "examples" / "hgemm_naive.cu").read_text()
    batch = pool.evaluate_batch([naive], TASK, config=config)[0]
    assert set(served) - SERVICE_KEYS == set(batch)
    for key in ("status", "action_kind", "format_ok", "masked", "retried", "baseline_protocol", "task_id"):
        assert served[key] == batch[key], key
    assert served["reward"] == batch["reward"]


@pytest.mark.parametrize("retries", [0, 1])
def test_the_service_retries_as_its_env_config_says(tmp_path, retries):
    # One slot, killed once: with no retry the evaluation is masked; with one
    # it runs again on the fresh evaluator.
    with serve({"infra_retries": retries}, tmp_path, "--fault-injection") as server, server.client() as c:
        c.request("POST", "/v1/admin/kill_worker", {"worker": 0})
        rec = c.evaluate(TASK, kernel())
    assert [a["status"] for a in rec["attempts"]] == ["infra_error"] + ["compiled"] * retries
    assert rec["masked"] is (retries == 0)
