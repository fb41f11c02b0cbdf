#pragma once
// Small helper kernels for the baselines and `tessera baseline`. Host-callable
// launchers; they enqueue on `stream` and check the launch.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tessera::baselines {

// p[i] = uniform in [lo, hi), from a counter-based hash of (seed, i):
// reproducible, and never zeros or constants (docs/harness.md, "Measurement").
void fill_random_half(__half* p, std::size_t n, std::uint64_t seed, float lo, float hi, cudaStream_t stream);

// out (cols×rows, row-major) = transpose of in (rows×cols, row-major).
void transpose_half(const __half* in, __half* out, int rows, int cols, cudaStream_t stream);

}  // namespace tessera::baselines
