#!/usr/bin/env bash
# The main command (README): install what is missing, build, and run a short
# kernel search on the default task (4096x4096x4096 HGEMM, TN) with the tile
# proposer, then print the best kernel's TFLOP/s next to cuBLAS and
# cuBLASLt-autotuned.
#
#   ./scripts/run.sh [extra `tessera search` options]
#
# Environment:
#   TESSERA_LLM_BASE_URL + TESSERA_LLM_MODEL  also use the LLM proposer (docs/agent.md)
#   TESSERA_EVALS (40)  TESSERA_METHOD (evolve)  TESSERA_SEED (0)  TESSERA_GPUS (0)
#   TESSERA_TASKS (datasets/default.json)  BUILD_DIR (build)  JOBS (nproc)
# Without a GPU the search runs in compile-only mode and says so: nothing is
# verified or timed, and no speedup is claimed.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"

BUILD=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
EVALS=${TESSERA_EVALS:-40}
METHOD=${TESSERA_METHOD:-evolve}
SEED=${TESSERA_SEED:-0}
GPUS=${TESSERA_GPUS:-0}
TASKS=${TESSERA_TASKS:-datasets/default.json}

echo "== setup"
# The sanitizer and fuzz tools (clang) serve only the test command.
SANITIZERS=${SANITIZERS:-0} ./scripts/setup.sh

echo "== build ($BUILD, $JOBS jobs)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} >/dev/null
cmake --build "$BUILD" --target tessera -j "$JOBS"
TESSERA="$BUILD/bin/tessera"

PROPOSERS=tile
if [ -n "${TESSERA_LLM_BASE_URL:-}" ] && [ -n "${TESSERA_LLM_MODEL:-}" ]; then
  PROPOSERS=tile,llm
  echo "== LLM endpoint configured ($TESSERA_LLM_MODEL at $TESSERA_LLM_BASE_URL): proposers tile + llm"
fi

MODE=()
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "=================================================================="
  echo " No NVIDIA GPU found: COMPILE-ONLY mode. Kernels are generated and"
  echo " compiled, but NOT verified or timed; no speedup is measured."
  echo "=================================================================="
  MODE=(--compile-only)
fi

RUN_ID="$(date -u +%Y%m%d-%H%M%S)-${METHOD}-s${SEED}"
OUT="runs/$RUN_ID"
echo "== search: $METHOD, $EVALS evaluations, tasks $TASKS, proposers $PROPOSERS -> $OUT"
"$TESSERA" search --tasks "$TASKS" --method "$METHOD" --budget-evals "$EVALS" --seed "$SEED" \
  --gpus "$GPUS" --proposers "$PROPOSERS" --out "$OUT" ${MODE[@]+"${MODE[@]}"} "$@"

echo "== done: report $OUT/report.md, best kernels in $OUT/best/, trajectories $OUT/trajectories.jsonl"
echo "   export for post-training: $TESSERA export $OUT --format sft|dpo|rl"
