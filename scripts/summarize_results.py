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
        print(f"{'run':<14}{'candidate':<22}{'shape':<16}{'status':<14}{'cold us':>10}{'TFLOP/s':>9}"
              f"{'%peak':>7}{'best baseline':>20}{'base us':>10}{'speedup':>9}")
        for name, r in rows:
            t = r["task"]
            shape = f"{t['m']}x{t['n']}x{t['k']}" + ("" if t.get("epilogue", "none") == "none" else "+" + t["epilogue"][5:])
            print(f"{name[:13]:<14}{r['candidate_name'][-21:]:<22}{shape:<16}{r['status']:<14}"
                  f"{r['cold'].get('median_us', 0):>10.2f}{r.get('tflops', 0):>9.1f}{100 * r.get('peak_fraction', 0):>7.1f}"
                  f"{r.get('best_baseline', ''):>20}{r.get('best_baseline_us', 0):>10.2f}{r.get('speedup', 0):>9.3f}")
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
        for k in range(0, len(recs), 2):
            fault = recs[k]
            after = recs[k + 1]["status"] if k + 1 < len(recs) else "-"
            print(f"{fault['candidate_name']:<24}{fault['status']:<15}next good.cu: {after:<6} {fault['reason'][:70]}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/gpu_check")
