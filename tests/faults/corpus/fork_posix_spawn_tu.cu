// Fault corpus: host code starts a process with posix_spawn: rejected by the compile-time policy (posix_spawn is a forbidden name)
#include <cuda_runtime.h>
#include <spawn.h>
#include <sys/wait.h>
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
  pid_t pid;
  char* argv[] = {const_cast<char*>("/bin/sh"), const_cast<char*>("-c"), const_cast<char*>("true"), nullptr};
  if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, environ) == 0) waitpid(pid, nullptr, 0);
  naive_tn<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(*p);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
