"""How much of a policy's context tessera's text takes, turn by turn: the first
prompt and each observation of an episode (a kernel, a diff, a tile config, a
compile error, a reply that is no kernel), in characters and in tokens of a real
tokenizer that works offline: Mistral's Tekken (131k vocabulary, as large as
Llama 3's and Qwen's), whose vocabulary ships inside the mistral-common package.

Every observation stays within the default budget (max_observation_chars), and
the first prompt, the longest reply and the longest observation fit a 4k-token
context together. The table is printed (pytest -s shows it)."""

from __future__ import annotations

import base64
import functools
import json
import sys
from pathlib import Path

import tessera
from conftest import REPO
from trainer_kit import need

sys.path.insert(0, str(REPO / "examples" / "rl"))
import scripted_policy  # noqa: E402

CONTEXT_TOKENS = 4096
DEFAULT_BUDGET_CHARS = 4000  # env/env.hpp kDefaultMaxObservationChars, as docs/env.md states


@functools.lru_cache(maxsize=1)
def tekken():
    """Tekken from the package's own file, as mistral-common's Tekkenizer builds it (tiktoken ranks)."""
    mistral_common = need("mistral_common")
    tiktoken = need("tiktoken")
    data = json.loads((Path(mistral_common.__file__).parent / "data" / "tekken_240911.json").read_text())
    config = data["config"]
    inner = config["default_vocab_size"] - config["default_num_special_tokens"]
    ranks = {base64.b64decode(t["token_bytes"]): t["rank"] for t in data["vocab"][:inner]}
    return tiktoken.Encoding(name="tekken_240911", pat_str=config["pattern"], mergeable_ranks=ranks, special_tokens={})


def tokens(text: str) -> int:
    return len(tekken().encode(text, disallowed_special=()))


def test_prompt_and_observations_fit_a_4k_context(pool, naive_kernel):
    broken = naive_kernel.replace("float acc = 0.0f;", "float acc = undefined_name;")
    replies = [
        ("kernel", scripted_policy.TURN_1),
        ("diff", scripted_policy.TURN_2),
        ("tile config", scripted_policy.TURN_3),
        ("compile error", f"```cuda\n{broken}```"),
        ("no kernel", "I would use bigger tiles."),
    ]
    env = tessera.Environment(pool=pool, max_turns=len(replies))
    prompt, _ = env.reset(scripted_policy.TASK)
    rows = [("first prompt", len(prompt), tokens(prompt), "")]
    for name, reply in replies:
        obs, _, _, _, info = env.step(reply)
        rows.append((f"turn {info['turn']}: {name}", len(obs), tokens(obs), info["action_kind"] or "-"))
        assert len(obs) <= DEFAULT_BUDGET_CHARS, (name, len(obs))
        if name == "tile config":
            assert "__global__" not in obs  # the tile compiler's kernel never comes back
    print("\n| text | characters | Tekken tokens | action |\n|---|---:|---:|---|")
    for row in rows:
        print(f"| {row[0]} | {row[1]:,} | {row[2]:,} | {row[3]} |")
    longest_reply = max(tokens(r) for _, r in replies)
    longest_obs = max(r[2] for r in rows[1:])
    assert rows[0][2] + longest_reply + longest_obs <= CONTEXT_TOKENS, (rows[0][2], longest_reply, longest_obs)
