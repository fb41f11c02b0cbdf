#!/usr/bin/env bash
# On a GPU machine: configure, build, run every test (GPU tests included),
# evaluate the shipped examples and the fault corpus, time the baselines, and
# print a short summary table. Logs and JSON results go to $OUT (default
# runs/gpu_check). Usage: scripts/gpu_check.sh [quick|full]
set -uo pipefail
cd "$(dirname "$0")/.."
LEVEL=${1:-full}
OUT=${OUT:-runs/gpu_check}
BUILD=${BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-$PWD/$BUILD/cache}
T="$BUILD/bin/tessera"
declare -a ROWS=()

step() {  # step NAME COMMAND...: runs it, logs to $OUT/NAME.log, records PASS/FAIL and seconds
  local name=$1; shift
  local t0=$SECONDS
  if "$@" >"$OUT/$name.log" 2>&1; then ROWS+=("$name|PASS|$((SECONDS - t0))"); else ROWS+=("$name|FAIL|$((SECONDS - t0))"); fi
  echo "[$name] $(tail -n 1 "$OUT/$name.log")"
}

step configure cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
step build cmake --build "$BUILD" -j "$(nproc)"
step nvidia_smi nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
step doctor "$T" doctor
step ctest ctest --test-dir "$BUILD" --output-on-failure --timeout 600
grep -E "tests passed|tests failed|Skipped|Failed|\*\*\*" "$OUT/ctest.log" | tail -n 15

# Shipped examples on 4096^3 TN (the naive one on 2048^3: it is meant to be slow).
step eval_examples "$T" eval examples/hgemm_wmma.cu examples/hgemm_tu.cu --shape 4096x4096x4096 --json
step eval_naive "$T" eval examples/hgemm_naive.cu --shape 2048x2048x2048 --json
# The fault corpus in one harness process; good.cu after each fault must be ok.
CORPUS=()
for f in tests/faults/corpus/*.cu; do [ "$(basename "$f")" = good.cu ] && continue; CORPUS+=("$f" tests/faults/corpus/good.cu); done
step fault_corpus "$T" eval "${CORPUS[@]}" --shape 256x256x1024 --json --no-counters --compile-timeout 20 --run-timeout 5
if [ "$LEVEL" = full ]; then
  step baseline_4096 "$T" baseline --shape 4096x4096x4096
  step repeat_a "$T" eval examples/hgemm_wmma.cu --shape 4096x4096x4096 --json --no-counters
  step repeat_b "$T" eval examples/hgemm_wmma.cu --shape 4096x4096x4096 --json --no-counters
fi

echo
echo "== summary =="
printf '%-16s %-5s %6s\n' step result secs
for r in "${ROWS[@]}"; do IFS='|' read -r n s t <<<"$r"; printf '%-16s %-5s %6s\n' "$n" "$s" "$t"; done
python3 scripts/summarize_results.py "$OUT" || true
