#!/usr/bin/env python3
"""Evaluations per minute through `tessera serve` against `tessera bench harness`.

The same candidates as `tessera bench harness` (examples/hgemm_wmma.cu made
distinct by an unused #define, --count of them, task --shape), evaluated
through a local `tessera serve` on one GPU: first with a cold compile cache,
then warm, one request at a time as the bench harness evaluates them (the
overhead figure), then --concurrency requests at a time (the service's
compile-ahead at work). Prints evaluations per minute beside the bench
harness's (--compare runs it), the overhead, and p50/p99 latency per stage
(queue, compile, verify, time, total) from the evaluation records.

    scripts/serve_bench.py --compare                 # on the GPU machine
    scripts/serve_bench.py --mode compile_only       # anywhere (figures are compile-only)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_test import ROOT, client_mod, local_mod, pct  # noqa: E402

STAGES = ("queue", "compile", "verify", "time", "total")


def candidates(count: int, source: Path) -> list[str]:
    """As `tessera bench harness` builds them: a define the kernel never reads makes each one distinct."""
    base = source.read_text()
    return [f"#define TESSERA_BENCH_VARIANT {i}\n{base}" for i in range(count)]


def stages(rec: dict) -> dict[str, float]:
    """Milliseconds per stage of one evaluation record."""
    phases = (rec.get("result") or {}).get("phase_ms", {})
    lat = rec.get("latency_ms", {})
    out = {"queue": lat.get("queue", 0.0), "total": lat.get("total", 0.0),
           "compile": phases.get("compile", 0.0) + lat.get("compile_ahead", 0.0)}
    if "verify" in phases:
        out["verify"] = phases["verify"]
    if "timing" in phases:
        out["time"] = phases["timing"]
    return out


def run_phase(c, cands: list[str], task: str, options: dict, concurrency: int) -> dict:
    t0 = time.perf_counter()
    if concurrency <= 1:
        recs = [c.evaluate(task, src, options) for src in cands]
    else:
        with ThreadPoolExecutor(concurrency) as ex:
            recs = list(ex.map(lambda s: c.evaluate(task, s, options), cands))
    wall = time.perf_counter() - t0
    per_stage = {s: [stages(r)[s] for r in recs if s in stages(r)] for s in STAGES}
    statuses: dict[str, int] = {}
    for r in recs:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {"evals": len(recs), "wall_s": round(wall, 2), "evals_per_min": round(60 * len(recs) / wall, 1),
            "statuses": statuses,
            "stages_ms": {s: {"p50": round(pct(v, 50), 1), "p99": round(pct(v, 99), 1)} for s, v in per_stage.items() if v}}


def bench_harness(binary: str, count: int, shape: str, mode: str) -> dict[str, float]:
    """evals/min of `tessera bench harness` (cold and warm rows)."""
    out = subprocess.run([binary, "bench", "harness", "--count", str(count), "--shape", shape, "--mode", mode],
                         capture_output=True, text=True, check=True).stdout
    print(out)
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^(cold|warm)\s+\d+\s+[\d.]+\s+([\d.]+)", line)
        if m:
            rows[m.group(1)] = float(m.group(2))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=str(ROOT / "build" / "bin" / "tessera"))
    ap.add_argument("--count", type=int, default=30, help="distinct candidates per phase (bench harness's --count)")
    ap.add_argument("--shape", default="1024x1024x1024")
    ap.add_argument("--mode", default="auto", help="auto, full or compile_only")
    ap.add_argument("--concurrency", type=int, default=4, help="requests in flight in the concurrent phase")
    ap.add_argument("--counters", action="store_true", help="collect CUPTI counters (bench harness: --counters)")
    ap.add_argument("--compare", action="store_true", help="also run `tessera bench harness` and print the overhead")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()

    cands = candidates(args.count, ROOT / "examples" / "hgemm_wmma.cu")
    options = {"counters": args.counters, "hot": True}
    cache = Path(tempfile.mkdtemp(prefix="tessera-serve-bench-"))
    env = dict(os.environ, TESSERA_CACHE_DIR=str(cache))
    results: dict = {"shape": args.shape, "count": args.count}
    try:
        with local_mod.LocalServer(["--mode", args.mode, "--gpus", "0"], binary=args.binary, env=env) as server:
            with server.client(timeout=3600) as c:
                # As the bench harness: start the worker (context, baselines,
                # peak) outside the figures, then empty the kernel cache.
                c.evaluate(args.shape, cands[0], options)
                shutil.rmtree(cache / "kernels", ignore_errors=True)
                results["sequential_cold"] = run_phase(c, cands, args.shape, options, 1)
                results["sequential_warm"] = run_phase(c, cands, args.shape, options, 1)
                shutil.rmtree(cache / "kernels", ignore_errors=True)
                results["concurrent_cold"] = run_phase(c, cands, args.shape, options, args.concurrency)
        if args.compare:
            results["bench_harness"] = bench_harness(args.binary, args.count, args.shape, args.mode)
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    print(f"serve bench: {args.count} candidates, {args.shape}, counters {'on' if args.counters else 'off'}")
    print(f"{'path':<26}{'evals':>6}{'wall s':>9}{'evals/min':>11}{'vs bench':>10}  statuses")
    bench = results.get("bench_harness", {})
    for name in ("sequential_cold", "sequential_warm", "concurrent_cold"):
        r = results[name]
        ref = bench.get(name.split("_")[1]) if name.startswith("sequential") else None
        vs = f"{100 * (r['evals_per_min'] / ref - 1):+.1f}%" if ref else ""
        print(f"{name:<26}{r['evals']:>6}{r['wall_s']:>9.1f}{r['evals_per_min']:>11.1f}{vs:>10}  {r['statuses']}")
    for cache_state, v in bench.items():
        print(f"{'bench harness ' + cache_state:<26}{args.count:>6}{'':>9}{v:>11.1f}")
    print("\np50 / p99 ms per stage (sequential warm | concurrent cold):")
    for s in STAGES:
        a = results["sequential_warm"]["stages_ms"].get(s)
        b = results["concurrent_cold"]["stages_ms"].get(s)
        fmt = lambda x: f"{x['p50']:>9.1f} / {x['p99']:<9.1f}" if x else f"{'-':>9}   {'':<9}"  # noqa: E731
        print(f"  {s:<8}{fmt(a)}   |{fmt(b)}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
