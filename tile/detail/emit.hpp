#pragma once
// Pieces of the emitted source shared by both backends.
#include <string>

#include "core/task.hpp"
#include "tile/config.hpp"

namespace tessera::tile::detail {

std::string header_comment(const Config& c, const Task& t);
std::string common_constants(const Config& c, const Task& t);
std::string common_device_code();  // epilogue math, stores, the work schedule, split-K and stream-K reduction
// The text of schedule.inc (embedded at build time; compiled on the host by the tests too).
const std::string& schedule_source();
std::string contract(const Config& c, const Task& t, int persistent_ctas_per_sm, int tma_a_rows, int tma_a_cols,
                     int tma_b_rows, int tma_b_cols, int swizzle_bytes, int tma_c_rows = 0, int tma_c_cols = 0);

std::string emit_mma_sync(const Config& c, const Task& t);
std::string emit_wgmma(const Config& c, const Task& t);
// The wgmma_tma kernels' PTX wrappers (emit_wgmma_ptx.cpp).
const char* wgmma_ptx_source();

}  // namespace tessera::tile::detail
