#include "worker/baselines/detail/lt_algo.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace tessera::baselines::detail {

namespace {

// Each config attribute has its own integer width; a size mismatch is an
// error, so every read names its type. Unreadable attributes print as -1.
template <class T>
long long config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T v{};
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof(v), &written) != CUBLAS_STATUS_SUCCESS) return -1;
  return static_cast<long long>(v);
}

}  // namespace

std::string describe_algo(const cublasLtMatmulAlgo_t& algo, std::size_t workspace_bytes) {
  return fmt::format("id={} tile={} stages={} splitK={} reduction={} swizzle={} custom={} cluster={} ws={}B",
                     config<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID),
                     config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
                     config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                     config<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
                     config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
                     config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
                     config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION),
                     config<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID), workspace_bytes);
}

}  // namespace tessera::baselines::detail
