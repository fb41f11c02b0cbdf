#pragma once
// Kernels of the verification protocol (docs/harness.md, "Verification"), callable from host .cpp.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tessera::worker {

enum class Distribution : int {
  uniform_pos = 0,  // U[0,1): sums grow with K, so fp16 accumulation visibly fails
  uniform_sym = 1,  // U[-1,1)
  mixed_scale = 2,  // U[-1,1) * 2^e, e in [-4, 2]: several magnitudes at once
  integer = 3,      // integers in [-2, 2]: fp32 sums are exact, so the result must be exact
};
const char* distribution_name(Distribution d);

// Grids of the harness's grid-stride kernels (here and in integrity_kernels.cu).
inline constexpr int kHarnessThreads = 256;
inline constexpr unsigned kMaxHarnessBlocks = 65535u * 16u;
// A reduction needs only enough blocks to fill the GPU: each block ends with
// atomics on the one result, so more blocks would only mean more of them.
inline constexpr unsigned kMaxReductionBlocks = 2048;

inline unsigned harness_blocks(std::size_t n) {
  const std::size_t b = (n + kHarnessThreads - 1) / kHarnessThreads;
  return static_cast<unsigned>(b < kMaxHarnessBlocks ? (b > 0 ? b : 1) : kMaxHarnessBlocks);
}
inline unsigned reduction_blocks(std::size_t n) {
  const unsigned b = harness_blocks(n);
  return b < kMaxReductionBlocks ? b : kMaxReductionBlocks;
}

inline constexpr std::uint8_t kCanaryByte = 0xA5;
inline constexpr unsigned short kPoisonBits = 0x7FFF;  // a NaN no arithmetic produces (canonical NaN is 0x7E00)

void fill_random(__half* dst, std::size_t count, Distribution dist, std::uint64_t seed, cudaStream_t s);
void fill_bytes(void* dst, std::size_t bytes, std::uint8_t value, cudaStream_t s);
void fill_half_bits(__half* dst, std::size_t count, unsigned short bits, cudaStream_t s);
// Order-independent 64-bit digest of a buffer (detects any changed word).
void digest(const void* src, std::size_t bytes, unsigned long long* out_device, cudaStream_t s);
// Number of bytes in [p, p+bytes) that differ from `value`.
void count_not_equal(const void* p, std::size_t bytes, std::uint8_t value, unsigned long long* out_device,
                     cudaStream_t s);

// fp64 reference of the accumulation: acc = Σ a·b and absref = Σ|a·b| (for the
// tolerance). The epilogue (bias, activation) is applied where outputs are
// checked (harness_check), after the input variation's signs.
void reference_gemm(const __half* A, const __half* B, double* acc, double* absref, int M, int N, int K,
                    int layout /*0 TN, 1 NN*/, cudaStream_t s);

struct CompareStats {
  unsigned long long mismatches;
  unsigned long long unwritten;
  unsigned long long nonfinite;
  unsigned long long flips;          // C != round_to_fp16(ref)
  unsigned long long decided_flips;  // of those, where ref ± the accumulation allowance round alike
  double max_abs_err;
  double sum_sq_err;
  double sum_sq_ref;
};

}  // namespace tessera::worker
