"""The installed package: its files, parse_action, configuration and clear errors."""

from __future__ import annotations

import pytest

import tessera
from tessera import _resources


def test_the_wheel_carries_what_the_core_reads():
    assert _resources.binary_path().is_file()
    assert (_resources.prompt_dir() / "system.md").is_file()
    assert "TesseraGemmParams" in _resources.abi_header().read_text()
    assert (tessera.datasets_dir() / "small_grid.json").is_file()
    assert _resources.dataset("small_grid").name == "small_grid.json"
    with pytest.raises(ValueError, match="small_grid"):
        _resources.dataset("no_such_dataset")


def test_parse_action_forms(naive_kernel):
    p = tessera.parse_action(f"```cuda\n{naive_kernel}```", task="1024x1024x1024")
    assert p["ok"] and p["kind"] == "device_only" and p["source"] == naive_kernel
    d = tessera.parse_action(
        "<<<<<<< SEARCH\n#define TILE 16\n=======\n#define TILE 32\n>>>>>>> REPLACE\n", previous=naive_kernel, task="1024x1024x1024"
    )
    assert d["ok"] and d["kind"] == "diff" and "#define TILE 32" in d["source"]
    t = tessera.parse_action('{"bm": 64, "bn": 64}', task={"op": "hgemm", "m": 512, "n": 512, "k": 512})
    assert t["ok"] and t["kind"] == "tile_config" and t["tile_config"]["bm"] == 64
    bad = tessera.parse_action("no kernel", task="1024x1024x1024")
    assert not bad["ok"] and "no kernel found" in bad["error"]
    assert not tessera.parse_action(naive_kernel, task="64x64x64", actions={"device_only": False})["ok"]


def test_configuration_defaults_and_errors():
    c = tessera.default_config()
    assert c["max_turns"] == 3 and c["reuse_baselines"] is False and c["actions"]["translation_unit"] is False
    made = tessera.make_config(tasks="small_grid", max_turns=2)
    assert made["tasks_file"].endswith("small_grid.json") and made["max_turns"] == 2
    with pytest.raises(ValueError, match="unknown environment setting 'max_turn'"):
        tessera.Environment({"max_turn": 3}, pool=None)
    with pytest.raises(ValueError, match="MxNxK|shape"):
        tessera.parse_action("x", task="12x")
    with pytest.raises(TypeError):
        tessera.parse_action("x", task=12)


def test_a_pool_is_shared_not_copied(pool):
    import copy
    import pickle

    assert copy.deepcopy(pool) is pool and copy.copy(pool) is pool  # gymnasium deep-copies make()'s arguments
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(pool)
    assert len(pool) == 1 and pool.describe()[0].startswith("compile-only")
