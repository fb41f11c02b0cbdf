"""SkyRL's own data path into tessera's text environment: rows read by SkyRL's
PromptDataset from a JSON file, then SkyRL's generator (SkyRLGymGenerator.agent_loop)
drives the episode through skyrl_gym.make, init and step, with a stand-in for the
inference engine only (it replies with scripted text). Compile-only."""

from __future__ import annotations

import asyncio
import json

import pytest

from conftest import unique
from trainer_kit import import_skyrl_generator, need, tokenizer

TASK_ID = "hgemm_512x512x512_TN_none"


class ScriptedEngine:
    """The inference engine's interface as the generator calls it; the replies are scripted."""

    def __init__(self, replies: list[str]):
        self.replies = list(replies)
        self.prompts: list[list[int]] = []

    async def generate(self, engine_input, model=None):
        self.prompts.append(list(engine_input["prompt_token_ids"][0]))
        text = self.replies.pop(0)
        ids = tokenizer().encode(text, add_special_tokens=False) + [tokenizer().eos_token_id]
        return {"responses": [text], "response_ids": [ids], "stop_reasons": ["stop"], "response_logprobs": None}

    async def finish_session(self, session_id):
        pass


def dataset_rows(tmp_path, rows: list[dict]):
    need("skyrl_gym")
    from skyrl.train.dataset.dataset import PromptDataset

    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = PromptDataset(datasets=[str(path)], tokenizer=tokenizer(), max_prompt_length=4096, num_workers=1)
    return [ds[i] for i in range(len(ds))]


def generator(max_turns: int, env_config: dict | None = None):
    SkyRLGymGenerator, GeneratorConfig, SkyRLGymConfig = import_skyrl_generator()
    from tessera.hooks.skyrl import ENV_CLASS, register

    register()
    gym_cfg = SkyRLGymConfig(max_env_workers=2)
    if env_config is not None:
        setattr(gym_cfg, ENV_CLASS, env_config)  # where the generator looks up an environment's config
    return lambda engine: SkyRLGymGenerator(GeneratorConfig(max_turns=max_turns), gym_cfg, engine, tokenizer())


def run_episode(make, row, replies):
    engine = ScriptedEngine(replies)
    prompt, env_class, extras, _ = row
    out = asyncio.run(make(engine).agent_loop(prompt, env_class, extras, max_tokens=512, max_input_length=16384))
    return out, engine


def test_prompt_dataset_rows_run_a_two_turn_episode(tmp_path, naive_kernel):
    rows = dataset_rows(tmp_path, [
        {"prompt": [{"role": "user", "content": "write a kernel"}], "env_class": "tessera-hgemm", "task": TASK_ID},
        {"prompt": [{"role": "user", "content": "write a kernel"}], "env_class": "tessera-hgemm",
         "reward_spec": {"ground_truth": "256x256x256"}},
        {"prompt": [{"role": "user", "content": "write a kernel"}], "env_class": "tessera-hgemm",
         "extras": {"task": "128x128x128"}},  # the row format docs/env.md gave before: read too
    ])
    assert rows[0][2] == {"task": TASK_ID, "reward_spec": None, "extras": None}  # every other column becomes extras
    kernel = f"```cuda\n{unique(naive_kernel, 'skyrl_real')}```"
    diff = "<<<<<<< SEARCH\n#define TILE 16\n=======\n#define TILE 8\n>>>>>>> REPLACE\n"
    make = generator(max_turns=2)
    for i, row in enumerate(rows):
        out, engine = run_episode(make, row, [kernel, diff])
        assert len(engine.prompts) == 2, i  # two turns: SkyRL's generator.max_turns
        rewards = out.reward if isinstance(out.reward, list) else [out.reward]
        assert [r for r in rewards if r is not None] != [] and out.stop_reason == "stop"
        first = tokenizer().decode(engine.prompts[0])
        assert "write a kernel" not in first and "HGEMM" in first  # the environment's task prompt replaced the row's
        second = tokenizer().decode(engine.prompts[1])
        assert "# Turn 1 of 2" in second  # the observation went back as the next user message


def test_env_configs_max_turns_wins_over_the_generators(tmp_path, naive_kernel):
    rows = dataset_rows(tmp_path, [{"prompt": [{"role": "user", "content": "go"}], "env_class": "tessera-hgemm",
                                    "task": "64x64x64"}])
    out, engine = run_episode(generator(max_turns=3, env_config={"max_turns": 1}), rows[0], ["no kernel"] * 3)
    assert len(engine.prompts) == 1


def test_a_row_without_a_task_says_what_skyrl_passed(tmp_path):
    rows = dataset_rows(tmp_path, [{"prompt": [{"role": "user", "content": "go"}], "env_class": "tessera-hgemm",
                                    "shape": "64x64x64"}])
    with pytest.raises(ValueError, match="no task.*'task' column.*shape"):
        run_episode(generator(max_turns=1), rows[0], ["x"])
