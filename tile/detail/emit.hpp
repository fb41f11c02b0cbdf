#pragma once
// The emitter's parts: the kernel text (tile/detail/*.cuh and schedule.inc,
// real CUDA embedded at build time) and the blocks the emitter writes for a
// config (its constants, the header, the contract). An emitted kernel is the
// two interleaved, in the order emit_mma_sync / emit_wgmma list them.
#include <span>
#include <string>
#include <string_view>

#include "core/task.hpp"
#include "tile/config.hpp"

namespace tessera::tile::detail {

// One embedded file, as read (tile/CMakeLists.txt generates kernel_files()).
struct KernelFile {
  std::string_view name, text;
};
std::span<const KernelFile> kernel_files();
// The text a kernel gets of an embedded file ("wgmma_kernel.cuh"): all but
// its leading lines that start with "///", which say where the piece goes and
// what it needs. An unknown name is an internal error.
const std::string& kernel_source(std::string_view file);

std::string header_comment(const Config& c, const Task& t);
std::string common_constants(const Config& c, const Task& t);
// Both backends' device code after the constants: common.cuh, epilogue.cuh
// (the epilogue's math and stores), the work schedule and reduce.cuh
// (split-K and stream-K).
std::string common_device_code();
std::string contract(const Config& c, const Task& t, int persistent_ctas_per_sm, int tma_a_rows, int tma_a_cols,
                     int tma_b_rows, int tma_b_cols, int swizzle_bytes, int tma_c_rows = 0, int tma_c_cols = 0);

std::string emit_mma_sync(const Config& c, const Task& t);
std::string emit_wgmma(const Config& c, const Task& t);

}  // namespace tessera::tile::detail
