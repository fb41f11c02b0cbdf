"""verl's own reward path with tessera's compute_score: the trainer configuration
composed by Hydra from verl's ppo_trainer.yaml, load_reward_manager, and the
reward loop's run_single on DataProto items (compile-only).

Supported: verl 0.9.1 (installed by scripts/test.sh) with the keys
reward.custom_reward_function.*, and verl 0.8.0 with those keys and the older
custom_reward_function.*, which its main_ppo moves there
(migrate_legacy_reward_impl). verl 0.9's main_ppo no longer moves them: the old
keys are ignored there, which the test pins down so docs/env.md stays true.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, unique
from trainer_kit import need, save_tokenizer, tokenizer

REWARD_FILE = str(REPO / "examples" / "rl" / "verl_reward.py")
VERL_KEYS = {"score", "masked", "format_ok", "compiled", "correct", "speedup", "performance", "bonus", "penalty", "status"}
NEW_KEYS = [f"reward.custom_reward_function.path={REWARD_FILE}", "reward.custom_reward_function.name=compute_score"]
OLD_KEYS = [f"custom_reward_function.path={REWARD_FILE}", "custom_reward_function.name=compute_score"]
# verl 0.8.0, beside the installed 0.9.1 (scripts/test.sh puts it there; pure Python).
VERL_PREVIOUS = Path(os.environ.get("TESSERA_VERL_PREVIOUS", REPO / ".venv" / "verl-0.8.0")).resolve()


def composed(overrides: list[str]):
    """verl's trainer configuration as its main_ppo composes it (Hydra, ppo_trainer.yaml)."""
    verl = need("verl")
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


def data_items(responses: list[str], tasks: list[str]):
    """A DataProto batch as verl's rollout leaves it: left-padded prompts, right-padded responses."""
    need("verl")
    import numpy as np
    import torch
    from verl import DataProto

    tok = tokenizer()
    ids = [tok.encode(r, add_special_tokens=False) for r in responses]
    width = max(len(i) for i in ids)
    prompts = torch.full((len(ids), 4), tok.pad_token_id)
    resp = torch.full((len(ids), width), tok.pad_token_id)
    mask = torch.zeros((len(ids), 4 + width), dtype=torch.long)
    for row, i in enumerate(ids):
        resp[row, : len(i)] = torch.tensor(i)
        mask[row, :4] = 1
        mask[row, 4 : 4 + len(i)] = 1
    return DataProto.from_dict(
        tensors={"prompts": prompts, "responses": resp, "attention_mask": mask},
        non_tensors={
            "data_source": np.array(["tessera/hgemm"] * len(ids), dtype=object),
            "reward_model": np.array([{"ground_truth": t} for t in tasks], dtype=object),
            "extra_info": np.array([{"index": k} for k in range(len(ids))], dtype=object),
        },
    )


def test_the_current_keys_load_and_score_through_the_reward_loop(naive_kernel):
    need("verl")
    from verl.trainer.ppo.reward import load_reward_manager

    config = composed(NEW_KEYS)
    manager = load_reward_manager(config, tokenizer())
    assert type(manager).__name__ == "NaiveRewardManager"
    responses = [f"```cuda\n{unique(naive_kernel, 'verl_real')}```", "no kernel", "{\"bm\": 64, \"bn\": 64}"]
    tasks = ["512x512x512", "hgemm_512x512x512_TN_none", '{"op": "hgemm", "m": 256, "n": 256, "k": 256}']
    data = data_items(responses, tasks)

    async def every_item():
        return await asyncio.gather(*(manager.run_single(data[i : i + 1]) for i in range(len(data))))

    out = manager.loop.run_until_complete(every_item())  # the loop verl's worker runs it on
    assert [o["reward_score"] for o in out] == [0.0, -1.0, 0.0]
    assert all(set(o["reward_extra_info"]) == VERL_KEYS for o in out)
    assert [o["reward_extra_info"]["status"] for o in out] == ["compiled", "format_error", "compiled"]


def test_verl_09_ignores_the_previous_releases_keys():
    need("verl")
    from verl.trainer.ppo.reward import get_custom_reward_fn

    assert get_custom_reward_fn(composed(NEW_KEYS)) is not None
    assert get_custom_reward_fn(composed(OLD_KEYS)) is None, "verl 0.9's main_ppo reads reward.custom_reward_function only"


def test_compute_score_batch_named_in_the_default_manager_scores_each_sample(naive_kernel):
    need("verl")
    from verl.trainer.ppo.reward import load_reward_manager

    config = composed([f"reward.custom_reward_function.path={REWARD_FILE}",
                       "reward.custom_reward_function.name=compute_score_batch"])
    manager = load_reward_manager(config, tokenizer())
    data = data_items([f"```cuda\n{unique(naive_kernel, 'verl_batch')}```"], ["256x256x256"])
    out = manager.loop.run_until_complete(manager.run_single(data[0:1]))
    assert out["reward_score"] == 0.0 and out["reward_extra_info"]["status"] == "compiled"


PREVIOUS_RELEASE = r"""
import asyncio, json, sys
sys.path.insert(0, sys.argv[1])  # tests/python
import verl
assert verl.__version__ == "0.8.0", verl.__version__
from verl.experimental.reward_loop import migrate_legacy_reward_impl
from verl.trainer.ppo.reward import load_reward_manager
from test_trainer_verl import composed, data_items, OLD_KEYS, NEW_KEYS
from trainer_kit import tokenizer
scores = {}
for name, keys in (("old", OLD_KEYS), ("new", NEW_KEYS)):
    config = migrate_legacy_reward_impl(composed(keys))  # as verl 0.8's main_ppo does
    manager = load_reward_manager(config, tokenizer())
    data = data_items(["no kernel"], ["hgemm_128x128x128_TN_none"])
    out = manager.loop.run_until_complete(manager.run_single(data[0:1]))
    scores[name] = [out["reward_score"], out["reward_extra_info"]["status"]]
print(json.dumps(scores))
"""


def test_verl_08_reads_the_old_and_the_new_keys(tmp_path):
    need("verl")
    if not (VERL_PREVIOUS / "verl").is_dir():
        pytest.skip(f"verl 0.8.0 is not at {VERL_PREVIOUS} ({'scripts/test.sh puts it there'})")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(VERL_PREVIOUS), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", PREVIOUS_RELEASE, str(Path(__file__).parent)], env=env,
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == {"old": [-1.0, "format_error"], "new": [-1.0, "format_error"]}
