#!/usr/bin/env bash
# Per-CTA timelines of tile kernels on the GPU (a diagnostic):
#   tests/tile/tools/run_trace.sh SHAPE CONFIG [CONFIG ...]     (TESSERA=path/to/tessera, OUT=dir, LAYOUT=TN)
# Emits each config for the shape, patches a copy with trace_patch.py, and runs
# both through tile_smoke: the plain kernel is checked and timed (warm), the
# patched one also writes its timeline after three cold launches
# (OUT/kN_tr.cu.trace{0,1,2}.tsv), which trace_report.py summarises: when each
# CTA starts and ends, its units' k-iterations, main-loop time per k-iteration
# and the share spent waiting for loads, and the stream-K fix-ups' phases; and
# draws each timeline (OUT/kN_tr.cu.trace1.tsv.svg).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tessera=${TESSERA:-$here/../../../build/bin/tessera}
out=${OUT:-$here/../../../build/tile_trace}
shape=${1:?usage: run_trace.sh SHAPE CONFIG [CONFIG ...]}
shift
mkdir -p "$out"
cp "$here/../../../core/abi/tessera_abi.cuh" "$out/"
: > "$out/manifest.txt"
IFS=x read -r m n k <<< "$shape"
i=0
for c in "$@"; do
  f="$out/k$i"
  "$tessera" tile emit "$c" --shape "$shape" --layout "${LAYOUT:-TN}" > "$f.cu"
  python3 "$here/trace_patch.py" "$f.cu" "${f}_tr.cu"
  printf '%s %s %s %s %s none\n' "$f.cu" "$m" "$n" "$k" "${LAYOUT:-TN}" "${f}_tr.cu" "$m" "$n" "$k" "${LAYOUT:-TN}" \
    >> "$out/manifest.txt"
  echo "k$i $c"
  i=$((i + 1))
done
nvcc -O2 -std=c++17 -arch=sm_90a "$here/tile_smoke.cu" -lcuda -lnvrtc -lcublas -o "$out/tile_smoke"
"$out/tile_smoke" "$out/manifest.txt"
python3 "$here/trace_report.py" --svg "$out"/k*_tr.cu.trace1.tsv
