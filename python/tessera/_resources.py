"""Where the installed package keeps what the C++ core needs at run time.

The wheel carries the ``tessera`` binary (every sandbox worker and compile
child is that binary), the agent's prompt templates, the candidate ABI header
and the datasets, so an installed package does not depend on the source tree.
"""

from __future__ import annotations

import os
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_DATA = _HERE / "data"


def binary_path() -> Path:
    """The ``tessera`` executable: $TESSERA_BINARY, else the one in the package."""
    env = os.environ.get("TESSERA_BINARY")
    return Path(env) if env else _HERE / "bin" / "tessera"


def prompt_dir() -> Path:
    """The prompt templates: $TESSERA_PROMPT_DIR, else the packaged copy."""
    env = os.environ.get("TESSERA_PROMPT_DIR")
    return Path(env) if env else _DATA / "prompts"


def abi_header() -> Path:
    """The candidate ABI header: $TESSERA_ABI_HEADER, else the packaged copy."""
    env = os.environ.get("TESSERA_ABI_HEADER")
    return Path(env) if env else _DATA / "tessera_abi.cuh"


def cost_model_dir() -> Path:
    """The learned cost models shipped with the package (datasets/cost_models of
    the repository), which the C++ side finds through $TESSERA_COST_MODEL_DIR."""
    env = os.environ.get("TESSERA_COST_MODEL_DIR")
    return Path(env) if env else _DATA / "datasets" / "cost_models"


def datasets_dir() -> Path:
    """The task files shipped with the package (datasets/*.json of the repository)."""
    return _DATA / "datasets"


def dataset(name_or_path: str | os.PathLike) -> Path:
    """A task file: a path, or the name of a packaged dataset ("small_grid")."""
    p = Path(name_or_path)
    if p.suffix == ".json" or p.exists():
        return p
    packaged = datasets_dir() / f"{name_or_path}.json"
    if not packaged.exists():
        known = ", ".join(sorted(f.stem for f in datasets_dir().glob("*.json")))
        raise ValueError(f"no dataset '{name_or_path}' (packaged: {known}; or give a path to a .json task file)")
    return packaged
