// Adversarial corpus -- forging the harness's protocol on stdout, translation unit.
// Tries: the simple version of the forgery: prints a well-formed error event
// claiming an infrastructure failure on stdout, where a harness that reads
// its child's stdout as its protocol would take it for its own, then
// launches an honest kernel.
// Expected ok or rejected -- never infra_error: the runner keeps its protocol
// on a private descriptor and points stdout at its log, so the line is only a
// log line and the honest kernel is paid what it is worth (or the harness
// refuses a candidate that writes to stdout at all).
#include <cuda_runtime.h>

#include <cstdio>

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
  std::printf("{\"event\":\"error\",\"status\":\"infra_error\",\"reason\":\"out of memory\"}\n");
  std::fflush(stdout);
  gemm<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
