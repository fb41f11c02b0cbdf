#!/usr/bin/env bash
# On a GPU machine: configure, build, run every test (GPU tests included),
# evaluate the shipped examples, the fault corpus and the cost model's first
# tile configs against the baselines, check repeatability, benchmark the harness,
# run compute-sanitizer on a sample of tile kernels, and print a short summary
# table. Logs and JSON records are written under the build folder; $OUT
# (default runs/gpu_check) gets summary.txt and logs.tgz, plus the tables and
# run folders of the long stages.
#   scripts/gpu_check.sh [STAGE[,STAGE...]]     (default all = tests,perf,sanitize)
# Stages: tests, perf, sanitize (each fits a 10-minute call), tile (only the tile
#   compiler's tests, GPU ones included: a quick check after a change to the emitters), and the long ones
#   small    tile tune over datasets/small_grid.json  (TUNE_BUDGET per shape, default 48)
#   search   the search acceptance runs in $SEARCH_RUNS (METHOD:SHAPE ...; $SEARCH_EVALS evaluations
#            each, default 200; $SEARCH_SECONDS caps each run's wall time)
#   vs       the search against the tune as a user runs them, per shape of $VS_SHAPES (default one of each
#            bucket and two LLM layers): `tessera search --shape S --budget-evals $VS_EVALS` (default 24)
#            and `tessera tile tune --shape S --budget-evals $VS_EVALS`, one process each; the table
#            (scripts/search_vs_tune.py) in $OUT/search_vs_tune.md, every search step in
#            $OUT/search_vs_tune_steps.md, the runs kept in $OUT/search_vs_tune.tgz, the tunes' sweeps as
#            training rows in $OUT/search_vs_tune_rows.jsonl; $VS_SEARCH_ARGS go to each search (e.g. "--far-slower 1.5",
#            the bound before 2026-11-29, against a call without it)
#   replay   a search driven by recorded LLM replies (the replay proposer) on the GPU
#   python   the tessera Python package built by pip into $BUILD/pysite (on PYTHONPATH, next to
#            the carried wheels in .whl/: gymnasium, httpx, scikit-build-core), its tests, the
#            service's client tests and examples/rl/h200_demo.py (a real episode, a killed
#            worker masked, evaluate_batch against bench harness)
#   serve    scripts/serve_bench.py --compare: evaluations per minute through tessera serve against
#            tessera bench harness, and p50/p99 per stage (after python, whose packages it uses)
#   grpo     scripts/grpo_demo.py: TRL's GRPOTrainer on a tiny policy with rewards from real
#            evaluations through the pool; rewards per second and the share of step time spent
#            waiting for rewards (after python, whose package it uses; TRL, datasets, accelerate,
#            dill and multiprocess as wheels in .whl/: the script's docstring has the command)
#   sweep    tessera bench suite over $SWEEP_TASKS (default datasets/grid1000.json) with $SWEEP_KERNELS
#            (default none: the baselines) into $SWEEP_DIR (default runs/sweep) for $SWEEP_MINUTES (7);
#            the folder comes back as $OUT/<name>.tgz (without search:N's search runs, whose sweeps the
#            record keeps, but with the searches kept for a shape cut in its tune, and the search run of a
#            shape cut in its search); carried back, the next call continues it, a cut shape from its kept
#            search or its search's measured steps
#            ($SWEEP_ARGS: more bench suite arguments, e.g. "--retry timeout"); cut $SWEEP_GRACE (90) seconds
#            after its minutes even with a shape in flight, so the call still brings back what was recorded;
#            the minutes are cut to what the call has left after the build ($GPU_CHECK_SECONDS, default 600);
#            it runs last, after every other stage named with it, since it takes the rest of the call
#   model_ab the same bench suite sweep ranked by two cost models, one after the other: $MODEL_AB_BASE (default
#            the model the GPU's kind finds: the shipped one) and $MODEL_AB_FILE (required), over $MODEL_AB_TASKS
#            (default datasets/llm_shapes.json) with $MODEL_AB_KERNELS (tile:8) for $MODEL_AB_MINUTES (3) each
#            ($MODEL_AB_ARGS: more bench suite arguments, e.g. "--gpus all"); the comparison
#            (scripts/model_ab.py) in $OUT/model_ab.md, both run folders in $OUT/model_ab.tgz; carried back
#            (unpacked into runs/, carry: ["runs/model_ab"]), the next call continues both sides, unless
#            the models, tasks or kernels changed (then it starts again)
#   suite_gpus  $SUITE_SHAPES shapes of the grid (every $SUITE_STRIDE-th), baselines on GPU 0, then bench suite --gpus all:
#            time and per-shape agreement ($SUITE_PART=one|all splits it over calls: see the stage)
#   scale    tessera bench scale over the machine's GPUs ($SCALE_ARGS), figures in $OUT/scale.{md,json}
#   ray      tessera.ray with one actor per GPU (scripts/gpu_ray.sh: Ray's wheel in two calls)
#   build    nothing but configure and build (a warm machine keeps them for the next call); with any stage,
#            BUILD_TARGETS=tessera builds the CLI alone, no tests (enough for sweep, vs, ab, search, small, model_ab)
#   machine  scripts/machine_probe.sh: CPUs, their quota, and N processes at once on a CPU loop and on
#            fresh memory; then scripts/compile_concurrency.sh (N compile processes at once) and
#            bench harness --compile-batch $COMPILE_BATCH (one process: one-shot children against servers)
#   integrity  tessera bench protocol: what the integrity guards cost, A/B on the same kernels
#   ab       scripts/tile_ab.sh over $AB_PLAN (SHAPE CONFIG... lines, each shape one process, the first config the
#            reference; $AB_REPEAT passes, default 2; AB_COUNTERS=1 adds DRAM and L2 figures): the table in
#            $OUT/ab.md, the records in $OUT/ab.tgz, each timed kernel as a cost-model row in $OUT/ab_rows.jsonl.
#            A line takes 4-12 s on an H200 (more for the larger shapes); no shape starts after $AB_SECONDS (default:
#            what is left of 540 s since the script started); the rest continue in the next call with
#            AB_CONTINUE=1 and runs/ab carried (unpack ab.tgz into runs/; carry: ["runs/ab"]). With EMITTERS (an
#            emitter A/B, scripts/tile_ab.sh) the kernels carried in runs/ab are kept and timed, the plan beside
#            them (AB_PLAN=runs/ab/plan.txt): a folder carried without them would need the emitters' binaries there
#   (the tests stage writes the red-team corpus table to $OUT/adversarial_corpus.md; CTEST_LABELS, a
#   regular expression over the test folders (harness, tile, ...), splits ctest over several calls: on one
#   H200 on 2026-11-29 the whole suite outgrew a 600 s call with its 146 s build, cut after 549 tests in
#   about 450 s, the other 203 in 197 s; two calls cover it: CTEST_LABELS='core|harness|tile' (278 tests,
#   272 s of ctest on 2026-11-29, with the build about 420 s: no room for perf) then, on the warm machine,
#   CTEST_LABELS='worker|agent|search|adversarial|bench|env|faults|fuzz|serve' (476 tests, 274 s, and 45-60 s
#   of the fault corpus); perf (about 150 s after the build) fits beside the second)
set -uo pipefail
cd "$(dirname "$0")/.."
STAGES=${1:-all}
has() { [ "$STAGES" = all ] && [[ ",tests,perf,sanitize," == *",$1,"* ]] && return 0; [[ ",$STAGES," == *",$1,"* ]]; }
OUT=${OUT:-runs/gpu_check}
BUILD=${BUILD_DIR:-build-gpu}
LOGS="$BUILD/gpu_check_logs"
# Logs of this call only: the build folder outlives calls on a warm machine,
# and the summary must not print an earlier call's tables.
rm -rf "$LOGS"
mkdir -p "$OUT" "$LOGS"
OUT=$(cd "$OUT" && pwd)  # absolute: tests write into it from their own working folders
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-$PWD/$BUILD/cache}
export PATH="/usr/local/cuda/bin:$PATH"
T="$BUILD/bin/tessera"
declare -a ROWS=()

table() {
  printf '%-28s %-5s %6s\n' step result secs
  for r in "${ROWS[@]}"; do IFS='|' read -r n s t <<<"$r"; printf '%-28s %-5s %6s\n' "$n" "$s" "$t"; done
}
step() {  # step NAME COMMAND...: runs it, logs to $LOGS/NAME.log, records PASS/FAIL and seconds
  local name=$1; shift
  local t0=$SECONDS
  if "$@" >"$LOGS/$name.log" 2>&1; then ROWS+=("$name|PASS|$((SECONDS - t0))"); else ROWS+=("$name|FAIL|$((SECONDS - t0))"); fi
  echo "[$name] $(tail -n 1 "$LOGS/$name.log")"
  # Kept current after every step, evaluations included: a call cut off by
  # its time limit still returns how far it got (on 2026-11-29 a cut call lost
  # the perf stage's evaluations, which only the closing summary printed).
  { table; python3 scripts/summarize_results.py "$LOGS" 2>/dev/null; } > "$OUT/summary.txt"
}

# bounded_suite NAME SECONDS ARGS...: `tessera bench suite ARGS` as step NAME, killed SECONDS after it
# starts in case one evaluation hangs past its --max-minutes (which cuts the shape in flight itself).
# Exit 5 means "stopped at the time limit; run again to continue", 124 "cut at the hard limit": not
# failures. The children of --gpus run in sessions of their own: timeout's signal reaches the parent
# only, so they are stopped after it. Environment assignments may lead ARGS' place through env:
# bounded_suite NAME SECONDS VAR=VALUE... -- ARGS...
bounded_suite() {
  local name=$1 secs=$2; shift 2
  local vars=()
  while [ $# -gt 0 ] && [ "$1" != -- ] && [[ "$1" == *=* ]]; do vars+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  step "$name" bash -c '"$@"; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 5 ] || [ $rc -eq 124 ]' _ \
    env ${vars[@]+"${vars[@]}"} timeout -k 10 "$secs" "$T" bench suite "$@"
  pkill -TERM -f "$T bench suite --tasks" 2>/dev/null && sleep 3
}

# XGBoost for the learned cost model, carried from Debian's packages where the
# machine has none (scripts/carry_xgboost.sh writes .deps/xgboost; carry .deps).
if [ -d .deps/xgboost ] && [ -z "${TESSERA_XGBOOST_ROOT:-}" ]; then
  export TESSERA_XGBOOST_ROOT=$PWD/.deps/xgboost LD_LIBRARY_PATH=$PWD/.deps/xgboost/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
step configure cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
# BUILD_TARGETS (e.g. tessera): only those targets, for stages that run the CLI alone (sweep, vs, ab,
# search, small, model_ab): 237 of the 383 objects, none of the tests' (counted with ninja -t inputs).
step build cmake --build "$BUILD" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} -- -k 0
step nvidia_smi nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv

if has tests; then
  step doctor "$T" doctor
  # Cut where the call would end (GPU_CHECK_SECONDS, default 600, less 90 s for the fault corpus and
  # the tar), so that a suite too long for one call still brings back its log and the summary: the
  # tests that ran, and where to go on (split it with CTEST_LABELS).
  ctest_secs=$(( ${GPU_CHECK_SECONDS:-600} - SECONDS - 90 ))
  [ "$ctest_secs" -lt 60 ] && ctest_secs=60
  TESSERA_CORPUS_TABLE="$OUT/adversarial_corpus.md" TESSERA_TILE_GPU_SAMPLES=${TESSERA_TILE_GPU_SAMPLES:-200} \
    step ctest timeout -k 10 "$ctest_secs" ctest --test-dir "$BUILD" --output-on-failure --timeout 900 -j "${CTEST_JOBS:-1}" ${CTEST_LABELS:+-L "$CTEST_LABELS"}
  grep -qE "tests passed|tests failed" "$LOGS/ctest.log" ||
    echo "[ctest] cut at the call's limit after ${ctest_secs} s: $(grep -cE '^ *[0-9]+/[0-9]+ Test +#' "$LOGS/ctest.log") tests ran (the log names them); split the suite over calls with CTEST_LABELS"
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

if has tile; then
  TESSERA_TILE_GPU_SAMPLES=${TESSERA_TILE_GPU_SAMPLES:-200} step ctest_tile ctest --test-dir "$BUILD" -R "^Tile" \
    --output-on-failure --timeout 900
  grep -E "tests passed|tests failed|evaluated [0-9]+ configs" "$LOGS/ctest_tile.log"
fi

if has perf; then
  step baseline_4096 "$T" baseline --shape 4096x4096x4096 --counters
  step eval_examples "$T" eval examples/hgemm_wmma.cu examples/hgemm_tu.cu --shape 4096x4096x4096 --json
  step eval_naive "$T" eval examples/hgemm_naive.cu --shape 2048x2048x2048 --json --no-counters
  # The cost model's first three configs (the first a tune times), ranked for this GPU's kind. The
  # plain list's wave seeds are not what a tune times first: its first GELU config, a tiled one,
  # measured 0.875x cuBLASLt's fused epilogue on the H200 (2026-11-29).
  for shape in 4096x4096x4096 8192x8192x8192; do
    seeds=$("$T" tile list --shape "$shape" --model --limit 3 | awk '/ µs /{print $1}')
    for c in $seeds; do "$T" tile emit "$c" --shape "$shape" > "$LOGS/seed_${shape}_$c.cu"; done
    step "tile_model_$shape" "$T" eval "$LOGS"/seed_${shape}_*.cu --shape "$shape" --json
  done
  # A fused epilogue against cuBLASLt's fused epilogue (the GemmEx baselines have none).
  gelu=$("$T" tile list --shape 4096x4096x4096 --epilogue bias_gelu --model --limit 1 | awk '/ µs /{print $1}')
  "$T" tile emit "$gelu" --shape 4096x4096x4096 --epilogue bias_gelu > "$LOGS/epilogue_$gelu.cu"
  step tile_epilogue_gelu "$T" eval "$LOGS/epilogue_$gelu.cu" --shape 4096x4096x4096 --epilogue bias_gelu --json
  # Repeatability: the same kernel in two separate processes.
  best=$(ls "$LOGS"/seed_4096x4096x4096_*.cu | head -n 1)
  step repeat_a "$T" eval "$best" --shape 4096x4096x4096 --json --no-counters
  step repeat_b "$T" eval "$best" --shape 4096x4096x4096 --json --no-counters
  # The floor of cold kernel GPU time: empty and one-DRAM-line kernels under the same timer.
  step bench_floor "$T" bench floor
  grep -E "kernel|empty|DRAM" "$LOGS/bench_floor.log"
  step bench_harness "$T" bench harness --count 30 --shape 1024x1024x1024
  grep -E "cache|cold|warm|per phase" "$LOGS/bench_harness.log" | tail -n 5
  # As a search evaluates: counters on, a small shape (where the fixed costs show).
  step bench_harness_counters "$T" bench harness --count 20 --shape 512x512x512 --counters
  grep -E "cache|cold|warm|per phase" "$LOGS/bench_harness_counters.log" | tail -n 5
  # The counter set search reads for every candidate (2 profiler passes instead of 9).
  step bench_harness_counters_fast "$T" bench harness --count 20 --shape 512x512x512 --counters --counter-set fast
  grep -E "cache|cold|warm|per phase" "$LOGS/bench_harness_counters_fast.log" | tail -n 5
fi

if has sanitize; then
  # Verify-only evaluations (no timing, no baselines, no peak) of a sample of
  # tile kernels on an odd shape, under memcheck and racecheck. The sandbox
  # worker is a child process: --target-processes all follows it.
  # K = 320 is 5 k-tiles: the split-K 4 config (k4a) has an empty last split; the two
  # inline-producer configs (_i_) refill their 2 or 3 stages from the consumer. The last three
  # have clusters on grids rounded up to whole clusters (5 tile columns in 8, 5 tile rows in 6, 5
  # tile columns in 6), the last two with swap-AB: their extra CTAs must store nothing. Then
  # stream-K (20 or 25 tiles of 5 k-tiles, ranges of 1-2 k-tiles that cut tiles unevenly), alone
  # and walked by pairs on grids rounded up to whole pairs: each member its own partial slots.
  SAN_SHAPE=200x264x320
  SAN_CONFIGS="w128x128x64_g2x1_s4p4_pa_d1_sw_ed_r8_k1s_t_c1x1_none w128x256x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_p_c1x1_none
    w64x64x64_g1x1_s6p6_pa_d1_sw_es_r0_k2a_t_c1x1_none w128x128x64_g2x1_s4p4_pa_d1_sw_ed_r0_k2s_t_c1x1_none
    w64x64x64_g1x1_s6p6_pa_d1_sw_ed_r0_k1s_t_c2x1_none w64x32x64_g1x1_s8p8_pa_d1_sw_ed_r0_k1s_t_c1x1_none
    m128x128x32_g2x2_s4p3_pa_d1_sw_ed_r8_k1s_t_c1x1_none m64x128x32_g2x2_s4p3_pa_d1_sw_es_r0_k4s_t_c1x1_none
    m64x64x64_g2x2_s4p3_st_d0_pd_ed_r0_k2a_t_c1x1_none w64x32x64_g1x1_s2p2_pa_d1_sw_ed_r0_k4a_t_c1x1_none
    w64x8x64_g1x1_s5p5_pa_d1_sw_ed_r0_k1s_t_c1x1_none w64x24x64_g1x1_s4p4_pa_d1_sw_es_r0_k1s_t_c1x1_none
    w64x32x64_g1x1_s5p5_pa_d1_sw_ed_r0_k1s_t_c4x1_none w64x16x64_g1x1_s2p2_pa_d1_sw_es_r0_k1s_i_c1x1_none
    w64x64x64_g1x1_s3p3_pa_d1_sw_ed_r0_k2s_i_c1x1_none w64x64x64_g1x1_s6p6_pa_d1_sw_ed_r0_k1s_t_c1x4_none
    w64x80x64_g1x1_s6p6_pa_d1_sw_es_r0_k1s_t_c2x1_swapab_none w64x48x64_g1x1_s6p6_pa_d1_sw_ed_r0_k1s_p_c1x2_swapab_none
    w64x64x64_g1x1_s4p4_pa_d1_sw_ed_r0_k1s_s_c1x1_none w64x64x64_g1x1_s4p4_pa_d1_sw_ed_r0_k1s_s_c1x2_none
    w64x48x64_g1x1_s4p4_pa_d1_sw_es_r0_k1s_s_c1x2_swapab_none"
  # Deep rings (16 and 12 stages) need more k-tiles than stages to wrap: 32 k-tiles here.
  SAN_DEEP_SHAPE=200x264x2048
  SAN_DEEP_CONFIGS="w64x32x64_g1x1_s16p16_pa_d1_sw_es_r0_k1s_t_c1x1_none m64x64x64_g2x2_s12p11_pa_d1_sw_ed_r0_k1s_t_c1x1_none"
  # Ping-pong (_o_) needs more tiles than SMs for its consumers to take turns: 18 x 18, 18 x 12 or
  # 18 x 9 tiles here, 2 or 3 per CTA, one config in pairs on a grid rounded up to whole clusters.
  # Its TMA store goes in 16-row strips, each warp through a ring of its own across units; 96
  # columns are a box and one that starts 32 columns early.
  SAN_PP_SHAPE=1100x1096x320
  SAN_PP_CONFIGS="w64x64x64_g2x1_s4p4_pa_d1_sw_et_r0_k1s_o_c1x1_none w64x128x64_g2x1_s3p3_pa_d1_sw_es_r8_k1s_o_c2x1_none
    w64x96x64_g2x1_s4p4_pa_d1_sw_et_r8_k1s_o_c1x1_none"
  # Tiled kernels whose epilogue staging lies over the stage ring (one stage deeper than fits beside
  # it): staged, swap-AB, TMA store, inline producer, split-K, a cluster. 16 k-tiles fill every ring.
  SAN_RING_SHAPE=200x264x1024
  SAN_RING_CONFIGS="w128x128x64_g2x1_s6p6_pa_d1_sw_es_r8_k1s_t_c1x1_none w128x136x64_g2x1_s6p6_pa_d1_sw_es_r8_k1s_t_c1x1_swapab_none
    w64x64x64_g1x1_s14p14_pa_d1_sw_et_r0_k1s_t_c1x1_none w64x64x64_g1x1_s14p14_pa_d1_sw_es_r0_k1s_i_c1x1_none
    w128x136x64_g2x1_s6p6_pa_d1_sw_es_r0_k2a_t_c1x1_swapab_none w128x48x64_g2x1_s10p10_pa_d1_sw_es_r0_k1s_t_c2x1_swapab_none"
  # Persistent swap-AB staged in chunks of 16 rows of C through two slots per consumer, the slots'
  # turn running across a CTA's units: 144 or 288 tiles over 132 CTAs, nine chunks a tile, 12 rows
  # of C in the last tile row; 128- and 64-row consumers, ping-pong.
  SAN_CHUNK_SHAPE=1100x4096x320
  SAN_CHUNK_CONFIGS="w256x136x64_g2x1_s4p4_pa_d1_sw_es_r8_k1s_p_c1x1_swapab_none
    w128x136x64_g2x1_s6p6_pa_d1_sw_es_r0_k1s_p_c1x1_swapab_none w128x136x64_g2x1_s6p6_pa_d1_sw_es_r8_k1s_o_c1x1_swapab_none"
  # The five shapes under one sanitizer process (verify-only, one trial): each group's configs
  # are emitted for its shape and evaluated by one `tessera eval` in SAN_CMD. The command is
  # spelled out: compute-sanitizer does not pass exported shell functions on to the shell it starts.
  SAN_OPTS="--json --no-timing --no-baselines --no-counters --trials 1 --run-timeout 300"
  SAN_CMD=""
  san_group() {  # san_group PREFIX SHAPE CONFIG...
    local prefix=$1 shape=$2 files=() c
    shift 2
    for c in "$@"; do "$T" tile emit "$c" --shape "$shape" > "$LOGS/${prefix}_$c.cu" && files+=("$LOGS/${prefix}_$c.cu"); done
    SAN_CMD+="${SAN_CMD:+ &&
    }$(printf '%q ' "$T" eval "${files[@]}") --shape $shape $SAN_OPTS"
  }
  san_group san $SAN_SHAPE $SAN_CONFIGS
  san_group san_deep $SAN_DEEP_SHAPE $SAN_DEEP_CONFIGS
  san_group san_pp $SAN_PP_SHAPE $SAN_PP_CONFIGS
  san_group san_ring $SAN_RING_SHAPE $SAN_RING_CONFIGS
  san_group san_chunk $SAN_CHUNK_SHAPE $SAN_CHUNK_CONFIGS
  for tool in memcheck racecheck; do
    rm -f "$LOGS"/sanitizer_${tool}_*.txt
    step "sanitize_$tool" compute-sanitizer --tool $tool --target-processes all --log-file "$LOGS/sanitizer_${tool}_%p.txt" \
      bash -c "$SAN_CMD"
    echo "[$tool] $(grep -h "SUMMARY" "$LOGS"/sanitizer_${tool}_*.txt | sort | uniq -c | tr '\n' ' ')"
  done
  # Positive control: memcheck must see the fault corpus's illegal address in
  # the worker process, or the clean reports above prove nothing.
  rm -f "$LOGS"/sanitizer_control_*.txt
  compute-sanitizer --tool memcheck --target-processes all --log-file "$LOGS/sanitizer_control_%p.txt" \
    "$T" eval tests/faults/corpus/illegal_address.cu --shape 256x256x256 --json --no-timing --no-baselines \
    --no-counters --trials 1 --run-timeout 300 > "$LOGS/sanitize_control.log" 2>&1
  if grep -hq "Invalid __global__" "$LOGS"/sanitizer_control_*.txt; then ROWS+=("sanitize_control|PASS|0"); else ROWS+=("sanitize_control|FAIL|0"); fi
  echo "[control] $(grep -h "ERROR SUMMARY" "$LOGS"/sanitizer_control_*.txt | tr '\n' ' ')"
fi

if has python; then
  # On the interpreter the build found (its nanobind built tessera._core), with its
  # packages (torch, numpy, pytest on the H200 machine). That interpreter may itself be a
  # virtual environment, whose packages a new venv would not see: the carried wheels
  # (gymnasium, httpx, scikit-build-core and their dependencies, .whl/) and the package go
  # into a folder of their own on PYTHONPATH instead.
  PY=$(sed -n 's/^_*Python_EXECUTABLE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" | head -n 1)
  PY=${PY:-python3}
  SITE="$PWD/$BUILD/pysite"
  export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
  step py_deps "$PY" -m pip install -q --no-index --no-deps --upgrade --target "$SITE" .whl/*.whl
  step py_build env CMAKE_GENERATOR=Ninja "$PY" -m pip install -q --no-build-isolation --no-index --no-deps \
    --upgrade --target "$SITE" -Cbuild-dir="$BUILD" -Ccmake.build-type=Release .
  # Two runs: each folder has a conftest.py of its own, and one pytest run would import
  # only one of them.
  step py_tests "$PY" -m pytest -q -rs tests/python
  step py_serve_tests "$PY" -m pytest -q -rs tests/serve/python
  step rl_demo env PYTHONUNBUFFERED=1 "$PY" examples/rl/h200_demo.py --count "${RL_DEMO_COUNT:-64}"
  grep -E "PASS|FAIL|turn|per minute" "$LOGS/rl_demo.log" | head -n 30
fi

if has serve; then
  # Evaluations per minute through tessera serve on this GPU against tessera bench harness
  # (cold and warm compile cache, one request at a time, then four): the service's overhead.
  # Needs the python stage's packages (httpx): run as python,serve.
  step serve_bench env PYTHONUNBUFFERED=1 "${PY:-python3}" scripts/serve_bench.py --compare --binary "$T" \
    --json "$OUT/serve_bench.json"
  tail -n 20 "$LOGS/serve_bench.log"
fi

if has grpo; then
  step grpo_demo env PYTHONUNBUFFERED=1 "${PY:-python3}" scripts/grpo_demo.py --steps "${GRPO_STEPS:-6}"
  grep -E "^(step|GRPO_DEMO|devices|policy)|rewards in" "$LOGS/grpo_demo.log" | head -n 30
fi

if has model_ab; then
  # What a cost model does to the kernels a sweep finds, before it ranks anything else: the same
  # tasks and kernels twice, each run with its baselines (a speedup is a ratio within one run).
  # Measured this way (docs/tile.md, nineteenth session): a layer trained on one set of shapes took
  # another set's tile:8 from 1.053x to 1.020x while judging well on its own.
  if [ ! -f "${MODEL_AB_FILE:-}" ]; then
    echo "model_ab: set MODEL_AB_FILE to the candidate model file (and carry it)"
    ROWS+=("model_ab|FAIL|0")
    table > "$OUT/summary.txt"
  else
    hard=$(awk -v m="${MODEL_AB_MINUTES:-3}" 'BEGIN { printf "%d", m * 60 + 30 }')
    for side in base candidate; do
      model=${MODEL_AB_BASE:-}
      [ "$side" = candidate ] && model=$MODEL_AB_FILE
      [ -n "$model" ] && model=$(realpath "$model")  # the --gpus children start elsewhere
      # A carried run goes on where it stopped (one GPU measures a 67-shape set in about 20 minutes
      # per side, more than a call), only if it was ranked by the same model over the same sweep.
      stamp="${model:+$(sha256sum "$model" | cut -c1-16)} ${MODEL_AB_TASKS:-} ${MODEL_AB_KERNELS:-}"
      if [ -d "runs/model_ab/$side" ] && [ "$(cat "runs/model_ab/$side.stamp" 2>/dev/null)" = "$stamp" ]; then
        echo "model_ab: continuing runs/model_ab/$side"
      else
        rm -rf "runs/model_ab/$side"
      fi
      mkdir -p runs/model_ab && echo "$stamp" > "runs/model_ab/$side.stamp"
      bounded_suite "model_ab_$side" "$hard" ${model:+TESSERA_COST_MODEL=$model} -- \
        --tasks "${MODEL_AB_TASKS:-datasets/llm_shapes.json}" --kernels "${MODEL_AB_KERNELS:-tile:8}" \
        --out "runs/model_ab/$side" --max-minutes "${MODEL_AB_MINUTES:-3}" --no-progress ${MODEL_AB_ARGS:-}
    done
    python3 scripts/model_ab.py runs/model_ab/base runs/model_ab/candidate "${MODEL_AB_BASE:-shipped}" \
      "$(basename "$MODEL_AB_FILE")" > "$OUT/model_ab.md"
    head -n 8 "$OUT/model_ab.md"
    tar czf "$OUT/model_ab.tgz" -C runs --exclude=search model_ab
  fi
fi

if has integrity; then
  step bench_protocol "$T" bench protocol --repeat "${PROTOCOL_REPEAT:-5}"
  tail -n 12 "$LOGS/bench_protocol.log"
fi

if has suite_gpus; then
  # The first $SUITE_SHAPES (200) shapes of datasets/grid1000.json, baselines only, on GPU 0 and
  # then spread over every GPU (bench suite --gpus all): the wall times and how far each
  # baseline's figures moved per shape (scripts/suite_gpus_compare.py)
  # The whole grid does not fit one call: its one-GPU sweep (fresh autotunes) measured 890 shapes in
  # 8.5 minutes on an H200 and 775 s in all.
  # SUITE_PART=one runs (or, with the folder carried back, continues) the one-GPU sweep in
  # $SUITE_ONE_DIR for $SUITE_MINUTES; SUITE_PART=all then runs the spread sweep and compares. The
  # one-GPU time is then the sum of its records' wall_s (the calls' start-up left out, which
  # favours the one GPU), the spread one's the wall clock.
  SG=$OUT/suite_gpus
  SG_ONE=${SUITE_ONE_DIR:-$SG/one}
  PART=${SUITE_PART:-both}
  mkdir -p "$SG" "$(dirname "$SG_ONE")"
  python3 -c "import json,sys; d=json.load(open('datasets/grid1000.json')); d['tasks']=d['tasks'][::int(sys.argv[3])][:int(sys.argv[1])]; d['name']='grid1000_every'+sys.argv[3]+'_first'+sys.argv[1]; json.dump(d,open(sys.argv[2],'w'))" \
    "${SUITE_SHAPES:-200}" "$SG/tasks.json" "${SUITE_STRIDE:-1}"
  # Each sweep autotunes its baselines afresh in a cache folder of its own: with one cache, the
  # spread sweep found GPU 0's shapes (a quarter of them on four GPUs) autotuned by the one-GPU
  # sweep, and skipped that work.
  CACHE_ONE=$PWD/$BUILD/suite_cache_one CACHE_ALL=$PWD/$BUILD/suite_cache_all
  t0=$SECONDS
  if [ "$PART" != all ]; then
    if [ -f "$SG_ONE/bench.json" ]; then one=(--resume "$SG_ONE"); else one=(--tasks "$SG/tasks.json" --out "$SG_ONE") && rm -rf "$CACHE_ONE"; fi
    # Exit 5: stopped at --max-minutes, continue in the next call.
    step suite_one_gpu env TESSERA_CACHE_DIR="$CACHE_ONE" bash -c '"$@"; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 5 ]' _ \
      "$T" bench suite "${one[@]}" --device 0 --no-progress ${SUITE_MINUTES:+--max-minutes "$SUITE_MINUTES"}
    tail -n 2 "$LOGS/suite_one_gpu.log"
    # Back in $OUT (a second call on a warm machine replaces the copy rather than nesting it).
    [ "$SG_ONE" = "$SG/one" ] || { rm -rf "$SG/one" && cp -r "$SG_ONE" "$SG/one"; }
  fi
  t1=$SECONDS
  if [ "$PART" != one ]; then
    rm -rf "$CACHE_ALL"
    step suite_all_gpus env TESSERA_CACHE_DIR="$CACHE_ALL" "$T" bench suite --tasks "$SG/tasks.json" --gpus all \
      --out "$SG/all" --no-progress
    t2=$SECONDS
    wall_one=$((t1 - t0))
    [ "$PART" = all ] && wall_one=records
    step suite_compare python3 scripts/suite_gpus_compare.py "$SG_ONE" "$SG/all" "$wall_one" $((t2 - t1))
    cat "$LOGS/suite_compare.log"
  fi
fi

if has machine; then
  # Where a 4-GPU machine's compiles go slow: the CPUs it gives, and fresh memory (docs/scaling.md)
  step machine bash scripts/machine_probe.sh ${MACHINE_COUNTS:-1 4 16 64}
  cat "$LOGS/machine.log"
  step compile_concurrency bash scripts/compile_concurrency.sh "$T" /tmp ${MACHINE_COUNTS:-1 4 16 64}
  cat "$LOGS/compile_concurrency.log"
  # The same compiles from one process: a process per compile against the long-lived compile servers
  step compile_batch "$T" bench harness --compile-batch "${COMPILE_BATCH:-16,64}" --compile-servers off,nopch
  cat "$LOGS/compile_batch.log"
fi

if has scale; then
  # tessera bench scale: evaluations per minute over 1..N GPUs through the pool and tessera serve,
  # per stage, with clocks and power (docs/scaling.md); $SCALE_ARGS replaces the defaults
  step scale "$T" bench scale ${SCALE_ARGS:---gpus all --counts 1,2,4 --shape 2048x2048x2048,4096x4096x4096 --path pool,serve --count 16} \
    --json "$OUT/scale.json" --no-progress
  sed -n '/^|/p' "$LOGS/scale.log" | head -n 80
  cp "$LOGS/scale.log" "$OUT/scale.md"
fi

if has ray; then
  # tessera.ray on every GPU: Ray's wheel comes in two calls (scripts/gpu_ray.sh's header)
  step ray_gpu env BUILD_DIR="$BUILD" OUT="$OUT" bash scripts/gpu_ray.sh
  grep -E "actor pid|evals/min|speedup|^ray:|SKIPPED|FAIL" "$LOGS/ray_gpu.log" | head -n 20
fi

if has small; then
  step tune_small "$T" tile tune --tasks datasets/small_grid.json --budget "${TUNE_BUDGET:-48}" --json \
    --report "$OUT/small_grid.md"
  cat "$OUT/small_grid.md"
fi

if has search; then
  # Each run: 200 search steps on one shape with the tile proposer, seed 1.
  for spec in ${SEARCH_RUNS:-evolve:4096x4096x4096 bandit:4096x4096x4096}; do
    method=${spec%%:*} shape=${spec#*:}
    dir="$BUILD/runs/accept-$method-$shape"
    rm -rf "$dir"
    step "search_${method}_$shape" "$T" search --shape "$shape" --method "$method" --budget-evals "${SEARCH_EVALS:-200}" \
      --seed 1 --no-progress --out "$dir" ${SEARCH_SECONDS:+--budget-seconds "$SEARCH_SECONDS"}
    grep -E "^\| hgemm_" "$dir/report.md" | head -n 1
    # One archive per run, without outcomes.jsonl (raw worker results, also
    # in trajectories.jsonl; only a resume needs it): one archive of all runs
    # grew past what a device call brings back.
    tar czf "$OUT/search_${method}_$shape.tgz" --exclude outcomes.jsonl -C "$BUILD/runs" "accept-$method-$shape"
  done
fi

if has vs; then
  # Each process times its own baselines: the table gives kernel times beside the speedups.
  vs_args=()
  for shape in ${VS_SHAPES:-128x128x256 256x2048x2048 8192x8192x1024 257x6144x4096 600x6144x4096}; do
    dir="$BUILD/runs/vs/search-$shape" tune="$BUILD/runs/vs/tune-$shape.json"
    rm -rf "$dir" && mkdir -p "$BUILD/runs/vs"
    step "vs_search_$shape" "$T" search --shape "$shape" --budget-evals "${VS_EVALS:-24}" --seed 0 --no-progress \
      ${VS_SEARCH_ARGS:-} --out "$dir"
    step "vs_tune_$shape" bash -c "'$T' tile tune --shape $shape --budget-evals ${VS_EVALS:-24} --json \
      --rows '$OUT/search_vs_tune_rows.jsonl' > '$tune'"
    [ -s "$dir/trajectories.jsonl" ] && [ -s "$tune" ] && vs_args+=("$dir" "$tune")
  done
  if [ ${#vs_args[@]} -gt 0 ]; then
    python3 scripts/search_vs_tune.py "${vs_args[@]}" --steps "$OUT/search_vs_tune_steps.md" | tee "$OUT/search_vs_tune.md"
    tar czf "$OUT/search_vs_tune.tgz" --exclude outcomes.jsonl -C "$BUILD/runs" vs
  fi
fi

if has ab; then
  # Tile configs A/B'd by scripts/tile_ab.sh with this build into runs/ab. Kernels are emitted afresh
  # each call (a warm machine's folder would reuse an earlier build's), except in an emitter A/B
  # (EMITTERS="old=/none new=/none"), whose kernels were emitted on another machine and carried in
  # runs/ab: they are what it times. Records are kept only to continue a cut plan (AB_CONTINUE=1,
  # runs/ab carried). No shape starts after AB_SECONDS (default: what is left of 540 s since this
  # script started), so a 600 s call ends between shapes with its table.
  mkdir -p runs/ab
  [ "${AB_CONTINUE:-0}" = 1 ] || find runs/ab \( -name '*.json' -o -name '*.json.part' -o -name '*.line' \) -delete
  [ -n "${EMITTERS:-}" ] || find runs/ab -name '*.cu' -delete
  ab_seconds=${AB_SECONDS:-$((540 - SECONDS))}
  [ "$ab_seconds" -ge 60 ] || ab_seconds=60
  # Exit 5: stopped at its time with lines left (not a failure: the summary's last line says so).
  step ab env TESSERA="$T" COUNTERS="${AB_COUNTERS:-0}" REPEAT="${AB_REPEAT:-2}" ROWS="$OUT/ab_rows.jsonl" \
    MAX_SECONDS="$ab_seconds" bash -c 'scripts/tile_ab.sh "$@"; rc=$?; [ $rc -eq 5 ] && rc=0; exit $rc' tile_ab \
    "${AB_PLAN:?the ab stage needs AB_PLAN, a plan file of SHAPE CONFIG... lines (scripts/tile_ab.sh)}" runs/ab
  [ -f runs/ab/summary.md ] && cp runs/ab/summary.md "$OUT/ab.md" && cat "$OUT/ab.md"
  tar czf "$OUT/ab.tgz" --exclude '*.cu' -C runs ab
fi

if has replay; then
  # Recorded LLM replies (examples, a broken reply, a tile kernel) replayed
  # through the real harness on the GPU.
  "$T" tile emit w128x128x64_g2x1_s4p4_pa_d1_sw_ed_r8_k1s_t_c1x1_none --shape 1024x1024x1024 > "$LOGS/replay_tile.cu"
  python3 scripts/make_replay_demo.py "$LOGS/replay_demo.jsonl" "$LOGS/replay_tile.cu"
  rm -rf "$BUILD/runs/replay"
  step replay_search "$T" search --shape 1024x1024x1024 --proposers replay --replay "$LOGS/replay_demo.jsonl" \
    --budget-evals 4 --seed 1 --no-progress --out "$BUILD/runs/replay"
  step replay_export "$T" export "$BUILD/runs/replay" --format sft
  grep -E "^\| hgemm_|^\| (ok|compile_error|wrong_answer) " "$BUILD/runs/replay/report.md"
fi

if has sweep; then
  # A bench suite sweep that continues over as many calls as it takes: carry the run folder back
  # (carry: ["runs/<name>"]) and the same command goes on where the last call stopped.
  # It runs after every other stage, whatever the order they are named in, because it takes what
  # the call has left: on 2026-12-02 `search,vs,sweep` ran it before the two others (then in the
  # middle of this script), its minutes filled the call, and the call was killed in vs.
  SWEEP_DIR=${SWEEP_DIR:-runs/sweep}
  # --max-minutes passes over a shape that the recorded ones say would not fit (since 2026-12-02),
  # and cuts the shape in flight short too (since the eighteenth session; before, one
  # search:24 shape of the grid's largest, 16384x12288x16384, outlasted a 10-minute call on its own,
  # which then brought nothing back). In case one evaluation hangs past it, the sweep is also cut
  # SWEEP_GRACE seconds (default 90) after its minutes, its GPU children with it; the shapes
  # recorded by then come back, and the next call continues.
  # The minutes are cut to what is left of the call (GPU_CHECK_SECONDS, default 600: the device's
  # per-call limit) after the stages before it, the grace and 30 s for the tar: on 2026-12-02 a cold
  # call's 94 s of configure and build plus SWEEP_MINUTES=9 and its grace outlasted the call, which
  # was killed before the tar and brought back none of its shapes.
  minutes=$(awk -v m="${SWEEP_MINUTES:-7}" -v g="${SWEEP_GRACE:-90}" -v lim="${GPU_CHECK_SECONDS:-600}" -v now="$SECONDS" \
    'BEGIN { left = (lim - now - g - 30) / 60; if (left < m) m = left; printf "%.2f", m }')
  if awk -v m="$minutes" 'BEGIN { exit !(m < 0.5) }'; then
    echo "[sweep] $minutes minutes left of the call's ${GPU_CHECK_SECONDS:-600} s after the stages before it: not started"
    ROWS+=("sweep|SKIP|0")
  else
    [ "$minutes" != "$(awk -v m="${SWEEP_MINUTES:-7}" 'BEGIN { printf "%.2f", m }')" ] &&
      echo "[sweep] SWEEP_MINUTES cut to $minutes to fit the call's ${GPU_CHECK_SECONDS:-600} s"
    hard=$(awk -v m="$minutes" -v g="${SWEEP_GRACE:-90}" 'BEGIN { printf "%d", m * 60 + g }')
    bounded_suite sweep "$hard" -- --tasks "${SWEEP_TASKS:-datasets/grid1000.json}" --kernels "${SWEEP_KERNELS:-none}" \
      --out "$SWEEP_DIR" --max-minutes "$minutes" --no-progress ${SWEEP_ARGS:-}
  fi
  [ -f "$LOGS/sweep.log" ] && tail -n 12 "$LOGS/sweep.log"
  # Without the search runs of search:N shapes (about 3 MB of trajectories each: 60 shapes pass the
  # size a call brings back). The record keeps every search's sweep, which is what resume, the
  # report and `tessera tile model train` read. With the searches kept for a shape the time limit
  # cut in its tune (search/<task id>.kept.json, a few kB): the next call starts that shape from it.
  # And with the search run of a shape the limit cut in its search (search/<task id>.searching
  # beside it): the next call goes on from its measured steps.
  if [ -d "$SWEEP_DIR" ]; then
    name=$(basename "$SWEEP_DIR")
    skip=()
    for d in "$SWEEP_DIR"/search/*/; do
      [ -d "$d" ] || continue
      id=$(basename "$d")
      [ -f "$SWEEP_DIR/search/$id.searching" ] || skip+=(--exclude="$name/search/$id/*")
    done
    tar czf "$OUT/$name.tgz" -C "$(dirname "$SWEEP_DIR")" "${skip[@]}" "$name"
  fi
fi

{
  echo
  echo "== summary =="
  table
  python3 scripts/summarize_results.py "$LOGS" || true
} | tee "$OUT/summary.txt"
tar czf "$OUT/logs.tgz" -C "$LOGS" .
