#!/usr/bin/env bash
# Nsight Compute on tile configs and on cuBLAS, side by side. Each line of a
# plan file is (as for scripts/tile_ab.sh)
#   SHAPE CONFIG [CONFIG ...]
# Every config is emitted, verified once under ncu (one kernel launch
# profiled, after two), then cuBLAS's TN kernel for the shape; the raw
# metrics go to OUT_DIR/SHAPE_NAME.csv and a table of the telling ones
# (time, SM and L2 throughput, cycles per issued instruction, clusters that
# fit) is printed. ncu flushes the caches before each replay and is told to
# leave the clocks alone, but it replays one launch on its own: compare the
# rows with each other, not with the harness's cold times.
# Each row is followed by the profiled kernel's name (which kernel cuBLAS ran)
# and by the values of METRICS, a comma-separated list of ncu metrics to collect
# beside the sections (e.g. dram__bytes_read.sum,smsp__inst_executed.sum).
#   scripts/tile_prof.sh PLAN [OUT_DIR]    (TESSERA=build/bin/tessera, LAYOUT=TN, EPILOGUE=none, NCU=ncu, METRICS=)
set -uo pipefail
PLAN=${1:?usage: scripts/tile_prof.sh PLAN [OUT_DIR]}
OUT=${2:-runs/tile_prof}
T=${TESSERA:-build/bin/tessera}
NCU=${NCU:-ncu}
mkdir -p "$OUT"
SECTIONS=(--section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis
          --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats)
profile() {  # profile NAME KERNEL_REGEX COMMAND...
  local name=$1 regex=$2; shift 2
  "$NCU" --target-processes all --clock-control none --kernel-name "regex:$regex" --launch-skip 2 --launch-count 1 \
    "${SECTIONS[@]}" ${METRICS:+--metrics "$METRICS"} --csv --page details "$@" > "$OUT/$name.csv" 2> "$OUT/$name.log" ||
    echo "ncu failed for $name (see $OUT/$name.log)" >&2
}
while read -r shape configs; do
  [[ -z "$shape" || "$shape" == \#* ]] && continue
  for c in $configs; do
    f="$OUT/${shape}_${c}.cu"
    "$T" tile emit "$c" --shape "$shape" --layout "${LAYOUT:-TN}" --epilogue "${EPILOGUE:-none}" > "$f" || continue
    profile "${shape}_${c}" tessera_hgemm "$T" eval "$f" --shape "$shape" --layout "${LAYOUT:-TN}" \
      --epilogue "${EPILOGUE:-none}" --no-timing --no-baselines --no-counters --trials 3
  done
  profile "${shape}_cublas" 'nvjet|gemm|xmma' "$T" baseline --shape "$shape" --layout "${LAYOUT:-TN}" \
    --epilogue "${EPILOGUE:-none}" --max-algos 1
done < "$PLAN"
python3 - "$OUT" "${METRICS:-}" <<'PY'
import csv, glob, os, sys
want = [("Duration", "us"), ("SM Frequency", "ghz"), ("Elapsed Cycles", "cyc"), ("SM Active Cycles", "active"),
        ("Compute (SM) Throughput", "sm%"), ("Executed Ipc Active", "ipc"), ("L2 Cache Throughput", "l2%"),
        ("L2 Hit Rate", "l2hit%"), ("DRAM Throughput", "dram%"), ("L1/TEX Cache Throughput", "l1%"),
        ("Warp Cycles Per Issued Instruction", "cpi"), ("Cluster Size", "cl"), ("Max Active Clusters", "maxcl"),
        ("Grid Size", "grid")]
print(f"{'run':72} " + " ".join(f"{s:>8}" for _, s in want))  # µs and GHz; the rest as ncu prints them
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
    rows = [r for r in csv.reader(l for l in open(path) if l.startswith('"'))]
    if len(rows) < 2:
        print(f"{os.path.basename(path)[:-4]:72} (no kernel profiled)")
        continue
    head = rows[0]
    name_i, val_i, unit_i = head.index("Metric Name"), head.index("Metric Value"), head.index("Metric Unit")
    got = {}
    scale = {"ms": 1e3, "ns": 1e-3, "hz": 1e-9}  # times in µs and clocks in GHz, whatever unit ncu chose
    for r in rows[1:]:
        v = r[val_i].replace(",", "")
        if r[unit_i] in scale:
            v = f"{float(v) * scale[r[unit_i]]:g}"
        got.setdefault(r[name_i], v)
    print(f"{os.path.basename(path)[:-4]:72} " + " ".join(f"{got.get(n, '-')[:8]:>8}" for n, _ in want))
    if "Kernel Name" in head:
        print(f"    kernel {rows[1][head.index('Kernel Name')]}")
    units = {r[name_i]: r[unit_i] for r in rows[1:]}
    for m in filter(None, sys.argv[2].split(",")):
        print(f"    {m} {got.get(m, '-')} {units.get(m, '')}".rstrip())
PY
