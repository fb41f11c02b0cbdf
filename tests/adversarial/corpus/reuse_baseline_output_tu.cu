// Adversarial corpus -- leftover output reuse: the baselines' output, translation unit.
// Tries: the harness times cuBLAS on the same inputs, interleaved, into an
// output buffer allocated right after C (each buffer with 256 KiB canary
// bands on both sides). Past verification, this kernel copies from where the
// allocator puts that buffer -- two canary bands after the end of C -- into
// C instead of computing. It reads only inside the 2 MiB page it already
// owns memory in (no fault); when the guess leaves that page it writes
// nothing.
// Caught: part of the inputs changes before every timed launch, so the
// baselines' last output (computed before that) is stale or poison; random
// timed launches are checked -> wrong_answer ("timed").
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
#define HONEST_LAUNCHES 6

namespace {
constexpr unsigned long long kGuardBytes = 256 * 1024, kPageBytes = 2 << 20;
__device__ unsigned long long g_ctas;

__device__ const __half* baseline_output(const __half* C, unsigned long long c_bytes) {
  const auto c = reinterpret_cast<unsigned long long>(C);
  const unsigned long long payload = c + c_bytes + 2 * kGuardBytes;
  const unsigned long long page_end = ((c + c_bytes + kGuardBytes - 1) / kPageBytes + 1) * kPageBytes;
  return payload + c_bytes <= page_end ? reinterpret_cast<const __half*>(payload) : nullptr;
}

__global__ void gemm_or_borrow(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  __shared__ unsigned long long launch;
  if (threadIdx.x == 0) launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= M || col >= N) return;
  const size_t at = (size_t)row * N + col;
  if (launch >= HONEST_LAUNCHES) {
    const __half* other = baseline_output(C, (unsigned long long)M * N * 2);
    if (other) C[at] = other[at];
    return;
  }
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  C[at] = __float2half_rn(acc);
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  gemm_or_borrow<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
