"""verl: a custom reward function.

    reward.custom_reward_function.path=examples/rl/verl_reward.py     # verl 0.9 (0.8 reads these too)
    reward.custom_reward_function.name=compute_score
    # verl 0.8 also moves the old keys there: custom_reward_function.path=... custom_reward_function.name=...

verl's reward loop (0.8 and 0.9) calls ``compute_score`` once per sample, each
in a thread of its event loop's executor, so a step's samples are evaluated
concurrently and the pool spreads them over every GPU. ``compute_score_batch``
is the batch form of the older ``verl.workers.reward_manager`` batch manager;
named in a per-sample manager, it scores the one sample it is given.

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
    data_sources: Sequence[str] | None = None,
    solution_strs: Sequence[str] | None = None,
    ground_truths: Sequence[Any] | None = None,
    extra_infos: Sequence[dict | None] | None = None,
    **kwargs: Any,
) -> list[dict] | dict:
    """verl's batch reward manager: every sample evaluated as one batch across every GPU.

    Called the per-sample way (``data_source=, solution_str=, ground_truth=``, as
    verl's default naive manager calls whatever function is named), it is
    ``compute_score``.
    """
    if solution_strs is None and "solution_str" in kwargs:
        single = {k: kwargs.pop(k) for k in ("data_source", "solution_str", "ground_truth", "extra_info") if k in kwargs}
        return compute_score(single.get("data_source", ""), single["solution_str"], single.get("ground_truth"),
                             single.get("extra_info"), **kwargs)
    if solution_strs is None or ground_truths is None:
        raise TypeError("compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs)")
    masked_score = float(kwargs.get("masked_score", DEFAULT_MASKED_SCORE))
    tasks = [task_of(g) for g in ground_truths]
    scored = score_actions(list(solution_strs), tasks, **config_overrides(kwargs))
    return [_verl_dict(s, masked_score) for s in scored]
