#!/usr/bin/env python3
"""Generates datasets/llm_shapes.json: the GEMMs of LLM layers as people run them.

Each task is one linear layer, y = x W^T: the activations x are A (M x K, M =
tokens), the weight W is B (N x K, layout TN), fp16 in and out, fp32
accumulation. Layers, from each model's public config.json (Hugging Face):

  qkv      fused Q, K, V projection   N = (heads + 2 kv_heads) * head_dim, K = hidden
  o        attention output           N = hidden, K = heads * head_dim
  gate_up  fused gate and up (SwiGLU) N = 2 * intermediate, K = hidden
  down     MLP down projection        N = hidden, K = intermediate
  lm_head  vocabulary projection      N = vocab, K = hidden

Mixture-of-experts models contribute their expert GEMMs (intermediate = the
expert's), with M = the tokens one expert receives under even routing,
ceil(tokens * experts_per_token / experts). DeepSeek's multi-head latent
attention has no plain QKV: its "qkv" is the fused down-projection
(q_a_proj + kv_a_proj_with_mqa: N = q_lora_rank + kv_lora_rank +
qk_rope_head_dim) and its "o" takes heads * v_head_dim.

The harness accepts dimensions up to 65536 (core/task.hpp): a
vocabulary above that is taken as its tensor-parallel shard (vocab / 2),
which is what one GPU of a vocab-parallel LM head computes.

Token counts run from 1 to 16384: decode batches (1, 2, 7, 8, 16), small and
odd prefills (33, 100, 127, 257, 333, 511, 777), and long ones (1024, 1537,
2048, 3001, 4096, 6143, 8192, 16384); many are not multiples of 16 or 64 on
purpose. Shapes above MAX_FLOP (2^41) are left out: the harness verifies every
config against an fp64 reference, which would take most of a tune's time.

Stratification: the deduplicated universe is sorted by FLOPs (2*M*N*K) and
cut into BINS bins of equal width in log2(FLOPs); each bin gives PER_BIN
shapes, picked greedily for coverage (the model family, layer and token class
least represented so far win; ties go to the shape nearest the bin's
log-centre). The issue's named shapes are always kept (FORCED). Re-running
the script reproduces the file byte for byte.

--heldout writes datasets/llm_shapes_heldout.json instead: the same layers of
ten other public models (HELDOUT_MODELS) at the token counts HELDOUT_TOKENS,
without any weight (N x K family) of the models above or of the shapes the
shipped cost model was trained on (datasets/grid1000_model_train.json), 9 per
bin: shapes neither the cost model nor its hand-set factors were fitted to,
for judging them as a new user's models would.

--heldout2 writes datasets/llm_shapes_heldout2.json: the same from ten more
models (HELDOUT2_MODELS), without any weight of both sets' models, of the
cost model's training shapes or of grid1000_heldout100.json: shapes none of
the H200 rows kept in datasets/cost_rows came from, for judging a model
trained on them.

--heldout3 writes datasets/llm_shapes_heldout3.json: the same from ten more
models (HELDOUT3_MODELS), without any weight of the three sets above, of any
task file in datasets/ or of any shape in datasets/cost_rows: the H200 model
shipped on 2026-12-03 learned every kept sweep but llm_shapes_heldout2.json's,
so this set is what judges the model trained after it.

usage: python3 datasets/generate_llm_shapes.py [--heldout | --heldout2 | --heldout3] [--out FILE]
"""
import argparse
import gzip
import json
import math
import os

MAX_DIM = 65536
MAX_FLOP = 2**41
BINS = 8
PER_BIN = 8
TOKENS = [1, 2, 7, 8, 16, 33, 100, 127, 257, 333, 511, 777, 1024, 1537, 2048, 3001, 4096, 6143, 8192, 16384]

# name: hidden, intermediate, heads, kv_heads, head_dim, vocab (+ MoE / MLA fields); held_out: a model of
# llm_shapes_heldout.json (--heldout) instead of llm_shapes.json.
MODELS = {
    "llama3-8b": dict(hidden=4096, inter=14336, heads=32, kv=8, head_dim=128, vocab=128256),
    "llama3-70b": dict(hidden=8192, inter=28672, heads=64, kv=8, head_dim=128, vocab=128256),
    "qwen2.5-7b": dict(hidden=3584, inter=18944, heads=28, kv=4, head_dim=128, vocab=152064),
    "qwen2.5-72b": dict(hidden=8192, inter=29568, heads=64, kv=8, head_dim=128, vocab=152064),
    "mistral-7b-v0.3": dict(hidden=4096, inter=14336, heads=32, kv=8, head_dim=128, vocab=32768),
    # Mixtral 8x7B: the attention is Mistral 7B's; the MLP is 8 experts, 2 per token.
    "mixtral-8x7b": dict(hidden=4096, inter=14336, heads=32, kv=8, head_dim=128, vocab=32000, experts=8, top_k=2),
    # DeepSeek-V2 (236B) and V3 (671B): MLA attention, fine-grained experts.
    "deepseek-v2": dict(hidden=5120, inter=1536, heads=128, vocab=102400, experts=160, top_k=6, q_lora=1536,
                        kv_lora=512, rope=64, v_head=128),
    "deepseek-v3": dict(hidden=7168, inter=2048, heads=128, vocab=129280, experts=256, top_k=8, q_lora=1536,
                        kv_lora=512, rope=64, v_head=128),
    # Held out: models of none of the families above, from their public config.json.
    "llama3.2-3b": dict(hidden=3072, inter=8192, heads=24, kv=8, head_dim=128, vocab=128256, held_out=True),
    "phi3-mini": dict(hidden=3072, inter=8192, heads=32, kv=32, head_dim=96, vocab=32064, held_out=True),
    "phi3-medium": dict(hidden=5120, inter=17920, heads=40, kv=10, head_dim=128, vocab=32064, held_out=True),
    "gemma2-2b": dict(hidden=2304, inter=9216, heads=8, kv=4, head_dim=256, vocab=256000, held_out=True),
    "gemma2-9b": dict(hidden=3584, inter=14336, heads=16, kv=8, head_dim=256, vocab=256000, held_out=True),
    "qwen2.5-14b": dict(hidden=5120, inter=13824, heads=40, kv=8, head_dim=128, vocab=152064, held_out=True),
    "qwen2.5-32b": dict(hidden=5120, inter=27648, heads=40, kv=8, head_dim=128, vocab=152064, held_out=True),
    "mistral-nemo-12b": dict(hidden=5120, inter=14336, heads=32, kv=8, head_dim=128, vocab=131072, held_out=True),
    # Mixtral 8x22B: 8 experts, 2 per token; Qwen3-30B-A3B: 128 experts of 768, 8 per token.
    "mixtral-8x22b": dict(hidden=6144, inter=16384, heads=48, kv=8, head_dim=128, vocab=32768, experts=8, top_k=2,
                          held_out=True),
    "qwen3-30b-a3b": dict(hidden=2048, inter=768, heads=32, kv=4, head_dim=128, vocab=151936, experts=128, top_k=8,
                          held_out=True),
    # Second held-out set (--heldout2, 2026-11-28): ten more models, for judging what was trained on the sweeps
    # of the two sets above. Granite's vocabulary (49155) is odd on purpose: an N no tile divides.
    "llama3.1-405b": dict(hidden=16384, inter=53248, heads=128, kv=8, head_dim=128, vocab=128256, held_out=2),
    "yi1.5-34b": dict(hidden=7168, inter=20480, heads=56, kv=8, head_dim=128, vocab=64000, held_out=2),
    "gemma2-27b": dict(hidden=4608, inter=36864, heads=32, kv=16, head_dim=128, vocab=256000, held_out=2),
    "granite3-8b": dict(hidden=4096, inter=12800, heads=32, kv=8, head_dim=128, vocab=49155, held_out=2),
    "command-r-35b": dict(hidden=8192, inter=22528, heads=64, kv=64, head_dim=128, vocab=256000, held_out=2),
    "mistral-small-24b": dict(hidden=5120, inter=32768, heads=32, kv=8, head_dim=128, vocab=131072, held_out=2),
    "qwen3-8b": dict(hidden=4096, inter=12288, heads=32, kv=8, head_dim=128, vocab=151936, held_out=2),
    "glm4-9b": dict(hidden=4096, inter=13696, heads=32, kv=2, head_dim=128, vocab=151552, held_out=2),
    # DBRX: 16 experts of 10752, 4 per token; Qwen3-235B-A22B: 128 experts of 1536, 8 per token.
    "dbrx": dict(hidden=6144, inter=10752, heads=48, kv=8, head_dim=128, vocab=100352, experts=16, top_k=4,
                 held_out=2),
    "qwen3-235b-a22b": dict(hidden=4096, inter=1536, heads=64, kv=4, head_dim=128, vocab=151936, experts=128,
                            top_k=8, held_out=2),
    # Third held-out set (--heldout3, 2026-12-03): ten more, for judging a model trained on every kept sweep.
    # Gemma 3's vocabulary (262208) is over twice MAX_DIM, so it has no LM head here; OLMoE has 64 experts of
    # 1024, 8 per token.
    "llama2-7b": dict(hidden=4096, inter=11008, heads=32, kv=32, head_dim=128, vocab=32000, held_out=3),
    "llama2-13b": dict(hidden=5120, inter=13824, heads=40, kv=40, head_dim=128, vocab=32000, held_out=3),
    "mistral-large-2": dict(hidden=12288, inter=28672, heads=96, kv=8, head_dim=128, vocab=32768, held_out=3),
    "qwen2.5-0.5b": dict(hidden=896, inter=4864, heads=14, kv=2, head_dim=64, vocab=151936, held_out=3),
    "qwen2.5-1.5b": dict(hidden=1536, inter=8960, heads=12, kv=2, head_dim=128, vocab=151936, held_out=3),
    "gemma3-12b": dict(hidden=3840, inter=15360, heads=16, kv=8, head_dim=256, vocab=262208, held_out=3),
    "gemma3-27b": dict(hidden=5376, inter=21504, heads=32, kv=16, head_dim=128, vocab=262208, held_out=3),
    "deepseek-llm-67b": dict(hidden=8192, inter=22016, heads=64, kv=8, head_dim=128, vocab=102400, held_out=3),
    "smollm2-1.7b": dict(hidden=2048, inter=8192, heads=32, kv=32, head_dim=64, vocab=49152, held_out=3),
    "olmoe-1b-7b": dict(hidden=2048, inter=1024, heads=16, kv=16, head_dim=128, vocab=50304, experts=64, top_k=8,
                        held_out=3),
}
MAIN_MODELS = {name: cfg for name, cfg in MODELS.items() if not cfg.get("held_out")}
HELDOUT_MODELS = {name: cfg for name, cfg in MODELS.items() if cfg.get("held_out") is True}
HELDOUT2_MODELS = {name: cfg for name, cfg in MODELS.items() if cfg.get("held_out") == 2}
HELDOUT3_MODELS = {name: cfg for name, cfg in MODELS.items() if cfg.get("held_out") == 3}

# The shapes issue 18 names (M = 100 on a ~19k K, M just past 128 and 1536, decode).
FORCED = [(100, 3584, 18944), (257, 6144, 4096), (1537, 4096, 4096), (1, 4096, 14336), (7, 6144, 4096)]

# The token counts of the held-out measurement (decode, odd prefills, M past a tile multiple).
HELDOUT_TOKENS = [1, 7, 33, 100, 257, 600, 1000, 1537, 3000, 5000]
HELDOUT_PER_BIN = 9


def layers(cfg):
    """(layer, N, K, moe) of one transformer block plus the LM head."""
    h = cfg["hidden"]
    if "q_lora" in cfg:
        qkv = (cfg["q_lora"] + cfg["kv_lora"] + cfg["rope"], h)
        o = (h, cfg["heads"] * cfg["v_head"])
    else:
        qkv = ((cfg["heads"] + 2 * cfg["kv"]) * cfg["head_dim"], h)
        o = (h, cfg["heads"] * cfg["head_dim"])
    vocab = cfg["vocab"] if cfg["vocab"] <= MAX_DIM else cfg["vocab"] // 2
    moe = "experts" in cfg
    return [("qkv", *qkv, False), ("o", *o, False), ("gate_up", 2 * cfg["inter"], h, moe),
            ("down", h, cfg["inter"], moe), ("lm_head", vocab, h, False)]


def token_class(m):
    if m <= 16:
        return "decode"
    return "aligned" if m % 64 == 0 else "odd"


def universe(models, tokens_list, excluded=frozenset()):
    """(m, n, k) -> its sources, every model x layer x token count; none whose (n, k) is excluded."""
    shapes = {}
    for model, cfg in models.items():
        for layer, n, k, moe in layers(cfg):
            if (n, k) in excluded:
                continue
            for tokens in tokens_list:
                m = math.ceil(tokens * cfg["top_k"] / cfg["experts"]) if moe else tokens
                if max(m, n, k) > MAX_DIM or 2 * m * n * k > MAX_FLOP:
                    continue
                what = f"{model} {layer}" + (f" (one expert, {tokens} tokens)" if moe else f" ({tokens} tokens)")
                shapes.setdefault((m, n, k), []).append(dict(model=model, layer=layer, tokens=tokens, text=what))
    return shapes


def stratified(shapes, forced, per_bin):
    keys = sorted(shapes, key=lambda s: (2 * s[0] * s[1] * s[2], s))
    lo, hi = math.log2(2 * math.prod(keys[0])), math.log2(2 * math.prod(keys[-1]))
    width = (hi - lo) / BINS
    chosen = [s for s in forced if s in shapes]
    seen = {"model": {}, "layer": {}, "class": {}}

    def note(s):
        src = shapes[s][0]
        for key, val in (("model", src["model"]), ("layer", src["layer"]), ("class", token_class(s[0]))):
            seen[key][val] = seen[key].get(val, 0) + 1

    for s in chosen:
        note(s)
    for b in range(BINS):
        lo_b, hi_b = lo + b * width, lo + (b + 1) * width
        members = [s for s in keys if lo_b <= math.log2(2 * math.prod(s)) < hi_b or (b == BINS - 1 and s == keys[-1])]
        centre = (lo_b + hi_b) / 2
        picked = sum(1 for s in chosen if s in members)
        while picked < per_bin:
            pool = [s for s in members if s not in chosen]
            if not pool:
                break

            def score(s):
                src = shapes[s][0]
                rarity = (seen["model"].get(src["model"], 0) + seen["layer"].get(src["layer"], 0) +
                          seen["class"].get(token_class(s[0]), 0))
                return (rarity, abs(math.log2(2 * math.prod(s)) - centre), s)

            best = min(pool, key=score)
            chosen.append(best)
            note(best)
            picked += 1
    return sorted(chosen, key=lambda s: (2 * math.prod(s), s)), lo, hi, width


# Rough seconds per evaluation on the H200, for the run-time estimate: the
# small grid's 216 s for 1152 evaluations (0.19 s each, H100) plus the fp64
# verification reference (5 trials, about 5e12 multiply-adds per second) and
# the cold timing (at least 10 samples of the kernel at ~600 TFLOP/s).
def seconds_per_eval(m, n, k):
    macs = m * n * k
    return 0.19 + 5 * macs / 5e12 + 10 * 2 * macs / 600e12


def trained_families(here):
    """The (n, k) of every weight the main set's models have and of the shapes the shipped cost model
    was trained on: what a held-out set leaves out."""
    out = {(n, k) for cfg in MAIN_MODELS.values() for _, n, k, _ in layers(cfg)}
    with open(os.path.join(here, "grid1000_model_train.json")) as f:
        out |= {(t["n"], t["k"]) for t in json.load(f)["tasks"]}
    return out


def heldout2_excluded(here):
    """What the second held-out set leaves out: trained_families, the first held-out set's models' weights, and
    the families of the held-out grid shapes (the H200 sweeps of datasets/cost_rows measured both sets)."""
    out = trained_families(here) | {(n, k) for cfg in HELDOUT_MODELS.values() for _, n, k, _ in layers(cfg)}
    with open(os.path.join(here, "grid1000_heldout100.json")) as f:
        out |= {(t["n"], t["k"]) for t in json.load(f)["tasks"]}
    return out


def swept_families(here):
    """What the third held-out set leaves out: the weight of every model of the sets above, of every shape of a
    task file in datasets/, and of every shape a kept sweep of another set measured (datasets/cost_rows/*.jsonl.gz)."""
    out = {(n, k) for cfg in MODELS.values() if cfg.get("held_out") != 3 for _, n, k, _ in layers(cfg)}
    for name in sorted(os.listdir(here)):
        if name.endswith(".json") and not name.startswith("llm_shapes_heldout3"):
            with open(os.path.join(here, name)) as f:
                doc = json.load(f)
            tasks = doc.get("tasks", []) if isinstance(doc, dict) else doc
            out |= {(t["n"], t["k"]) for t in tasks if isinstance(t, dict) and "n" in t}
    rows = os.path.join(here, "cost_rows")
    for name in sorted(os.listdir(rows)):
        if name.endswith(".jsonl.gz") and "heldout3" not in name:  # its own sweeps are not what it is held out from
            with gzip.open(os.path.join(rows, name), "rt") as f:
                out |= {(r["task"]["n"], r["task"]["k"]) for r in map(json.loads, f)}
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heldout", action="store_true", help="the held-out set (HELDOUT_MODELS) instead")
    ap.add_argument("--heldout2", action="store_true",
                    help="the second held-out set (HELDOUT2_MODELS): no weight of either set above")
    ap.add_argument("--heldout3", action="store_true",
                    help="the third held-out set (HELDOUT3_MODELS): no weight of any set or kept sweep in datasets/")
    ap.add_argument("--out", help="default: datasets/llm_shapes.json, llm_shapes_heldout.json with --heldout, "
                                  "llm_shapes_heldout2.json with --heldout2, llm_shapes_heldout3.json with --heldout3")
    a = ap.parse_args()
    if a.heldout3:
        name, models, tokens = "llm_shapes_heldout3", HELDOUT3_MODELS, HELDOUT_TOKENS
        shapes = universe(models, tokens, swept_families(here))
        chosen, lo, hi, width = stratified(shapes, [], HELDOUT_PER_BIN)
        what = (f"held out three times: no weight of any model of the sets before it, of any task file in datasets/ "
                f"or of any shape a kept sweep (datasets/cost_rows) measured; {len(models)} other public models at "
                f"{tokens[0]} to {tokens[-1]} tokens")
    elif a.heldout2:
        name, models, tokens = "llm_shapes_heldout2", HELDOUT2_MODELS, HELDOUT_TOKENS
        shapes = universe(models, tokens, heldout2_excluded(here))
        chosen, lo, hi, width = stratified(shapes, [], HELDOUT_PER_BIN)
        what = (f"held out twice: no weight of llm_shapes.json's or llm_shapes_heldout.json's models, of the cost "
                f"model's training shapes or of grid1000_heldout100.json; {len(models)} other public models at "
                f"{tokens[0]} to {tokens[-1]} tokens")
    elif a.heldout:
        name, models, tokens = "llm_shapes_heldout", HELDOUT_MODELS, HELDOUT_TOKENS
        shapes = universe(models, tokens, trained_families(here))
        chosen, lo, hi, width = stratified(shapes, [], HELDOUT_PER_BIN)
        what = (f"held out: no weight of llm_shapes.json's models nor of the cost model's training shapes; "
                f"{len(models)} other public models at {tokens[0]} to {tokens[-1]} tokens")
    else:
        name, models, tokens = "llm_shapes", MAIN_MODELS, TOKENS
        shapes = universe(models, tokens)
        chosen, lo, hi, width = stratified(shapes, FORCED, PER_BIN)
        what = f"{len(models)} public models at 1 to 16384 tokens"
    a.out = a.out or os.path.join(here, name + ".json")
    doc = {
        "name": name,
        "description": (f"{len(chosen)} GEMMs of LLM layers (QKV, attention output, gate/up, down, LM head) of "
                        f"{what}, TN (weight = B), fp32 accumulation; "
                        f"FLOP-stratified in {BINS} log2 bins from 2^{lo:.1f} to 2^{hi:.1f} FLOP "
                        "(datasets/generate_llm_shapes.py)."),
        "tasks": [{"op": "hgemm", "m": m, "n": n, "k": k, "layout": "TN", "acc": "f32", "epilogue": "none"}
                  for m, n, k in chosen],
        "sources": {f"{m}x{n}x{k}": [s["text"] for s in shapes[(m, n, k)]] for m, n, k in chosen},
    }
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    est24 = sum(27 * seconds_per_eval(*s) for s in chosen)
    est8 = sum(11 * seconds_per_eval(*s) for s in chosen)
    print(f"wrote {a.out}: {len(chosen)} tasks of a {len(shapes)}-shape universe, "
          f"bins of 2^{width:.2f} from 2^{lo:.1f} to 2^{hi:.1f} FLOP")
    print(f"estimated tune time on an H200: ~{est24 / 60:.0f} min with --budget 24, ~{est8 / 60:.0f} min with --budget 8")
    for b in range(BINS):
        n = sum(1 for s in chosen if lo + b * width <= math.log2(2 * math.prod(s)) < lo + (b + 1) * width + 1e-9)
        print(f"  bin {b}: 2^{lo + b * width:.1f}..2^{lo + (b + 1) * width:.1f} FLOP: {n} shapes")


if __name__ == "__main__":
    main()
