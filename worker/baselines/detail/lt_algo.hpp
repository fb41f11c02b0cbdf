#pragma once
#include <cublasLt.h>

#include <cstddef>
#include <string>

namespace tessera::baselines::detail {

// "id=21 tile=... stages=... splitK=1 swizzle=0 cluster=... ws=0B": enough to
// tell algorithms apart in a table.
std::string describe_algo(const cublasLtMatmulAlgo_t& algo, std::size_t workspace_bytes);

}  // namespace tessera::baselines::detail
