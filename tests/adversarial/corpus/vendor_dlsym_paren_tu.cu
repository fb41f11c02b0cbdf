// Adversarial corpus -- a vendor library through dlsym spelled to dodge a text scan, translation unit.
// Tries: no dlopen at all (tessera's own process already has cuBLAS loaded,
// where host code used to run): looks cublasGemmEx up in the global scope
// with dlsym, the name wrapped in parentheses so that a scan of the source
// for the name followed by an argument list misses the call.
// Caught statically: the shared object's undefined symbols are checked, and
// dlsym is one of the forbidden ones -> rejected ("dlsym").
#include <cuda_runtime.h>
#include <dlfcn.h>
#include "tessera_abi.cuh"

namespace {
// cublasGemmEx, declared by hand: no cuBLAS header is included.
using GemmEx = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                       const void*, void*, int, int, int, int);
using Create = int (*)(void**);
using SetStream = int (*)(void*, cudaStream_t);
constexpr int kOpN = 0, kOpT = 1, kR16F = 2, kCompute32F = 68, kGemmDefault = -1;
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  static void* handle = nullptr;
  auto gemm = reinterpret_cast<GemmEx>((dlsym)(RTLD_DEFAULT, "cublasGemmEx"));
  auto create = reinterpret_cast<Create>((dlsym)(RTLD_DEFAULT, "cublasCreate_v2"));
  auto set_stream = reinterpret_cast<SetStream>((dlsym)(RTLD_DEFAULT, "cublasSetStream_v2"));
  if (!gemm || !create || !set_stream) return 1;
  if (!handle && create(&handle) != 0) return 2;
  set_stream(handle, stream);
  const float one = 1.f, zero = 0.f;
  return gemm(handle, kOpT, kOpN, p->N, p->M, p->K, &one, p->B, kR16F, p->K, p->A, kR16F, p->K, &zero, p->C, kR16F,
              p->N, kCompute32F, kGemmDefault);
}
