#!/usr/bin/env python3
"""Reads one shape's `tessera eval --json` output from scripts/tile_ab.sh: prints
a line per run, then one row per config (its passes, their spread, and its time
against the plan's first config), and appends that table to a markdown file.

    scripts/tile_ab_report.py RECORDS SHAPE [SUMMARY_MD]

The first config of a plan line is the reference (today's best, or the model's
first pick), so "vs first" reads as the A/B's answer: below 1.000 is faster.
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def records(text: str) -> list[dict]:
    """Every evaluation record in the text: one JSON object per line, or one
    pretty-printed record, with the harness's log lines in between."""
    out, dec, i = [], json.JSONDecoder(), 0
    while (j := text.find("{", i)) >= 0:
        try:
            r, i = dec.raw_decode(text, j)
        except ValueError:
            i = j + 1
            continue
        if isinstance(r, dict) and "cold" in r:
            out.append(r)
    return out


def config_of(r: dict) -> str:
    """tile_ab.sh names each file SHAPE_[LABEL_]CONFIG.cu."""
    return r.get("candidate_name", "?").split("_", 1)[-1].removesuffix(".cu")


def cold_us(r: dict) -> float | None:
    us = (r.get("cold") or {}).get("median_us")
    return float(us) if r.get("status") == "ok" and us else None


def run_line(shape: str, r: dict) -> str:
    us = cold_us(r)
    k = r.get("counters") or {}
    line = (f"{shape:>14} {config_of(r):62} {r.get('status', '?'):8} "
            + (f"{us:8.2f} us {r.get('speedup', 0):6.3f}x  vs {r.get('best_baseline', '')} "
               f"{r.get('best_baseline_us', 0):.2f}" if us else f"{'':8}    {r.get('reason', '')[:60]}"))
    if us and k:
        line += f"  dram {k.get('dram_throughput_pct', 0):.0f}% l2 hit {k.get('l2_hit_rate_pct', 0):.0f}%"
    return line


def summary(shape: str, recs: list[dict]) -> list[str]:
    """One markdown row per config in plan order: passes, spread, speedup, vs the first."""
    by: dict[str, list[dict]] = {}
    for r in recs:
        by.setdefault(config_of(r), []).append(r)
    if not by:
        return []
    # Each config's timed passes: (cold µs, speedup), failed runs left out.
    timed = {c: [(u, r.get("speedup", 0)) for r in rs if (u := cold_us(r))] for c, rs in by.items()}
    medians = {c: statistics.median(u for u, _ in t) for c, t in timed.items() if t}
    ref = medians.get(next(iter(by)))
    best = min(medians, key=medians.get) if medians else None
    rows = []
    for c, rs in by.items():
        if not timed[c]:
            statuses = ", ".join(sorted({r.get("status", "?") for r in rs}))
            rows.append(f"| {shape} | `{c}` | {statuses} | | | |")
            continue
        times = [u for u, _ in timed[c]]
        spread = (max(times) - min(times)) / min(times) * 100
        speed = statistics.median(s for _, s in timed[c])
        vs = f"{medians[c] / ref:.3f}" if ref else "n/a"
        mark = "**" if c == best else ""
        rows.append(f"| {shape} | {mark}`{c}`{mark} | {' / '.join(f'{t:.2f}' for t in times)} | "
                    f"{spread:.1f}% | {speed:.3f}x | {vs} |")
    return rows


HEADER = ["| shape | config (the first is the reference; fastest in bold) | cold µs, each pass | spread | "
          "speedup (median) | time vs first |", "|---|---|---|---|---|---|"]


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    path, shape = Path(argv[1]), argv[2]
    recs = records(path.read_text(errors="replace")) if path.exists() else []
    for r in recs:
        print(run_line(shape, r))
    if not recs:
        print(f"{shape:>14} no evaluation records in {path}")
    rows = summary(shape, recs)
    if len(argv) > 3 and rows:
        md = Path(argv[3])
        new = not md.exists() or not md.read_text().strip()
        with md.open("a") as f:
            f.write("\n".join((HEADER if new else []) + rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
