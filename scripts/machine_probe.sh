#!/usr/bin/env bash
# What this machine gives the harness's CPU work (compiles above all): CPUs and their quota,
# pressure, and how N processes at once fare on a fixed CPU loop and on touching fresh memory
# (a VM that backs guest memory lazily shows it in the second). Prints a table per test.
#   scripts/machine_probe.sh [N...]   (default 1 4 16 64)
set -uo pipefail
COUNTS=${*:-1 4 16 64}
echo "nproc: $(nproc)"
lscpu 2>/dev/null | grep -E "^(Model name|Socket|Core|Thread|CPU\(s\)|NUMA node\(s\)|Hypervisor)" || true
for f in /sys/fs/cgroup/cpu.max /sys/fs/cgroup/cpu.weight /sys/fs/cgroup/memory.max /proc/pressure/cpu \
         /proc/pressure/memory /proc/loadavg; do
  [ -r "$f" ] && echo "$f: $(tr '\n' ' ' < "$f")"
done
grep -E "^(MemTotal|MemFree|MemAvailable)" /proc/meminfo
uname -r
# Each test: N copies at once, wall seconds and the median copy's own seconds.
probe() {  # probe NAME PYTHON_CODE (prints its own seconds)
  printf '%-12s %6s %8s %10s\n' "$1" N "wall s" "median s"
  for n in $COUNTS; do
    local dir; dir=$(mktemp -d)
    local t0; t0=$(date +%s.%N)
    for i in $(seq 1 "$n"); do python3 -c "$2" > "$dir/$i" 2>&1 & done
    wait
    local t1; t1=$(date +%s.%N)
    python3 - "$n" "$t0" "$t1" "$dir" "$1" <<'PY'
import pathlib, statistics, sys
n, t0, t1, d, name = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), pathlib.Path(sys.argv[4]), sys.argv[5]
s = []
for f in d.iterdir():
    try: s.append(float(f.read_text().split()[-1]))
    except Exception: pass
print(f"{name:<12} {n:6d} {t1 - t0:8.2f} {statistics.median(s) if s else float('nan'):10.2f}")
PY
    rm -rf "$dir"
  done
}
probe cpu_loop 'import time
t=time.perf_counter(); x=0
for i in range(5_000_000): x+=i
print(time.perf_counter()-t)'
# 1 GiB of fresh pages written, once per process (numpy.ones writes every page).
probe touch_1GiB 'import time, numpy
t=time.perf_counter(); a=numpy.ones(1<<27); print(time.perf_counter()-t)'
