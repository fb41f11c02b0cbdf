"""scripts/rank_resolution.py: a model that gets the magnitudes right but not the order of the
near-tied configs shows a high correlation of log times and a low rho within the band."""

from __future__ import annotations

import csv
import importlib.util
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "rank_resolution.py"
spec = importlib.util.spec_from_file_location("rank_resolution", SCRIPT)
rr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rr)


def rows_of(measured: list[float], predicted: list[float], task: str = "t") -> list[dict]:
    return [{"task": task, "config": f"c{i}", "cold_us": str(m), "model_us": str(p)}
            for i, (m, p) in enumerate(zip(measured, predicted))]


def test_magnitudes_right_and_the_near_tied_reversed() -> None:
    # Four configs within 3% of the fastest, predicted in the reverse order; four far slower, in order.
    measured = [10.0, 10.1, 10.2, 10.3, 20.0, 40.0, 80.0, 160.0]
    predicted = [10.3, 10.2, 10.1, 10.0, 20.0, 40.0, 80.0, 160.0]
    r = rr.resolution(rows_of(measured, predicted), "model_us", 1.1)
    assert r["shapes"] == 1 and r["near_shapes"] == 1
    assert r["log_r"] > 0.99
    assert r["rho_near"] == -1.0
    assert abs(r["rho"] - rr.spearman(measured, predicted)) < 1e-12 and 0.7 < r["rho"] < 0.8
    assert r["near_share"] == 0.5
    text = rr.table([r], 1.1)
    assert "| model_us | 1 | " in text and "| -1.000 (1) | 50% |" in text


def test_a_misjudged_knob_stands_out() -> None:
    # Within the band, configs with swap_ab=1 are predicted 20% slower than measured; the rest exactly.
    rows = []
    for t in range(3):
        for i in range(8):
            swap = i % 2
            measured = 10.0 + 0.1 * i
            rows.append({"task": f"t{t}", "config": f"c{i}", "cold_us": str(measured),
                         "model_us": str(measured * (1.2 if swap else 1.0)), "swap_ab": str(swap), "bm": "128"})
    by = {(k, v): (n, e) for k, v, n, e in rr.knob_errors(rows, "model_us", 1.1)}
    # Each shape's median error lies between 0 and log 1.2: the two values sit either side of it.
    assert by[("swap_ab", "1")][0] == 12 and by[("swap_ab", "0")][0] == 12
    assert abs(by[("swap_ab", "1")][1] - by[("swap_ab", "0")][1] - 0.18232) < 1e-4
    assert abs(by[("bm", "128")][1]) < 0.1 and ("stages", "2") not in by


def test_ties_share_their_rank_and_small_shapes_are_left_out() -> None:
    assert rr.ranks([3.0, 1.0, 3.0, 2.0]) == [2.5, 0.0, 2.5, 1.0]
    few = rows_of([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], task="few")
    r = rr.resolution(few, "model_us", 1.1)
    assert r["shapes"] == 0


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    missing = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "none.csv")], capture_output=True, text=True)
    assert missing.returncode != 0 and "no such file" in missing.stderr
    bad = tmp_path / "bad.csv"
    with bad.open("w", newline="") as f:
        csv.writer(f).writerows([["task", "cold_us"], ["t", "1"]])
    done = subprocess.run([sys.executable, str(SCRIPT), str(bad)], capture_output=True, text=True)
    assert done.returncode != 0 and "not a features table" in done.stderr and "Traceback" not in done.stderr
    near = subprocess.run([sys.executable, str(SCRIPT), str(bad), "--near", "1"], capture_output=True, text=True)
    assert near.returncode != 0 and "--near must be above 1" in near.stderr
