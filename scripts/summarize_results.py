#!/usr/bin/env python3
"""Prints compact tables from the JSON results that scripts/gpu_check.sh saved."""
import json
import sys
from pathlib import Path


def records(path):
    text = path.read_text(errors="replace")
    out, dec, i = [], json.JSONDecoder(), 0
    while i < len(text):
        j = text.find("{", i)
        if j < 0:
            break
        try:
            obj, end = dec.raw_decode(text, j)
        except json.JSONDecodeError:
            i = j + 1
            continue
        if isinstance(obj, dict) and obj.get("schema", "").startswith("tessera.eval_result"):
            out.append(obj)
        i = end
    return out


def print_table(header, rows, left):
    """Columns as wide as their widest cell, two spaces apart: a fixed width let a long
    candidate name or a shape with its epilogue run into the next column. The first
    `left` columns are text (left-aligned), the rest numbers (right-aligned)."""
    lines = ([header] if header else []) + [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    for line in lines:
        cells = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))]
        print("  ".join(cells).rstrip())


def main(out_dir):
    out = Path(out_dir)
    rows = []
    names = ["eval_examples", "eval_naive"] + sorted(p.stem for p in out.glob("tile_*.log")) + ["repeat_a", "repeat_b"]
    for name in names:
        p = out / f"{name}.log"
        if p.exists():
            rows += [(name, r) for r in records(p)]
    if rows:
        print("\n== evaluations ==")
        table = []
        for name, r in rows:
            t = r["task"]
            shape = f"{t['m']}x{t['n']}x{t['k']}" + ("" if t.get("epilogue", "none") == "none" else "+" + t["epilogue"][5:])
            table.append((name, r["candidate_name"], shape, r["status"], f"{r['cold'].get('median_us', 0):.2f}",
                          f"{r.get('tflops', 0):.1f}", f"{100 * r.get('peak_fraction', 0):.1f}", r.get("best_baseline", ""),
                          f"{r.get('best_baseline_us', 0):.2f}", f"{r.get('speedup', 0):.3f}"))
        print_table(("run", "candidate", "shape", "status", "cold us", "TFLOP/s", "%peak", "best baseline", "base us",
                     "speedup"), table, left=4)
    ra, rb = records(out / "repeat_a.log") if (out / "repeat_a.log").exists() else [], \
        records(out / "repeat_b.log") if (out / "repeat_b.log").exists() else []
    if ra and rb and ra[0]["status"] == rb[0]["status"] == "ok":
        a, b = ra[0], rb[0]
        def diff(x, y):
            return 100.0 * abs(x - y) / min(x, y)
        print("\n== repeatability (two processes) ==")
        print(f"candidate medians {a['cold']['median_us']:.2f} / {b['cold']['median_us']:.2f} us: {diff(a['cold']['median_us'], b['cold']['median_us']):.2f}% apart")
        for bl in a["baselines"]:
            other = next((x for x in b["baselines"] if x["name"] == bl["name"]), None)
            if other and bl["cold"].get("median_us") and other["cold"].get("median_us"):
                print(f"{bl['name']:<20} medians {bl['cold']['median_us']:.2f} / {other['cold']['median_us']:.2f} us: "
                      f"{diff(bl['cold']['median_us'], other['cold']['median_us']):.2f}% apart")
    p = out / "fault_corpus.log"
    if p.exists():
        print("\n== fault corpus (each followed by good.cu) ==")
        recs = records(p)
        table = []
        for k in range(0, len(recs), 2):
            fault = recs[k]
            after = recs[k + 1]["status"] if k + 1 < len(recs) else "-"
            table.append((fault["candidate_name"], fault["status"], f"next good.cu: {after}", fault["reason"][:70]))
        print_table(None, table, left=4)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/gpu_check")
