"""Python's options are the C++ structs': every sandbox and evaluation option can be set, an
unknown one is refused with its name, and the hooks' settings come from the C++ EnvConfig."""

from __future__ import annotations

import pytest

import tessera
from conftest import unique
from tessera import _resources
from tessera.hooks import _common
from tessera.pool import default_eval_options, default_options

SANDBOX_KEYS = {
    "mode", "device", "arch", "self_exe", "log_dir", "heartbeat_timeout_s", "compile_timeout_s",
    "remeasure_baselines", "autotune_max_algos", "measure_peak", "remeasure_ceiling", "infra_retries",
}
EVAL_KEYS = {
    "compile_only", "counters", "counter_set", "baselines", "timing", "hot", "verify_trials", "shape_generic", "rank_by",
}


def test_every_sandbox_option_can_be_set_from_python(tmp_path, naive_kernel):
    defaults = default_options()
    assert set(defaults) == SANDBOX_KEYS
    settings = {
        "arch": "sm_90a",
        "self_exe": str(_resources.binary_path()),
        "log_dir": str(tmp_path / "logs"),
        "heartbeat_timeout_s": 20.0,
        "compile_timeout_s": 90.0,
        "remeasure_baselines": True,
        "autotune_max_algos": 4,
        "measure_peak": False,
        "remeasure_ceiling": False,
    }
    # Every key but the mode (an argument of its own), device (given by devices)
    # and infra_retries (the judge's: the config's).
    assert set(settings) == SANDBOX_KEYS - {"mode", "device", "infra_retries"}
    pool = tessera.Pool(devices=[0], mode="compile_only", **settings)
    [record] = pool.evaluate_batch([unique(naive_kernel, "wire_pool")], task="64x64x64", config={"infra_retries": 3})
    assert record["status"] == "compiled" and record["result"]["compile"]["arch"] == "sm_90a"


def test_an_unknown_or_misplaced_pool_option_is_refused_with_its_name():
    with pytest.raises(ValueError, match="unknown key 'infra_retry'"):
        tessera.Pool(devices=[0], mode="compile_only", infra_retry=2)
    with pytest.raises(ValueError, match="heartbeat_timeout_s"):
        tessera.Pool(devices=[0], mode="compile_only", heartbeat_timeout_s=0)
    with pytest.raises(ValueError, match="unknown evaluation mode 'compile-only'"):
        tessera.Pool(devices=[0], mode="compile-only")
    with pytest.raises(ValueError, match="devices"):
        tessera.Pool(devices=[0], mode="compile_only", device=1)
    with pytest.raises(ValueError, match="'infra_retries' is the judge's"):
        tessera.Pool(devices=[0], mode="compile_only", infra_retries=2)


def test_every_evaluation_option_can_be_set_from_python(pool, naive_kernel):
    defaults = default_eval_options()
    assert set(defaults) == EVAL_KEYS
    options = {
        "compile_only": True, "counters": False, "counter_set": "fast", "baselines": False, "timing": True,
        "hot": False, "verify_trials": 2, "shape_generic": False, "rank_by": "cold",
    }
    assert set(options) == EVAL_KEYS
    [record] = pool.evaluate_batch([unique(naive_kernel, "wire_eval")], task="64x64x64", **options)
    assert record["status"] == "compiled"


def test_an_unknown_evaluation_option_is_refused_with_its_name(pool, naive_kernel):
    with pytest.raises(ValueError, match="unknown key 'verify_trails'"):
        pool.evaluate_batch([naive_kernel], task="64x64x64", verify_trails=2)
    with pytest.raises(ValueError, match="verify_trials"):
        pool.evaluate_batch([naive_kernel], task="64x64x64", verify_trials=0)
    with pytest.raises(ValueError, match="unknown key 'knd'"):
        pool.evaluate_batch([{"source": naive_kernel, "knd": "tu"}], task="64x64x64")
    with pytest.raises(ValueError, match="unknown candidate kind 'cubin'"):
        pool.evaluate_batch([{"source": naive_kernel, "kind": "cubin"}], task="64x64x64")


def test_the_hooks_settings_are_the_cpp_environments():
    cpp = set(tessera.default_config())
    assert set(_common.CONFIG_KEYS) == cpp - {"max_turns", "tasks"}
    assert "infra_retries" in _common.CONFIG_KEYS and "eval" in _common.CONFIG_KEYS
    with pytest.raises(ValueError, match="unknown setting.*verify_trials"):
        _common.config_overrides({"verify_trials": 2}, strict=True)
    with pytest.raises(ValueError, match="eval: unknown key 'verify_trails'"):
        tessera.Environment({"eval": {"verify_trails": 2}}, pool=None)
