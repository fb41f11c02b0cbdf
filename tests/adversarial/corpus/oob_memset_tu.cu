// Adversarial corpus -- a write outside its buffers through a memset, translation unit.
// Tries: the GEMM on the stream it is given, plus a cudaMemsetAsync that
// starts inside C and runs 256 bytes past its end (a "clear the tail"
// mistake, or a way to reach the memory after C without a kernel).
// Caught: the captured memsets are replayed by the worker only when they stay
// inside the output or the workspace -> rejected ("memset").
#include <cuda_runtime.h>
#include "tessera_abi.cuh"

namespace {
__global__ void gemm(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2half_rn(acc);
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const size_t count = (size_t)p->M * p->N;
  if (cudaMemsetAsync(p->C + count - 128, 0, 512, stream) != cudaSuccess) return 1;  // 128 halves in C, 128 past it
  const dim3 grid((p->N + 15) / 16, (p->M + 15) / 16);
  gemm<<<grid, 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
