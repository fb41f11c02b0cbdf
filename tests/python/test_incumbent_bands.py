"""scripts/incumbent_bands.py: configs banded by their predicted time over a measured
incumbent's, and how often each band beat it (the far_slower bound's evidence)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "incumbent_bands.py"
spec = importlib.util.spec_from_file_location("incumbent_bands", SCRIPT)
ib = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ib)


def test_each_of_the_2nd_to_4th_fastest_is_an_incumbent_and_the_others_are_banded() -> None:
    # Measured 10, 11, 12, 13, 14, 15 µs (c0 measured twice: its median, 10); predicted so that
    # c0 is 2x slower than everyone else by the model, the rest as measured.
    rows = [("t", "c0", 9.0, 20.0), ("t", "c0", 11.0, 20.0)]
    rows += [("t", f"c{i}", 10.0 + i, 10.0 + i) for i in range(1, 6)]
    rows += [("small", "a", 1.0, 1.0), ("small", "b", 2.0, 2.0)]  # under 6 configs: left out
    result = ib.bands(rows)
    by = {b["band"]: b for b in result}
    assert sum(b["pairs"] for b in result) == 3 * 5  # incumbents c1, c2, c3; 5 others each
    # c0 (the fastest, predicted 20 / 11-13 = 1.5-1.8x) beats each incumbent: all in >= 1.5x.
    assert by[(1.5, float("inf"))]["beat"] == 3 and by[(1.5, float("inf"))]["fastest"] == 3
    # c1 against c2 (11/12 = 0.917) and c3 (11/13 = 0.846), c2 against c3 (0.923): faster, and predicted so.
    assert by[(0, 0.9)]["beat"] == 1 and by[(0.9, 1.0)]["beat"] == 2
    # Nothing predicted slower than its incumbent, but c0, beat it.
    assert sum(b["beat"] for b in result if b["band"][0] >= 1.0 and b["band"][1] <= 1.5) == 0
    text = ib.table(result)
    assert "| < 0.9x | 1 | 1 (100.0%) | 0 | 1.182x |" in text  # c1 against c3: 13 / 11
    assert "| >= 1.5x | 3 | 3 (100.0%) | 3 | 1.200x |" in text  # 11, 12, 13 over 10: median 1.2
    assert "| 1-1.05x | 0 | 0 | 0 | - |" in text


def test_a_family_falls_in_one_fold_whatever_its_m() -> None:
    folds = {ib.fold_of({"m": m, "n": 4096, "k": 1024}, 5) for m in (1, 33, 257, 8192)}
    assert len(folds) == 1
    assert len({ib.fold_of({"m": 1, "n": n, "k": 1024}, 5) for n in range(1024, 1024 + 64 * 40, 64)}) == 5


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    rows = tmp_path / "r.jsonl"
    rows.write_text("")
    done = subprocess.run([sys.executable, str(SCRIPT), str(rows), "--tessera", str(tmp_path / "none")],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "no tessera binary" in done.stderr
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "r.jsonl.gz")], capture_output=True, text=True)
    assert done.returncode != 0 and "not a rows file" in done.stderr


def test_a_malformed_row_is_named_by_its_line(tmp_path: Path) -> None:
    rows = tmp_path / "r.jsonl"
    rows.write_text('{"task": {"m": 1, "n": 64, "k": 64}, "config": "c", "cold_us": 1}\n\n{"config": "no task"}\n')
    fake = tmp_path / "tessera"  # never run: the rows are read before any model is trained
    fake.write_text("#!/bin/sh\nexit 1\n")
    done = subprocess.run([sys.executable, str(SCRIPT), str(rows), "--tessera", str(fake)], capture_output=True, text=True)
    assert done.returncode != 0 and f"{rows}:3: not a row" in done.stderr and "Traceback" not in done.stderr
