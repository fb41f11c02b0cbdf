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
# and L2 hit rate to the line. After each shape, OUT_DIR/summary.md gets a row
# per config: its passes, their spread, its median speedup and its time against
# the line's first config (scripts/tile_ab_report.py); a new run starts it afresh.
# ROWS=file.jsonl appends each timed kernel as a cost-model training row
# (`tessera eval --rows`; `tessera tile model train|eval` read it).
# A cut run continues: a shape's record (OUT_DIR/SHAPE.json) is written only
# when its process finishes, beside the plan line it measured and its kernels'
# checksum (SHAPE.line), so a run into the same folder keeps every shape measured
# for the same line and the same kernels, and times the rest (a changed emitter's
# kernels are timed again; use a fresh OUT_DIR to measure everything again). MAX_SECONDS=N starts
# no shape after N seconds and exits 5 with the count of lines left: a GPU
# call's time limit then cuts between shapes, not in one (on 2026-11-29 a
# 600 s call killed mid-plan returned no table).
set -euo pipefail
PLAN=${1:?usage: scripts/tile_ab.sh PLAN [OUT_DIR]}
OUT=${2:-runs/tile_ab}
T=${TESSERA:-build/bin/tessera}
REPEAT=${REPEAT:-2}
mkdir -p "$OUT"
rm -f "$OUT/summary.md"
kept=0 timed=0 left=0
# Emits the line's kernels (each config by each emitter, REPEAT passes) into files[] and
# their sources' checksum into $kernels. Files already in OUT_DIR are used as they are.
emit_all() {
  files=()
  local r c e label bin f
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
  kernels="kernels=$(cat "${files[@]}" | cksum | cut -d' ' -f1)"
}
while read -r shape configs; do
  [[ -z "$shape" || "$shape" == \#* ]] && continue
  line="$shape $configs REPEAT=$REPEAT LAYOUT=${LAYOUT:-TN} EPILOGUE=${EPILOGUE:-none} EMITTERS=${EMITTERS:-} COUNTERS=${COUNTERS:-0}"
  # A record is kept only for the same kernels: their sources' checksum joins the line,
  # so a continued run with a changed emitter times the shape again.
  if [ -f "$OUT/$shape.json" ] && emit_all && [ "$(cat "$OUT/$shape.line" 2>/dev/null)" = "$line $kernels" ]; then
    echo "$shape: measured by an earlier run into $OUT (kept)"
    python3 scripts/tile_ab_report.py "$OUT/$shape.json" "$shape" "$OUT/summary.md"
    kept=$((kept + 1))
    continue
  fi
  if [ "${MAX_SECONDS:-0}" -gt 0 ] && [ "$SECONDS" -ge "$MAX_SECONDS" ]; then
    left=$((left + 1))
    continue
  fi
  emit_all
  line="$line $kernels"
  rm -f "$OUT/$shape.json" "$OUT/$shape.line"
  "$T" eval "${files[@]}" --shape "$shape" --layout "${LAYOUT:-TN}" --epilogue "${EPILOGUE:-none}" $([ "${COUNTERS:-0}" = 1 ] || echo --no-counters) ${ROWS:+--rows "$ROWS"} --json > "$OUT/$shape.json.part" || true
  mv "$OUT/$shape.json.part" "$OUT/$shape.json" && echo "$line" > "$OUT/$shape.line"
  python3 scripts/tile_ab_report.py "$OUT/$shape.json" "$shape" "$OUT/summary.md"
  timed=$((timed + 1))
done < "$PLAN"
echo "tile_ab: $timed shapes timed, $kept kept from an earlier run, $left left"
if [ "$left" -gt 0 ]; then
  echo "tile_ab: stopped at MAX_SECONDS=$MAX_SECONDS with $left plan lines left: run again into $OUT to continue"
  exit 5
fi
