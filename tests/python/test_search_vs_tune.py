"""scripts/search_vs_tune.py: the search against the tune on one shape, as a
user runs them (#35's per-bucket bar), read from a search run and a tune's JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "search_vs_tune.py"
TASK = {"m": 256, "n": 2048, "k": 2048, "layout": "TN", "epilogue": "none"}


def step(n: int, name: str, move: str, us: float | None, speedup: float = 0, explore: bool = False) -> dict:
    ev = {"status": "ok", "cold": {"median_us": us}, "speedup": speedup} if us else {"status": "wrong_answer"}
    return {"step": n, "task": TASK, "candidate": {"name": name},
            "proposer_info": {"move": move, "explore": explore, "pool_rank": 0, "predicted_us": 11.0},
            "eval": ev, "reward": {"speedup_vs_baseline": speedup if us else None}}


def search_run(folder: Path, records: list[dict], torn: bool = False) -> Path:
    folder.mkdir()
    text = "".join(json.dumps(r) + "\n" for r in records)
    (folder / "trajectories.jsonl").write_text(text + ('{"step": 9, "cand' if torn else ""))
    return folder


def tune_json(path: Path, name: str, speedup: float, us: float, rank: int, task: dict = TASK,
              move: str | None = "refine") -> Path:
    confirmed = {"name": name, "result": {"status": "ok", "speedup": speedup, "cold": {"median_us": us}}}
    if move:
        confirmed["move"] = move
    doc = {"tasks": [{"task": task, "evaluated": 24, "model": {"winner_rank": rank}, "confirmed": confirmed}]}
    path.write_text(json.dumps(doc))
    return path


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=check)


def test_the_search_best_its_step_and_moves_against_the_tune_winner(tmp_path: Path) -> None:
    run_dir = search_run(tmp_path / "s", [step(0, "a", "model", 7.68, 0.946), step(1, "b", "neighbour", None),
                                          step(2, "c", "neighbour", 7.90, 0.92, explore=True),
                                          step(3, "d", "crossover", 7.70, 0.944)], torn=True)
    tune = tune_json(tmp_path / "t.json", "w", 0.974, 7.49, 14)
    out = run(str(run_dir), str(tune), "--steps", str(tmp_path / "steps.md")).stdout
    row = out.splitlines()[-1]
    assert row.startswith("| 256x2048x2048 | 0.946x (7.68 µs) | 0 (model) |"), row
    assert "crossover 1, model 1, neighbour 2; 1 explored" in row
    assert "0.974x (7.49 µs) | refine; #14 | no |" in row
    assert "search 0.975x the tune's kernel |" in row  # 7.49 / 7.68
    steps = (tmp_path / "steps.md").read_text()
    assert "| 1 | neighbour | 0 |  | 11.00 | wrong_answer |" in steps
    assert "| 2 | neighbour | 0 | yes | 11.00 | 7.90 | 0.920x | c |" in steps


def test_the_tune_winner_measured_by_the_search_and_the_search_ahead(tmp_path: Path) -> None:
    run_dir = search_run(tmp_path / "s", [step(0, "w", "model", 7.40, 0.98)])
    out = run(str(run_dir), str(tune_json(tmp_path / "t.json", "w", 0.974, 7.49, 1, move="model"))).stdout
    assert "| model; #1 | yes | search 1.012x the tune's kernel (search ahead) |" in out
    # A tune written before the tuner recorded its moves reads as unknown, not as an error.
    old = run(str(run_dir), str(tune_json(tmp_path / "old.json", "w", 0.974, 7.49, 1, move=None))).stdout
    assert "| unknown; #1 | yes |" in old


def test_mismatched_or_missing_inputs_say_what_is_wrong(tmp_path: Path) -> None:
    run_dir = search_run(tmp_path / "s", [step(0, "a", "model", 7.68, 0.946)])
    other = dict(TASK, m=512)
    bad = run(str(run_dir), str(tune_json(tmp_path / "t.json", "w", 1, 1, 1, other)), check=False)
    assert bad.returncode != 0 and "is 256x2048x2048 but" in bad.stderr
    missing = run(str(tmp_path), str(tmp_path / "t.json"), check=False)
    assert missing.returncode != 0 and "no trajectories.jsonl" in missing.stderr
    (tmp_path / "x.json").write_text("{")
    broken = run(str(run_dir), str(tmp_path / "x.json"), check=False)
    assert broken.returncode != 0 and "not the JSON of `tessera tile tune --json`" in broken.stderr
