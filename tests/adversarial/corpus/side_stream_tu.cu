// Adversarial corpus -- work on a stream of its own, translation unit.
// Tries: creates a non-blocking stream at load time and launches the GEMM
// there instead of on the stream it is given, so a timer that watches that
// stream sees an empty call (the old harness synchronised the device before
// verifying, so the result was there in time).
// Caught: host code runs only in the runner, under capture of the given
// stream; work launched elsewhere really runs there, on the worker's
// pointers, and fails -> rejected ("outside the stream"); if it slipped past
// that check it would never be replayed and C would stay poisoned
// -> wrong_answer.
#include <cuda_runtime.h>
#include "tessera_abi.cuh"

namespace {
cudaStream_t side = nullptr;
__attribute__((constructor)) void make_side_stream() { cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking); }

__global__ void gemm(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2half_rn(acc);
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t) {
  gemm<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, side>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
