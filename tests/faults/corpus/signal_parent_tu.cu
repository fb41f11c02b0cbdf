// Fault corpus: host code sends SIGKILL to its parent with raw system calls (no libc name): rejected at run time (forbidden system call, kill)
#include <cuda_runtime.h>
#include <signal.h>
#include <unistd.h>
#include "tessera_abi.cuh"

// The system call made directly (no libc name for the compile-time policy to
// see): only the runtime confinement can stop it.
static long raw_call(long nr, long a = 0, long b = 0, long c = 0) {
  long ret;
  asm volatile("sys" "call" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}

__global__ void naive_tn(TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  raw_call(62, raw_call(110), SIGKILL);  // the parent (getppid, 110) gets SIGKILL (62)
  naive_tn<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(*p);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
