"""A compile-only `tessera serve` for the client tests (docs/serve.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tessera.client_local import LocalServer

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "test-token-0123456789"
TASK = "256x256x256"


def kernel(name: str = "hgemm_naive.cu") -> str:
    return "```cuda\n" + (ROOT / "examples" / name).read_text() + "\n```"


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """Two compile-only evaluator slots, a token, fault injection, /get_reward open to OpenRLHF."""
    import os

    env = dict(os.environ)
    env["TESSERA_CACHE_DIR"] = str(tmp_path_factory.mktemp("serve-cache"))
    args = ["--mode", "compile_only", "--gpus", "0,1", "--fault-injection", "--open-reward", "--shape", TASK]
    with LocalServer(args, env=env, token=TOKEN) as s:
        yield s
