#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer, ASan + UBSan) of every parser that reads
# outside data: each target in tests/fuzz runs a bounded number of executions
# from its seed corpus (tests/fuzz/corpus/<target>/); any crash, sanitizer
# report, leak or timeout fails. Prints executions and crashes per target;
# a failing input is kept as <build>/fuzz-artifacts/<target>-crash-*.
#   scripts/fuzz.sh [RUNS]         RUNS per target (default $FUZZ_RUNS or 100000)
#   FUZZ_TARGETS="task run_dir"    only these targets
#   FUZZ_SEED=0                    a random seed (default 1: CI runs are repeatable)
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-${FUZZ_RUNS:-100000}}
BUILD=${SANITIZE_BUILD_DIR:-build-asan}
scripts/sanitize_build.sh tessera_fuzz_all || exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/cmake/lsan.supp:print_suppressions=0}
mkdir -p "$BUILD/fuzz-logs" "$BUILD/fuzz-artifacts"
targets=${FUZZ_TARGETS:-$(ls tests/fuzz/corpus)}
failed=0
printf '%-16s %12s %8s %6s\n' target executions crashes secs > "$BUILD/fuzz-logs/summary.txt"
for t in $targets; do
  bin="$BUILD/fuzz/tessera_fuzz_$t"
  work="$BUILD/fuzz-corpus/$t"  # what libFuzzer finds is kept here, the seeds stay as they are
  mkdir -p "$work"
  t0=$SECONDS
  "$bin" -runs="$RUNS" -seed="${FUZZ_SEED:-1}" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$BUILD/fuzz-artifacts/$t-" "$work" "tests/fuzz/corpus/$t" \
    >"$BUILD/fuzz-logs/$t.log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$BUILD/fuzz-logs/$t.log" | tail -n 1)
  crashes=0
  if [ $rc -ne 0 ] || [ "${execs:-0}" -lt "$RUNS" ]; then
    crashes=1
    failed=1
    echo "fuzz: $t FAILED (exit $rc); the log ends:" >&2
    tail -n 40 "$BUILD/fuzz-logs/$t.log" >&2
  fi
  printf '%-16s %12s %8s %6s\n' "$t" "${execs:-?}" "$crashes" "$((SECONDS - t0))" >> "$BUILD/fuzz-logs/summary.txt"
done
cat "$BUILD/fuzz-logs/summary.txt"
exit $failed
