#!/usr/bin/env python3
"""A scripts/tile_ab.sh plan for a change to the cost model's ranking.

    scripts/ranking_ab_plan.py TASKS.json --before OLD_TESSERA --after NEW_TESSERA \\
        [--device-kind h200] [--top 8] [--enter 3] > plan.txt
    scripts/ranking_ab_plan.py TASKS.json --before T --after T --after-model M.json > plan.txt

Ranks every task of the tasks file with both binaries (`tessera tile list
--model`, the order a tune measures first) and writes one plan line for each
task whose first TOP configs differ: the former first pick (the line's
reference), the former second, then every config the change puts in its first
ENTER that the former first two are not. Timing those on a GPU
(`AB_PLAN=plan.txt scripts/gpu_check.sh ab`) shows whether what the change
brings forward beats what it displaces, before the change ships. A change of
the model file alone is the same binary twice with --before-model and
--after-model, each pinning its side's model as TESSERA_COST_MODEL does (a side
without one ranks as its environment says). Each line follows a comment
(`# rank SHAPE before=A,B,C after=D,E,F`, the first ENTER of both orders) from
which scripts/ranking_ab_report.py sums the A/B up. Tasks of
another layout or epilogue than --layout/--epilogue (tile_ab.sh times one of
each per run) are left out and counted on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys


def tasks_of(path: str) -> list[dict]:
    with open(path) as f:
        doc = json.load(f)
    tasks = doc.get("tasks") if isinstance(doc, dict) else doc
    if not isinstance(tasks, list):
        sys.exit(f"{path}: no task list (a tasks file holds {{\"tasks\": [...]}})")
    return tasks


def ranking(binary: str, model: str | None, shape: str, args: argparse.Namespace) -> list[str]:
    cmd = [binary, "tile", "list", "--shape", shape, "--layout", args.layout, "--epilogue", args.epilogue,
           "--model", "--device-kind", args.device_kind, "--limit", str(args.top), "--json"]
    env = dict(os.environ, TESSERA_COST_MODEL=model) if model else None
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    except OSError as e:  # not there, not executable, or being relinked by a build
        sys.exit(f"{binary}: cannot be run: {e.strerror}")
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    return [c["name"] for c in json.loads(done.stdout)]


def plan_line(shape: str, before: list[str], after: list[str], enter: int) -> str | None:
    """None when the change brings no config into the first `enter` (whatever it moves below them).
    Otherwise the rank comment (tile_ab.sh skips it) and the line."""
    if not before or not [c for c in after[:enter] if c not in before[:enter]]:
        return None
    configs: list[str] = []
    for c in before[:2] + after[:enter]:
        if c not in configs:
            configs.append(c)
    rank = f"# rank {shape} before={','.join(before[:enter])} after={','.join(after[:enter])}"
    return rank + "\n" + " ".join([shape, *configs])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tasks")
    p.add_argument("--before", required=True, help="the tessera binary before the change")
    p.add_argument("--after", required=True, help="the tessera binary with the change")
    p.add_argument("--before-model", help="the model file the before side ranks with (TESSERA_COST_MODEL)")
    p.add_argument("--after-model", help="the model file the after side ranks with (TESSERA_COST_MODEL)")
    p.add_argument("--device-kind", default="h200", help="the model both rank with (tile list --device-kind)")
    p.add_argument("--top", type=int, default=8, help="a task is planned when its first TOP configs differ")
    p.add_argument("--enter", type=int, default=3, help="the change's first ENTER configs are timed")
    p.add_argument("--layout", default="TN")
    p.add_argument("--epilogue", default="none")
    args = p.parse_args()
    if args.top < 1 or args.enter < 1:
        sys.exit("--top and --enter must be >= 1")
    for m in (args.before_model, args.after_model):
        if m and not os.path.isfile(m):
            sys.exit(f"{m}: no such model file")
    # The header, then each line as it is found: a run cut short keeps the lines planned so far.
    print(f"# ranking A/B ({args.tasks}, {args.device_kind} model): the former #1 (the reference) and #2, then the "
          f"change's first {args.enter} configs that are neither", flush=True)
    planned, other, same, below = 0, 0, 0, 0
    for t in tasks_of(args.tasks):
        if t.get("layout", "TN") != args.layout or t.get("epilogue", "none") != args.epilogue:
            other += 1
            continue
        shape = f"{t['m']}x{t['n']}x{t['k']}"
        before = ranking(args.before, args.before_model, shape, args)
        after = ranking(args.after, args.after_model, shape, args)
        if before == after:
            same += 1
        elif line := plan_line(shape, before, after, args.enter):
            planned += 1
            print(line, flush=True)
        else:
            below += 1
    print(f"{planned + below} tasks change their first {args.top} configs ({planned} their first {args.enter}: "
          f"the plan's lines), {same} do not" + (f"; {other} of another layout or epilogue left out" if other else ""),
          file=sys.stderr)


if __name__ == "__main__":
    main()
