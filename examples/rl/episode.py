#!/usr/bin/env python3
"""A plain multi-turn loop: a scripted policy (scripted_policy.py) plays one episode
and every turn's reward and components are printed.

    python examples/rl/episode.py                 # every GPU; compile-only without one
    TESSERA_MODE=compile_only python examples/rl/episode.py

A trainer's rollout is the same loop with a model in place of the script:
reset() gives the prompt, each reply goes to step(), the observation goes
back to the model as the next user message.
"""

from __future__ import annotations

import argparse
import json

import tessera
import scripted_policy


def describe(reward, info: dict) -> str:
    k = info["reward"]
    r = "masked" if reward is None else f"{reward:+.3f}"
    speed = f"{k['speedup']:.3f}x" if k["speedup"] else "-"
    return (
        f"turn {info['turn']}: {info['action_kind'] or 'unparsed':<12} reward {r:>7}  class {k['class']:<14} "
        f"speedup {speed:>8}  perf {k['performance']:+.3f}  bonus {k['bonus']:+.2f}  penalty {k['penalty']:+.2f}  "
        f"attempts {len(info['attempts'])}  best {info['best_speedup'] or '-'}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default=scripted_policy.TASK)
    ap.add_argument("--show-observations", action="store_true", help="print what the policy reads each turn")
    ap.add_argument("--json", action="store_true", help="print each step's info record as JSON")
    args = ap.parse_args()

    env = tessera.Environment()
    print("evaluating on:", "; ".join(env.pool.describe()))
    obs, info = env.reset(args.task, seed=0)
    print(f"task {info['task_id']}, {info['max_turns']} turns, device {info['device']}")
    if args.show_observations:
        print(obs)
    for action in scripted_policy.ACTIONS:
        obs, reward, terminated, truncated, info = env.step(action)
        print(describe(reward, info))
        if args.show_observations:
            print(obs)
        if args.json:
            print(json.dumps(info, indent=1))
        if terminated or truncated:
            break
    print(f"best speedup {env.best_speedup} at turn {env.best_turn}")


if __name__ == "__main__":
    main()
