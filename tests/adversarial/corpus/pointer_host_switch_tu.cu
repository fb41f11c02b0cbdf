// Adversarial corpus -- phase detection by pointer, in host code, translation unit.
// Tries: the host code remembers the first output pointer it is given and,
// for any other parameter block, launches a kernel that does nothing. Host
// code runs once per parameter block (then the captured launches are
// replayed), so the decision is made per buffer, not per call.
// Caught: the hot-timing outputs are other parameter blocks; each replay
// poisons them all and checks one at random -> wrong_answer ("timed").
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
__global__ void nothing(__half*) {}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  static const void* first_c = nullptr;
  if (!first_c) first_c = p->C;
  const dim3 grid((p->N + 15) / 16, (p->M + 15) / 16);
  if (p->C == first_c) gemm<<<grid, 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  else nothing<<<1, 32, 0, stream>>>(p->C);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
