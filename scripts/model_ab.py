#!/usr/bin/env python3
"""Two bench suite runs of the same shapes and kernels, ranked by two cost models
(scripts/gpu_check.sh model_ab): which model's picks measured faster.

    scripts/model_ab.py RUN_A RUN_B [NAME_A NAME_B]

Reads each run's shapes.csv (the speedup over the fastest baseline in the same
run, `baseline-max`, and the winning kernel) and prints, in Markdown, over the
shapes both runs measured: per bucket and overall the geometric means of A and
B, how many shapes each was faster on by more than 0.5% (and within it), on how
many the two picked the same winner, how many shapes each left below 0.95x (the
issues' floor), and the shapes that moved most. A speedup
is a ratio taken in one run, so the two runs need not share a GPU state.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

WITHIN = 0.005  # "within 0.5%": the spread of one confirmation
FLOOR = 0.95  # no shape below this fraction of the fastest baseline (the kernels' bars)


def shapes(run: Path) -> dict[str, dict]:
    """mnk -> {bucket, speedup, kernel} for the shapes the run timed a kernel on."""
    out: dict[str, dict] = {}
    with (run / "shapes.csv").open() as f:
        for row in csv.DictReader(f):
            value = row.get("baseline-max", "")
            if value:
                out[row["mnk"]] = {"bucket": row["bucket"], "speedup": float(value), "kernel": row.get("kernel", "")}
    return out


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main() -> int:
    if len(sys.argv) not in (3, 5):
        print(__doc__)
        return 2
    for run in sys.argv[1:3]:
        if not (Path(run) / "shapes.csv").is_file():
            print(f"{run} has no shapes.csv: not a bench suite run, or it recorded no shape")
            return 1
    a, b = shapes(Path(sys.argv[1])), shapes(Path(sys.argv[2]))
    name_a, name_b = (sys.argv[3], sys.argv[4]) if len(sys.argv) == 5 else ("A", "B")
    common = sorted(k for k in a if k in b)
    if not common:
        print(f"no shape measured in both runs ({len(a)} and {len(b)} shapes)")
        return 1
    print(f"## {name_a} against {name_b}: {len(common)} shapes measured by both "
          f"(speedup over the fastest baseline in each run, geometric mean)\n")
    print(f"| bucket | shapes | {name_a} | {name_b} | {name_a} faster / {name_b} faster / within 0.5% | same winner "
          f"| below {FLOOR}x ({name_a} / {name_b}) |")
    print("|---|---|---|---|---|---|---|")
    buckets = sorted({a[k]["bucket"] for k in common}) + ["all"]
    for bucket in buckets:
        keys = [k for k in common if bucket == "all" or a[k]["bucket"] == bucket]
        ra, rb = [a[k]["speedup"] for k in keys], [b[k]["speedup"] for k in keys]
        faster_a = sum(x > y * (1 + WITHIN) for x, y in zip(ra, rb))
        faster_b = sum(y > x * (1 + WITHIN) for x, y in zip(ra, rb))
        same = sum(a[k]["kernel"] == b[k]["kernel"] for k in keys)
        low_a, low_b = sum(x < FLOOR for x in ra), sum(y < FLOOR for y in rb)
        print(f"| {bucket} | {len(keys)} | {geomean(ra):.3f}x | {geomean(rb):.3f}x | "
              f"{faster_a} / {faster_b} / {len(keys) - faster_a - faster_b} | {same} | {low_a} / {low_b} |")
    moved = sorted(common, key=lambda k: abs(math.log(b[k]["speedup"] / a[k]["speedup"])), reverse=True)[:10]
    print(f"\n| shape (M_N_K) | {name_a} | {name_b} | {name_b} / {name_a} |")
    print("|---|---|---|---|")
    for k in moved:
        print(f"| {k} | {a[k]['speedup']:.3f}x | {b[k]['speedup']:.3f}x | {b[k]['speedup'] / a[k]['speedup']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
