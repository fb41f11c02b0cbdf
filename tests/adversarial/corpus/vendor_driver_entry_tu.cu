// Adversarial corpus -- code from outside the unit through a driver entry point, translation unit.
// Tries: cuModuleLoadData and cuLaunchKernel are forbidden or absent by
// name, so it asks the runtime for them with cudaGetDriverEntryPoint, loads
// a module of its own at load time (here a tiny PTX kernel; it could as well
// be a vendor library's cubin read from disk) and launches that module's
// kernel on the stream. The unit's own kernel is never launched.
// Caught statically: cudaGetDriverEntryPoint (and cuGetProcAddress, the
// ByVersion variants) are forbidden symbols -> rejected
// ("cudaGetDriverEntryPoint"). Were it missed, the captured kernel is not in
// the unit's own device code -> rejected.
#include <cuda.h>
#include <cuda_runtime.h>
#include "tessera_abi.cuh"

namespace {
const char kPtx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry jit_gemm(.param .u64 c) { ret; }\n";

using LoadData = CUresult (*)(CUmodule*, const void*);
using GetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
using Launch = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                            void**, void**);
CUfunction jit = nullptr;
Launch launch = nullptr;

void* entry(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  return cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &found) == cudaSuccess ? fn : nullptr;
}

__attribute__((constructor)) void load_foreign_module() {
  auto load = reinterpret_cast<LoadData>(entry("cuModuleLoadData"));
  auto get = reinterpret_cast<GetFunction>(entry("cuModuleGetFunction"));
  launch = reinterpret_cast<Launch>(entry("cuLaunchKernel"));
  CUmodule module = nullptr;
  if (load && get && load(&module, kPtx) == CUDA_SUCCESS) get(&jit, module, "jit_gemm");
}

__global__ void gemm_in_unit(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2half_rn(acc);
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  if (!jit || !launch) {
    gemm_in_unit<<<dim3((p->N + 15) / 16, (p->M + 15) / 16), 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
  }
  void* c = p->C;
  void* args[] = {&c};
  return launch(jit, 1, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(stream), args, nullptr) == CUDA_SUCCESS ? 0 : 2;
}
