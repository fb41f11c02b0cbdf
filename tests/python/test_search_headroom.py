"""scripts/search_headroom.py: another run's faster config counts once its times are scaled to
this run's by the configs both timed; a shape with too few of them is not judged."""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "search_headroom.py"
spec = importlib.util.spec_from_file_location("search_headroom", SCRIPT)
sh = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sh)


def write(path: Path, rows: list[tuple[str, str, float]]) -> Path:
    lines = []
    for shape, config, us in rows:
        m, n, k = (int(x) for x in shape.split("x"))
        lines.append(json.dumps({"task": {"m": m, "n": n, "k": k, "layout": "TN", "epilogue": "none"},
                                 "config": config, "cold_us": us}))
    text = "\n".join(lines) + "\n"
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_a_faster_config_elsewhere_is_scaled_to_this_run(tmp_path: Path) -> None:
    # The other run is twice as slow on the three configs both timed, so its c9 at 18 µs stands
    # for 9 here, against this run's fastest 10: headroom 10/9. Shape 2 shares two configs only.
    run = write(tmp_path / "run.jsonl", [("64x64x64", "c0", 10.0), ("64x64x64", "c1", 11.0),
                                         ("64x64x64", "c2", 12.0), ("8x8x8", "c0", 5.0), ("8x8x8", "c1", 6.0)])
    other = write(tmp_path / "other.jsonl.gz", [("64x64x64", "c0", 20.0), ("64x64x64", "c1", 22.0),
                                                ("64x64x64", "c2", 24.0), ("64x64x64", "c9", 18.0),
                                                ("8x8x8", "c0", 10.0), ("8x8x8", "c1", 12.0), ("8x8x8", "c9", 1.0)])
    h = sh.headroom(sh.load([run]), [sh.load([other])], 3)
    assert set(h) == {"64x64x64"}
    assert abs(h["64x64x64"][0] - 10.0 / 9.0) < 1e-12 and h["64x64x64"][1] == "c9"
    # With two common configs enough, the 8x8x8 shape is judged too: c9 at 1 µs is 0.5 here.
    assert abs(sh.headroom(sh.load([run]), [sh.load([other])], 2)["8x8x8"][0] - 10.0) < 1e-12


def test_nothing_faster_elsewhere_is_no_headroom(tmp_path: Path) -> None:
    run = write(tmp_path / "run.jsonl", [("64x64x64", f"c{i}", 10.0 + i) for i in range(4)])
    other = write(tmp_path / "other.jsonl", [("64x64x64", f"c{i}", 10.0 + i) for i in range(4)]
                  + [("64x64x64", "slow", 30.0)])
    out = subprocess.run([sys.executable, str(SCRIPT), str(run), "--others", str(other)],
                         capture_output=True, text=True, check=True).stdout
    assert "1 judged" in out and "geometric mean: 1.0000x" in out and "faster: 0" in out


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task": {"m": 1, "n": 2, "k": 3}, "config": "c"}\n')
    r = subprocess.run([sys.executable, str(SCRIPT), str(bad), "--others", str(bad)], capture_output=True, text=True)
    assert r.returncode != 0 and "bad.jsonl:1: not a rows line" in r.stderr
    r = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "none.jsonl"), "--others", str(bad)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "no such file" in r.stderr
