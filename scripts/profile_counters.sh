#!/usr/bin/env bash
# On a GPU machine, after a build: evaluates three tile kernels at one shape in
# one harness process (once per counter set) and prints each evaluation's phase times and the
# counter profiler's own step times (profile_ms), to see where an
# evaluation's fixed cost goes.   scripts/profile_counters.sh [SHAPE]
set -euo pipefail
cd "$(dirname "$0")/.."
SHAPE=${1:-512x512x512}
T=${BUILD_DIR:-build-gpu}/bin/tessera
D=$(mktemp -d)
for c in w128x128x64_g2x1_s4p4_pa_d1_sw_ed_r8_k1s_t_c1x1_none w64x64x64_g1x1_s6p6_pa_d1_sw_es_r0_k2a_t_c1x1_none \
         m128x128x32_g2x2_s4p3_pa_d1_sw_ed_r8_k1s_t_c1x1_none; do
  "$T" tile emit "$c" --shape "$SHAPE" > "$D/$c.cu"
done
cat > "$D/show.py" <<'PY'
import json, sys
dec = json.JSONDecoder(); text = sys.stdin.read(); i = 0
while i < len(text):
    while i < len(text) and text[i].isspace(): i += 1
    if i >= len(text): break
    r, i = dec.raw_decode(text, i)
    ph = " ".join(f"{k} {v:.1f}" for k, v in sorted(r.get("phase_ms", {}).items()))
    pr = " ".join(f"{k} {v:.1f}" for k, v in (r.get("counters") or {}).get("profile_ms", {}).items())
    print(f"{r['candidate_name'][:40]:40} {r['status']:8} phase_ms: {ph} | profile_ms: {pr}")
PY
for set in full fast; do
  echo "counter set $set:"
  "$T" eval "$D"/*.cu --shape "$SHAPE" --json --counter-set "$set" | python3 "$D/show.py"
done
