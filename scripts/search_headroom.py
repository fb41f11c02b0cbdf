#!/usr/bin/env python3
"""Could a better search have found a faster kernel? For each shape of a run's rows, the fastest
config that run measured against every config other runs measured on the same shape. Runs differ
in clock and noise, so another run's times are first scaled to this run by the median ratio over
the configs both timed (at least --min-common of them); a shape with fewer is not judged. The
headroom is this run's fastest over the fastest so estimated (1.0 where nothing measured elsewhere
was faster): near 1.0 over a set, the configs a search can propose are exhausted there, and a
faster result needs faster kernels, not a better search.

    scripts/search_headroom.py RUN_ROWS... --others OTHER_ROWS... [--min-common 3] [--show 1.01]

Rows files are what `tessera tile model rows` writes (a JSON line a measurement: task, config,
cold_us), plain or gzipped as datasets/cost_rows keeps them. The RUN files are joined as one run
(a set measured over several sessions); each OTHER file is one run. Repeated measurements of a
config in one run count as their median.
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

Times = dict[str, dict[str, float]]  # shape -> config -> cold µs


def shape_key(task: dict) -> str:
    key = f"{task['m']}x{task['n']}x{task['k']}"
    extra = [task.get("layout", "TN"), task.get("epilogue", "none")]
    return key if extra == ["TN", "none"] else key + ":" + ":".join(extra)


def rows_files(paths: list[str], exclude: list[str], tool: str) -> list[Path]:
    """The rows files (.jsonl, .jsonl.gz) named or in the folders named, less those whose name holds
    an `exclude` string; a path that does not exist is an error in `tool`'s name."""
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise SystemExit(f"{tool}: no such file or folder: {p}")
        files = sorted(list(p.glob("*.jsonl")) + list(p.glob("*.jsonl.gz"))) if p.is_dir() else [p]
        out += [f for f in files if not any(x in f.name for x in exclude)]
    return out


def load(paths: list[Path]) -> Times:
    raw: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for path in paths:
        if not path.is_file():
            raise SystemExit(f"search_headroom: {path}: no such file")
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as f:
            for line_no, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                    raw[shape_key(r["task"])][r["config"]].append(float(r["cold_us"]))
                except (ValueError, KeyError, TypeError) as e:
                    raise SystemExit(f"search_headroom: {path}:{line_no}: not a rows line ({e})")
    return {s: {c: statistics.median(v) for c, v in cs.items()} for s, cs in raw.items()}


def headroom(run: Times, others: list[Times], min_common: int) -> dict[str, tuple[float, str]]:
    """Per judged shape: (this run's fastest / the estimated fastest, the config that gives it)."""
    out = {}
    for shape, times in run.items():
        fastest = min(times.values())
        best, best_config, judged = fastest, "", False
        for other in others:
            theirs = other.get(shape, {})
            common = [c for c in theirs if c in times]
            if len(common) < min_common:
                continue
            judged = True
            scale = statistics.median(times[c] / theirs[c] for c in common)
            for config, t in theirs.items():
                if config not in times and scale * t < best:
                    best, best_config = scale * t, config
        if judged:
            out[shape] = (fastest / best, best_config)
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", nargs="+", type=Path, help="the run's rows files, joined as one run")
    ap.add_argument("--others", nargs="+", type=Path, required=True, help="other runs' rows files, one run each")
    ap.add_argument("--min-common", type=int, default=3, help="configs both runs timed, to scale one to the other")
    ap.add_argument("--show", type=float, default=1.01, help="list the shapes with at least this headroom")
    a = ap.parse_args(argv)
    if a.min_common < 1:
        raise SystemExit("search_headroom: --min-common must be at least 1")
    run = load(a.run)
    h = headroom(run, [load([p]) for p in a.others], a.min_common)
    print(f"{len(run)} shapes in the run, {len(h)} judged (at least {a.min_common} configs another run also timed)")
    if not h:
        return 0
    mean = math.exp(sum(math.log(x) for x, _ in h.values()) / len(h))
    print(f"headroom, geometric mean: {mean:.4f}x; shapes where another run's config is faster: "
          f"{sum(x > 1.0 for x, _ in h.values())}; at least {a.show}x: {sum(x >= a.show for x, _ in h.values())}")
    for shape, (x, config) in sorted(h.items(), key=lambda kv: -kv[1][0]):
        if x >= a.show:
            print(f"| {shape} | {x:.4f}x | `{config}` |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
