// Adversarial corpus -- fp16 accumulation in an fp32 task, only once timed, translation unit.
// Tries: fp32 accumulation for its first HONEST_LAUNCHES launches (verification,
// where the tolerance would catch fp16), then accumulates in fp16 (__hfma),
// which halves the accumulator registers and doubles the math rate on real
// kernels.
// Caught: checked timed launches use the same tolerance as verification; on
// the timing loop's data (uniform in [-1, 1), K = 1024) fp16 sums are off by
// several units in the last place -> wrong_answer ("timed").
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
#define HONEST_LAUNCHES 6

namespace {
__device__ unsigned long long g_ctas;

__global__ void gemm_precision_later(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  __shared__ bool fp16;
  if (threadIdx.x == 0) fp16 = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y) >= HONEST_LAUNCHES;
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= M || col >= N) return;
  const __half* a = A + (size_t)row * K;
  const __half* b = B + (size_t)col * K;
  if (fp16) {
    __half acc = __float2half(0.f);
    for (int k = 0; k < K; ++k) acc = __hfma(a[k], b[k], acc);
    C[(size_t)row * N + col] = acc;
  } else {
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += __half2float(a[k]) * __half2float(b[k]);
    C[(size_t)row * N + col] = __float2half_rn(acc);
  }
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const dim3 grid((p->N + 15) / 16, (p->M + 15) / 16);
  gemm_precision_later<<<grid, 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
