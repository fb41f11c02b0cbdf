"""scripts/tile_ab_report.py: one shape's interleaved A/B records (scripts/tile_ab.sh)
summed up per config against the plan line's first config."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "tile_ab_report.py"


def record(config: str, us: float | None, speedup: float = 0.0, status: str = "ok") -> dict:
    return {"schema": "tessera.eval_result/1", "candidate_name": f"100x5120x32768_{config}.cu", "status": status,
            "cold": {"median_us": us} if us else {}, "speedup": speedup, "best_baseline": "cublas_nn",
            "best_baseline_us": 96.5, "reason": "" if us else "1 elements outside tolerance"}


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_each_config_against_the_first_with_its_passes_and_failures(tmp_path: Path) -> None:
    a, b, bad = "w64x104x64_k1s", "w64x104x64_k3a", "w64x104x64_k4a"
    recs = [record(a, 101.9, 0.952), record(b, 97.6, 0.988), record(bad, None, status="wrong_answer"),
            record(a, 101.8, 0.951), record(b, 97.7, 0.990), record(bad, None, status="wrong_answer")]
    # As `tessera eval --json` writes them: log lines between, the last one pretty-printed.
    text = "[info] measuring the ceiling\n" + "\n".join(json.dumps(r) for r in recs[:-1]) + "\n[info] done\n"
    text += json.dumps(recs[-1], indent=2) + "\n"
    (tmp_path / "s.json").write_text(text)
    md = tmp_path / "summary.md"
    done = run(str(tmp_path / "s.json"), "100x5120x32768", str(md))
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 6  # a line per run
    assert "wrong_answer" in done.stdout and "outside tolerance" in done.stdout
    rows = md.read_text().splitlines()
    assert rows[0].startswith("| shape | config") and rows[1].startswith("|---")
    assert rows[2] == f"| 100x5120x32768 | `{a}` | 101.90 / 101.80 | 0.1% | 0.952x | 1.000 |"
    # 97.65 / 101.85: faster than the first, and the fastest (bold).
    assert rows[3] == f"| 100x5120x32768 | **`{b}`** | 97.60 / 97.70 | 0.1% | 0.989x | 0.959 |"
    assert rows[4] == f"| 100x5120x32768 | `{bad}` | wrong_answer | | | |"
    # A second shape appends its rows under the same header.
    assert run(str(tmp_path / "s.json"), "again", str(md)).returncode == 0
    text = md.read_text()
    assert text.count("| shape | config") == 1 and text.count("| again |") == 3


def test_a_shape_without_records_says_so_and_writes_no_rows(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text("[error] the worker could not start\n")
    md = tmp_path / "summary.md"
    done = run(str(tmp_path / "s.json"), "64x64x64", str(md))
    assert done.returncode == 0, done.stderr
    assert "no evaluation records" in done.stdout
    assert not md.exists()


def test_a_failed_reference_leaves_the_comparison_empty(tmp_path: Path) -> None:
    recs = [record("ref", None, status="compile_error"), record("other", 50.0, 1.01)]
    (tmp_path / "s.json").write_text("\n".join(json.dumps(r) for r in recs))
    md = tmp_path / "summary.md"
    assert run(str(tmp_path / "s.json"), "s", str(md)).returncode == 0
    rows = md.read_text().splitlines()
    assert rows[2] == "| s | `ref` | compile_error | | | |"
    assert rows[3] == "| s | **`other`** | 50.00 | 0.0% | 1.010x | n/a |"
