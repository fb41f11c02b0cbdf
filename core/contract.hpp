#pragma once
// Host mirror of TesseraLaunchContract (core/abi/tessera_abi.cuh). The
// static_asserts in contract.cpp pin the layout: if the ABI header changes,
// this must change with it (and TESSERA_ABI_VERSION must be bumped).
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/task.hpp"

namespace tessera {

struct LaunchContract {
  std::int32_t abi_version;
  std::int32_t block_threads;
  std::int32_t tile_m, tile_n;
  std::int32_t split_k;
  std::int32_t persistent_ctas_per_sm;
  std::int32_t dynamic_smem_bytes;
  std::int32_t cluster_x, cluster_y;
  std::int32_t epilogue;
  std::int32_t layout;
  std::uint64_t workspace_bytes;
  std::int32_t tma_a_box_rows, tma_a_box_cols;
  std::int32_t tma_b_box_rows, tma_b_box_cols;
  std::int32_t tma_c_box_rows, tma_c_box_cols;
  std::int32_t tma_swizzle_bytes;
};

inline constexpr int kAbiVersion = 1;
inline constexpr int kMaxClusterSize = 8;  // portable cluster size limit

// Decodes the bytes of the exported symbol; error set when the size is wrong.
std::optional<LaunchContract> decode_contract(const std::string& bytes, std::string* error);
nlohmann::json contract_to_json(const LaunchContract& c);
LaunchContract contract_from_json(const nlohmann::json& j);
// Static checks independent of the device: empty = fine, else the reason.
std::string check_contract(const LaunchContract& c);
// Does the kernel implement this task's layout and epilogue? Empty = yes.
std::string check_contract_for_task(const LaunchContract& c, const Task& task);

}  // namespace tessera
