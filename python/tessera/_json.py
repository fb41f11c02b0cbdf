"""The C++ core speaks JSON text; these turn it into Python objects.

Compiler logs can be cut inside a multi-byte character, so text from the core
arrives as bytes and is decoded with replacement, never with an exception.
"""

from __future__ import annotations

import json
from typing import Any, Iterable


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


def batch_requests(candidates: Iterable[str | dict], task: Any) -> list[dict]:
    """evaluate_batch's requests: a source alone takes ``task``; a dict keeps its own ``task``."""
    requests = []
    for i, c in enumerate(candidates):
        r = {"source": c} if isinstance(c, str) else dict(c)
        r.setdefault("task", task)
        if r["task"] is None:
            raise ValueError(f"candidate {i} has no task (give task=... or a 'task' key)")
        requests.append(r)
    return requests
