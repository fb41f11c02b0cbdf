"""What the trainer adapters share: reading a completion, a task, and plain values."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .. import _core

# What a hook sets itself, per row of the dataset: the episode's length and its task.
_EPISODE_KEYS = ("max_turns", "tasks", "tasks_file")
# Settings a hook passes on to the environment's configuration (docs/env.md):
# every key of the C++ EnvConfig but the episode's own.
CONFIG_KEYS = tuple(k for k in json.loads(_core.default_config()) if k not in _EPISODE_KEYS)


def completion_text(completion: Any) -> str:
    """A completion as text: a string, or a conversation whose last assistant message is the reply."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return str(completion.get("content", ""))
    if isinstance(completion, Sequence):
        for message in reversed(completion):
            if isinstance(message, Mapping) and message.get("role", "assistant") == "assistant":
                return str(message.get("content", ""))
    raise TypeError(f"a completion is a string or a list of chat messages, not {type(completion).__name__}")


def task_of(value: Any) -> Any:
    """A task as datasets carry it: "MxNxK", a task dict, or a task dict as JSON text."""
    value = plain(value)
    if isinstance(value, str) and value.lstrip().startswith("{"):
        return json.loads(value)
    if isinstance(value, (str, dict)):
        return value
    raise ValueError(f"a task is 'MxNxK', a task object or its JSON text (got {value!r})")


def plain(value: Any) -> Any:
    """Mappings and sequences of a trainer's config objects (OmegaConf, numpy) as dicts, lists and scalars."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, Sequence):
        return [plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays
        return value.tolist()
    return value


def config_overrides(kwargs: Mapping[str, Any], strict: bool = False) -> dict:
    """The environment settings among a hook's keyword arguments.

    A trainer passes arguments of its own (verl, TRL): those are left out. With
    ``strict`` (settings a user wrote), an unknown name is an error.
    """
    if strict:
        unknown = sorted(set(kwargs) - set(CONFIG_KEYS))
        if unknown:
            raise ValueError(f"unknown setting(s) {', '.join(unknown)} (known: {', '.join(CONFIG_KEYS)})")
    return {k: plain(v) for k, v in kwargs.items() if k in CONFIG_KEYS}
