"""scripts/model_ab.py: two sweeps of the same shapes ranked by two cost models,
compared over the shapes both measured (gpu_check.sh model_ab)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "model_ab.py"


def write_run(folder: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    """rows: (mnk, bucket, baseline-max, kernel); an empty speedup is a shape without a kernel."""
    folder.mkdir()
    lines = ["mnk,m,bucket,kernel,baseline-max"] + [f"{mnk},1,{bucket},{kernel},{speedup}"
                                                    for mnk, bucket, speedup, kernel in rows]
    (folder / "shapes.csv").write_text("\n".join(lines) + "\n")
    return folder


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_buckets_wins_and_same_winners_over_common_shapes(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", [("1_2_3", "small", "1.10", "k1"), ("4_5_6", "small", "1.00", "k2"),
                                   ("7_8_9", "large", "0.90", "k3"), ("9_9_9", "large", "2.00", "k9")])
    b = write_run(tmp_path / "b", [("1_2_3", "small", "1.00", "k4"), ("4_5_6", "small", "1.002", "k2"),
                                   ("7_8_9", "large", "1.00", "k5"), ("8_8_8", "large", "", "")])
    done = run(str(a), str(b), "shipped", "new")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "3 shapes measured by both" in out  # 9_9_9 only in a, 8_8_8 without a kernel in b
    # small: 1.10 against 1.00 (shipped faster), 1.00 against 1.002 (within 0.5%); same winner on 4_5_6.
    assert "| small | 2 | 1.049x | 1.001x | 1 / 0 / 1 | 1 | 0 / 0 |" in out
    # large: 0.90 is below the 0.95x floor in a only.
    assert "| large | 1 | 0.900x | 1.000x | 0 / 1 / 0 | 0 | 1 / 0 |" in out
    assert "| all | 3 | 0.997x | 1.001x | 1 / 1 / 1 | 1 | 1 / 0 |" in out
    # The shapes that moved most come first: 7_8_9 by 1.111, 1_2_3 by 0.909.
    assert out.index("| 7_8_9 |") < out.index("| 1_2_3 |") < out.index("| 4_5_6 |")


def test_no_common_shape_is_an_error_not_a_table(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", [("1_2_3", "small", "1.10", "k1")])
    b = write_run(tmp_path / "b", [("4_5_6", "small", "1.00", "k2")])
    done = run(str(a), str(b))
    assert done.returncode == 1
    assert "no shape measured in both runs (1 and 1 shapes)" in done.stdout


def test_a_run_without_a_table_is_named(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", [("1_2_3", "small", "1.10", "k1")])
    (tmp_path / "empty").mkdir()
    done = run(str(a), str(tmp_path / "empty"))
    assert done.returncode == 1
    assert f"{tmp_path / 'empty'} has no shapes.csv" in done.stdout
    assert not done.stderr
