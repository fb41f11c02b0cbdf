#!/usr/bin/env python3
"""Generates the task files in datasets/ from the CUDA-L2 shape grid.

CUDA-L2 evaluates HGEMM on M, N, K in {64, 128, 256, 512, 1024, 2048, 4096,
8192, 12288, 16384} (1000 shapes). "Small" shapes are those with
2*M*N*K <= 2**30 (about 1.07e9 FLOP): 364 of them. small_grid.json keeps a
deterministic, FLOP-stratified subset: the small shapes sorted by FLOPs (then
by M, N, K) are cut into N_SMALL equal bins and the middle shape of each bin
is kept, so the set spans the whole small range.

grid1000.json is the whole grid (TN, fp32 accumulate) in CUDA-L2's order
(M, then N, then K ascending), with the size buckets the bench suite groups
its means and win counts by (BUCKETS below; datasets/README.md).
grid1000_sample300.json keeps 300 of them, each bucket in proportion to its
size and FLOP-stratified within it, ordered so that any prefix of the file is
spread over every bucket (a sweep stopped early still covers all of them).

The learned cost model is judged on shape families it never saw (a family is
the N x K of a weight: every M of one layer). grid1000_heldout100.json keeps
100 shapes of N_HELDOUT_FAMILIES families (FLOP-stratified over the grid's
N x K pairs); grid1000_model_train.json keeps N_TRAIN shapes of the other
families, leaving out every family of llm_shapes.json too and every shape
above TRAIN_MAX_FLOPS (a training sweep measures many configs per shape),
interleaved like the sample300 so that any prefix covers every bucket.
The H200's model (cost_models/h200.json) has since learned from sweeps of
grid1000_heldout100's shapes, so grid1000_unseen100.json keeps 100 shapes of
the families in none of those files nor llm_shapes.json (the N x K pairs the
training sample happened to leave out): no shipped model has seen them.

Re-running this script reproduces the files byte for byte.

usage: python3 datasets/generate_grid.py [--out-dir datasets] [--count 24]
"""
import argparse
import json
import os

GRID = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384]
SMALL_FLOP_LIMIT = 2**30
N_SMALL = 24
# Size buckets by FLOPs = 2*M*N*K: a task goes to the first bucket whose
# max_flops it does not exceed; the last bucket has no limit. "small" is the
# small grid's bucket; the medium/large edge (2^36 FLOP, about 100 us at the
# H100's dense fp16 rate) splits the rest into latency- and compute-bound.
BUCKETS = [{"name": "small", "max_flops": 2**30},
           {"name": "medium", "max_flops": 2**36},
           {"name": "large", "max_flops": None}]
N_SAMPLE = 300
N_HELDOUT_FAMILIES = 20
N_HELDOUT = 100
N_TRAIN = 96
N_UNSEEN = 100
TRAIN_MAX_FLOPS = 2**37


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


def bucket_of(shape):
    flops = 2 * shape[0] * shape[1] * shape[2]
    for b in BUCKETS:
        if b["max_flops"] is None or flops <= b["max_flops"]:
            return b["name"]
    raise ValueError(shape)


def interleaved_sample(shapes, count):
    """count shapes, each bucket in proportion to its size (largest remainders),
    FLOP-stratified within it; ordered by relative position in their bucket so
    that every prefix is spread over all buckets."""
    by_bucket = {b["name"]: [] for b in BUCKETS}
    for s in sorted(shapes, key=lambda s: (s[0] * s[1] * s[2], s)):
        by_bucket[bucket_of(s)].append(s)
    exact = {name: count * len(v) / len(shapes) for name, v in by_bucket.items()}
    take = {name: int(e) for name, e in exact.items()}
    for name in sorted(exact, key=lambda n: (take[n] - exact[n], n))[:count - sum(take.values())]:
        take[name] += 1
    keyed = []
    for name, members in by_bucket.items():
        chosen = stratified(members, take[name])
        keyed += [((i + 0.5) / len(chosen), [b["name"] for b in BUCKETS].index(name), s) for i, s in enumerate(chosen)]
    return [s for _, _, s in sorted(keyed)]


def model_split(grid, llm_families):
    """(training shapes, held-out shapes) of the grid, split by N x K family."""
    families = sorted({(n, k) for _, n, k in grid}, key=lambda f: (f[0] * f[1], f))
    held = set(stratified(families, N_HELDOUT_FAMILIES))
    heldout = [s for s in grid if (s[1], s[2]) in held]
    train = [s for s in grid if (s[1], s[2]) not in held and (s[1], s[2]) not in llm_families
             and 2 * s[0] * s[1] * s[2] <= TRAIN_MAX_FLOPS]
    return interleaved_sample(train, N_TRAIN), interleaved_sample(heldout, N_HELDOUT)


def unseen_split(grid, train, heldout, llm_families):
    """The shapes of the families that neither the training sample, the held-out set nor the LLM set holds."""
    seen = {(s[1], s[2]) for s in train + heldout} | llm_families
    return interleaved_sample([s for s in grid if (s[1], s[2]) not in seen], N_UNSEEN)


def write(path, doc, one_task_per_line=False):
    with open(path, "w") as f:
        if one_task_per_line:  # the large files: a task per line keeps them small and diffable
            head = {k: v for k, v in doc.items() if k != "tasks"}
            f.write(json.dumps(head, indent=1)[:-2] + ',\n "tasks": [\n')
            f.write(",\n".join("  " + json.dumps(t) for t in doc["tasks"]))
            f.write("\n ]\n}")
        else:
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
    grid = [(m, n, k) for m in GRID for n in GRID for k in GRID]
    write(os.path.join(a.out_dir, "grid1000.json"),
          {"name": "grid1000",
           "description": "The CUDA-L2 HGEMM grid: M, N, K in {" + ", ".join(map(str, GRID)) + "}, TN, fp32 "
                          "accumulate, in CUDA-L2's order (datasets/generate_grid.py). Buckets by FLOPs = 2*M*N*K "
                          "(datasets/README.md).",
           "buckets": BUCKETS,
           "tasks": [task(*s) for s in grid]}, one_task_per_line=True)
    write(os.path.join(a.out_dir, "grid1000_sample300.json"),
          {"name": "grid1000_sample300",
           "description": f"{N_SAMPLE} of the {len(grid)} grid1000 shapes: each bucket in proportion, "
                          "FLOP-stratified, interleaved so that any prefix covers every bucket "
                          "(datasets/generate_grid.py).",
           "buckets": BUCKETS,
           "tasks": [task(*s) for s in interleaved_sample(grid, N_SAMPLE)]}, one_task_per_line=True)
    with open(os.path.join(a.out_dir, "llm_shapes.json")) as f:
        llm_families = {(t["n"], t["k"]) for t in json.load(f)["tasks"]}
    train, heldout = model_split(grid, llm_families)
    write(os.path.join(a.out_dir, "grid1000_model_train.json"),
          {"name": "grid1000_model_train",
           "description": f"{len(train)} grid1000 shapes to train the learned cost model on: none of the "
                          f"{N_HELDOUT_FAMILIES} held-out N x K families nor of llm_shapes.json's, at most "
                          f"2^{TRAIN_MAX_FLOPS.bit_length() - 1} FLOP, interleaved over the buckets "
                          "(datasets/generate_grid.py).",
           "buckets": BUCKETS,
           "tasks": [task(*s) for s in train]}, one_task_per_line=True)
    write(os.path.join(a.out_dir, "grid1000_heldout100.json"),
          {"name": "grid1000_heldout100",
           "description": f"{len(heldout)} grid1000 shapes of {N_HELDOUT_FAMILIES} N x K families the learned cost "
                          "model is never trained on, interleaved over the buckets (datasets/generate_grid.py).",
           "buckets": BUCKETS,
           "tasks": [task(*s) for s in heldout]}, one_task_per_line=True)
    unseen = unseen_split(grid, train, heldout, llm_families)
    write(os.path.join(a.out_dir, "grid1000_unseen100.json"),
          {"name": "grid1000_unseen100",
           "description": f"{len(unseen)} grid1000 shapes of the "
                          f"{len({(s[1], s[2]) for s in unseen})} N x K families in none of "
                          "grid1000_model_train.json, grid1000_heldout100.json (which the H200 model has since "
                          "learned from) or llm_shapes.json: held out from every shipped cost model, interleaved "
                          "over the buckets (datasets/generate_grid.py).",
           "buckets": BUCKETS,
           "tasks": [task(*s) for s in unseen]}, one_task_per_line=True)
    # The acceptance runs: 4096^3 and two small grid shapes (one square, one skinny).
    write(os.path.join(a.out_dir, "acceptance.json"),
          {"name": "acceptance", "description": "4096^3 TN plus two small CUDA-L2 grid shapes (issue 4).",
           "tasks": [task(4096, 4096, 4096), task(512, 512, 512), task(64, 4096, 2048)]})
    # The big squares and the fused epilogue, each against its best baseline (cuBLASLt's fused
    # bias+GELU for the last): one tile tune measures all three (bench tables key by M_N_K alone).
    gelu = dict(task(4096, 4096, 4096), epilogue="bias_gelu")
    write(os.path.join(a.out_dir, "squares.json"),
          {"name": "squares", "description": "4096^3 and 8192^3 TN, and 4096^3 with a fused bias+GELU epilogue.",
           "tasks": [task(4096, 4096, 4096), task(8192, 8192, 8192), gelu]})


if __name__ == "__main__":
    main()
