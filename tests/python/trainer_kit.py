"""What the real-trainer tests share: the trainers' packages (skipped with the
reason where scripts/test.sh could not install them), a tokenizer trained on
the fly on the repository's own text, and a tiny random GPT-2.

Nothing here stands in for a trainer: the tests call the trainers' own code.
"""

from __future__ import annotations

import functools
import importlib
import typing
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTALL_HINT = "install them as scripts/test.sh does (tests/python/requirements/trainers-*.txt)"

# ChatML: special tokens and a template, so chat prompts, end-of-turn tokens and
# the assistant header look as a Qwen policy's do.
IM_START, IM_END, END_OF_TEXT = "<|im_start|>", "<|im_end|>", "<|endoftext|>"
# Gemma's and DeepSeek's end-of-turn tokens, so a decoded query can carry them.
EXTRA_SPECIALS = ["<end_of_turn>", "<｜end▁of▁sentence｜>"]
CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
VOCAB_SIZE = 2048


def need(module: str):
    """The module, or the test skips saying which package is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        pytest.skip(f"{module} is not installed ({e}); {INSTALL_HINT}")


def import_skyrl_generator():
    """SkyRL 0.3.0's generator module. It declares Python >= 3.11, but its pydantic
    models use typing.TypedDict, which pydantic accepts only on 3.12 and later; on
    3.11 typing_extensions' TypedDict stands in while SkyRL's modules load."""
    need("skyrl")
    import sys

    import typing_extensions

    original = typing.TypedDict
    if sys.version_info < (3, 12):
        typing.TypedDict = typing_extensions.TypedDict
    try:
        from skyrl.train.config import GeneratorConfig, SkyRLGymConfig
        from skyrl.train.generators.skyrl_gym_generator import SkyRLGymGenerator
    finally:
        typing.TypedDict = original
    return SkyRLGymGenerator, GeneratorConfig, SkyRLGymConfig


def corpus() -> list[str]:
    texts = [p.read_text() for p in sorted((REPO / "examples").glob("*.cu"))]
    texts += [p.read_text() for p in sorted((REPO / "agent" / "prompts").glob("*.md"))]
    texts.append((REPO / "docs" / "env.md").read_text())
    return texts


@functools.lru_cache(maxsize=1)
def tokenizer():
    """A byte-level BPE trained on the repository's kernels and prompts (decoding
    gives the text back exactly), with ChatML's special tokens and template."""
    need("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = [END_OF_TEXT, IM_START, IM_END, *EXTRA_SPECIALS]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token=IM_END, pad_token=END_OF_TEXT, additional_special_tokens=EXTRA_SPECIALS
    )
    fast.chat_template = CHATML_TEMPLATE
    return fast


def tiny_model(seed: int = 0):
    """A random two-layer GPT-2 over the tokenizer, small enough to train on a CPU."""
    need("torch")
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    tok = tokenizer()
    config = GPT2Config(
        vocab_size=len(tok), n_positions=8192, n_embd=32, n_layer=2, n_head=2,
        bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
    )
    return GPT2LMHeadModel(config)


def save_tokenizer(path: Path) -> str:
    """The tokenizer as a folder a trainer loads by path (AutoTokenizer.from_pretrained)."""
    tokenizer().save_pretrained(str(path))
    return str(path)
