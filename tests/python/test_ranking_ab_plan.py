"""scripts/ranking_ab_plan.py: a tile_ab.sh plan from two binaries' rankings,
one line per task whose first configs the change alters."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ranking_ab_plan.py"


def fake_tessera(path: Path, rankings: dict[str, list[str]],
                 by_model: dict[str, dict[str, list[str]]] | None = None) -> str:
    """A stand-in for `tessera tile list --model --json`: the ranking given for each shape, or, where
    TESSERA_COST_MODEL names a file by_model keys by its name, that model's ranking."""
    path.write_text(f"""#!{sys.executable}
import json, os, sys
rankings = {json.dumps(rankings)}
by_model = {json.dumps(by_model or {})}
rankings = by_model.get(os.path.basename(os.environ.get("TESSERA_COST_MODEL", "")), rankings)
args = sys.argv[1:]
assert args[:2] == ["tile", "list"] and "--model" in args and "--json" in args, args
shape = args[args.index("--shape") + 1]
limit = int(args[args.index("--limit") + 1])
if shape not in rankings:
    print("error: no such shape", file=sys.stderr)
    sys.exit(2)
print(json.dumps([{{"name": n}} for n in rankings[shape][:limit]]))
""")
    path.chmod(0o755)
    return str(path)


def tasks(path: Path, *specs: tuple[str, str]) -> str:
    items = []
    for shape, epilogue in specs:
        m, n, k = (int(x) for x in shape.split("x"))
        items.append({"op": "hgemm", "m": m, "n": n, "k": k, "layout": "TN", "acc": "f32", "epilogue": epilogue})
    path.write_text(json.dumps({"name": "t", "tasks": items}))
    return str(path)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_a_line_for_each_task_the_change_brings_a_config_forward(tmp_path: Path) -> None:
    before = fake_tessera(tmp_path / "before", {
        "1x2x3": ["a", "b", "c", "d"],      # unchanged
        "4x5x6": ["a", "b", "c", "d"],      # e enters at #2
        "7x8x9": ["a", "b", "c", "d"],      # only below the first 3
        "9x9x9": ["a", "b", "c", "d"]})
    after = fake_tessera(tmp_path / "after", {
        "1x2x3": ["a", "b", "c", "d"],
        "4x5x6": ["a", "e", "b", "c"],
        "7x8x9": ["a", "b", "c", "x"],
        "9x9x9": ["b", "a", "c", "d"]})     # reordered, nothing new in the first 3
    t = tasks(tmp_path / "t.json", ("1x2x3", "none"), ("4x5x6", "none"), ("7x8x9", "none"), ("9x9x9", "none"),
              ("4x5x6", "bias_gelu"))
    done = run(t, "--before", before, "--after", after, "--top", "4", "--enter", "3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("# ranking A/B")
    # The former #1 first (the reference), the former #2, then what the change brings into its first 3.
    # Each line after a comment with both orders' first 3 (tile_ab.sh skips it; ranking_ab_report.py reads it).
    assert lines[1:] == ["# rank 4x5x6 before=a,b,c after=a,e,b", "4x5x6 a b e"]
    assert "3 tasks change their first 4 configs (1 their first 3" in done.stderr
    assert "1 do not" in done.stderr and "1 of another layout or epilogue left out" in done.stderr


def test_a_failing_binary_is_a_clear_error(tmp_path: Path) -> None:
    before = fake_tessera(tmp_path / "before", {})
    after = fake_tessera(tmp_path / "after", {})
    done = run(tasks(tmp_path / "t.json", ("1x2x3", "none")), "--before", before, "--after", after)
    assert done.returncode != 0
    assert "failed (2)" in done.stderr and "no such shape" in done.stderr
    done = run(str(tmp_path / "t.json"), "--before", before, "--after", after, "--enter", "0")
    assert done.returncode != 0 and "must be >= 1" in done.stderr
    # A failure past the first tasks keeps the lines planned before it on stdout.
    before = fake_tessera(tmp_path / "before", {"4x5x6": ["a", "b"]})
    after = fake_tessera(tmp_path / "after", {"4x5x6": ["c", "a"]})
    done = run(tasks(tmp_path / "t2.json", ("4x5x6", "none"), ("1x2x3", "none")), "--before", before, "--after", after)
    assert done.returncode != 0 and "no such shape" in done.stderr
    assert done.stdout.splitlines()[1:] == ["# rank 4x5x6 before=a,b after=c,a", "4x5x6 a b c"]
    plain = tmp_path / "not_executable"
    plain.write_text("")
    done = run(str(tmp_path / "t.json"), "--before", str(plain), "--after", after)
    assert done.returncode != 0 and f"{plain}: cannot be run: Permission denied" in done.stderr
    assert "Traceback" not in done.stderr


def test_two_model_files_with_one_binary(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text("{}")
    new.write_text("{}")
    binary = fake_tessera(tmp_path / "tessera", {}, {"old.json": {"1x2x3": ["o1", "o2"]},
                                                    "new.json": {"1x2x3": ["n1", "o1"]}})
    t = tasks(tmp_path / "t.json", ("1x2x3", "none"))
    done = run(t, "--before", binary, "--after", binary, "--before-model", str(old),
               "--after-model", str(new), "--top", "1", "--enter", "1")
    assert done.returncode == 0, done.stderr
    # --top 1 lists one config a side, so the line is the two first picks.
    assert done.stdout.splitlines()[1:] == ["# rank 1x2x3 before=o1 after=n1", "1x2x3 o1 n1"]
    # The same model on both sides: nothing to time.
    done = run(t, "--before", binary, "--after", binary, "--before-model", str(old),
               "--after-model", str(old), "--top", "1", "--enter", "1")
    assert done.returncode == 0 and not [x for x in done.stdout.splitlines()[1:] if x.strip()]
    assert "1 do not" in done.stderr
    done = run(t, "--before", binary, "--after", binary, "--after-model", str(tmp_path / "nope.json"))
    assert done.returncode != 0 and "no such model file" in done.stderr
