// Fault corpus: host code opens a socket and connects out with raw system calls (no libc name): rejected at run time (forbidden system call, socket)
#include <cuda_runtime.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "tessera_abi.cuh"

// The system calls made directly (no libc name for the compile-time policy to
// see): only the runtime confinement can stop them.
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
  const long s = raw_call(41, AF_INET, SOCK_STREAM, 0);  // socket
  if (s >= 0) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(9);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    raw_call(42, s, reinterpret_cast<long>(&to), sizeof to);  // connect
    raw_call(3, s);                                               // close
  }
  naive_tn<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(*p);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
