#!/usr/bin/env python3
"""Sums up a ranking change's A/B: what a tune would measure first before and after it.

    scripts/ranking_ab_report.py AB.md [AB.md ...] --plan PLAN [--plan PLAN ...]

AB.md are scripts/tile_ab.sh summaries (`summary.md`, or `gpu_check.sh ab`'s `ab.md`; several
when a plan ran over several calls), PLAN the plans scripts/ranking_ab_plan.py wrote (their
`# rank SHAPE before=... after=...` comments give each shape's first configs in both orders).
One row per plan, over its shapes whose configs were all measured: the geometric mean speedup
over the fastest baseline of the first pick and of the second, before and after; the best of the
first two, before and after, and how many shapes it made faster or slower by more than 0.5%; the
best of the new first three (as far as measured); then each shape whose first pick changed, with
its speedup before and after. A failed config counts as not measured.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path


def speedups(paths: list[str]) -> dict[str, dict[str, float]]:
    """shape -> config -> median speedup, from the summaries' rows (a later file's row wins)."""
    out: dict[str, dict[str, float]] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 6 or not cells[4].endswith("x"):
                continue
            try:
                s = float(cells[4][:-1])
            except ValueError:
                continue
            out.setdefault(cells[0], {})[cells[1].strip("*`")] = s
    return out


def ranks(plan: str) -> list[tuple[str, list[str], list[str]]]:
    """(shape, before, after) of each `# rank` comment."""
    found = []
    for line in Path(plan).read_text().splitlines():
        parts = line.split()
        if len(parts) == 5 and parts[:2] == ["#", "rank"] and parts[3].startswith("before=") \
                and parts[4].startswith("after="):
            found.append((parts[2], parts[3][7:].split(","), parts[4][6:].split(",")))
    if not found:
        sys.exit(f"{plan}: no '# rank SHAPE before=... after=...' lines (written by scripts/ranking_ab_plan.py "
                 "since 2026-11-29; an older plan has no record of the new order)")
    return found


def geo(xs: list[float]) -> str:
    return f"{math.exp(sum(map(math.log, xs)) / len(xs)):.3f}x" if xs else "n/a"


def row(plan: str, measured: dict[str, dict[str, float]]) -> tuple[str, list[str]]:
    cols: dict[str, list[float]] = {k: [] for k in ("b1", "a1", "b2", "a2", "bb", "ab", "a3")}
    better = worse = missing = 0
    changed = []
    planned = ranks(plan)
    for shape, before, after in planned:
        m = measured.get(shape, {})
        need = before[:2] + after[:2]
        if any(c not in m for c in need):
            missing += 1
            continue
        b, a = [m[c] for c in before[:2]], [m[c] for c in after[:2]]
        for key, v in (("b1", b[0]), ("a1", a[0]), ("b2", b[-1]), ("a2", a[-1]), ("bb", max(b)), ("ab", max(a)),
                       ("a3", max(m[c] for c in after if c in m))):
            cols[key].append(v)
        better += max(a) > max(b) * 1.005
        worse += max(a) < max(b) * 0.995
        if before[0] != after[0]:
            changed.append(f"{shape} {b[0]:.3f}x -> {a[0]:.3f}x")
    n = len(cols["b1"])
    cells = [f"{Path(plan).stem} ({n} / {len(planned)})", *(geo(cols[k]) for k in cols), f"{better} / {worse}",
             "; ".join(changed) or "none"]
    return "| " + " | ".join(cells) + " |", ([f"{Path(plan).stem}: {missing} shapes not wholly measured"]
                                           if missing else [])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("ab", nargs="+", help="tile_ab.sh summaries (summary.md, gpu_check.sh ab's ab.md)")
    p.add_argument("--plan", action="append", required=True, help="a plan from scripts/ranking_ab_plan.py")
    args = p.parse_args()
    for path in [*args.ab, *args.plan]:
        if not Path(path).is_file():
            sys.exit(f"{path}: no such file")
    measured = speedups(args.ab)
    print("| plan (shapes measured / planned) | #1 before | #1 after | #2 before | #2 after | best of #1, #2 before "
          "| best of #1, #2 after | best of the new top 3 | best of two: faster / slower (0.5%) | first pick changed |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    notes = []
    for plan in args.plan:
        line, note = row(plan, measured)
        print(line)
        notes += note
    for n in notes:
        print(n, file=sys.stderr)


if __name__ == "__main__":
    main()
