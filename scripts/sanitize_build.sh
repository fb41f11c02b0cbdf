#!/usr/bin/env bash
# Configures and builds the instrumented tree (${SANITIZE_BUILD_DIR:-build-asan}):
# clang, host C++ with AddressSanitizer + UndefinedBehaviorSanitizer and
# libFuzzer's coverage hooks; .cu files are compiled as usual. -O1 with line
# tables: reports name their lines, and the build stays quick.
#   scripts/sanitize_build.sh [TARGET...]    (default: everything)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
BUILD=${SANITIZE_BUILD_DIR:-build-asan}
CXX_BIN=${SANITIZE_CXX:-$(command -v clang++ || command -v clang++-14 || true)}
if [ -z "$CXX_BIN" ]; then
  echo "sanitize_build: clang++ is missing (scripts/setup.sh installs it)" >&2
  exit 1
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
  -DCMAKE_CXX_COMPILER="$CXX_BIN" -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -gline-tables-only" \
  -DCMAKE_CUDA_FLAGS_SANITIZE="-O2" -DTESSERA_SANITIZE=ON -DTESSERA_FUZZ=ON "${launcher[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" "${targets[@]}"
