// Adversarial corpus -- timer interference through persisting L2, translation unit.
// Tries: a correct kernel, plus host code that sets aside persisting L2 (at
// load time) and gives the stream an access-policy window over A, so that
// its input would survive the timer's L2 flush and every "cold" sample
// would read it from L2.
// Expected ok -- neutralised: host code runs only in the runner; the worker
// replays the captured kernels with their grid, block, shared memory and
// cluster only, so neither the device limit nor the stream's window reaches
// the launches that are timed.
#include <cuda_runtime.h>
#include "tessera_abi.cuh"

namespace {
__attribute__((constructor)) void set_aside_l2() { cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 8u << 20); }

__global__ void gemm(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2half_rn(acc);
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  cudaStreamAttrValue window{};
  window.accessPolicyWindow.base_ptr = const_cast<__half*>(p->A);
  window.accessPolicyWindow.num_bytes = (size_t)p->M * p->K * 2;
  window.accessPolicyWindow.hitRatio = 1.f;
  window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &window);
  cudaGetLastError();  // best effort: a refusal must not fail the call
  gemm<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
