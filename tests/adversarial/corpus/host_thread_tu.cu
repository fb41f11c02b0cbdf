// Adversarial corpus -- work on a host thread of its own, translation unit.
// Tries: tessera_launch returns at once; a host thread it starts launches
// the GEMM on that thread's own default stream, out of sight of a timer that
// watches the calling thread's stream.
// Caught: starting a thread (clone) is a system call the runner's sandbox
// forbids: the runner dies of SIGSYS -> rejected; were threads allowed, the
// work would run outside the captured stream -> rejected ("outside the
// stream") or never be replayed -> wrong_answer.
#include <cuda_runtime.h>

#include <thread>

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
  const TesseraGemmParams q = *p;
  std::thread([q] {
    gemm<<<dim3((q.N + 15) / 16, (q.M + 15) / 16), 256, 0, cudaStreamPerThread>>>(q.A, q.B, q.C, q.M, q.N, q.K);
    cudaStreamSynchronize(cudaStreamPerThread);
  }).detach();
  return 0;
}
