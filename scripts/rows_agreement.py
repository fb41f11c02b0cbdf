#!/usr/bin/env python3
"""How well two measurements of the same configs agree: the rank correlation a perfect cost model
could reach on measured rows. For each pair of rows files and each shape both timed, Spearman's rho
between the two files' times over the configs both timed (at least --min-common). A model is judged
(`tessera tile model eval`) by its rho against one such measurement; the measurements' rho against
each other is what noise, clock drift and kernel changes between sessions leave of the order, so a
model's rho well under it is the model's error, not the measurement's.

    scripts/rows_agreement.py ROWS... [--min-common 5] [--pairs] [--exclude NAME]

ROWS: rows files (`tessera tile model rows`, .jsonl or .jsonl.gz) or folders of them
(datasets/cost_rows); each file is one measurement (one sweep or A/B, a session's code), a config
timed more than once in it counts at its median. A shape timed by several pairs of files counts
once, by the pair with most configs in common. Printed: per size band (GFLOP of the shape) the
shapes judged and the mean and median rho; with --pairs, per pair of files the shapes, their mean
configs in common, mean and median rho and the geometric mean of the second file's times over the
first's (how much the two sessions' clocks differed).
"""
from __future__ import annotations

import argparse
import itertools
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rank_resolution import spearman  # noqa: E402  (ties share their mean rank)
from search_headroom import Times, load, rows_files  # noqa: E402  (rows file -> shape -> config -> median µs)

BANDS = [(0, 1, "< 1"), (1, 8, "1-8"), (8, 64, "8-64"), (64, 512, "64-512"), (512, math.inf, ">= 512")]


def inputs(paths: list[str], exclude: list[str]) -> list[Path]:
    out = rows_files(paths, exclude, "rows_agreement")
    if len(out) < 2:
        raise SystemExit("rows_agreement: needs two rows files (.jsonl or .jsonl.gz) or more, found "
                         f"{len(out)} in " + " ".join(paths))
    return out


def gflop(shape: str) -> float:
    m, n, k = (int(x) for x in shape.split(":")[0].split("x"))
    return 2.0 * m * n * k / 1e9


def agreements(runs: dict[str, Times], min_common: int) -> list[dict]:
    """One entry per pair of files and shape with min_common configs or more timed by both."""
    out = []
    for (fa, a), (fb, b) in itertools.combinations(runs.items(), 2):
        for shape in sorted(set(a) & set(b)):
            common = sorted(set(a[shape]) & set(b[shape]))
            if len(common) < min_common:
                continue
            x, y = [a[shape][c] for c in common], [b[shape][c] for c in common]
            rho = spearman(x, y)
            if rho is None:
                continue
            ratio = math.exp(statistics.fmean(math.log(v / u) for u, v in zip(x, y)))
            out.append({"first": fa, "second": fb, "shape": shape, "common": len(common), "rho": rho, "ratio": ratio})
    return out


def per_shape(found: list[dict]) -> dict[str, dict]:
    """Each shape's pair of files with most configs in common (the first such pair on a tie)."""
    best: dict[str, dict] = {}
    for e in found:
        if e["shape"] not in best or e["common"] > best[e["shape"]]["common"]:
            best[e["shape"]] = e
    return best


def band_table(shapes: dict[str, dict]) -> str:
    lines = ["| GFLOP | shapes | rho mean | rho median |", "|---|---:|---:|---:|"]
    for lo, hi, label in BANDS + [(0, math.inf, "all")]:
        rhos = [e["rho"] for s, e in shapes.items() if lo <= gflop(s) < hi]
        if rhos:
            lines.append(f"| {label} | {len(rhos)} | {statistics.fmean(rhos):.3f} | {statistics.median(rhos):.3f} |")
    return "\n".join(lines)


def pair_table(found: list[dict]) -> str:
    groups: dict[tuple[str, str], list[dict]] = {}
    for e in found:
        groups.setdefault((e["first"], e["second"]), []).append(e)
    lines = ["| first | second | shapes | configs in common | rho mean | rho median | second / first |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for (fa, fb), es in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        ratio = math.exp(statistics.fmean(math.log(e["ratio"]) for e in es))
        lines.append(f"| {fa} | {fb} | {len(es)} | {statistics.fmean(e['common'] for e in es):.1f} | "
                     f"{statistics.fmean(e['rho'] for e in es):.3f} | {statistics.median(e['rho'] for e in es):.3f} | "
                     f"{ratio:.3f} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("rows", nargs="+", help="rows files (.jsonl, .jsonl.gz) or folders of them")
    p.add_argument("--min-common", type=int, default=5, help="configs both files timed, for a shape to count")
    p.add_argument("--pairs", action="store_true", help="a table per pair of files too")
    p.add_argument("--exclude", action="append", default=[], help="skip files whose name contains this")
    a = p.parse_args()
    if a.min_common < 3:
        raise SystemExit("rows_agreement: --min-common must be 3 or more (a rank correlation of two configs is +-1)")
    runs: dict[str, Times] = {}
    for f in inputs(a.rows, a.exclude):
        name = f.name.split(".jsonl")[0]
        runs[name if name not in runs else str(f)] = load([f])  # two folders' files of one name stay apart
    found = agreements(runs, a.min_common)
    if not found:
        raise SystemExit(f"rows_agreement: no shape has {a.min_common} configs or more timed in two of the "
                         f"{len(runs)} files")
    shapes = per_shape(found)
    print(f"Agreement of two measurements of the same configs ({len(shapes)} shapes of {len(runs)} files, "
          f"{len(found)} file pairs x shapes, each shape by its pair with most configs in common):\n")
    print(band_table(shapes))
    if a.pairs:
        print()
        print(pair_table(found))


if __name__ == "__main__":
    main()
