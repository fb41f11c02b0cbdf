// Adversarial corpus -- work on the legacy default stream, translation unit.
// Tries: launches the GEMM on stream 0 (the legacy default stream) rather
// than the stream it is given -- the commonest way to leave the timer's
// stream, and often by accident.
// Caught: under capture of the given stream, a launch on the legacy stream
// invalidates the capture -> launch_error ("captur"); work that ran instead
// would be outside the stream -> rejected.
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

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t) {
  gemm<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, cudaStreamLegacy>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return 0;  // errors not checked, as is common
}
