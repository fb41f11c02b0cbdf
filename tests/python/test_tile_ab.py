"""scripts/tile_ab.sh: a plan of SHAPE CONFIG... lines, one `tessera eval` per shape, run
here against a stand-in for the tessera binary (the script's contract is the files it
writes and the commands it runs; the GPU run is gpu_check.sh's ab stage). A cut run
continues where it stopped, and MAX_SECONDS stops between shapes."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Emits a kernel naming its config; evaluates files into one record each. Every eval is
# logged, and a shape may be told to take its time or to kill the script mid-shape.
FAKE = r'''#!/usr/bin/env python3
import json, os, signal, sys, time
from pathlib import Path
args = sys.argv[1:]
shape = args[args.index("--shape") + 1]
if args[:2] == ["tile", "emit"]:
    print(f"// config: {args[2]} {os.environ.get('FAKE_EMITTER', '')}")
    sys.exit(0)
assert args[0] == "eval", args
Path(os.environ["FAKE_LOG"]).open("a").write(shape + "\n")
if shape == os.environ.get("FAKE_KILL"):
    print('{"partial": ')
    sys.stdout.flush()
    os.kill(os.getppid(), signal.SIGKILL)
    sys.exit(1)
time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
for f in [a for a in args if a.endswith(".cu")]:
    print(json.dumps({"schema": "tessera.eval_result/1", "candidate_name": Path(f).name, "status": "ok",
                      "cold": {"median_us": 10.0}, "speedup": 1.0, "best_baseline": "cublas_nn",
                      "best_baseline_us": 10.0, "reason": ""}))
'''


def setup(tmp: Path, lines: list[str]) -> tuple[Path, Path, dict]:
    fake = tmp / "tessera"
    fake.write_text(FAKE)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    plan = tmp / "plan.txt"
    plan.write_text("# a comment line\n" + "\n".join(lines) + "\n")
    env = dict(os.environ, TESSERA=str(fake), FAKE_LOG=str(tmp / "evals.log"), REPEAT="1")
    return plan, tmp / "ab", env


def run(plan: Path, out: Path, env: dict, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "scripts/tile_ab.sh", str(plan), str(out)], cwd=ROOT, env=dict(env, **extra),
                          capture_output=True, text=True)


def evals(env: dict) -> list[str]:
    p = Path(env["FAKE_LOG"])
    return p.read_text().split() if p.exists() else []


def test_max_seconds_stops_between_shapes_and_a_second_run_continues(tmp_path: Path) -> None:
    plan, out, env = setup(tmp_path, ["64x64x64 cfgA cfgB", "128x128x128 cfgA", "256x256x256 cfgC"])
    first = run(plan, out, env, MAX_SECONDS="1", FAKE_SLEEP="1.2")
    assert first.returncode == 5, first.stdout + first.stderr
    assert "2 plan lines left" in first.stdout and "run again" in first.stdout
    assert evals(env) == ["64x64x64"]
    assert "| 64x64x64 |" in (out / "summary.md").read_text()
    second = run(plan, out, env)
    assert second.returncode == 0, second.stdout + second.stderr
    # The first shape is not timed again; the summary holds every shape once.
    assert evals(env) == ["64x64x64", "128x128x128", "256x256x256"]
    assert "64x64x64: measured by an earlier run" in second.stdout
    md = (out / "summary.md").read_text()
    assert md.count("| 64x64x64 |") == 2 and md.count("| 128x128x128 |") == 1 and md.count("| 256x256x256 |") == 1
    assert "3 shapes timed" not in second.stdout and "2 shapes timed, 1 kept" in second.stdout


def test_a_shape_cut_in_its_process_leaves_no_record_and_is_timed_again(tmp_path: Path) -> None:
    plan, out, env = setup(tmp_path, ["64x64x64 cfgA", "96x96x96 cfgA"])
    cut = run(plan, out, env, FAKE_KILL="96x96x96")
    assert cut.returncode == -signal.SIGKILL or cut.returncode == 128 + signal.SIGKILL
    assert (out / "64x64x64.json").exists() and not (out / "96x96x96.json").exists()
    again = run(plan, out, env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert evals(env) == ["64x64x64", "96x96x96", "96x96x96"]
    recs = [json.loads(x) for x in (out / "96x96x96.json").read_text().splitlines()]
    assert [r["candidate_name"] for r in recs] == ["96x96x96_cfgA.cu"]


def test_a_changed_plan_line_is_timed_again(tmp_path: Path) -> None:
    plan, out, env = setup(tmp_path, ["64x64x64 cfgA"])
    assert run(plan, out, env).returncode == 0
    plan.write_text("64x64x64 cfgA cfgB\n")
    assert run(plan, out, env).returncode == 0
    assert evals(env) == ["64x64x64", "64x64x64"]
    # So is the same line at another number of passes.
    assert run(plan, out, env, REPEAT="2").returncode == 0
    assert evals(env) == ["64x64x64"] * 3


def test_kernels_from_a_changed_emitter_are_timed_again(tmp_path: Path) -> None:
    plan, out, env = setup(tmp_path, ["64x64x64 cfgA", "96x96x96 cfgB"])
    assert run(plan, out, env).returncode == 0
    # A new build emits afresh (gpu_check.sh deletes the kernels between calls): the same
    # sources keep the records, changed ones time the shape again.
    for f in out.glob("*.cu"):
        f.unlink()
    same = run(plan, out, env)
    assert same.returncode == 0 and "0 shapes timed, 2 kept" in same.stdout, same.stdout + same.stderr
    for f in out.glob("*.cu"):
        f.unlink()
    changed = run(plan, out, env, FAKE_EMITTER="v2")
    assert changed.returncode == 0 and "2 shapes timed, 0 kept" in changed.stdout, changed.stdout + changed.stderr
    assert evals(env) == ["64x64x64", "96x96x96"] * 2
