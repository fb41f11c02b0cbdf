"""verl: a custom reward function.

    custom_reward_function.path=examples/rl/verl_reward.py
    custom_reward_function.name=compute_score          # or compute_score_batch with reward_model.reward_manager=batch

The dataset's ``reward_model.ground_truth`` is the task ("4096x4096x4096" or a
task object as JSON). verl takes a float score per sample and has no mask: a
masked sample (the machine failed) scores ``masked_score`` (0.0) and says
``masked: True`` among the extra values. Every sample returns the same keys, so
verl can gather them into columns.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..env import score_actions
from ._common import config_overrides, task_of

DEFAULT_MASKED_SCORE = 0.0


def _verl_dict(scored: dict, masked_score: float) -> dict:
    info = scored["info"]
    k = info["reward"]
    masked = scored["reward"] is None
    return {
        "score": masked_score if masked else float(scored["reward"]),
        "masked": masked,
        "format_ok": bool(k["format"]),
        "compiled": bool(k["compiled"]),
        "correct": bool(k["correct"]),
        "speedup": float(k["speedup"] or 0.0),
        "performance": float(k["performance"]),
        "bonus": float(k["bonus"]),
        "penalty": float(k["penalty"]),
        "status": str(k["status"]),
    }


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict | None = None, **kwargs: Any) -> dict:
    """One sample: the dict verl's reward managers read ("score" and the reward's components)."""
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info], **kwargs)[0]


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[dict | None] | None = None,
    **kwargs: Any,
) -> list[dict]:
    """verl's batch reward manager: every sample evaluated as one batch across every GPU."""
    masked_score = float(kwargs.get("masked_score", DEFAULT_MASKED_SCORE))
    tasks = [task_of(g) for g in ground_truths]
    scored = score_actions(list(solution_strs), tasks, **config_overrides(kwargs))
    return [_verl_dict(s, masked_score) for s in scored]
