// Fault corpus: a translation unit that does its real work in a kernel named
// like the harness's L2-flush kernel, so that a timer telling kernels apart by
// name would leave its time out (docs/design.md §6, cheat 10). The name is pasted
// together by the preprocessor, so only the compiler's entry list and the
// shared object's symbols show it: rejected.
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
#define PASTE(a, b) a##b
extern "C" __global__ void PASTE(tessera_l2, _flush)(const TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const dim3 grid((p->N + 15) / 16, (p->M + 15) / 16);
  PASTE(tessera_l2, _flush)<<<grid, 256, 0, stream>>>(*p);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
