"""scripts/ranking_ab_report.py: a ranking change's A/B summed up from the plan's rank
comments (scripts/ranking_ab_plan.py) and tile_ab.sh's summary tables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ranking_ab_report.py"
HEADER = ("| shape | config (the first is the reference; fastest in bold) | cold µs, each pass | spread | "
          "speedup (median) | time vs first |\n|---|---|---|---|---|---|\n")


def summary(path: Path, rows: list[tuple[str, str, str]]) -> str:
    body = "".join(f"| {s} | `{c}` | 10.00 / 10.00 | 0.0% | {x} | 1.000 |\n" if x[0].isdigit()
                   else f"| {s} | `{c}` | {x} | | | |\n" for s, c, x in rows)
    path.write_text(HEADER + body)
    return str(path)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_first_two_before_and_after_and_the_changed_first_picks(tmp_path: Path) -> None:
    plan = tmp_path / "set_a.txt"
    plan.write_text("# ranking A/B\n"
                    "# rank 1x2x3 before=a,b,c after=a,e,b\n1x2x3 a b e\n"
                    "# rank 4x5x6 before=p,q,r after=s,p,q\n4x5x6 p q s\n"
                    "# rank 7x8x9 before=a,b,c after=a,f,b\n7x8x9 a b f\n")
    # 1x2x3: #2 was 0.80x, now 1.00x; 4x5x6: the first pick changes, 1.00x -> 0.90x;
    # 7x8x9: f failed to verify, so the shape is not wholly measured.
    ab = summary(tmp_path / "ab.md", [("1x2x3", "a", "1.000x"), ("1x2x3", "b", "0.800x"), ("1x2x3", "e", "1.000x"),
                                      ("4x5x6", "p", "1.000x"), ("4x5x6", "q", "1.100x"), ("4x5x6", "s", "0.900x"),
                                      ("7x8x9", "a", "1.000x"), ("7x8x9", "b", "1.000x"),
                                      ("7x8x9", "f", "wrong_answer")])
    done = run(ab, "--plan", str(plan))
    assert done.returncode == 0, done.stderr
    row = done.stdout.splitlines()[2]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "set_a (2 / 3)"
    # #1 before a, p (1.0, 1.0), after a, s (1.0, 0.9); #2 before b, q (0.8, 1.1), after e, p (1.0, 1.0).
    assert cells[1:5] == ["1.000x", "0.949x", "0.938x", "1.000x"]
    # Best of the first two before 1.0, 1.1; after 1.0, 1.0; of the new top 3 1.0, 1.1.
    assert cells[5:8] == ["1.049x", "1.000x", "1.049x"]
    assert cells[8] == "0 / 1"  # 4x5x6's best of two: 1.1x -> 1.0x
    assert cells[9] == "4x5x6 1.000x -> 0.900x"
    assert "set_a: 1 shapes not wholly measured" in done.stderr


def test_a_later_summary_wins_and_a_plan_without_ranks_is_refused(tmp_path: Path) -> None:
    plan = tmp_path / "p.txt"
    plan.write_text("# rank 1x2x3 before=a,b after=a,e\n1x2x3 a b e\n")
    first = summary(tmp_path / "one.md", [("1x2x3", "a", "1.000x"), ("1x2x3", "b", "0.900x"), ("1x2x3", "e", "0.500x")])
    second = summary(tmp_path / "two.md", [("1x2x3", "e", "1.100x")])
    cells = [c.strip() for c in run(first, second, "--plan", str(plan)).stdout.splitlines()[2].strip("|").split("|")]
    assert cells[4] == "1.100x" and cells[8] == "1 / 0"
    old = tmp_path / "old.txt"
    old.write_text("1x2x3 a b e\n")
    done = run(first, "--plan", str(old))
    assert done.returncode != 0 and "no '# rank" in done.stderr
    done = run(str(tmp_path / "missing.md"), "--plan", str(plan))
    assert done.returncode != 0 and "no such file" in done.stderr
