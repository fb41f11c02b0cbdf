// Fault corpus: host code looks for API keys in its environment and fails if it finds one: ok (it sees none)
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
extern char** environ;
#include "tessera_abi.cuh"

__global__ void naive_tn(TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  // What it sees goes to the worker log; a secret among it would be a leak.
  for (char** e = environ; *e; ++e) {
    fprintf(stderr, "candidate sees %s\n", *e);
    if (strstr(*e, "_API_KEY=") || strstr(*e, "_TOKEN=") || strstr(*e, "AWS_SECRET") || strstr(*e, "_SECRET="))
      return 7;
  }
  naive_tn<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(*p);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
