"""datasets/generate_llm_shapes.py: each LLM set is what its command writes, byte for byte, and the third
held-out set shares no weight (N x K) with any other set, task file or kept sweep in datasets/ (its own
sweeps, rows files named h200_llm_heldout3_*, judge models and are learned by none)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

DATASETS = Path(__file__).resolve().parents[2] / "datasets"
SCRIPT = DATASETS / "generate_llm_shapes.py"


@pytest.mark.parametrize("flag,name", [("", "llm_shapes"), ("--heldout", "llm_shapes_heldout"),
                                       ("--heldout2", "llm_shapes_heldout2"),
                                       ("--heldout3", "llm_shapes_heldout3")])
def test_each_set_is_what_its_command_writes(tmp_path: Path, flag: str, name: str) -> None:
    out = tmp_path / f"{name}.json"
    subprocess.run([sys.executable, str(SCRIPT), *([flag] if flag else []), "--out", str(out)], check=True,
                   capture_output=True)
    assert out.read_bytes() == (DATASETS / f"{name}.json").read_bytes()


def families_of_tasks(path: Path) -> set[tuple[int, int]]:
    doc = json.loads(path.read_text())
    tasks = doc.get("tasks", []) if isinstance(doc, dict) else doc
    return {(t["n"], t["k"]) for t in tasks if isinstance(t, dict) and "n" in t}


def test_the_third_held_out_set_has_no_weight_anything_else_in_datasets_has() -> None:
    held = families_of_tasks(DATASETS / "llm_shapes_heldout3.json")
    assert len(json.loads((DATASETS / "llm_shapes_heldout3.json").read_text())["tasks"]) >= 60
    seen: dict[tuple[int, int], str] = {}
    for f in sorted(DATASETS.glob("*.json")):
        if f.name != "llm_shapes_heldout3.json":
            seen.update({fam: f.name for fam in families_of_tasks(f)})
    rows = sorted(f for f in (DATASETS / "cost_rows").glob("*.jsonl.gz") if "heldout3" not in f.name)
    assert rows, "the kept sweeps are part of what the set is held out from"
    for f in rows:
        with gzip.open(f, "rt") as lines:
            seen.update({(r["task"]["n"], r["task"]["k"]): f.name for r in map(json.loads, lines)})
    shared = {fam: seen[fam] for fam in held if fam in seen}
    assert not shared, f"weights of llm_shapes_heldout3.json already in datasets/: {shared}"
