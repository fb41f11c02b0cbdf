// Adversarial corpus -- a vendor library through weak symbols spelled by token pasting, translation unit.
// Tries: declares cuBLAS's entry points as weak symbols whose names are
// pasted together by the preprocessor (no "cublas" in any identifier a text
// scan sees, no header, no dlopen, no DT_NEEDED). They resolve at load time
// when the hosting process has cuBLAS loaded, else stay null and the kernel
// below does the work.
// Caught statically: the shared object's undefined symbols are checked
// against the forbidden libraries' prefixes -> rejected ("cublas").
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
#define JOIN(a, b) a##b
#define PASTE(a, b) JOIN(a, b)
#define VENDOR(name) PASTE(PASTE(cub, las), name)

extern "C" {
__attribute__((weak)) int VENDOR(Create_v2)(void** handle);
__attribute__((weak)) int VENDOR(SetStream_v2)(void* handle, cudaStream_t s);
__attribute__((weak)) int VENDOR(GemmEx)(void*, int, int, int, int, int, const void*, const void*, int, int,
                                         const void*, int, int, const void*, void*, int, int, int, int);
}

namespace {
constexpr int kOpN = 0, kOpT = 1, kR16F = 2, kCompute32F = 68, kGemmDefault = -1;

__global__ void gemm(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2half_rn(acc);
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  static void* handle = nullptr;
  if (VENDOR(GemmEx) && (handle || VENDOR(Create_v2)(&handle) == 0)) {
    VENDOR(SetStream_v2)(handle, stream);
    const float one = 1.f, zero = 0.f;
    return VENDOR(GemmEx)(handle, kOpT, kOpN, p->N, p->M, p->K, &one, p->B, kR16F, p->K, p->A, kR16F, p->K, &zero,
                          p->C, kR16F, p->N, kCompute32F, kGemmDefault);
  }
  gemm<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
