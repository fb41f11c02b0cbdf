"""Post-training data the trainers load: `tessera export --format sft|dpo|rl` files
read by datasets.load_dataset("json", ...), then one optimizer step of TRL's
SFTTrainer and DPOTrainer on a tiny random GPT-2.

The run folder comes from a compile-only `tessera search` (no GPU here). SFT and
DPO keep only timed steps, and a compile-only run times nothing, so the test
writes measured times into its trajectories first: planted figures, standing in
for a GPU's, so that `tessera export` selects and pairs them as it would a real
run's. The export and the loading are the real code."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import REPO
from trainer_kit import need, tiny_model, tokenizer

BINARY = REPO / "build" / "bin" / "tessera"


def planted_times(record: dict, speedups: dict[int, float]) -> dict:
    """The record as if a GPU had timed it: a speedup per step, improvement over the parent."""
    step = record["step"]
    record["reward"]["timed"] = True
    record["eval"]["speedup"] = speedups[step]
    record["eval"].setdefault("cold", {})["rel_spread"] = 0.01
    parent = record["parents"][0] if record["parents"] else None
    record["reward"]["improvement_over_parent"] = speedups[step] - (speedups[parent] if parent is not None else 0.0)
    return record


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from tessera import _resources

    binary = _resources.binary_path() if _resources.binary_path().is_file() else BINARY
    run = tmp_path_factory.mktemp("export") / "run"
    search = subprocess.run([str(binary), "search", "--shape", "256x256x256", "--compile-only", "--budget-evals", "12",
                             "--out", str(run), "--quiet"], capture_output=True, text=True, timeout=600)
    assert search.returncode == 0, search.stderr[-2000:]
    path = run / "trajectories.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    speedups = {r["step"]: 0.5 + 0.07 * ((r["step"] * 5) % 12) for r in records}
    path.write_text("".join(json.dumps(planted_times(r, speedups)) + "\n" for r in records))
    files = {}
    for fmt in ("sft", "dpo", "rl"):
        out = subprocess.run([str(binary), "export", str(run), "--format", fmt], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        files[fmt] = run / "export" / f"{fmt}.jsonl"
        assert files[fmt].stat().st_size > 0, out.stdout
    return files


def load(path):
    datasets = need("datasets")
    return datasets.load_dataset("json", data_files=str(path), split="train")


def test_every_export_loads_with_datasets(exported):
    sft, dpo, rl = load(exported["sft"]), load(exported["dpo"]), load(exported["rl"])
    assert len(sft) > 0 and sft[0]["messages"][-1]["role"] == "assistant"
    assert len(dpo) > 0 and {"prompt", "chosen", "rejected"} <= set(dpo.column_names)
    assert all(row["chosen_speedup"] > row["rejected_speedup"] for row in dpo)
    assert len(rl) == 12 and {"prompt", "completion", "reward", "status"} <= set(rl.column_names)


def test_sft_trainer_takes_one_step(exported, tmp_path):
    need("trl")
    from trl import SFTConfig, SFTTrainer

    args = SFTConfig(output_dir=str(tmp_path), use_cpu=True, report_to="none", save_strategy="no", max_steps=1,
                     per_device_train_batch_size=2, max_length=512, logging_steps=1, dataloader_num_workers=0)
    trainer = SFTTrainer(model=tiny_model(), args=args, train_dataset=load(exported["sft"]), processing_class=tokenizer())
    trainer.train()
    assert trainer.state.global_step == 1 and trainer.state.log_history[0]["loss"] > 0


def test_dpo_trainer_takes_one_step(exported, tmp_path):
    need("trl")
    from trl import DPOConfig, DPOTrainer

    args = DPOConfig(output_dir=str(tmp_path), use_cpu=True, report_to="none", save_strategy="no", max_steps=1,
                     per_device_train_batch_size=2, max_length=512, logging_steps=1, dataloader_num_workers=0)
    # The reference model is the policy at its start (same seed): TRL would load it by name from a hub.
    trainer = DPOTrainer(model=tiny_model(), ref_model=tiny_model(), args=args, train_dataset=load(exported["dpo"]),
                         processing_class=tokenizer())
    trainer.train()
    assert trainer.state.global_step == 1 and trainer.state.log_history[0]["loss"] > 0
