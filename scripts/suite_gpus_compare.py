#!/usr/bin/env python3
"""Two bench suite runs of the same shapes (one GPU, then --gpus): wall time,
and per shape how far each baseline's cold median moved between them.

    scripts/suite_gpus_compare.py RUN_ONE_GPU RUN_GPUS WALL_ONE_S WALL_GPUS_S

WALL_ONE_S may be "records": the sum of the one-GPU run's per-shape wall_s, for
a run that took several calls (resumed) and so has no single wall time.

Prints the time ratio (the issue's bar: the several-GPU sweep in at most 30%
of the one-GPU time) and, over the shapes both runs measured, the geometric
mean, median and largest ratio of each baseline's time (GPUs run / one GPU):
figures within noise read as 1.00x.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path


def records(run: Path) -> dict[str, dict]:
    """task id -> the run's record of it (the last record of a task wins: a resumed run may redo one)."""
    out: dict[str, dict] = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            t = r["task"]
            out[f"{t['m']}x{t['n']}x{t['k']}:{t.get('layout', '')}:{t.get('epilogue', '')}"] = r
    return out


def baselines(run: Path) -> dict[str, dict[str, float]]:
    """task id -> baseline name -> cold median us."""
    return {key: {b["name"]: b["cold"]["median_us"] for b in r.get("baselines", [])
                  if b.get("cold", {}).get("status") == "measured" and b["cold"].get("median_us", 0) > 0}
            for key, r in records(run).items()}


def records_wall(run: Path) -> float:
    """The sum of a run's per-shape wall_s."""
    return sum(float(r.get("wall_s", 0)) for r in records(run).values())


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    one, many = baselines(Path(sys.argv[1])), baselines(Path(sys.argv[2]))
    wall_one = records_wall(Path(sys.argv[1])) if sys.argv[3] == "records" else float(sys.argv[3])
    wall_many = float(sys.argv[4])
    print(f"shapes: {len(one)} on one GPU, {len(many)} spread; wall {wall_one:.0f} s -> {wall_many:.0f} s "
          f"({100 * wall_many / wall_one:.0f}% of the one-GPU time)")
    names = sorted({n for v in one.values() for n in v})
    for name in names:
        ratios = [many[k][name] / one[k][name] for k in one if k in many and name in one[k] and name in many[k]]
        if not ratios:
            continue
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        worst = max(ratios, key=lambda r: abs(math.log(r)))
        print(f"  {name:<24} {len(ratios):>4} shapes: geomean {geo:.3f}x, median {statistics.median(ratios):.3f}x, "
              f"largest move {worst:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
