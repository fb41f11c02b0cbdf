// The mma_sync backend: cp.async multi-stage pipeline -> ldmatrix -> mma.sync.m16n8k16.
// The emitter writes the backend's constants; the kernel is the text of
// mma_sync_pipeline.cuh (loads, fragments, MMA), mma_sync_mainloop.cuh
// (gemm_tile's main loop and split-K / stream-K reduction),
// mma_sync_epilogue.cuh (its stores) and mma_sync_kernel.cuh (the entry).
#include <algorithm>

#include <fmt/format.h>

#include "tile/detail/emit.hpp"
#include "tile/legality.hpp"

namespace tessera::tile::detail {

namespace {

std::string constants(const Config& c, const Task& t) {
  return fmt::format(R"(// ---- mma_sync backend --------------------------------------------------------
constexpr int kWarpsM = {};           // warps along M
constexpr int kWarpsN = {};           // warps along N
constexpr int kPrefetch = {};         // k-tiles in flight ahead of the math (<= kStages - 1)
constexpr bool kStaggeredLoads = {};  // B loads issued after the first k16 step, not with A
constexpr bool kRegDoubleBuffer = {}; // ldmatrix of k-step i+1 overlaps the mma of k-step i
constexpr bool kSwizzle = {};         // XOR-swizzled smem (else rows padded by 16 B)
constexpr bool kVecA = {};            // K % 8 == 0: A rows allow 16-byte cp.async
constexpr bool kVecB = {};            // B rows allow 16-byte cp.async (TN: K % 8, NN: N % 8)

constexpr int kWM = kBM / kWarpsM;    // warp tile rows
constexpr int kWN = kBN / kWarpsN;    // warp tile cols
constexpr int kMI = kWM / 16;         // m16 fragments per warp
constexpr int kNI = kWN / 8;          // n8 fragments per warp
constexpr int kKSteps = kBK / 16;     // k16 steps per k-tile
constexpr int kPad = kSwizzle ? 0 : 8;
constexpr int kAStride = kBK + kPad;                    // halves per smem row of A (kBM rows)
constexpr int kBRows = kLayoutNN ? kBK : kBN;           // B tile as stored: NN k-rows, TN n-rows
constexpr int kBCols = kLayoutNN ? kBN : kBK;
constexpr int kBStride = kBCols + kPad;
constexpr int kATileHalves = kBM * kAStride;
constexpr int kBTileHalves = kBRows * kBStride;
constexpr int kCStride = kBN + 8;                       // staged epilogue tile row stride
constexpr int kAccRegs = kMI * kNI * 4;

)",
                     c.warps_m, c.warps_n, c.prefetch, c.load_order == LoadOrder::staggered, c.reg_double_buffer,
                     c.smem_layout == SmemLayout::swizzle, t.k % 8 == 0,
                     t.layout == Layout::TN ? t.k % 8 == 0 : t.n % 8 == 0);
}

// The epilogue: the rest of gemm_tile, the accumulators to C (mma_sync_epilogue.cuh).
const std::string& epilogue() { return kernel_source("mma_sync_epilogue.cuh"); }

}  // namespace

std::string emit_mma_sync(const Config& c, const Task& t) {
  return header_comment(c, t) + common_constants(c, t) + constants(c, t) + common_device_code() +
         kernel_source("mma_sync_pipeline.cuh") + kernel_source("mma_sync_mainloop.cuh") + epilogue() +
         kernel_source("mma_sync_kernel.cuh") + contract(c, t, persistent_ctas_per_sm(c, t), 0, 0, 0, 0, 0);
}

}  // namespace tessera::tile::detail
