"""scripts/knob_pairs.py: configs one field apart, timed on one shape in one rows file, and their
time ratio by field change."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from rows_kit import row, write

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "knob_pairs.py"
spec = importlib.util.spec_from_file_location("knob_pairs", SCRIPT)
kp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kp)

D1 = "w128x256x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_p_c1x1_none"
D0 = D1.replace("_d1_", "_d0_")
PP1 = "w128x128x64_g2x1_s4p4_pa_d1_sw_et_r8_k1s_o_c1x1_none"
SWAP1 = "w128x136x64_g2x1_s5p5_pa_d1_sw_es_r8_k1s_p_c1x2_swapab_none"


def medians(tmp_path: Path, name: str, rows: list[dict]) -> tuple[str, dict]:
    """A rows file as the script reads it: each shape's config medians."""
    return name, kp.load([write(tmp_path / f"{name}.jsonl", rows)])


def test_names_split_into_fields_and_swap_ab_is_a_field_of_its_own() -> None:
    f = kp.fields_of(SWAP1)
    assert f["tile"] == "w128x136x64" and f["dbuf"] == "d1" and f["cluster"] == "c1x2"
    assert f["swap"] == "swapab" and f["epilogue"] == "none" and f["schedule"] == "p"
    assert kp.fields_of(D1)["swap"] == "-"
    assert kp.fields_of("w128x256x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_p_c1x1_bias_gelu")["epilogue"] == "bias_gelu"
    assert kp.fields_of("hgemm_wmma.cu") is None


def test_a_pair_is_one_field_apart_on_one_shape_in_one_file_at_each_configs_median(tmp_path: Path) -> None:
    a = [row(D1, 100.0), row(D1, 104.0), row(D1, 200.0),  # median 104
         row(D0, 98.8),
         row(PP1, 90.0), row(PP1.replace("_d1_", "_d0_"), 99.0),  # ping-pong: 1.1
         row(SWAP1, 50.0),  # no twin
         row(D0, 1.0, m=8),  # another shape: no twin of its own
         row(D1, 100.0, epilogue="bias_gelu"), row(D0, 10.0, epilogue="bias_gelu")]  # fused: not read
    b = [row(D0, 200.0)]  # another file: never paired with a's d1
    fa, fb = medians(tmp_path, "a", a), medians(tmp_path, "b", b)
    pairs = kp.pairs_of([fa, fb], "dbuf", "d1", "d0", (0, float("inf")), [])
    got = sorted((p["config"], round(p["ratio"], 4)) for p in pairs)
    assert got == sorted([(D1, 0.95), (PP1, 1.1)])
    # The same pairs the other way round, and both ways when no direction is given (once each).
    back = kp.pairs_of([fa], "dbuf", "d0", "d1", (0, float("inf")), [])
    assert sorted(round(p["ratio"], 4) for p in back) == [round(1 / 1.1, 4), round(104 / 98.8, 4)]
    assert len(kp.pairs_of([fa], "dbuf", None, None, (0, float("inf")), [])) == 2


def test_where_and_the_size_band_choose_the_pairs(tmp_path: Path) -> None:
    a = [row(D1, 104.0), row(D0, 98.8), row(PP1, 90.0), row(PP1.replace("_d1_", "_d0_"), 99.0),
         row(D1, 10.0, m=512, n=512, k=512), row(D0, 11.0, m=512, n=512, k=512)]
    fa = medians(tmp_path, "a", a)
    big = (64, float("inf"))  # 4096^3 is 137 GFLOP, 512^3 0.27
    no_pp = kp.pairs_of([fa], "dbuf", "d1", "d0", big, [("schedule", "!=", "o")])
    assert [round(p["ratio"], 4) for p in no_pp] == [0.95]
    only_pp = kp.pairs_of([fa], "dbuf", "d1", "d0", big, [("schedule", "=", "o")])
    assert [round(p["ratio"], 4) for p in only_pp] == [1.1]
    small = kp.pairs_of([fa], "dbuf", "d1", "d0", (0, 1), [])
    assert [round(p["ratio"], 4) for p in small] == [1.1]


def test_the_summary_counts_pairs_shapes_and_the_slowest_shape(tmp_path: Path, capsys) -> None:
    rows = [row(D1, 100.0), row(D0, 99.0),  # 0.99
            row(D1, 100.0, m=8192), row(D0, 101.0, m=8192),  # 1.01
            row(D1, 100.0, m=2048), row(D0, 100.2, m=2048)]  # 1.002: neither
    write(tmp_path / "x.jsonl.gz", rows)
    write(tmp_path / "skip_me.jsonl", [row(D1, 100.0), row(D0, 50.0)])
    assert kp.main([str(tmp_path), "--field", "dbuf", "--from", "d1", "--to", "d0", "--exclude", "skip_me"]) == 0
    out = capsys.readouterr().out
    assert "| d1 -> d0 | 3 | 3 | 1.0006 | 1.0006 | 1 / 1 | 8192x4096x4096 (1.0100) |" in out
    assert kp.main([str(tmp_path / "x.jsonl.gz"), "--field", "dbuf", "--by", "schedule", "--shapes"]) == 0
    out = capsys.readouterr().out
    assert "| d0 -> d1 | p |" in out and "| d0 -> d1 | 8192x4096x4096 | x.jsonl.gz | 1 | 0.9901 |" in out


def test_bad_input_is_an_error_not_a_crash(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit, match="no such file"):
        kp.main([str(tmp_path / "missing.jsonl")])
    with pytest.raises(SystemExit) as e:
        kp.main([str(tmp_path), "--where", "nonsense"])
    assert e.value.code == 2 and "FIELD=VALUE" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="no rows files"):
        kp.main([str(tmp_path)])
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(SystemExit, match="bad.jsonl:1: not a rows line"):
        kp.main([str(tmp_path / "bad.jsonl")])
    (tmp_path / "bad.jsonl").unlink()
    write(tmp_path / "one.jsonl", [row(D1, 100.0)])
    assert kp.main([str(tmp_path), "--field", "stages"]) == 1
    assert "no one-knob pairs of stages" in capsys.readouterr().err
