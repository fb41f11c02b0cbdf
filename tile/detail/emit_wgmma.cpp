// The wgmma_tma backend (sm_90a): one producer warpgroup issues TMA bulk
// tensor copies into a ring of shared-memory stages guarded by full/empty
// mbarriers; one or two consumer warpgroups run wgmma.mma_async on the stages
// straight from shared memory (128B/64B-swizzled, K-major A; B K-major for TN,
// N-major for NN) and keep the accumulators in registers.
// With inline_producer there is no producer warpgroup: thread 0 of the single
// consumer issues the first `stages` loads before the block barrier and each
// later one as the consumer releases a stage. With swap_ab the MMA computes
// C^T: its rows walk B (the weight, N) and its columns A (M), and the epilogue
// stores the transpose. Producer and consumers walk the same (tile, k-range)
// units: one per tiled CTA, or the persistent / stream-K schedule.
// The emitter writes the backend's constants and the wgmma wrapper for the
// config's N; the rest is the text of wgmma_ptx.cuh (PTX wrappers),
// wgmma_walk.cuh (the units), wgmma_producer.cuh, wgmma_consumer.cuh (main
// loop and reduction), wgmma_epilogue.cuh and wgmma_kernel.cuh (the entry).
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tile/detail/emit.hpp"
#include "tile/legality.hpp"

namespace tessera::tile::detail {

namespace {

constexpr int kProducerRegs = 40;   // the producer only computes coordinates
constexpr int kConsumerRegs = 232;  // 2 consumers: 128*40 + 256*232 <= 64K registers

std::string constants(const Config& c, const Task& t) {
  return fmt::format(R"(// ---- wgmma_tma backend -------------------------------------------------------
constexpr int kConsumersM = {};       // consumer warpgroups along M
constexpr int kConsumersN = {};       // consumer warpgroups along N
constexpr bool kInflight = {};        // keep one wgmma group in flight while the next stage is issued
constexpr int kConsumers = kConsumersM * kConsumersN;
// Ping-pong: each consumer takes whole tiles, the two in turn (units 0, 2, 4,
// ... of the walk and 1, 3, 5, ...), and their main loops alternate.
constexpr bool kPingPong = {};
constexpr int kWM = kPingPong ? kBM : kBM / kConsumersM;   // rows per consumer warpgroup
constexpr int kWN = kPingPong ? kBN : kBN / kConsumersN;   // cols per consumer warpgroup (the wgmma N)
// Consumer warps that release each stage: with ping-pong only its tile's consumer reads it.
constexpr int kStageReaders = (kPingPong ? 1 : kConsumers) * 4;
constexpr int kMT = kWM / 64;            // m64 wgmma tiles per consumer
constexpr int kAccum = kWN / 2;          // fp32 accumulators per thread per m64 tile
constexpr int kAccRegs = kMT * kAccum;
constexpr int kSwizzleBytes = kBK * 2;   // a k-tile row is exactly one swizzle span
constexpr unsigned long long kDescLayout = kSwizzleBytes == 128 ? 1 : 2;  // 1 = 128B, 2 = 64B swizzle
constexpr int kATileBytes = kBM * kBK * 2;
constexpr int kBTileBytes = kBN * kBK * 2;
constexpr int kStageBytes = kATileBytes + kBTileBytes;   // TMA bytes per stage (OOB zeros count too)
constexpr int kBChunkCols = kSwizzleBytes / 2;           // NN: B columns per TMA box
constexpr int kBBoxes = kLayoutNN ? kBN / kBChunkCols : 1;
// Staged epilogue: a consumer's tile in padded rows; with swap-AB transposed
// (kWN rows of C, each kWM columns long). Persistent swap-AB: kStagingChunkRows
// rows of C at a time, through kStagingChunkSlots slots (legality.hpp,
// chunked_staging).
constexpr bool kChunkedStaging = {};
constexpr int kStagingChunkRows = {};
constexpr int kStagingChunkSlots = {};
constexpr int kStagingRows = kSwapAB ? (kChunkedStaging ? kStagingChunkSlots * kStagingChunkRows : kWN) : kWM;
constexpr int kStagingStride = (kSwapAB ? kWM : kWN) + 8;  // row stride (halves)
constexpr int kStagingChunkHalves = kStagingChunkRows * kStagingStride;
constexpr bool kTmaStore = {};                           // epilogue: swizzled smem tile -> TMA bulk store
constexpr int kCChunkCols = kBChunkCols;                 // TMA store box: kWM rows x one swizzle row
// TMA store in strips (wgmma_epilogue.cuh): each warp stores its 16 rows of
// each m64 tile in boxes of kTmaStripRows x kCChunkCols, through a ring of
// kTmaStripSlots strips of its own.
constexpr bool kTmaStrips = {};
constexpr int kTmaStripRows = {};  // a warp's rows of an m64 tile
constexpr int kTmaStripSlots = {};
constexpr int kTmaStripHalves = kTmaStripRows * kCChunkCols;
constexpr int kTmaStripsPerRow = (kWN + kCChunkCols - 1) / kCChunkCols;
// Per-consumer staging (bytes): the tile in padded rows (staged), in swizzled
// column chunks (TMA store), or the warps' strip rings.
constexpr int kStagingBytes = kStagedEpilogue ? kStagingRows * kStagingStride * 2
                              : kTmaStrips    ? 4 * kTmaStripSlots * kTmaStripHalves * 2
                              : kTmaStore     ? kWM * kWN * 2
                                              : 0;
// Ping-pong's consumers take one staging tile in turn (StagingTurn); strips
// and chunk slots are each warp's or consumer's own.
constexpr bool kSharedStaging = kPingPong && kStagingBytes > 0 && !kTmaStrips && !kChunkedStaging;
constexpr int kStagingTiles = kSharedStaging ? 1 : kConsumers;
// Tiled: the staging lies in the stage ring, which the CTA's one unit has
// consumed by its epilogue (legality.cpp, staging_in_ring); the consumers
// meet at kRingBarrier first, so that none writes it while another's wgmmas
// still read a stage.
constexpr bool kStagingInRing = {};
constexpr int kRingBytes = kStagingInRing ? (kStages * kStageBytes > kStagingTiles * kStagingBytes
                                                 ? kStages * kStageBytes
                                                 : kStagingTiles * kStagingBytes)
                                          : kStages * kStageBytes + kStagingTiles * kStagingBytes;
// Bias epilogues: each consumer copies its tile's bias (C's columns: MMA
// columns, or MMA rows with swap-AB) into shared memory as its main loop starts.
constexpr bool kHasBias = kEpilogue != TESSERA_EPILOGUE_NONE;
constexpr int kBiasLen = kSwapAB ? kWM : kWN;
constexpr int kBiasBytes = kHasBias ? kBiasLen * 2 : 0;  // per consumer
constexpr bool kSetMaxNReg = kConsumers > 1;             // rebalance registers producer -> consumers
constexpr bool kRunningDescriptors = kConsumers > 1;     // descriptors advanced stage to stage (wgmma_consumer.cuh)
constexpr int kProducerRegs = {};
constexpr int kConsumerRegs = {};
// Thread-block cluster (cluster_x = N direction, cluster_y = M direction). CTAs
// of a cluster along N share their A tile, along M their B tile: each CTA
// loads a slice of the shared operand and multicasts it to the whole cluster.
constexpr int kClusterM = {};
constexpr int kClusterN = {};
constexpr int kClusterSize = kClusterM * kClusterN;
constexpr unsigned short kClusterMask = (1u << kClusterSize) - 1;
constexpr int kASliceRows = kBM / kClusterN;             // rows of A this CTA loads (and multicasts)
constexpr int kBSliceRows = kBN / kClusterM;             // TN: rows of B this CTA loads
constexpr int kBSliceBoxes = kBBoxes / kClusterM;        // NN: column chunks of B this CTA loads
// No producer warpgroup: thread 0 of the one consumer issues the loads.
constexpr bool kInlineProducer = {};

)",
                     c.warps_m, c.warps_n, c.reg_double_buffer, c.pingpong, chunked_staging(c), kStagingChunkRows,
                     kStagingChunkSlots, c.epilogue_store == EpilogueStore::tma,
                     tma_strips(c), kTmaStripRows, kTmaStripSlots, staging_in_ring(c), kProducerRegs,
                     kConsumerRegs, c.cluster_m,
                     c.cluster_n, c.inline_producer);
  (void)t;
}

// The name of the wgmma wrapper for this config's consumer width N.
std::string wgmma_name(const Config& c) { return fmt::format("wgmma_m64n{}k16", consumer_cols(c)); }

// The wgmma wrapper for this config's N: kAccum "+f" operands, then the two
// descriptors and the scale-d predicate.
std::string wgmma_wrapper(const Config& c, const Task& t) {
  const int n = consumer_cols(c);
  const int regs = n / 2;
  std::string list, operands;
  for (int i = 0; i < regs; ++i) {
    list += fmt::format("{}%{}", i ? ", " : "", i);
    operands += fmt::format("{}\"+f\"(d[{}])", i ? ", " : "", i);
    if (i % 8 == 7 && i + 1 < regs) operands += "\n        ";
  }
  const int trans_b = t.layout == Layout::NN ? 1 : 0;
  return fmt::format(R"CUDA(// D(64x{0}, fp32 registers) += A(64x16, smem) * B(16x{0}, smem). imm-trans-b = {1}
// ({2}-major B).
__device__ __forceinline__ void {8}(float* d, unsigned long long desc_a, unsigned long long desc_b) {{
  asm volatile(
      "{{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %{6}, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n{0}k16.f32.f16.f16 "
      "{{{3}}}, %{4}, %{5}, p, 1, 1, 0, {1};\n"
      "}}\n"
      : {7}
      : "l"(desc_a), "l"(desc_b), "r"(1));  // scale-d = 1: D += A*B
}}

)CUDA",
                     n, trans_b, trans_b ? "N" : "K", list, regs, regs + 1, regs + 2, operands, wgmma_name(c));
}

// The consumer's main loop (wgmma_consumer.cuh) with the name of the wrapper
// that wgmma_wrapper writes for this config's N in its one slot.
std::string consumer(const Config& c) {
  constexpr std::string_view kSlot = "wgmma_m64nNk16";
  std::string text = kernel_source("wgmma_consumer.cuh");
  const auto at = text.find(kSlot);
  TESSERA_REQUIRE(at != std::string::npos && text.find(kSlot, at + 1) == std::string::npos,
                  "wgmma_consumer.cuh names its wgmma slot exactly once");
  return text.replace(at, kSlot.size(), wgmma_name(c));
}

// The epilogue: the rest of the consumer, the accumulators to C (wgmma_epilogue.cuh).
const std::string& epilogue() { return kernel_source("wgmma_epilogue.cuh"); }

}  // namespace

std::string emit_wgmma(const Config& c, const Task& t) {
  // Boxes: the tile's kBM rows are loaded (bm / cluster_n) x bk at a time (a
  // multicast slice when shared along N), its kBN rows (bn / cluster_m) x bk
  // (TN); NN B is bk x (one swizzle row = bk columns). The kBM rows walk A, or
  // B with swap-AB.
  const int row_box = c.bm / c.cluster_n, col_box = c.bn / c.cluster_m;
  const int a_rows = c.swap_ab ? col_box : row_box;
  const int b_rows = t.layout == Layout::NN ? c.bk : c.swap_ab ? row_box : col_box;
  const int b_cols = c.bk;
  return header_comment(c, t) + common_constants(c, t) + constants(c, t) + common_device_code() +
         wgmma_wrapper(c, t) + kernel_source("wgmma_ptx.cuh") + kernel_source("wgmma_walk.cuh") +
         kernel_source("wgmma_producer.cuh") + consumer(c) + epilogue() + kernel_source("wgmma_kernel.cuh") +
         contract(c, t, persistent_ctas_per_sm(c, t), a_rows, c.bk, b_rows, b_cols, c.bk * 2,
                  c.epilogue_store == EpilogueStore::tma ? (tma_strips(c) ? kTmaStripRows : consumer_rows(c)) : 0,
                  c.epilogue_store == EpilogueStore::tma ? c.bk : 0);
}

}  // namespace tessera::tile::detail
