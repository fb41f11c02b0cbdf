#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every test.
# GPU tests skip (with the reason) where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
BUILD=${BUILD_DIR:-build}
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-$PWD/$BUILD/test-cache}
gpu=$("$BUILD/bin/tessera" doctor 2>/dev/null | sed -n 's/^GPU  *//p' || true)
echo "GPU: ${gpu:-unknown}"
case "$gpu" in none*) echo "GPU tests will be skipped: ${gpu#none }";; esac
ctest --test-dir "$BUILD" --output-on-failure --timeout 900 -j "${TEST_JOBS:-2}"
# The CPU tests again with AddressSanitizer + UndefinedBehaviorSanitizer, then a
# bounded coverage-guided run of every fuzz target (docs/harness.md, "Hostile
# input"). SANITIZERS=0 skips both, e.g. for a quick run on a laptop.
if [ "${SANITIZERS:-1}" != 0 ]; then
  scripts/test_sanitizers.sh
  scripts/fuzz.sh
fi
