#pragma once
// The harness's own kernels around a candidate's timed launches (docs/harness.md,
// "Integrity"): poison the output, zero the workspace, and check an output
// against the reference on the device, fresh inputs (the reference kernel
// is verify_kernels.hpp's, under the same prefix). Every one is extern "C"
// with a name that starts with kHarnessKernelPrefix, so the timer leaves them
// out of the measured windows, and a candidate may not use that prefix.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "worker/verify_kernels.hpp"

namespace tessera::worker {

inline constexpr const char* kHarnessKernelPrefix = "tessera_harness_";

// A 64-bit mix (splitmix64's finaliser): host and device agree on it.
__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Sets `count` fp16 values to the poison bit pattern.
void harness_poison(__half* dst, std::size_t count, cudaStream_t s);
// Zeroes `bytes` bytes (a kernel, not a memset: the timer only tells kernels apart by name).
void harness_zero(void* dst, std::size_t bytes, cudaStream_t s);

// Fresh U[-1, 1) values in every element of `live` and of `copy` (the same
// values): every timed call gets inputs no earlier call had, so no cached,
// remembered or incrementally updated output is its answer, and the
// reference comes from the copy the candidate cannot reach or change.
// Either pointer may be null (the values depend only on the seed and the
// index, so a hidden copy can be written again from the seed).
void harness_fresh(__half* live, __half* copy, std::size_t count, std::uint64_t seed, cudaStream_t s);

// Blocks of the shared-memory fill per SM: each takes the device's opt-in
// maximum, so at most one fits on an SM at a time, and several waves make it
// likely that every SM ran one.
inline constexpr int kSharedFillWaves = 4;
// Fills the shared memory of every SM with `pattern` (32-bit words), on s,
// right before a verified call: what the call reads from shared memory it
// never wrote is then known (docs/harness.md, "Verification", determinism).
void harness_fill_shared(std::uint32_t pattern, cudaStream_t s);

struct CheckArgs {
  const __half* C = nullptr;
  const double* acc = nullptr;     // Σ a·b of the inputs C was computed from (fp64)
  const double* absacc = nullptr;  // Σ |a·b|
  const __half* bias = nullptr;    // null without an epilogue
  std::size_t m = 0, n = 0;
  double gamma = 0;                // accumulation tolerance per unit of Σ|a·b|
  int epilogue = 0;                // Epilogue as int (0 none, 1 bias, 2 bias_relu, 3 bias_gelu)
};

// Adds the comparison of C with act(acc + bias) to *out (not reset here).
void harness_check(const CheckArgs& args, CompareStats* out_device, cudaStream_t s);

}  // namespace tessera::worker
