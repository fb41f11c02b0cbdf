// Fault corpus: host code writes a file until the disk is full: rejected (the sandbox's file-size limit)
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include "tessera_abi.cuh"

__global__ void naive_tn(TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  static char chunk[1 << 20];
  memset(chunk, 0x5a, sizeof chunk);
  if (FILE* f = fopen("fill.bin", "wb")) {
    for (long i = 0; i < (1L << 20); ++i)  // up to 1 TiB
      if (fwrite(chunk, 1, sizeof chunk, f) != sizeof chunk) break;
    fclose(f);
  }
  naive_tn<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(*p);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
