#!/usr/bin/env python3
"""Where a cost model's rank correlation is lost: over each shape's measured configs, the
correlation of log predicted and log measured time (does it get the magnitudes right?), Spearman's
rho over all of them (the figure `tessera tile model eval` reports), and Spearman's rho over the
configs within a band of the shape's fastest (can it order the near-tied ones a tune and a search
mostly measure?).

    scripts/rank_resolution.py FEATURES.csv [--near 1.1] [--columns model_us,analytical_us] [--knobs]

FEATURES.csv is `tessera tile model features ROWS --model M --out FEATURES.csv` (its `model_us`
is M's prediction, `analytical_us` the analytical model's). Each row counts, as `tessera tile
model eval` counts it; shapes with fewer than 5 rows are left out, and the near-band rho needs 4
rows in the band. Ties share their mean rank. The rho column is `tile model eval`'s figure: both read
a Hopper row at its kind's peak, as the GPU ranks. With --knobs, per value of each knob column, the
mean error of the first column's log prediction over the rows within the band (each error taken
from its shape's median error, so a shape's level does not count): a knob the model misjudges
shows as a value far from 0.
"""
from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for q in range(i, j + 1):
            out[order[q]] = (i + j) / 2
        i = j + 1
    return out


def pearson(a: list[float], b: list[float]) -> float | None:
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    den = math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / den if den else None


def spearman(a: list[float], b: list[float]) -> float | None:
    return pearson(ranks(a), ranks(b))


def per_shape(rows: list[dict], column: str) -> dict[str, list[tuple[float, float]]]:
    """Each shape's (measured, predicted) per row: a config measured twice counts twice, as
    `tessera tile model eval` counts it, so rho here is its figure."""
    shapes: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        shapes[r["task"]].append((float(r["cold_us"]), float(r[column])))
    return shapes


def resolution(rows: list[dict], column: str, near: float) -> dict:
    log_r, rho, rho_near, share = [], [], [], []
    for configs in per_shape(rows, column).values():
        if len(configs) < 5:
            continue
        x = [math.log(m) for m, _ in configs]
        y = [math.log(p) for _, p in configs]
        r, s = pearson(x, y), spearman(x, y)
        if r is None or s is None:
            continue
        log_r.append(r)
        rho.append(s)
        band = [i for i in range(len(x)) if x[i] <= min(x) + math.log(near)]
        share.append(len(band) / len(x))
        if len(band) >= 4 and (v := spearman([x[i] for i in band], [y[i] for i in band])) is not None:
            rho_near.append(v)
    mean = lambda v: statistics.fmean(v) if v else float("nan")  # noqa: E731
    return {"column": column, "shapes": len(rho), "log_r": mean(log_r), "rho": mean(rho), "rho_near": mean(rho_near),
            "near_shapes": len(rho_near), "near_share": mean(share)}


KNOBS = ["bm", "bn", "stages", "split_k", "stream_k", "persistent", "pingpong", "swap_ab", "cluster_m", "raster",
         "epilogue_store", "reg_double_buffer"]


def knob_errors(rows: list[dict], column: str, near: float, least: int = 8) -> list[tuple[str, str, int, float]]:
    """(knob, value, rows, mean error of log time) over the rows within the band, values with at least `least` rows."""
    by_shape: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_shape[r["task"]].append(r)
    errors: dict[tuple[str, str], list[float]] = defaultdict(list)
    for rs in by_shape.values():
        err = [math.log(float(r[column]) / float(r["cold_us"])) for r in rs]
        level = statistics.median(err)
        fastest = min(float(r["cold_us"]) for r in rs)
        for r, e in zip(rs, err):
            if float(r["cold_us"]) <= fastest * near:
                for k in KNOBS:
                    if k in r:
                        errors[(k, r[k])].append(e - level)
    return [(k, v, len(es), statistics.fmean(es)) for (k, v), es in sorted(errors.items()) if len(es) >= least]


def table(results: list[dict], near: float) -> str:
    band = f"within {near:g}x of the fastest"
    lines = [f"| model | shapes | r of log times | rho | rho {band} (shapes) | configs {band} |",
             "|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['column']} | {r['shapes']} | {r['log_r']:.3f} | {r['rho']:.3f} | "
                     f"{r['rho_near']:.3f} ({r['near_shapes']}) | {r['near_share']:.0%} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("features", help="CSV of `tessera tile model features ROWS --model M --out FILE`")
    p.add_argument("--near", type=float, default=1.1, help="the band of the fastest config (default 1.1)")
    p.add_argument("--columns", default="model_us,analytical_us", help="prediction columns to judge")
    p.add_argument("--knobs", action="store_true", help="the first column's error per knob value within the band")
    args = p.parse_args()
    if args.near <= 1:
        sys.exit("--near must be above 1")
    path = Path(args.features)
    if not path.is_file():
        sys.exit(f"{path}: no such file (write it with `tessera tile model features ROWS --model M --out {path}`)")
    with path.open() as f:
        rows = list(csv.DictReader(f))
    columns = [c for c in args.columns.split(",") if c]
    needed = {"task", "config", "cold_us", *columns}
    if not rows or not needed <= set(rows[0]):
        sys.exit(f"{path}: not a features table with columns {', '.join(sorted(needed))}")
    print(table([resolution(rows, c, args.near) for c in columns], args.near))
    if args.knobs:
        print(f"\n| knob | value | rows within {args.near:g}x | mean error of log {columns[0]} |\n|---|---|---|---|")
        for k, v, n, e in knob_errors(rows, columns[0], args.near):
            print(f"| {k} | {v} | {n} | {e:+.3f} |")


if __name__ == "__main__":
    main()
