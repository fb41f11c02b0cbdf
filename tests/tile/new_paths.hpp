#pragma once
// The configs that exercise the paths issue 18 added, with the shapes that
// exercise them: stream-K with a shared tail only (28 tiles, long K), with
// whole waves first (800 tiles) and with fewer k-iterations than SMs, on both
// backends; swap-AB for decode (M = 1, 7, 16), for M fits (104, 88, 136) and
// with split-K, stream-K, the inline producer and every epilogue; 192-row and
// 96/160/224-column tiles; persistent clusters; clusters on rounded-up grids and with swap-AB; ping-pong;
// stream-K walked by clusters; the staging in the ring; persistent swap-AB staged in chunks. emit_compile_test compiles every one;
// gpu_eval_test verifies them on the GPU.
#include <string>
#include <vector>

namespace tessera::tile::testing {

struct NewPathCase {
  std::string shape, layout, epilogue;
  std::vector<std::string> names;  // configs (the epilogue suffix is the task's)
};

inline std::vector<NewPathCase> new_path_cases() {
  std::vector<NewPathCase> out = {
      // mma_sync stream-K (runs on sm_80 too); K % 8 != 0 takes the element loader.
      {"100x3584x3001", "TN", "bias",
       {"m128x128x32_g2x2_s4p3_pa_d1_sw_ed_r0_k1s_s_c1x1_bias", "m64x64x32_g2x2_s4p3_pa_d1_sw_es_r8_k1s_s_c1x1_bias"}},
      {"1537x1024x1024", "NN", "none", {"m64x128x32_g2x2_s4p3_pa_d1_sw_ed_r8_k1s_s_c1x1_none"}},
      // wgmma stream-K: 28 tiles over 296 k-tiles; swap-AB with the M = 100 fit.
      {"100x3584x18944", "TN", "none",
       {"w128x128x64_g2x1_s6p6_pa_d1_sw_ed_r0_k1s_s_c1x1_none", "w64x64x64_g1x1_s8p8_pa_d1_sw_es_r0_k1s_s_c1x1_none",
        "w128x104x64_g1x1_s6p6_pa_d1_sw_es_r0_k1s_s_c1x1_swapab_none",
        "w128x104x64_g1x1_s6p6_pa_d1_sw_ed_r0_k4a_t_c1x1_swapab_none"}},
      // 800 tiles (whole waves, then a shared tail), TMA-store epilogue; wide and tall non-power-of-two tiles.
      {"1537x4096x1024", "TN", "bias_gelu",
       {"w64x128x64_g1x1_s6p6_pa_d1_sw_et_r8_k1s_s_c1x1_bias_gelu",
        "w128x256x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_s_c1x1_bias_gelu",
        "w192x128x64_g1x2_s4p4_pa_d1_sw_ed_r8_k1s_t_c1x1_bias_gelu",
        "w128x224x64_g1x2_s3p3_pa_d1_sw_es_r8_k1s_p_c1x1_swapab_bias_gelu",
        "w128x160x64_g2x1_s4p4_pa_d1_sw_es_r8_k1s_p_c1x1_bias_gelu",
        "w128x192x64_g2x1_s4p4_pa_d1_sw_et_r8_k1s_p_c1x1_bias_gelu",
        "w64x96x64_g1x1_s8p8_pa_d1_sw_es_r8_k1s_t_c1x1_bias_gelu",
        // Ping-pong: 416 tiles over 132 CTAs (3 or 4 each, so either consumer takes the last), each
        // epilogue store kind, and swap-AB.
        "w128x128x64_g2x1_s4p4_pa_d1_sw_et_r8_k1s_o_c1x1_bias_gelu",
        "w64x256x64_g2x1_s4p4_pa_d1_sw_ed_r8_k1s_o_c1x1_bias_gelu",
        "w128x96x64_g2x1_s4p4_pa_d1_sw_es_r0_k1s_o_c1x1_swapab_bias_gelu"}},
      // Ping-pong with fewer tiles than CTAs (consumer 1 idle, no order-barrier arrival), NN, and in pairs.
      {"1024x1024x2048", "NN", "none", {"w128x128x64_g2x1_s4p4_pa_d1_sw_es_r8_k1s_o_c1x1_none"}},
      {"1024x4096x1024", "TN", "bias",
       {"w128x128x64_g2x1_s4p4_pa_d1_sw_et_r8_k1s_o_c2x1_bias", "w64x256x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_o_c1x2_bias"}},
      {"1537x1024x1024", "NN", "bias", {"w128x128x64_g2x1_s4p4_pa_d1_sw_es_r8_k1s_s_c1x1_bias"}},
      // One tile of two k-tiles: two CTAs share it.
      {"64x64x128", "TN", "none", {"w64x64x64_g1x1_s2p2_pa_d1_sw_ed_r0_k1s_s_c1x1_none"}},
      // M just past 256: swap-AB with 88- and 136-wide M tiles.
      {"257x6144x4096", "TN", "none",
       {"w128x88x64_g2x1_s6p6_pa_d1_sw_es_r0_k1s_t_c1x1_swapab_none",
        "w128x136x64_g2x1_s4p4_pa_d1_sw_ed_r8_k1s_p_c1x1_swapab_none",
        "w64x88x64_g1x1_s8p8_pa_d1_sw_es_r0_k1s_s_c1x1_swapab_none"}},
      // Persistent swap-AB staged in chunks of 16 rows of C through two slots per consumer: 144 tiles of
      // 256x136 (12 CTAs take two; nine chunks a tile, so the slots' turn runs across units), 128x136 with
      // 64-row consumers, ping-pong; the last tile row holds 12 rows of C (its other chunks are skipped).
      {"1100x4096x512", "TN", "none",
       {"w256x136x64_g2x1_s4p4_pa_d1_sw_es_r8_k1s_p_c1x1_swapab_none",
        "w128x136x64_g2x1_s6p6_pa_d1_sw_es_r0_k1s_p_c1x1_swapab_none",
        "w128x136x64_g2x1_s6p6_pa_d1_sw_es_r8_k1s_o_c1x1_swapab_none"}},
      // Tiled, the epilogue's staging over the stage ring (kStagingInRing): staged, swap-AB, a TMA store,
      // the inline producer, split-K and a cluster, each a stage deeper than fits with the staging beside it.
      {"200x264x1024", "TN", "none",
       {"w128x128x64_g2x1_s6p6_pa_d1_sw_es_r8_k1s_t_c1x1_none", "w128x136x64_g2x1_s6p6_pa_d1_sw_es_r8_k1s_t_c1x1_swapab_none",
        "w64x64x64_g1x1_s14p14_pa_d1_sw_et_r0_k1s_t_c1x1_none", "w64x64x64_g1x1_s14p14_pa_d1_sw_es_r0_k1s_i_c1x1_none",
        "w128x136x64_g2x1_s6p6_pa_d1_sw_es_r0_k2a_t_c1x1_swapab_none",
        "w128x48x64_g2x1_s10p10_pa_d1_sw_es_r0_k1s_t_c2x1_swapab_none"}},
      // Persistent clusters: pairs and fours along M (B multicast) and N (A multicast), TMA and direct stores,
      // NN; 8 tiles for 4 pairs (a grid of whole clusters smaller than the SMs).
      {"1024x4096x1024", "TN", "bias",
       {"w128x256x64_g2x1_s4p4_pa_d1_sw_ed_r8_k1s_p_c2x1_bias", "w128x256x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_p_c1x2_bias",
        "w256x128x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_p_c4x1_bias", "w128x128x64_g2x1_s5p5_pa_d1_sw_es_r0_k1s_p_c1x4_bias"}},
      {"1024x1024x2048", "NN", "none", {"w128x128x64_g2x1_s5p5_pa_d1_sw_ed_r8_k1s_p_c2x1_none"}},
      {"256x512x512", "TN", "none", {"w128x128x64_g2x1_s4p4_pa_d1_sw_ed_r0_k1s_p_c1x2_none"}},
      // Clusters on grids that do not divide into them (43 tile columns, 7 tile rows, 13 under persistence):
      // the extra CTAs multicast and store nothing; split-K with a cluster; bias on the clipped columns.
      {"192x4096x512", "TN", "bias",
       {"w64x96x64_g1x1_s8p8_pa_d1_sw_es_r0_k1s_t_c1x2_bias", "w64x96x64_g1x1_s8p8_pa_d1_sw_ed_r0_k2a_t_c1x2_bias"}},
      {"1537x4096x512", "TN", "none",
       {"w128x256x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_p_c2x1_none", "w256x64x64_g2x1_s4p4_pa_d1_sw_es_r0_k1s_t_c2x1_none"}},
      // Swap-AB with a cluster: along M (the weight multicast; 257 rows in 3 tiles of 88 rounded up to 4)
      // and along N (A multicast), tiled and persistent.
      {"257x6144x512", "TN", "none",
       {"w192x72x64_g1x1_s5p5_pa_d1_sw_es_r0_k1s_t_c1x2_swapab_none",
        "w128x88x64_g1x1_s6p6_pa_d1_sw_ed_r0_k1s_p_c1x2_swapab_none",
        "w64x256x64_g1x1_s4p4_pa_d1_sw_es_r0_k1s_t_c1x2_swapab_none",
        "w128x80x64_g1x1_s6p6_pa_d1_sw_es_r0_k1s_t_c2x1_swapab_none"}},
      // Stream-K walked by clusters: each member its own tile, slot and semaphore of the shared units.
      // Swap-AB pairs along M (the weight multicast) with uneven ranges; pairs and fours along N (A multicast)
      // on 28 tiles of long K; a grid rounded up to whole clusters (3 tile rows in pairs); whole waves first.
      {"257x6144x4096", "TN", "none",
       {"w128x136x64_g2x1_s5p5_pa_d0_sw_es_r0_k1s_s_c1x2_swapab_none",
        "w128x88x64_g1x1_s6p6_pa_d1_sw_ed_r0_k1s_s_c1x2_swapab_none"}},
      {"100x3584x18944", "TN", "bias",
       {"w128x128x64_g2x1_s6p6_pa_d1_sw_ed_r0_k1s_s_c1x2_bias", "w64x64x64_g1x1_s8p8_pa_d1_sw_es_r0_k1s_s_c1x4_bias"}},
      {"257x6144x512", "TN", "none", {"w128x88x64_g1x1_s6p6_pa_d1_sw_es_r0_k1s_s_c1x2_swapab_none"}},
      {"1537x4096x1024", "TN", "bias_gelu", {"w128x256x64_g2x1_s3p3_pa_d1_sw_et_r8_k1s_s_c2x1_bias_gelu"}},
  };
  // Decode: M = 1, 7, 16 on 8- and 16-wide M tiles.
  for (const char* shape : {"1x4096x4096", "7x2112x7168", "16x3072x5120"})
    out.push_back({shape, "TN", "bias_relu",
                   {"w128x8x64_g2x1_s8p8_pa_d1_sw_ed_r0_k4a_t_c1x1_swapab_bias_relu",
                    "w64x16x64_g1x1_s8p8_pa_d1_sw_es_r0_k2s_t_c1x1_swapab_bias_relu",
                    "w128x16x64_g1x1_s8p8_pa_d1_sw_es_r0_k1s_s_c1x1_swapab_bias_relu",
                    "w64x8x64_g1x1_s4p4_pa_d1_sw_ed_r0_k1s_i_c1x1_swapab_bias_relu"}});
  return out;
}

}  // namespace tessera::tile::testing
