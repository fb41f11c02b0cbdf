#include "tests/testing.hpp"

#include <cuda_runtime_api.h>

namespace tessera::testing {

std::string gpu_unavailable_reason() {
  // Cached: the answer cannot change within one test process.
  static const std::string reason = [] {
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) return std::string(cudaGetErrorString(err));
    if (n == 0) return std::string("cudaGetDeviceCount reports 0 devices");
    return std::string();
  }();
  return reason;
}

}  // namespace tessera::testing
