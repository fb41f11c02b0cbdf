#!/usr/bin/env bash
# On a GPU machine: configure, build, run every test (GPU tests included),
# evaluate the shipped examples, the fault corpus and the tile compiler's
# seeds against the baselines, check repeatability, benchmark the harness,
# and print a short summary table. Logs and JSON records are written under
# the build folder; $OUT (default runs/gpu_check) gets summary.txt and logs.tgz.
#   scripts/gpu_check.sh [all|tests|perf]    (default all; each stage fits a 10-minute call)
set -uo pipefail
cd "$(dirname "$0")/.."
STAGE=${1:-all}
OUT=${OUT:-runs/gpu_check}
BUILD=${BUILD_DIR:-build-gpu}
LOGS="$BUILD/gpu_check_logs"
mkdir -p "$OUT" "$LOGS"
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-$PWD/$BUILD/cache}
export PATH="/usr/local/cuda/bin:$PATH"
T="$BUILD/bin/tessera"
declare -a ROWS=()

step() {  # step NAME COMMAND...: runs it, logs to $LOGS/NAME.log, records PASS/FAIL and seconds
  local name=$1; shift
  local t0=$SECONDS
  if "$@" >"$LOGS/$name.log" 2>&1; then ROWS+=("$name|PASS|$((SECONDS - t0))"); else ROWS+=("$name|FAIL|$((SECONDS - t0))"); fi
  echo "[$name] $(tail -n 1 "$LOGS/$name.log")"
}

step configure cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
step build cmake --build "$BUILD" -j "$(nproc)" -- -k 0
step nvidia_smi nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv

if [ "$STAGE" = all ] || [ "$STAGE" = tests ]; then
  step doctor "$T" doctor
  TESSERA_TILE_GPU_SAMPLES=${TESSERA_TILE_GPU_SAMPLES:-200} step ctest ctest --test-dir "$BUILD" --output-on-failure --timeout 900
  grep -E "tests passed|tests failed" "$LOGS/ctest.log"
  grep -E "^\s+[0-9]+ - .*(Failed|Timeout)" "$LOGS/ctest.log" | head -n 20
  grep -E "evaluated [0-9]+ configs" "$LOGS/ctest.log" || true
  # The fault corpus in one harness process, each fault followed by good.cu (ctest asserts the
  # statuses; this saves the records for the table).
  CORPUS=()
  for f in tests/faults/corpus/*.cu; do [ "$(basename "$f")" = good.cu ] && continue; CORPUS+=("$f" tests/faults/corpus/good.cu); done
  # Exit code 1 means "some candidate failed", which is the point here; 2 and 3 are real failures.
  step fault_corpus bash -c '"$@"; test $? -le 1' _ "$T" eval "${CORPUS[@]}" --shape 256x256x1024 --json --no-counters \
    --compile-timeout 20 --run-timeout 5
fi

if [ "$STAGE" = all ] || [ "$STAGE" = perf ]; then
  step baseline_4096 "$T" baseline --shape 4096x4096x4096 --counters
  step eval_examples "$T" eval examples/hgemm_wmma.cu examples/hgemm_tu.cu --shape 4096x4096x4096 --json
  step eval_naive "$T" eval examples/hgemm_naive.cu --shape 2048x2048x2048 --json --no-counters
  for shape in 4096x4096x4096 8192x8192x8192; do
    seeds=$("$T" tile list --shape "$shape" --limit 3 | awk '/smem/{print $1}')
    for c in $seeds; do "$T" tile emit "$c" --shape "$shape" > "$LOGS/seed_${shape}_$c.cu"; done
    step "tile_seeds_$shape" "$T" eval "$LOGS"/seed_${shape}_*.cu --shape "$shape" --json
  done
  # A fused epilogue against cuBLASLt's fused epilogue (the GemmEx baselines have none).
  gelu=$("$T" tile list --shape 4096x4096x4096 --epilogue bias_gelu --limit 1 | awk '/smem/{print $1}')
  "$T" tile emit "$gelu" --shape 4096x4096x4096 --epilogue bias_gelu > "$LOGS/epilogue_$gelu.cu"
  step tile_epilogue_gelu "$T" eval "$LOGS/epilogue_$gelu.cu" --shape 4096x4096x4096 --epilogue bias_gelu --json
  # Repeatability: the same kernel in two separate processes.
  best=$(ls "$LOGS"/seed_4096x4096x4096_*.cu | head -n 1)
  step repeat_a "$T" eval "$best" --shape 4096x4096x4096 --json --no-counters
  step repeat_b "$T" eval "$best" --shape 4096x4096x4096 --json --no-counters
  step bench_harness "$T" bench harness --count 30 --shape 1024x1024x1024
  cat "$LOGS/bench_harness.log" | grep -E "cache|cold|warm" | tail -n 3
fi

{
  echo
  echo "== summary =="
  printf '%-28s %-5s %6s\n' step result secs
  for r in "${ROWS[@]}"; do IFS='|' read -r n s t <<<"$r"; printf '%-28s %-5s %6s\n' "$n" "$s" "$t"; done
  python3 scripts/summarize_results.py "$LOGS" || true
} | tee "$OUT/summary.txt"
tar czf "$OUT/logs.tgz" -C "$LOGS" .
