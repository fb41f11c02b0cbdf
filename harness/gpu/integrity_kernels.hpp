#pragma once
// The harness's own kernels around a candidate's timed launches (docs/harness.md,
// "Integrity"): poison the output, zero the workspace, vary the inputs, and
// check an output against the reference on the device. Every one is extern "C"
// with a name that starts with kHarnessKernelPrefix, so the timer leaves them
// out of the measured windows, and a candidate may not use that prefix.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "harness/gpu/verify_kernels.hpp"

namespace tessera::gpu {

inline constexpr const char* kHarnessKernelPrefix = "tessera_harness_";

// The sign that the input variation with `seed` gives row/column `index`
// (seed 0: no variation). Host and device agree on it.
__host__ __device__ inline bool varied_sign(std::uint64_t seed, std::uint64_t index) {
  if (seed == 0) return false;
  std::uint64_t x = seed ^ (index * 0x9E3779B97F4A7C15ULL);
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return ((x ^ (x >> 31)) >> 63) != 0;
}

// Sets `count` fp16 values to the poison bit pattern.
void harness_poison(__half* dst, std::size_t count, cudaStream_t s);
// Zeroes `bytes` bytes (a kernel, not a memset: the timer only tells kernels apart by name).
void harness_zero(void* dst, std::size_t bytes, cudaStream_t s);

// Changes the variation of a row-major `rows` x `cols` fp16 matrix from
// `seed_from` to `seed_to`: the sign of every element whose row (by_row) or
// column index is varied differently under the two seeds is flipped. Exact:
// fp16 negation loses nothing, and fp32 sums are sign-symmetric, so the
// expected output is the reference with the same signs applied.
void harness_vary(__half* x, std::size_t rows, std::size_t cols, bool by_row, std::uint64_t seed_from,
                  std::uint64_t seed_to, cudaStream_t s);

struct CheckArgs {
  const __half* C = nullptr;
  const double* acc = nullptr;     // Σ a·b of the unvaried inputs (fp64)
  const double* absacc = nullptr;  // Σ |a·b|
  const __half* bias = nullptr;    // null without an epilogue
  std::size_t m = 0, n = 0;
  double gamma = 0;                // accumulation tolerance per unit of Σ|a·b|
  int epilogue = 0;                // Epilogue as int (0 none, 1 bias, 2 bias_relu, 3 bias_gelu)
  std::uint64_t seed_a = 0;        // variation of A's rows in force when C was written
  std::uint64_t seed_b = 0;        // variation of B's output columns
};

// Adds the comparison of C with act(±acc + bias) to *out (not reset here).
void harness_check(const CheckArgs& args, CompareStats* out_device, cudaStream_t s);

}  // namespace tessera::gpu
