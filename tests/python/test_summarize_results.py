"""scripts/summarize_results.py: the GPU check's tables keep every cell in its column, however
long a candidate's name or a shape with its epilogue."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "summarize_results.py"
spec = importlib.util.spec_from_file_location("summarize_results", SCRIPT)
sr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sr)


def test_long_cells_widen_their_column_and_never_touch_the_next(capsys):
    rows = [("tile_epilogue_gelu", "w128x256x64_g2x1_s3p3_pa_d0_sw_et_r8_k1s_p_c2x1_bias_gelu.cu",
             "4096x4096x4096+gelu", "ok", "188.35"),
            ("eval", "good.cu", "64x64x64", "wrong_answer", "12345.67")]
    sr.print_table(("run", "candidate", "shape", "status", "cold us"), rows, left=4)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    # Every column starts at the same place on every line, and is set off by spaces.
    starts = [lines[0].index(h) for h in ("candidate", "shape", "status")]
    for line in lines[1:]:
        for s in starts:
            assert line[s - 2:s] == "  "
    assert "4096x4096x4096+gelu  ok" in lines[1]
    # Numbers are right-aligned: they end where the header ends.
    assert all(line.endswith(v) for line, v in zip(lines, ("cold us", "188.35", "12345.67")))
    assert len({len(line) for line in lines}) == 1


def test_a_table_without_a_header_is_aligned_too(capsys):
    sr.print_table(None, [("thread_left_running_tu.cu", "ok", "x"), ("trap.cu", "runtime_fault", "y")], left=3)
    a, b = capsys.readouterr().out.splitlines()
    assert a.index("ok") == b.index("runtime_fault") == len("thread_left_running_tu.cu") + 2
