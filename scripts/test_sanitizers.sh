#!/usr/bin/env bash
# The CPU test suite again, built with AddressSanitizer + UndefinedBehaviorSanitizer
# (scripts/sanitize_build.sh): any memory error, leak or undefined behaviour in
# tessera's host code fails a test. GPU tests skip here as in the plain run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SANITIZE_BUILD_DIR:-build-asan}
# SANITIZE_SUBSET=1: only the libraries whose parsers read outside data, their
# tests (core, agent, env) and the fuzz smoke runs, which is what fits next to
# the plain build in CI; unset, the whole CPU suite.
targets=() labels=()
if [ "${SANITIZE_SUBSET:-0}" = 1 ]; then
  targets=(tessera_test_core tessera_test_agent tessera_test_env)
  for t in $(ls tests/fuzz/corpus); do targets+=("tessera_fuzz_smoke_$t"); done
  labels=(-L 'core|agent|env|fuzz')
fi
t0=$SECONDS
scripts/sanitize_build.sh "${targets[@]}"
echo "sanitizers: build took $((SECONDS - t0)) s"
# protect_shadow_gap=0: the CUDA driver maps memory where ASan would keep its
# guard (only matters where a GPU is present). Leak reports ignore the CUDA
# libraries' own one-time allocations (cmake/lsan.supp says which and why).
export ASAN_OPTIONS=${ASAN_OPTIONS:-protect_shadow_gap=0:detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/cmake/lsan.supp:print_suppressions=0}
export TESSERA_CACHE_DIR=${SANITIZE_CACHE_DIR:-$PWD/$BUILD/test-cache}
# Left out: CUPTI loads its profiler host library with RTLD_DEEPBIND, which
# the ASan runtime refuses to run (google/sanitizers#611); the plain run has it.
EXCLUDE='^Counters\.FastSetNeedsFarFewerProfilerPassesOnGH100$'
t1=$SECONDS
ctest --test-dir "$BUILD" --output-on-failure --timeout 900 -j "${TEST_JOBS:-2}" -E "$EXCLUDE" "${labels[@]}"
echo "sanitizers: tests took $((SECONDS - t1)) s"
