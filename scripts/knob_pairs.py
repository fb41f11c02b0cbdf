#!/usr/bin/env python3
"""One-knob pairs: tile configs timed on the same shape in the same rows file that differ in one
field of their name, the second's time over the first's. The evidence behind a ranking rule such as
`single_buffered` in tile/model_rank.cpp: the models learn a knob from the configs that were timed,
and a knob the shortlist never turns is timed only beside configs already fast.

    scripts/knob_pairs.py ROWS... [--field dbuf] [--from d1] [--to d0] [--min-gflop 64]
        [--max-gflop X] [--where schedule!=o] [--where swap=swapab] [--by tile] [--shapes]
        [--exclude NAME]

ROWS: rows files (`tessera tile model rows`, .jsonl or .jsonl.gz) or folders of them
(datasets/cost_rows). A pair is two configs of one shape in one file (one sweep or one A/B
process per shape there), the same in every field but the one; a config timed more than once
counts at its median. Fields: tile (backend and block), warps, stages, load, dbuf, smem, store,
raster, split, schedule (t tiled, p persistent, s stream-K, o ping-pong, i inline producer),
cluster, swap (swapab or -), epilogue. Only the plain TN GEMM (no fused epilogue) is read.
--where tests the pair's first config (the one --from names), so it may name any field but --field.

Per field change (and per value of the --by field): the pairs, their shapes, the geometric mean of
the time ratio over the pairs and over the shapes (each shape its pairs' geometric mean), how many
pairs were faster or slower by more than 0.5%, and the slowest shape. --shapes lists every shape.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_headroom import Times, load, rows_files  # noqa: E402  (rows files to each shape's config medians)

FIELDS = ["tile", "warps", "stages", "load", "dbuf", "smem", "store", "raster", "split", "schedule",
          "cluster", "swap", "epilogue"]
NAME = re.compile(r"^([wm]\d+x\d+x\d+)_(g\d+x\d+)_(s\d+p\d+)_([a-z]{2})_(d\d)_([a-z]{2})_([a-z]{2})_(r\d+)_"
                  r"(k\d+[sa])_([tpsoi])_(c\d+x\d+)_(swapab_)?([a-z_]+)$")
WHERE = re.compile(r"^(\w+)(!=|=)(\S+)$")


def fields_of(config: str) -> dict[str, str] | None:
    """The named fields of a config name, or None for a name that is not a tile config's."""
    m = NAME.match(config)
    if not m:
        return None
    values = list(m.groups())
    values[11] = "swapab" if values[11] else "-"
    return dict(zip(FIELDS, values))


def inputs(paths: list[str], exclude: list[str]) -> list[Path]:
    out = rows_files(paths, exclude, "knob_pairs")
    if not out:
        raise SystemExit("knob_pairs: no rows files (.jsonl or .jsonl.gz) in " + " ".join(paths))
    return out


def keep(f: dict[str, str], where: list[tuple[str, str, str]]) -> bool:
    return all((f[k] == v) == (op == "=") for k, op, v in where)


def pairs_of(files: list[tuple[str, Times]], field: str, frm: str | None, to: str | None,
             gflop: tuple[float, float], where: list[tuple[str, str, str]]) -> list[dict]:
    """Every one-knob pair of `field` (from `frm` to `to` where given) within one file and shape.
    files: (name, its shapes' config medians as `search_headroom.load` reads them)."""
    out = []
    for name, times in files:
        for key, by_config in times.items():
            if ":" in key:  # another layout or a fused epilogue
                continue
            shape = tuple(map(int, key.split("x")))
            if not gflop[0] <= 2.0 * math.prod(shape) / 1e9 < gflop[1]:
                continue
            rest: dict[tuple, dict[str, tuple[str, float, dict[str, str]]]] = defaultdict(dict)
            for config, us in by_config.items():
                f = fields_of(config)
                if f is not None:
                    rest[tuple(f[k] for k in FIELDS if k != field)][f[field]] = (config, us, f)
            for group in rest.values():
                for a, (ca, ta, fa) in group.items():
                    if (frm is not None and a != frm) or not keep(fa, where):
                        continue
                    for b, (_, tb, _) in group.items():
                        if a == b or (to is not None and b != to) or (frm is None and to is None and b < a):
                            continue
                        out.append({"file": name, "shape": shape, "from": a, "to": b, "config": ca,
                                    "fields": fa, "ratio": tb / ta})
    return out


def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def summary(pairs: list[dict], by: str | None) -> list[dict]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for p in pairs:
        groups[(p["from"], p["to"], p["fields"][by] if by else "")].append(p)
    out = []
    for (a, b, g), ps in groups.items():
        per_shape: dict[tuple, list[float]] = defaultdict(list)
        for p in ps:
            per_shape[(p["file"], p["shape"])].append(p["ratio"])
        shape_means = {k: geomean(v) for k, v in per_shape.items()}
        worst = max(shape_means, key=shape_means.get)
        out.append({"from": a, "to": b, "group": g, "pairs": len(ps),
                    "shapes": len({p["shape"] for p in ps}), "ratio": geomean([p["ratio"] for p in ps]),
                    "by_shape": geomean(list(shape_means.values())),
                    "faster": sum(p["ratio"] < 0.995 for p in ps), "slower": sum(p["ratio"] > 1.005 for p in ps),
                    "worst": ("x".join(map(str, worst[1])), shape_means[worst])})
    return sorted(out, key=lambda s: (-s["pairs"], s["from"], s["to"], s["group"]))


def table(rows: list[dict], field: str, by: str | None) -> str:
    head = f"| {field} | {by} |" if by else f"| {field} |"
    lines = [head + " pairs | shapes | time ratio (pairs) | (shapes) | faster / slower by > 0.5% | slowest shape |",
             "|---" * (7 + bool(by)) + "|"]
    for s in rows:
        lead = f"| {s['from']} -> {s['to']} |" + (f" {s['group']} |" if by else "")
        lines.append(f"{lead} {s['pairs']} | {s['shapes']} | {s['ratio']:.4f} | {s['by_shape']:.4f} | "
                     f"{s['faster']} / {s['slower']} | {s['worst'][0]} ({s['worst'][1]:.4f}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", nargs="+")
    ap.add_argument("--field", default="dbuf", choices=FIELDS)
    ap.add_argument("--from", dest="frm")
    ap.add_argument("--to")
    ap.add_argument("--min-gflop", type=float, default=0.0)
    ap.add_argument("--max-gflop", type=float, default=math.inf)
    ap.add_argument("--where", action="append", default=[], help="FIELD=VALUE or FIELD!=VALUE (repeatable)")
    ap.add_argument("--by", choices=FIELDS)
    ap.add_argument("--exclude", action="append", default=[], help="leave out files whose name holds this")
    ap.add_argument("--shapes", action="store_true", help="a line per shape")
    a = ap.parse_args(argv)
    where = []
    for w in a.where:
        m = WHERE.match(w)
        if not m or m.group(1) not in FIELDS:
            ap.error(f"--where {w!r}: FIELD=VALUE or FIELD!=VALUE, FIELD one of {', '.join(FIELDS)}")
        where.append(m.groups())
    files = [(f.name, load([f])) for f in inputs(a.rows, a.exclude)]
    pairs = pairs_of(files, a.field, a.frm, a.to, (a.min_gflop, a.max_gflop), where)
    if not pairs:
        print(f"no one-knob pairs of {a.field} in {len(files)} files", file=sys.stderr)
        return 1
    print(table(summary(pairs, a.by), a.field, a.by))
    if a.shapes:
        per: dict[tuple, list[float]] = defaultdict(list)
        for p in pairs:
            per[(p["from"], p["to"], "x".join(map(str, p["shape"])), p["file"])].append(p["ratio"])
        print("\n| change | shape | file | pairs | time ratio |\n|---|---|---|---|---|")
        for (fa, to, shape, name), v in sorted(per.items(), key=lambda kv: geomean(kv[1])):
            print(f"| {fa} -> {to} | {shape} | {name} | {len(v)} | {geomean(v):.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
