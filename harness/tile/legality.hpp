#pragma once
// Legality: can a config run a task on a device? Decided before compiling,
// with a one-line reason, so the search never wastes a compile on it.
#include <cstdint>
#include <string>

#include "harness/core/result.hpp"
#include "harness/core/task.hpp"
#include "harness/tile/config.hpp"

namespace tessera::tile {

inline constexpr int kH100SmemOptinBytes = 227 * 1024;  // opt-in dynamic smem per block on H100
inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr int kH100SmCount = 132;
inline constexpr int kH100SmemPerSmBytes = 228 * 1024;  // shared memory per SM (all resident CTAs together)
inline constexpr int kMaxAccumulatorFloats = 128;  // fp32 accumulators per thread (beyond: spills)
inline constexpr int kMaxMmaSyncRegisters = 192;   // accumulators + fragments per thread (mma_sync)
inline constexpr int kMaxSplitK = 64;             // enough to spread a 64x64 output over every SM when K is long
inline constexpr int kMaxRaster = 64;              // tile rows per rasterisation group
inline constexpr int kMinStages = 2;
// 16, not 8: a 64x32 CTA of 4096x64x1024 holds all 16 of its k-tiles in flight
// (192 KiB) and ran 6.75 us against 7.01 us with 8 stages (H100, scripts/tile_ab.sh).
inline constexpr int kMaxStages = 16;

struct Limits {
  std::string arch = "sm_90a";  // sm_80, sm_86, sm_89, sm_90, sm_90a ...
  int smem_optin_bytes = kH100SmemOptinBytes;
  int max_threads_per_block = kMaxThreadsPerBlock;
  int sm_count = kH100SmCount;  // only sizes the wave-filling seeds; never a legality rule
};

struct Legality {
  bool ok = true;
  std::string reason;  // empty when ok
  explicit operator bool() const { return ok; }
};

Legality legality(const Config& c, const Task& task, const Limits& limits = {});

// `base` with what a device reports (an evaluator's DeviceSummary); what it
// leaves unknown (empty, 0: compile-only mode) keeps base's value.
Limits with_device(Limits base, const DeviceSummary& dev);

// Derived sizes, shared by legality and the emitter.
int dynamic_smem_bytes(const Config& c, const Task& task);
unsigned long long workspace_bytes(const Config& c, const Task& task);
int tiles_m(const Config& c, const Task& task);
int tiles_n(const Config& c, const Task& task);
int k_tiles(const Config& c, const Task& task);
// sm_80 -> 80, sm_90a -> 90; 0 when malformed.
int arch_number(const std::string& arch);

}  // namespace tessera::tile
