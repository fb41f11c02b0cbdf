#!/usr/bin/env bash
# A/B of tile configs on the GPU: each line of a plan file is
#   SHAPE CONFIG [CONFIG ...]
# and is evaluated in one harness process (`tessera eval`), so the configs and
# the cuBLAS/cuBLASLt baselines are timed interleaved under the same clocks.
# Each config runs REPEAT times (default 2), in the order a b c a b c, so a
# drift between the first and second pass shows. Prints one line per run:
# shape, config, status, cold µs, speedup over the best baseline.
#   scripts/tile_ab.sh PLAN [OUT_DIR]      (TESSERA=build/bin/tessera, LAYOUT=TN, EPILOGUE=none)
# Emitter A/B: EMITTERS="old=/tmp/tessera_old new=build/bin/tessera" emits every
# config with each binary (files OUT_DIR/SHAPE_LABEL_CONFIG.cu, labels in the
# names) and times them interleaved. Files already in OUT_DIR are reused, so
# kernels emitted on another machine can be carried in instead of a binary.
# COUNTERS=1 profiles each run as well (CUPTI) and adds its DRAM throughput
# and L2 hit rate to the line.
set -euo pipefail
PLAN=${1:?usage: scripts/tile_ab.sh PLAN [OUT_DIR]}
OUT=${2:-runs/tile_ab}
T=${TESSERA:-build/bin/tessera}
REPEAT=${REPEAT:-2}
mkdir -p "$OUT"
while read -r shape configs; do
  [[ -z "$shape" || "$shape" == \#* ]] && continue
  files=()
  for ((r = 0; r < REPEAT; ++r)); do
    for c in $configs; do
      for e in ${EMITTERS:-"=$T"}; do
        label=${e%%=*} bin=${e#*=}
        f="$OUT/${shape}_${label:+${label}_}${c}.cu"
        [ -f "$f" ] || "$bin" tile emit "$c" --shape "$shape" --layout "${LAYOUT:-TN}" --epilogue "${EPILOGUE:-none}" > "$f"
        files+=("$f")
      done
    done
  done
  "$T" eval "${files[@]}" --shape "$shape" --layout "${LAYOUT:-TN}" --epilogue "${EPILOGUE:-none}" $([ "${COUNTERS:-0}" = 1 ] || echo --no-counters) --json > "$OUT/$shape.json" || true
  python3 - "$OUT/$shape.json" "$shape" <<'PY'
import json, sys
# One JSON record per line, or one pretty-printed record (a single candidate),
# with the harness's log lines in between: decode every object that parses.
txt, dec, recs, i = open(sys.argv[1]).read(), json.JSONDecoder(), [], 0
while (j := txt.find('{', i)) >= 0:
    try:
        r, i = dec.raw_decode(txt, j)
        if isinstance(r, dict) and 'cold' in r: recs.append(r)
    except ValueError:
        i = j + 1
for r in recs:
    name = r.get("candidate_name", "?").split("_", 1)[-1].removesuffix(".cu")
    print(f"{sys.argv[2]:>14} {name:62} {r.get('status','?'):8} {r['cold']['median_us']:8.2f} us "
          f"{r.get('speedup', 0):6.3f}x  vs {r.get('best_baseline','')} {r.get('best_baseline_us',0):.2f}"
          + (f"  dram {k.get('dram_throughput_pct', 0):.0f}% l2 hit {k.get('l2_hit_rate_pct', 0):.0f}%"
             if (k := r.get('counters') or {}) else ""))
PY
done < "$PLAN"
