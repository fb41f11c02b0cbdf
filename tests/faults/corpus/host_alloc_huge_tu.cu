// Fault corpus: host code allocates 128 TiB (more than the address space): runtime_fault (the allocation fails and the host code aborts)
#include <cuda_runtime.h>
#include <vector>
#include "tessera_abi.cuh"

__global__ void naive_tn(TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  // std::bad_alloc inside noexcept: std::terminate, so the process aborts
  // whoever calls this (an exception escaping into the caller is another test).
  [&]() noexcept {
    std::vector<char> huge(size_t(1) << 47);
    huge[0] = 1;
  }();
  naive_tn<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(*p);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
