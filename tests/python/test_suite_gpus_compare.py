"""scripts/suite_gpus_compare.py: the one-GPU against several-GPU sweep figures
that #37's grid bar is read from, including a one-GPU run resumed over calls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "suite_gpus_compare.py"


def record(m: int, wall_s: float, cublas_us: float) -> dict:
    return {"task": {"m": m, "n": 64, "k": 64, "layout": "TN", "epilogue": "none"}, "wall_s": wall_s,
            "baselines": [{"name": "cublas_tn", "cold": {"status": "measured", "median_us": cublas_us}}]}


def write_run(folder: Path, records: list[dict]) -> Path:
    folder.mkdir()
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def run(*args: str) -> str:
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=True)
    return done.stdout


def test_wall_times_given_and_per_shape_moves(tmp_path: Path) -> None:
    one = write_run(tmp_path / "one", [record(1, 2.0, 10.0), record(2, 2.0, 20.0)])
    many = write_run(tmp_path / "many", [record(1, 1.0, 11.0), record(2, 1.0, 20.0)])
    out = run(str(one), str(many), "100", "25")
    assert "wall 100 s -> 25 s (25% of the one-GPU time)" in out
    assert "cublas_tn" in out and "largest move 1.100x" in out


def test_records_sums_a_resumed_runs_wall_once_per_shape(tmp_path: Path) -> None:
    # Shape 1 was measured twice (a resumed call redid it): its last record counts, once.
    one = write_run(tmp_path / "one", [record(1, 9.0, 10.0), record(1, 3.0, 10.0), record(2, 5.0, 20.0)])
    many = write_run(tmp_path / "many", [record(1, 1.0, 10.0), record(2, 1.0, 20.0)])
    out = run(str(one), str(many), "records", "4")
    assert "wall 8 s -> 4 s (50% of the one-GPU time)" in out
