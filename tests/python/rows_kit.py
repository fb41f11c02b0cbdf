"""Rows files written by hand for the tests of the scripts that read them (knob_pairs.py,
rows_agreement.py): a row as `tessera tile model rows` writes it, and a file of rows, gzipped
when its name ends in .gz as datasets/cost_rows keeps them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path


def row(config: str, us: float, m: int = 4096, n: int = 4096, k: int = 4096, epilogue: str = "none") -> dict:
    return {"config": config, "cold_us": us, "device_kind": "h200",
            "task": {"m": m, "n": n, "k": k, "layout": "TN", "epilogue": epilogue, "op": "hgemm", "acc": "f32"}}


def write(path: Path, rows: list[dict]) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if path.suffix == ".gz":
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return path
