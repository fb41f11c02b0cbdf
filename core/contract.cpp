#include "core/contract.hpp"

#include <cstddef>
#include <cstring>

#include <fmt/format.h>

namespace tessera {

static_assert(sizeof(LaunchContract) == 88, "must match TesseraLaunchContract");
static_assert(offsetof(LaunchContract, workspace_bytes) == 48, "must match TesseraLaunchContract");
static_assert(offsetof(LaunchContract, tma_swizzle_bytes) == 80, "must match TesseraLaunchContract");

std::optional<LaunchContract> decode_contract(const std::string& bytes, std::string* error) {
  if (bytes.size() != sizeof(LaunchContract)) {
    if (error)
      *error = fmt::format("tessera_contract is {} bytes, expected {} (ABI version {})", bytes.size(),
                           sizeof(LaunchContract), kAbiVersion);
    return std::nullopt;
  }
  LaunchContract c;
  std::memcpy(&c, bytes.data(), sizeof c);
  return c;
}

#define TESSERA_CONTRACT_FIELDS(X)                                                                            \
  X(abi_version) X(block_threads) X(tile_m) X(tile_n) X(split_k) X(persistent_ctas_per_sm) X(dynamic_smem_bytes) \
  X(cluster_x) X(cluster_y) X(epilogue) X(layout) X(workspace_bytes) X(tma_a_box_rows) X(tma_a_box_cols)          \
  X(tma_b_box_rows) X(tma_b_box_cols) X(tma_c_box_rows) X(tma_c_box_cols) X(tma_swizzle_bytes)

nlohmann::json contract_to_json(const LaunchContract& c) {
  nlohmann::json j;
#define TESSERA_TO(f) j[#f] = c.f;
  TESSERA_CONTRACT_FIELDS(TESSERA_TO)
#undef TESSERA_TO
  return j;
}

LaunchContract contract_from_json(const nlohmann::json& j) {
  LaunchContract c{};
#define TESSERA_FROM(f) c.f = j.at(#f).get<decltype(c.f)>();
  TESSERA_CONTRACT_FIELDS(TESSERA_FROM)
#undef TESSERA_FROM
  return c;
}

std::string check_contract(const LaunchContract& c) {
  if (c.abi_version != kAbiVersion)
    return fmt::format("contract abi_version is {}, this harness speaks {}", c.abi_version, kAbiVersion);
  if (c.block_threads < 32 || c.block_threads > 1024 || c.block_threads % 32 != 0)
    return fmt::format("block_threads={} must be a multiple of 32 in [32, 1024]", c.block_threads);
  if (c.tile_m < 1 || c.tile_n < 1) return fmt::format("tile_m={} and tile_n={} must be >= 1", c.tile_m, c.tile_n);
  if (c.split_k < 1) return fmt::format("split_k={} must be >= 1", c.split_k);
  if (c.persistent_ctas_per_sm < 0) return "persistent_ctas_per_sm must be >= 0";
  if (c.dynamic_smem_bytes < 0) return "dynamic_smem_bytes must be >= 0";
  if (c.cluster_x < 1 || c.cluster_y < 1 || c.cluster_x * c.cluster_y > kMaxClusterSize)
    return fmt::format("cluster {}x{} must be >= 1 and at most {} CTAs", c.cluster_x, c.cluster_y, kMaxClusterSize);
  if (c.epilogue < 0 || c.epilogue > 3) return fmt::format("unknown epilogue id {}", c.epilogue);
  if (c.layout != 0 && c.layout != 1) return fmt::format("unknown layout id {}", c.layout);
  for (int s : {0, 32, 64, 128})
    if (c.tma_swizzle_bytes == s) return {};
  return fmt::format("tma_swizzle_bytes={} must be 0, 32, 64 or 128", c.tma_swizzle_bytes);
}

std::string check_contract_for_task(const LaunchContract& c, const Task& task) {
  if (c.layout != (task.layout == Layout::TN ? 0 : 1))
    return fmt::format("the kernel is for layout {}, the task is {}", c.layout == 0 ? "TN" : "NN",
                       to_string(task.layout));
  if (c.epilogue != static_cast<int>(task.epilogue))
    return fmt::format("the kernel implements epilogue id {}, the task needs {} (id {})", c.epilogue,
                       to_string(task.epilogue), static_cast<int>(task.epilogue));
  return {};
}

}  // namespace tessera
