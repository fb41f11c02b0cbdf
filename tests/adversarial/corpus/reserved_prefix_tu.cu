// Adversarial corpus -- timer interference through a reserved name, translation unit.
// Tries: does its real work in a kernel named like the harness's own
// integrity kernels (their reserved prefix, pasted together so the name
// never appears in the source): a timer that tells the harness's poison,
// variation and check kernels from the measured work by name would leave this
// one's time out of every sample.
// Caught statically: every name with the prefix is reserved -- in the source,
// in the compiler's list of entry functions and in the built module's
// symbols -> rejected ("reserved").
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
#define PASTE(a, b) a##b

extern "C" __global__ void PASTE(tessera_, harness_check_output)(const TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  PASTE(tessera_, harness_check_output)<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(*p);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
