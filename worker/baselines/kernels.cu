#include "worker/baselines/kernels.hpp"
#include "worker/check.hpp"

namespace tessera::baselines {

namespace {

constexpr int kFillThreads = 256;
constexpr int kFillMaxBlocks = 65535;
constexpr int kTransposeTile = 32;
constexpr int kTransposeRowsPerPass = 8;

__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

__global__ void fill_random_kernel(__half* p, std::size_t n, std::uint64_t seed, float lo, float span) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint64_t h = splitmix64(seed ^ splitmix64(i));
    const float u = float(h >> 40) * (1.0f / 16777216.0f);  // 24 random bits in [0, 1)
    p[i] = __float2half_rn(lo + span * u);
  }
}

// Classic shared-memory tiled transpose (+1 column of padding against bank conflicts).
__global__ void transpose_kernel(const __half* __restrict__ in, __half* __restrict__ out, int rows, int cols) {
  __shared__ __half tile[kTransposeTile][kTransposeTile + 1];
  const int c0 = blockIdx.x * kTransposeTile;
  const int r0 = blockIdx.y * kTransposeTile;
  for (int dy = threadIdx.y; dy < kTransposeTile; dy += kTransposeRowsPerPass) {
    const int r = r0 + dy, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[dy][threadIdx.x] = in[std::size_t(r) * cols + c];
  }
  __syncthreads();
  for (int dy = threadIdx.y; dy < kTransposeTile; dy += kTransposeRowsPerPass) {
    const int oc = r0 + threadIdx.x;  // output column = input row
    const int orow = c0 + dy;         // output row = input column
    if (orow < cols && oc < rows) out[std::size_t(orow) * rows + oc] = tile[threadIdx.x][dy];
  }
}

}  // namespace

void fill_random_half(__half* p, std::size_t n, std::uint64_t seed, float lo, float hi, cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t want = (n + kFillThreads - 1) / kFillThreads;
  const int blocks = int(want < std::size_t(kFillMaxBlocks) ? want : std::size_t(kFillMaxBlocks));
  fill_random_kernel<<<blocks, kFillThreads, 0, stream>>>(p, n, seed, lo, hi - lo);
  TESSERA_CUDA_CHECK(cudaGetLastError());
}

void transpose_half(const __half* in, __half* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(kTransposeTile, kTransposeRowsPerPass);
  const dim3 grid((cols + kTransposeTile - 1) / kTransposeTile, (rows + kTransposeTile - 1) / kTransposeTile);
  transpose_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
  TESSERA_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tessera::baselines
