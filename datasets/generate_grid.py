#!/usr/bin/env python3
"""Generates the task files in datasets/ from the CUDA-L2 shape grid.

CUDA-L2 evaluates HGEMM on M, N, K in {64, 128, 256, 512, 1024, 2048, 4096,
8192, 12288, 16384} (1000 shapes). "Small" shapes are those with
2*M*N*K <= 2**30 (about 1.07e9 FLOP): 364 of them. small_grid.json keeps a
deterministic, FLOP-stratified subset: the small shapes sorted by FLOPs (then
by M, N, K) are cut into N_SMALL equal bins and the middle shape of each bin
is kept, so the set spans the whole small range. Re-running this script
reproduces the files byte for byte.

usage: python3 datasets/generate_grid.py [--out-dir datasets] [--count 24]
"""
import argparse
import json
import os

GRID = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384]
SMALL_FLOP_LIMIT = 2**30
N_SMALL = 24


def task(m, n, k, layout="TN"):
    return {"op": "hgemm", "m": m, "n": n, "k": k, "layout": layout, "acc": "f32", "epilogue": "none"}


def small_shapes():
    shapes = [(m, n, k) for m in GRID for n in GRID for k in GRID if 2 * m * n * k <= SMALL_FLOP_LIMIT]
    return sorted(shapes, key=lambda s: (s[0] * s[1] * s[2], s))


def stratified(shapes, count):
    if count >= len(shapes):
        return shapes
    out = []
    for i in range(count):
        lo = i * len(shapes) // count
        hi = (i + 1) * len(shapes) // count
        out.append(shapes[(lo + hi) // 2])
    return out


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {path} ({len(doc['tasks'])} tasks)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--count", type=int, default=N_SMALL)
    a = ap.parse_args()
    small = small_shapes()
    chosen = stratified(small, a.count)
    write(os.path.join(a.out_dir, "default.json"),
          {"name": "default", "description": "The main task: 4096x4096x4096 HGEMM, TN layout (B given N x K row-major).",
           "tasks": [task(4096, 4096, 4096)]})
    write(os.path.join(a.out_dir, "small_grid.json"),
          {"name": "small_grid",
           "description": f"{len(chosen)} of the {len(small)} CUDA-L2 grid shapes with 2*M*N*K <= 2^30, "
                          "FLOP-stratified (datasets/generate_grid.py).",
           "tasks": [task(*s) for s in chosen]})
    # The acceptance runs: 4096^3 and two small grid shapes (one square, one skinny).
    write(os.path.join(a.out_dir, "acceptance.json"),
          {"name": "acceptance", "description": "4096^3 TN plus two small CUDA-L2 grid shapes (issue 4).",
           "tasks": [task(4096, 4096, 4096), task(512, 512, 512), task(64, 4096, 2048)]})


if __name__ == "__main__":
    main()
