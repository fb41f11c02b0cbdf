// A kernel file written as a PyTorch C++/CUDA extension, as other tools
// publish theirs: torch::Tensor arguments, data_ptr<at::Half>(), launches on
// the default stream and on at::cuda::getCurrentCUDAStream(), a pybind11
// module. tessera runs it without torch (docs/abi.md, "Torch-extension files"):
//
//   tessera eval examples/torch_ext_hgemm.cu --torch-entry "hgemm(a, b_nk, c)" --shape 1000x1000x1024
//
// C = A * B^T for TN (B given N x K row-major), fp16 in and out, fp32
// accumulation. Tensor cores (WMMA) on the 16x16 tiles that fit, launched on
// the current stream; a plain kernel for the edges, launched on the default
// stream (or for everything when K is not a multiple of 16).
#include <ATen/cuda/CUDAContext.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <torch/extension.h>

namespace {

constexpr int kTile = 16;          // WMMA tile (m16n16k16)
constexpr int kWarpsPerBlock = 4;  // each warp one 16x16 output tile
constexpr int kEdgeThreads = 256;

// One warp per 16x16 tile of C inside the first tiles_m x tiles_n tiles.
__global__ void wmma_tiles(const half* __restrict__ A, const half* __restrict__ B, half* __restrict__ C, int N, int K,
                           int tiles_m, int tiles_n) {
  using namespace nvcuda;
  const int tile = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  if (tile >= tiles_m * tiles_n) return;
  const int row = (tile / tiles_n) * kTile, col = (tile % tiles_n) * kTile;
  wmma::fragment<wmma::matrix_a, kTile, kTile, kTile, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, kTile, kTile, kTile, half, wmma::col_major> b;  // B^T tile: N x K row-major
  wmma::fragment<wmma::accumulator, kTile, kTile, kTile, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < K; k += kTile) {
    wmma::load_matrix_sync(a, A + size_t(row) * K + k, K);
    wmma::load_matrix_sync(b, B + size_t(col) * K + k, K);
    wmma::mma_sync(acc, a, b, acc);
  }
  __shared__ float staged[kWarpsPerBlock][kTile * kTile];
  float* out = staged[threadIdx.x / 32];
  wmma::store_matrix_sync(out, acc, kTile, wmma::mem_row_major);
  __syncwarp();
  for (int i = threadIdx.x % 32; i < kTile * kTile; i += 32)
    C[size_t(row + i / kTile) * N + col + i % kTile] = __float2half_rn(out[i]);
}

// Every element of C with row >= row0 or col >= col0, one thread each.
__global__ void edges(const half* __restrict__ A, const half* __restrict__ B, half* __restrict__ C, int M, int N,
                      int K, int row0, int col0) {
  const long long total = (long long)M * N;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    const int r = int(i / N), c = int(i % N);
    if (r < row0 && c < col0) continue;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += __half2float(A[size_t(r) * K + k]) * __half2float(B[size_t(c) * K + k]);
    C[size_t(r) * N + c] = __float2half_rn(acc);
  }
}

}  // namespace

void hgemm(torch::Tensor a, torch::Tensor b_t, torch::Tensor c) {
  TORCH_CHECK(a.dtype() == torch::kHalf && b_t.dtype() == torch::kHalf && c.dtype() == torch::kHalf, "fp16 only");
  TORCH_CHECK(a.is_contiguous() && b_t.is_contiguous() && c.is_contiguous(), "contiguous tensors only");
  const int M = a.size(0), K = a.size(1), N = b_t.size(0);
  TORCH_CHECK(b_t.size(1) == K && c.size(0) == M && c.size(1) == N, "shape mismatch: ", a.sizes(), " ", b_t.sizes());
  const half* A = reinterpret_cast<const half*>(a.data_ptr<at::Half>());
  const half* B = reinterpret_cast<const half*>(b_t.data_ptr<at::Half>());
  half* C = reinterpret_cast<half*>(c.data_ptr<at::Half>());

  const bool tensor_cores = K % kTile == 0;
  const int tiles_m = tensor_cores ? M / kTile : 0, tiles_n = tensor_cores ? N / kTile : 0;
  if (tiles_m > 0 && tiles_n > 0) {
    const int blocks = (tiles_m * tiles_n + kWarpsPerBlock - 1) / kWarpsPerBlock;
    wmma_tiles<<<blocks, 32 * kWarpsPerBlock, 0, at::cuda::getCurrentCUDAStream()>>>(A, B, C, N, K, tiles_m, tiles_n);
  }
  const int row0 = tiles_m * kTile, col0 = tiles_n * kTile;
  if (row0 < M || col0 < N) {
    const long long rest = (long long)M * N - (long long)row0 * col0;
    const int blocks = int(std::min<long long>((rest + kEdgeThreads - 1) / kEdgeThreads, 65535));
    edges<<<blocks, kEdgeThreads>>>(A, B, C, M, N, K, row0, col0);  // the default stream
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("hgemm", &hgemm, "C = A B^T, fp16 in and out, fp32 accumulation", py::arg("a"), py::arg("b_t"), py::arg("c"));
}
