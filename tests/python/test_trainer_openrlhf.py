"""OpenRLHF's own agent executor (openrlhf.utils.agent.SingleTurnAgentExecutor)
against `tessera serve --mode compile_only`: the executor tokenizes the prompt,
left-truncates it to --max_len as OpenRLHF does, asks a stand-in generation
engine (scripted replies) for the response, decodes prompt and response
together with their special tokens and posts them to /get_reward.

The cases the issue found: a truncated prompt scored right, Gemma's and
DeepSeek's end-of-turn tokens stripped, a missing task said loudly."""

from __future__ import annotations

import asyncio
import os
from types import SimpleNamespace

import pytest

import tessera
from conftest import REPO, unique
from trainer_kit import need, tokenizer

MAX_TOKENS = 512


class ScriptedEngine:
    """vLLM's generate() as the executor calls it; the reply is scripted text."""

    def __init__(self, reply: str):
        self.reply = reply
        self.prompt_ids: list[int] = []

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        self.prompt_ids = list(prompt_token_ids)
        ids = tokenizer().encode(self.reply, add_special_tokens=False)
        out = SimpleNamespace(token_ids=ids, finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[out])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    need("openrlhf")
    from tessera.client_local import LocalServer

    env = dict(os.environ, TESSERA_CACHE_DIR=str(tmp_path_factory.mktemp("openrlhf-cache")))
    with LocalServer(["--mode", "compile_only", "--gpus", "0,1", "--open-reward"], env=env) as s:
        yield s


def prompt_text(task: str) -> str:
    """The dataset's prompt as OpenRLHF's --apply_chat_template writes it."""
    messages = tessera.Environment(max_turns=1).reset(task)[1]["messages"]
    return tokenizer().apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def execute(server, reply: str, label: str, max_length: int | None = None) -> tuple[dict, ScriptedEngine]:
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    prompt = prompt_text(label or "256x256x256")
    engine = ScriptedEngine(reply)
    params = SimpleNamespace(max_tokens=MAX_TOKENS, logprobs=None)
    executor = SingleTurnAgentExecutor(server.url + "/get_reward")
    length = max_length or len(tokenizer().encode(prompt)) + MAX_TOKENS
    out = asyncio.run(executor.execute(prompt, label, params, length, tokenizer(), engine))
    return out, engine


def reward(out: dict) -> float | None:
    """The one query's reward (the executor keeps the server's per-query lists)."""
    return None if out["reward"] is None else out["reward"][0]


def logs(out: dict) -> dict:
    return {k: v[0] for k, v in out["extra_logs"].items()}


def test_a_clean_query_is_scored_after_its_prompt(server, naive_kernel):
    out, _ = execute(server, f"```cuda\n{unique(naive_kernel, 'orl_clean')}```<|im_end|>", "512x512x512")
    assert reward(out) == 0.0 and logs(out)["response_fallback"] == 0 and logs(out)["compiled"] == 1


def test_a_left_truncated_prompt_still_scores_the_response(server, naive_kernel):
    full = len(tokenizer().encode(prompt_text("hgemm_512x512x512_TN_none")))
    broken = naive_kernel.replace("float acc = 0.0f;", "float acc = undefined_name;")
    for reply, paid, compiled in ((f"```cuda\n{unique(naive_kernel, 'orl_trunc')}```<|im_end|>", 0.0, 1),
                                    (f"```cuda\n{unique(broken, 'orl_trunc_err')}```<|im_end|>", -0.6, 0)):
        out, engine = execute(server, reply, "hgemm_512x512x512_TN_none", max_length=full // 2 + MAX_TOKENS)
        assert len(engine.prompt_ids) < full  # OpenRLHF cut the prompt's start
        assert reward(out) == pytest.approx(paid), out  # a compile error is -0.6, never a -1 format failure
        assert logs(out)["response_fallback"] == 1 and logs(out)["compiled"] == compiled and logs(out)["masked"] == 0


@pytest.mark.parametrize("end", ["<end_of_turn>", "<｜end▁of▁sentence｜>"], ids=["gemma", "deepseek"])
def test_end_of_turn_tokens_come_off_an_unfenced_kernel(server, naive_kernel, end):
    out, _ = execute(server, unique(naive_kernel, f"orl_{len(end)}") + end, "256x256x256")
    assert reward(out) == 0.0 and logs(out)["compiled"] == 1, out


def test_a_missing_task_is_said_in_the_services_log(server):
    out, _ = execute(server, "```cuda\n// nothing\n```", "")
    assert reward(out) is None  # OpenRLHF swallows the 400 (it logs at INFO level only)
    assert any("--data.label_key" in line for line in server.log), server.log[-5:]
