#!/usr/bin/env bash
# Compile throughput against concurrency: N distinct variants of
# examples/hgemm_wmma.cu (an unused #define each) compiled at once by N
# `tessera eval --compile-only` processes into a fresh compile cache, for each
# N given; prints the wall time, compiles per second and the median compile ms
# the records report. Where the cache folder sits is an argument: a compile
# writes its cubin and entry with fsync, so a slow disk shows here.
#   scripts/compile_concurrency.sh [BINARY] [CACHE_PARENT] [N...]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/bin/tessera}
PARENT=${2:-${TMPDIR:-/tmp}}
shift $(( $# > 2 ? 2 : $# )) || true
COUNTS=${*:-1 4 16 32}
work=$(mktemp -d "$PARENT/tessera-compile-conc-XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '%-6s %8s %12s %14s\n' N "wall s" "compiles/s" "median ms"
for n in $COUNTS; do
  rm -rf "$work/cache" "$work/out" && mkdir -p "$work/src" "$work/out"
  for i in $(seq 1 "$n"); do
    { echo "#define TESSERA_BENCH_VARIANT $RANDOM$i"; cat examples/hgemm_wmma.cu; } > "$work/src/v$i.cu"
  done
  t0=$(date +%s.%N)
  for i in $(seq 1 "$n"); do
    TESSERA_CACHE_DIR="$work/cache" "$BIN" eval "$work/src/v$i.cu" --shape 2048x2048x2048 --compile-only --json \
      > "$work/out/v$i.json" 2>/dev/null &
  done
  wait
  t1=$(date +%s.%N)
  python3 - "$n" "$t0" "$t1" "$work/out" <<'PY'
import json, pathlib, statistics, sys
n, t0, t1, out = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), pathlib.Path(sys.argv[4])
ms = []
for f in out.glob("*.json"):
    try:
        ms.append(json.loads(f.read_text())["compile"]["ms"])
    except Exception:
        pass
wall = t1 - t0
print(f"{n:<6} {wall:8.2f} {n / wall:12.1f} {statistics.median(ms) if ms else float('nan'):14.0f}")
PY
done
