#!/usr/bin/env python3
"""The search against the tune on the same shapes, as a user runs them: one
`tessera search --shape S --budget-evals N --out RUN` and one
`tessera tile tune --shape S --budget-evals N --json > TUNE.json` per shape,
each in its own process (so each divides by its own baselines: the kernel
times are printed beside the speedups).

    scripts/search_vs_tune.py RUN TUNE.json [RUN TUNE.json ...] [--steps FILE.md]

Prints one Markdown row per pair: the search's best (speedup, µs, the step
that found it and its move, its moves by kind and how many were exploration)
against the tune's confirmed winner (speedup, µs, the tune's move that found it:
model, sample, seed or refine, and where the model ranked it) and whether the
search ever measured the tune's winner. --steps writes every search step
(move, pool rank, predicted and measured µs) so a loss can be read move by move.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def shape_of(task: dict) -> str:
    return f"{task['m']}x{task['n']}x{task['k']}"


def steps(run: Path) -> list[dict]:
    """The run's trajectory records that proposed a tile config, in step order."""
    path = run / "trajectories.jsonl"
    if not path.is_file():
        raise SystemExit(f"{run}: no trajectories.jsonl (not a search run folder)")
    out, lines = [], path.read_text().splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            if n == len(lines):
                continue  # a run killed mid-write leaves a torn last line
            raise SystemExit(f"{path}:{n}: not a JSON line")
    return sorted(out, key=lambda r: r.get("step", 0))


def timed(rec: dict) -> tuple[float, float] | None:
    """(speedup, cold µs) of a step whose kernel was timed."""
    ev, reward = rec.get("eval") or {}, rec.get("reward") or {}
    us = ((ev.get("cold") or {}).get("median_us")) or 0
    if ev.get("status") != "ok" or us <= 0:
        return None
    return float(reward.get("speedup_vs_baseline") or ev.get("speedup") or 0), float(us)


def search_summary(run: Path) -> dict:
    recs = steps(run)
    if not recs:
        raise SystemExit(f"{run}: no steps")
    best, best_rec = None, None
    moves, explored, names = Counter(), 0, set()
    for r in recs:
        info = r.get("proposer_info") or {}
        moves[info.get("move", r.get("proposer_name", "?"))] += 1
        explored += bool(info.get("explore"))
        names.add((r.get("candidate") or {}).get("name", ""))
        t = timed(r)
        if t and (best is None or t[0] > best[0]):
            best, best_rec = t, r
    return {"shape": shape_of(recs[0]["task"]), "steps": len(recs), "best": best,
            "best_step": best_rec["step"] if best_rec else None,
            "best_move": (best_rec.get("proposer_info") or {}).get("move", "?") if best_rec else "",
            "best_name": (best_rec.get("candidate") or {}).get("name", "") if best_rec else "",
            "moves": moves, "explored": explored, "names": names, "records": recs}


def tune_summary(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise SystemExit(f"{path}: not the JSON of `tessera tile tune --json` ({e})")
    tasks = doc.get("tasks") or []
    if len(tasks) != 1:
        raise SystemExit(f"{path}: {len(tasks)} tasks; give one tune per shape")
    t = tasks[0]
    conf = t.get("confirmed")
    res = (conf or {}).get("result") or {}
    us = ((res.get("cold") or {}).get("median_us")) or 0
    return {"shape": shape_of(t["task"]), "evaluated": t.get("evaluated", 0),
            "best": (float(res.get("speedup", 0)), float(us)) if conf and us > 0 else None,
            "name": (conf or {}).get("name", ""), "rank": (t.get("model") or {}).get("winner_rank"),
            # how the tune came to its winner (written since 2026-11-28; older tunes: unknown)
            "move": (conf or {}).get("move") or "unknown"}


def fmt_best(b: tuple[float, float] | None) -> str:
    return f"{b[0]:.3f}x ({b[1]:.2f} µs)" if b else "nothing timed"


def row(s: dict, t: dict) -> str:
    moves = ", ".join(f"{k} {v}" for k, v in sorted(s["moves"].items()))
    verdict = "—"
    if s["best"] and t["best"]:
        ratio = t["best"][1] / s["best"][1]  # > 1: the search's kernel is faster
        verdict = f"search {ratio:.3f}x the tune's kernel" + (" (search ahead)" if ratio >= 1 else "")
    seen = "yes" if t["name"] in s["names"] else "no"
    rank = f"#{t['rank']}" if isinstance(t["rank"], int) and t["rank"] > 0 else "not ranked"  # 1-based; 0: none
    step = f"{s['best_step']} ({s['best_move']})" if s["best"] else "—"
    return (f"| {s['shape']} | {fmt_best(s['best'])} | {step} | {moves}; {s['explored']} explored | "
            f"{fmt_best(t['best'])} | {t['move']}; {rank} | {seen} | {verdict} |")


def steps_md(s: dict) -> str:
    lines = [f"### {s['shape']}", "", "| step | move | pool rank | explore | predicted µs | measured µs | speedup | config |",
             "|---|---|---|---|---|---|---|---|"]
    for r in s["records"]:
        info, t = r.get("proposer_info") or {}, timed(r)
        pred = info.get("predicted_us")
        lines.append(f"| {r.get('step')} | {info.get('move', '?')} | {info.get('pool_rank', '')} | "
                     f"{'yes' if info.get('explore') else ''} | {f'{pred:.2f}' if pred else ''} | "
                     f"{f'{t[1]:.2f}' if t else (r.get('eval') or {}).get('status', 'not evaluated')} | "
                     f"{f'{t[0]:.3f}x' if t else ''} | {(r.get('candidate') or {}).get('name', '')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    steps_file = None
    if "--steps" in argv:
        i = argv.index("--steps")
        if i + 1 >= len(argv):
            raise SystemExit("--steps takes a file")
        steps_file = Path(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    if not argv or len(argv) % 2:
        raise SystemExit(__doc__)
    print("| shape | search: best | at step (move) | moves | tune: confirmed | tune winner: found by; model's rank | "
          "search measured it | kernel times |")
    print("|---|---|---|---|---|---|---|---|")
    details = []
    for run, tune in zip(argv[0::2], argv[1::2]):
        s, t = search_summary(Path(run)), tune_summary(Path(tune))
        if s["shape"] != t["shape"]:
            raise SystemExit(f"{run} is {s['shape']} but {tune} is {t['shape']}")
        print(row(s, t))
        details.append(steps_md(s))
    if steps_file:
        steps_file.write_text("\n".join(details))


if __name__ == "__main__":
    main(sys.argv[1:])
