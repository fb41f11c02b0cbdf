#!/usr/bin/env bash
# GPU smoke test of the tile compiler, independent of the sandbox (see tile_smoke.cu):
#   tests/tile/tools/run_smoke.sh [path/to/tessera] [outdir]
# Emits a fixed set of configs (both backends, both layouts, odd shapes, all
# epilogues, clusters, split-K, persistent), compiles each with NVRTC, checks it
# against an fp32 reference and times it against cuBLAS (warm, events: a quick
# look, not the harness's protocol). One line per kernel: OK/FAIL ... xSPEEDUP.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tessera=${1:-$here/../../../build/bin/tessera}
out=${2:-$here/../../../build/tile_smoke}
mkdir -p "$out"
cp "$here/../../../core/abi/tessera_abi.cuh" "$out/"
: > "$out/manifest.txt"
add() {  # config shape layout epilogue
  local f="$out/k$(wc -l < "$out/manifest.txt").cu"
  "$tessera" tile emit "$1" --shape "$2" --layout "$3" --epilogue "$4" > "$f"
  IFS=x read -r m n k <<< "$2"
  echo "$f $m $n $k $3 $4" >> "$out/manifest.txt"
  echo "$(basename "$f") $1 $2 $3"
}
W=w128x256x64_g2x1_s4p4_pa_d1_sw_ed_r8_k1
add ${W}_t_c1x1_none 4096x4096x4096 TN none
add ${W}_t_c1x1_none 4096x4096x4096 NN none
add ${W}_t_c1x1_none 8192x8192x8192 TN none
add ${W}_p_c1x1_none 8192x8192x8192 TN none
add ${W}_t_c1x2_none 8192x8192x8192 TN none
add ${W}_t_c2x1_none 4096x4096x4096 NN none
add w128x256x64_g2x1_s3p3_pa_d1_sw_es_r8_k1s_p_c1x1_none 8192x8192x8192 TN none
add w128x256x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_p_c1x1_none 8192x8192x8192 TN none
add w128x256x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_p_c1x1_none 4096x4096x4096 TN none
add w128x128x64_g2x1_s5p5_pa_d1_sw_et_r8_k1s_p_c1x1_none 4096x4096x4096 TN none
add w64x128x32_g1x1_s4p4_pa_d1_sw_et_r0_k2s_t_c1x1_bias 100x5000x3000 NN bias
add w128x128x64_g2x1_s5p5_pa_d1_sw_ed_r8_k1s_t_c1x1_none 4096x4096x4096 TN none
add w128x128x64_g1x1_s4p4_pa_d1_sw_es_r8_k1s_p_c1x1_bias_gelu 100x5000x3000 TN bias_gelu
add w64x128x32_g1x1_s6p6_pa_d1_sw_ed_r0_k4s_t_c1x1_bias_relu 1x4096x4096 NN bias_relu
add w128x192x64_g2x1_s4p4_pa_d0_sw_ed_r0_k1s_t_c1x1_bias 4096x4096x4096 TN bias
add w256x128x64_g2x1_s3p3_pa_d1_sw_ed_r0_k1s_t_c1x1_none 4096x4096x4096 TN none
add w128x256x64_g1x2_s3p3_pa_d1_sw_es_r0_k1s_t_c1x1_none 2048x2048x2048 NN none
add m128x128x32_g2x2_s3p2_pa_d1_sw_ed_r0_k1s_t_c1x1_none 4096x4096x4096 TN none
add m128x128x32_g2x2_s3p2_pa_d1_sw_ed_r0_k1s_t_c1x1_none 100x5000x3001 NN none
add m64x256x64_g1x4_s4p2_st_d1_pd_es_r0_k1s_t_c1x1_bias_gelu 1x4096x4096 NN bias_gelu
add m128x128x32_g2x2_s3p2_pa_d1_sw_ed_r0_k3s_t_c1x1_bias 100x5000x3001 TN bias
add m128x256x32_g2x4_s4p3_pa_d1_sw_ed_r8_k1s_p_c1x1_none 8192x8192x8192 TN none
add m32x128x64_g1x4_s3p2_pa_d0_sw_ed_r0_k1s_t_c1x1_bias_relu 100x5001x3000 NN bias_relu
add m64x64x16_g2x2_s2p1_pa_d1_sw_ed_r0_k1s_t_c1x1_none 64x64x64 TN none
nvcc -O2 -std=c++17 -arch=sm_90a "$here/tile_smoke.cu" -lcuda -lnvrtc -lcublas -o "$out/tile_smoke"
"$out/tile_smoke" "$out/manifest.txt"
