#!/usr/bin/env python3
"""Writes a recorded LLM run for `tessera search --proposers replay --replay FILE`.

Each record is what the LLM proposer logs for one step (docs/trajectory-schema.md):
the chat messages and the action taken from the reply (a full kernel source).
The kernels are the shipped examples, one tile-compiler kernel and one broken
reply, so a replayed run exercises ok, slow and compile-error outcomes.

  scripts/make_replay_demo.py OUT.jsonl TILE_KERNEL.cu
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def record(step, note, source):
    reply = f"{note}\n\n```cuda\n{source}\n```"
    return {"step": step,
            "messages": [{"role": "user", "content": f"Improve this HGEMM kernel (fp16 in/out, fp32 accumulate). Step {step}."},
                         {"role": "assistant", "content": reply}],
            "action": {"kind": "full_source", "content": source}}


def main(out, tile_kernel):
    naive = (ROOT / "examples/hgemm_naive.cu").read_text()
    wmma = (ROOT / "examples/hgemm_wmma.cu").read_text()
    tile = Path(tile_kernel).read_text()
    replies = [("A straightforward kernel first.", naive),
               ("Use the tensor cores through WMMA.", wmma),
               ("This reply has a syntax error.", naive + "\nint broken = ;\n"),
               ("A warp-specialised wgmma + TMA pipeline.", tile)]
    with open(out, "w") as f:
        for step, (note, src) in enumerate(replies):
            f.write(json.dumps(record(step, note, src)) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
