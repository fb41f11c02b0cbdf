"""Shared fixtures: a compile-only pool (no GPU needed) and the repository's example kernels.
The real trainers' tests (test_trainer_*.py) share trainer_kit.py."""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

import pytest

# The hooks use the shared default pool: compile-only here, so the tests behave
# the same with and without a GPU (the GPU path is examples/rl/h200_demo.py's).
os.environ.setdefault("TESSERA_MODE", "compile_only")

import tessera  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def _cache_dir(tmp_path_factory):
    # Compiles land in a cache of the test session's own, never in the user's.
    os.environ.setdefault("TESSERA_CACHE_DIR", str(tmp_path_factory.mktemp("tessera-cache")))


@pytest.fixture(scope="session")
def pool() -> tessera.Pool:
    return tessera.Pool(devices=[0], mode="compile_only")


@pytest.fixture(scope="session")
def naive_kernel() -> str:
    return (REPO / "examples" / "hgemm_naive.cu").read_text()


@pytest.fixture(scope="session")
def wmma_kernel() -> str:
    return (REPO / "examples" / "hgemm_wmma.cu").read_text()


@pytest.fixture()
def broken_pool(tmp_path) -> tessera.Pool:
    """A pool whose compiler answers garbage: every evaluation is an infra_error (a machine fault).
    It answers each request line, as a one-shot `__compile` child (one line) and a `__compile --serve`
    server (one line after another) both do."""
    fake = tmp_path / "tessera"
    fake.write_text('#!/bin/sh\nwhile read -r line || [ -n "$line" ]; do echo \'{"TESSERA_COMPILE": "garbage"}\'; done\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return tessera.Pool(devices=[0], mode="compile_only", self_exe=str(fake))


# Per test session: the compile cache outlives a run (a second run of the suite
# found the kernels of the first and answered for them).
_SESSION = uuid.uuid4().hex[:12]


def unique(source: str, tag: str) -> str:
    """The same kernel with a distinct text, so the compile cache cannot answer for it
    (the same text for the same tag within one test session)."""
    return f"#define TESSERA_TEST_VARIANT_{tag}_{_SESSION}\n{source}"
