#!/usr/bin/env python3
"""How often a config the learned model predicts slower than a measured incumbent beats it,
out of fold: the evidence for the search's `far_slower` bound (agent/proposers.hpp).

    scripts/incumbent_bands.py ROWS.jsonl... [--tessera build/bin/tessera] [--device-kind h200]
        [--folds 5] [--keep DIR]

The rows (`tessera tile model rows`, datasets/cost_rows/) are split by N x K family into folds;
each fold's rows are predicted by a model trained on the others (`tessera tile model train`, then
`tile model features --model`), so no prediction has seen its shape's family. Then, per shape
with at least 6 measured configs (a config measured more than once counts at its median time),
each of its 2nd to 4th fastest is taken as a search's incumbent, and every other measured config
is banded by its predicted time over the incumbent's: the table gives, per band, the pairs, how
many beat the incumbent by more than 0.5%, how many were the shape's fastest, and the median
gain of those that beat it.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

EDGES = [0, 0.9, 1.0, 1.05, 1.1, 1.15, 1.2, 1.3, 1.5, float("inf")]
MIN_CONFIGS = 6


def fold_of(task: dict, folds: int) -> int:
    """A family (N x K) always falls in the same fold, whatever the rows around it."""
    return int(hashlib.md5(f"{task['n']}x{task['k']}".encode()).hexdigest(), 16) % folds


def band_of(ratio: float) -> int:
    return next(i for i in range(len(EDGES) - 1) if ratio < EDGES[i + 1])


def bands(rows: list[tuple[str, str, float, float]]) -> list[dict]:
    """rows: (task, config, cold_us, predicted_us). One dict per band of predicted ratio."""
    times: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    predicted: dict[tuple[str, str], float] = {}
    for task, config, cold, pred in rows:
        times[task][config].append(cold)
        predicted[(task, config)] = pred
    out = [{"band": (EDGES[i], EDGES[i + 1]), "pairs": 0, "beat": 0, "fastest": 0, "gains": []}
           for i in range(len(EDGES) - 1)]
    for task, by_config in times.items():
        measured = {c: statistics.median(v) for c, v in by_config.items()}
        if len(measured) < MIN_CONFIGS:
            continue
        order = sorted(measured, key=measured.get)
        for incumbent in order[1:4]:
            p_inc = predicted[(task, incumbent)]
            for c in order:
                if c == incumbent:
                    continue
                b = out[band_of(predicted[(task, c)] / p_inc)]
                b["pairs"] += 1
                if measured[c] < measured[incumbent] * 0.995:
                    b["beat"] += 1
                    b["gains"].append(measured[incumbent] / measured[c])
                b["fastest"] += c == order[0]
    return out


def table(result: list[dict]) -> str:
    lines = ["| predicted / incumbent's | pairs | beat it (>0.5%) | the shape's fastest | median gain of those |",
             "|---|---|---|---|---|"]
    for b in result:
        lo, hi = b["band"]
        name = f"< {hi:g}x" if lo == 0 else (f">= {lo:g}x" if hi == float("inf") else f"{lo:g}-{hi:g}x")
        share = f" ({b['beat'] / b['pairs']:.1%})" if b["pairs"] else ""
        gain = f"{statistics.median(b['gains']):.3f}x" if b["gains"] else "-"
        lines.append(f"| {name} | {b['pairs']} | {b['beat']}{share} | {b['fastest']} | {gain} |")
    return "\n".join(lines)


def run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")


def out_of_fold(paths: list[str], args: argparse.Namespace, work: Path) -> list[tuple[str, str, float, float]]:
    folds: list[list[str]] = [[] for _ in range(args.folds)]
    for path in paths:
        for number, line in enumerate(Path(path).read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                task = json.loads(line)["task"]
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                sys.exit(f"{path}:{number}: not a row of `tessera tile model rows` ({e})")
            folds[fold_of(task, args.folds)].append(line)
    rows = []
    for k in range(args.folds):
        if not folds[k]:
            continue
        train, test = work / f"train{k}.jsonl", work / f"test{k}.jsonl"
        train.write_text("".join(line + "\n" for j in range(args.folds) if j != k for line in folds[j]))
        test.write_text("".join(line + "\n" for line in folds[k]))
        model, feats = work / f"model{k}.json", work / f"features{k}.csv"
        run([args.tessera, "tile", "model", "train", str(train), "--device-kind", args.device_kind, "--out", str(model)])
        run([args.tessera, "tile", "model", "features", str(test), "--device-kind", args.device_kind, "--model",
             str(model), "--out", str(feats)])
        with feats.open() as f:
            rows += [(r["task"], r["config"], float(r["cold_us"]), float(r["model_us"])) for r in csv.DictReader(f)]
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("rows", nargs="+", help="rows files (.jsonl) from tessera tile model rows")
    p.add_argument("--tessera", default="build/bin/tessera")
    p.add_argument("--device-kind", default="h200")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--keep", help="keep the folds, models and feature tables in this folder")
    args = p.parse_args()
    if args.folds < 2:
        sys.exit("--folds must be >= 2")
    if not Path(args.tessera).is_file():
        sys.exit(f"{args.tessera}: no tessera binary there (--tessera)")
    for path in args.rows:
        if not Path(path).is_file() or not path.endswith(".jsonl"):
            sys.exit(f"{path}: not a rows file (.jsonl; gunzip datasets/cost_rows/*.gz first)")
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        rows = out_of_fold(args.rows, args, Path(args.keep))
    else:
        with tempfile.TemporaryDirectory() as work:
            rows = out_of_fold(args.rows, args, Path(work))
    print(table(bands(rows)))


if __name__ == "__main__":
    main()
