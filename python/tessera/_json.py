"""The C++ core speaks JSON text; these turn it into Python objects.

Compiler logs can be cut inside a multi-byte character, so text from the core
arrives as bytes and is decoded with replacement, never with an exception.
"""

from __future__ import annotations

import json
from typing import Any


def text(data: bytes | str) -> str:
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data


def load(data: bytes | str) -> Any:
    return json.loads(text(data))


def dump(value: Any) -> str:
    return json.dumps(value)


def task_json(task: Any) -> str:
    """A task as the core reads it: "MxNxK" or a task object (docs/contracts.md)."""
    if isinstance(task, (str, dict)):
        return json.dumps(task)
    raise TypeError(f"a task is a 'MxNxK' string or a task dict, not {type(task).__name__}")
