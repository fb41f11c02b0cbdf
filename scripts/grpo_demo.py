#!/usr/bin/env python3
"""GRPO with TRL and tessera's rewards from real evaluations on the GPU.

A tiny random GPT-2 is the policy. Its vocabulary (a word-level tokenizer made
here) holds, besides the prompt's words, whole replies as single tokens: legal
tile configs of tessera's tile compiler and the repository's example kernels.
A completion is therefore one complete action, and TRL's GRPOTrainer learns which
actions pay, with every reward a real evaluation (compile, verify, time against
cuBLAS/cuBLASLt) spread over the GPUs by tessera's pool. Nothing on the reward
path is simulated.

It prints, per step and in total: completions scored, rewards per second (of
the time spent in the reward function, and of the trainer's wall time), the
share of the trainer's step time spent waiting for rewards, and the mean reward,
correct and masked fractions.

    python3 scripts/grpo_demo.py [--steps 6] [--generations 8] [--task 1024x1024x1024]

Needs: tessera (pip install .), torch, transformers, numpy, and TRL with what it
adds to the GPU image (datasets, dill, multiprocess; accelerate for its
version). Where pip reaches PyPI, at the repository root (.whl/ is ignored by
git; about 2.2 MB in all, far under the 60 MB a device call may carry):

    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl \
      trl==1.16.0 datasets==5.2.0 accelerate==1.15.0 dill==0.4.1 multiprocess==0.70.19
    du -cb .whl/*.whl | tail -1          # under 60,000,000 bytes

On the GPU machine (pyarrow >= 24, pandas, xxhash, fsspec, huggingface-hub are in
its image; scripts/gpu_check.sh's `grpo` stage runs the same lines):

    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site
    scripts/build.sh && python3 -m pip install -q --no-build-isolation --no-index --no-deps --target /tmp/site .
    PYTHONUNBUFFERED=1 python3 scripts/grpo_demo.py --steps 6
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Tile configs the policy may reply with: the tile compiler fills the keys left
# out and rejects what the task or the GPU cannot run (those are format failures).
TILE_SHAPES = [(64, 64, 32), (64, 128, 32), (128, 64, 32), (128, 128, 32), (128, 128, 64), (128, 256, 64),
               (256, 128, 64)]
BACKENDS = ["mma_sync", "wgmma_tma"]
STAGES = [2, 3, 4]


def candidate_actions(task: str) -> list[str]:
    """Whole replies, each one token of the policy: legal tile configs and the example kernels."""
    import tessera

    actions = []
    for backend in BACKENDS:
        for bm, bn, bk in TILE_SHAPES:
            for stages in STAGES:
                config = json.dumps({"backend": backend, "bm": bm, "bn": bn, "bk": bk, "stages": stages},
                                    separators=(",", ":"))
                if tessera.parse_action(config, task=task)["ok"]:
                    actions.append(config)
    for name in ("hgemm_naive.cu", "hgemm_wmma.cu"):
        actions.append("```cuda\n" + (REPO / "examples" / name).read_text() + "```")
    return actions


def word_level_tokenizer(prompt_words: list[str], actions: list[str]):
    """Prompt words split on whitespace; each action one token (decoding one token gives the action back)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[PAD]": 0, "[EOS]": 1, "[UNK]": 2}
    for w in [*prompt_words, *actions]:
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", eos_token="[EOS]", unk_token="[UNK]")


class RewardClock:
    """Wraps a reward function: time spent in it, completions scored, what they earned."""

    def __init__(self, fn):
        self.fn, self.seconds, self.scored, self.rewards = fn, 0.0, 0, []
        self.__name__ = "tessera_kernel_reward"

    def __call__(self, prompts, completions, **kwargs):
        t0 = time.perf_counter()
        out = self.fn(prompts=prompts, completions=completions, **kwargs)
        self.seconds += time.perf_counter() - t0
        self.scored += len(out)
        self.rewards.extend(out)
        return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--generations", type=int, default=8, help="completions per prompt (GRPO's group)")
    ap.add_argument("--prompts", type=int, default=2, help="prompts per step")
    ap.add_argument("--task", default="1024x1024x1024")
    ap.add_argument("--out", default="/tmp/grpo_demo")
    args = ap.parse_args()

    import torch
    from datasets import Dataset
    from transformers import GPT2Config, GPT2LMHeadModel, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    import tessera
    from tessera.hooks.trl import make_reward_func

    pool = tessera.default_pool()
    print(f"devices: {pool.describe()}", flush=True)
    actions = candidate_actions(args.task)
    prompt = f"Write the fastest HGEMM kernel or tile config for {args.task} ."
    tok = word_level_tokenizer(prompt.split(), actions)
    print(f"policy vocabulary: {len(tok)} tokens, {len(actions)} of them whole replies "
          f"({len(actions) - 2} legal tile configs, 2 example kernels)", flush=True)

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=64, n_embd=64, n_layer=2, n_head=2,
                                       bos_token_id=1, eos_token_id=1, pad_token_id=0))
    # Counters do not change the reward: skip the profiler passes.
    reward = RewardClock(make_reward_func(task=args.task, pool=pool, counters_in_feedback=False))
    steps: list[dict] = []

    class StepClock(TrainerCallback):
        def on_step_begin(self, a, state, control, **kw):
            self.t0, self.r0, self.n0, self.k0 = time.perf_counter(), reward.seconds, reward.scored, len(reward.rewards)

        def on_step_end(self, a, state, control, **kw):
            wall = time.perf_counter() - self.t0
            waited, scored = reward.seconds - self.r0, reward.scored - self.n0
            got = [r for r in reward.rewards[self.k0:] if r is not None]
            steps.append({"step": state.global_step, "wall_s": wall, "reward_s": waited, "scored": scored,
                          "mean_reward": sum(got) / max(1, len(got))})
            print(f"step {state.global_step}: {scored} completions scored in {waited:.2f} s of a {wall:.2f} s step "
                  f"({100 * waited / wall:.0f}% waiting for rewards), mean reward {steps[-1]['mean_reward']:.3f}",
                  flush=True)

    batch = args.prompts * args.generations
    config = GRPOConfig(
        output_dir=args.out, report_to="none", save_strategy="no", logging_steps=1, max_steps=args.steps,
        per_device_train_batch_size=batch, num_generations=args.generations, max_completion_length=1,
        learning_rate=5e-3, temperature=1.0, seed=0, dataloader_num_workers=0, bf16=False,
        use_cpu=not torch.cuda.is_available(),
    )
    rows = [{"prompt": prompt} for _ in range(args.prompts * args.steps)]
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=config, train_dataset=Dataset.from_list(rows),
                          processing_class=tok, callbacks=[StepClock()])
    t0 = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - t0

    metrics = defaultdict(list)
    for h in trainer.state.log_history:
        for k in ("tessera/correct_fraction", "tessera/masked_fraction"):
            if k in h:
                metrics[k].append(h[k])
    step_wall = sum(s["wall_s"] for s in steps)
    waited = sum(s["reward_s"] for s in steps)
    got = [r for r in reward.rewards if r is not None]
    summary = {
        "task": args.task, "steps": len(steps), "completions_scored": reward.scored,
        "rewards_per_s_of_reward_time": reward.scored / max(reward.seconds, 1e-9),
        "rewards_per_s_of_training": reward.scored / wall,
        "share_of_step_time_waiting_for_rewards": waited / max(step_wall, 1e-9),
        "mean_reward_first_step": steps[0]["mean_reward"] if steps else None,
        "mean_reward_last_step": steps[-1]["mean_reward"] if steps else None,
        "mean_reward": sum(got) / max(1, len(got)),
        "correct_fraction": sum(metrics["tessera/correct_fraction"]) / max(1, len(metrics["tessera/correct_fraction"])),
        "masked_fraction": sum(metrics["tessera/masked_fraction"]) / max(1, len(metrics["tessera/masked_fraction"])),
        "training_wall_s": wall, "devices": pool.describe(),
    }
    print("GRPO_DEMO " + json.dumps(summary), flush=True)
    print(f"{reward.scored} rewards in {wall:.1f} s: {summary['rewards_per_s_of_reward_time']:.2f} rewards/s while "
          f"evaluating, {summary['rewards_per_s_of_training']:.2f} rewards/s of training; "
          f"{100 * summary['share_of_step_time_waiting_for_rewards']:.0f}% of the step time waiting for rewards")
    return 0 if reward.scored == len(steps) * batch and len(steps) == args.steps else 1


if __name__ == "__main__":
    sys.exit(main())
