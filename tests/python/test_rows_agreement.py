"""scripts/rows_agreement.py: the rank correlation between two rows files' times of the same
configs on the same shape, the ceiling of a cost model's rho on measured rows."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from rows_kit import row, write

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "rows_agreement.py"
spec = importlib.util.spec_from_file_location("rows_agreement", SCRIPT)
ra = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ra)

CONFIGS = [f"w128x{n}x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_p_c1x1_none" for n in (64, 96, 128, 160, 192, 256)]


def run(monkeypatch, capsys, *args: str) -> str:
    monkeypatch.setattr(sys, "argv", ["rows_agreement.py", *args])
    ra.main()
    return capsys.readouterr().out


def test_the_same_order_at_another_clock_agrees_fully(tmp_path):
    a = {"4096x4096x4096": {c: 100.0 + i for i, c in enumerate(CONFIGS)}}
    b = {"4096x4096x4096": {c: 1.02 * (100.0 + i) for i, c in enumerate(CONFIGS)}}
    (e,) = ra.agreements({"a": a, "b": b}, 5)
    assert e["rho"] == pytest.approx(1.0)
    assert e["common"] == 6
    assert e["ratio"] == pytest.approx(1.02)


def test_a_reversed_order_disagrees_and_ties_share_their_rank():
    a = {"s": {c: 100.0 + i for i, c in enumerate(CONFIGS)}}
    b = {"s": {c: 200.0 - i for i, c in enumerate(CONFIGS)}}
    assert ra.agreements({"a": a, "b": b}, 5)[0]["rho"] == pytest.approx(-1.0)
    tied = {"s": {c: 100.0 for c in CONFIGS}}  # a constant series ranks nothing: not judged
    assert ra.agreements({"a": a, "t": tied}, 5) == []


def test_a_shape_needs_min_common_configs_and_counts_once_by_its_widest_pair():
    full = {"s": {c: 100.0 + i for i, c in enumerate(CONFIGS)}}
    narrow = {"s": {c: 100.0 + i for i, c in enumerate(CONFIGS[:5])}}
    swapped = {"s": {c: 100.0 + (1 - i if i < 2 else i) for i, c in enumerate(CONFIGS)}}
    found = ra.agreements({"full": full, "narrow": narrow, "swapped": swapped}, 5)
    assert {(e["first"], e["second"]) for e in found} == {("full", "narrow"), ("full", "swapped"),
                                                          ("narrow", "swapped")}
    assert ra.agreements({"full": full, "narrow": narrow}, 6) == []
    best = ra.per_shape(found)["s"]
    assert (best["first"], best["second"], best["common"]) == ("full", "swapped", 6)
    assert best["rho"] < 1.0


def test_the_table_bands_shapes_by_size(tmp_path, monkeypatch, capsys):
    small = [row(c, 10.0 + i, 64, 64, 1024) for i, c in enumerate(CONFIGS)]  # 0.008 GFLOP
    large = [row(c, 100.0 + i) for i, c in enumerate(CONFIGS)]              # 137 GFLOP
    write(tmp_path / "one.jsonl", small + large)
    write(tmp_path / "two.jsonl.gz", [row(c, 10.0 + (5 - i), 64, 64, 1024) for i, c in enumerate(CONFIGS)] +
          [row(c, 101.0 + i) for i, c in enumerate(CONFIGS)])
    out = run(monkeypatch, capsys, str(tmp_path), "--pairs")
    assert "(2 shapes of 2 files" in out
    assert "| < 1 | 1 | -1.000 | -1.000 |" in out
    assert "| 64-512 | 1 | 1.000 | 1.000 |" in out
    assert "| all | 2 | 0.000 | 0.000 |" in out
    assert "| one | two | 2 | 6.0 | 0.000 | 0.000 |" in out


def test_files_of_one_name_in_two_folders_stay_apart(tmp_path, monkeypatch, capsys):
    for folder, sign in (("a", 1), ("b", -1)):
        (tmp_path / folder).mkdir()
        write(tmp_path / folder / "rows.jsonl", [row(c, 100.0 + sign * i) for i, c in enumerate(CONFIGS)])
    out = run(monkeypatch, capsys, str(tmp_path / "a"), str(tmp_path / "b"))
    assert "(1 shapes of 2 files" in out and "| all | 1 | -1.000 | -1.000 |" in out


def test_bad_input_is_a_clear_error(tmp_path, monkeypatch, capsys):
    with pytest.raises(SystemExit, match="no such file or folder"):
        run(monkeypatch, capsys, str(tmp_path / "missing.jsonl"))
    one = write(tmp_path / "one.jsonl", [row(c, 100.0 + i) for i, c in enumerate(CONFIGS)])
    with pytest.raises(SystemExit, match="needs two rows files"):
        run(monkeypatch, capsys, str(one))
    other = write(tmp_path / "other.jsonl", [row(c, 100.0 + i, 8192, 8192, 8192) for i, c in enumerate(CONFIGS)])
    with pytest.raises(SystemExit, match="no shape has 5 configs or more timed in two of the 2 files"):
        run(monkeypatch, capsys, str(one), str(other))
    with pytest.raises(SystemExit, match="--min-common must be 3 or more"):
        run(monkeypatch, capsys, str(one), str(other), "--min-common", "2")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"config": "x"}\n')
    with pytest.raises(SystemExit, match="bad.jsonl:1: not a rows line"):
        run(monkeypatch, capsys, str(one), str(bad))
