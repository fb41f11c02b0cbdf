// Adversarial corpus -- launch counting in host code, translation unit.
// Tries: counts calls of tessera_launch on the host and, past HONEST_CALLS,
// launches a kernel that does nothing (the old way to pay an empty kernel).
// Host code now runs once per parameter block and its captured launches are
// replayed on every call, so the count only advances per buffer: the
// verification block always gets the real GEMM; the hot-timing rotation
// blocks past the count get the empty kernel.
// Caught: hot timing checks one rotated output at random after each replay
// -> wrong_answer ("timed"). (Cold timing is neutralised: it replays the
// verified capture.)
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
#define HONEST_CALLS 6

namespace {
__global__ void gemm(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2half_rn(acc);
}
__global__ void nothing(__half*) {}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  static int calls = 0;
  const dim3 grid((p->N + 15) / 16, (p->M + 15) / 16);
  if (++calls <= HONEST_CALLS) gemm<<<grid, 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  else nothing<<<1, 32, 0, stream>>>(p->C);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
