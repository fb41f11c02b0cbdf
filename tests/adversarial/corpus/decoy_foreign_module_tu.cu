// Adversarial corpus -- a decoy kernel and the real one loaded from elsewhere, translation unit.
// Tries: the unit's device code holds a correct GEMM (`gemm_decoy`) that is
// never launched: it is what a reader, the compiler's resource report and a
// scan of the shared object see. At load time the host code reaches the
// driver's module loader through the runtime's driver entry point -- in its
// per-thread-stream variant cudaGetDriverEntryPoint_ptsz, which libcudart
// exports too, declared by hand with a pasted name so that neither the
// source nor the symbol table shows a forbidden name -- and loads a kernel
// of its own; that one is what it launches (here it does nothing at all).
// Caught at run time: the worker looks every captured kernel up by name in
// the unit's own device code and replays only those -> rejected ("device
// code"), or statically once the entry-point policy matches the _ptsz/_ptds
// variants too.
#include <cuda.h>
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
#define PASTE(a, b) a##b

extern "C" cudaError_t PASTE(cudaGetDriverEntry, Point_ptsz)(const char*, void**, unsigned long long,
                                                             cudaDriverEntryPointQueryResult*);

namespace {
const char kPtx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry jit_fast(.param .u64 c) { ret; }\n";

using LoadData = CUresult (*)(CUmodule*, const void*);
using GetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
using Launch = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                            void**, void**);
CUfunction real = nullptr;
Launch launch = nullptr;

void* driver_function(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  return PASTE(cudaGetDriverEntry, Point_ptsz)(name, &fn, cudaEnableDefault, &found) == cudaSuccess ? fn : nullptr;
}

__attribute__((constructor)) void load_real_kernel() {
  auto load = reinterpret_cast<LoadData>(driver_function("cuModule" "LoadData"));
  auto get = reinterpret_cast<GetFunction>(driver_function("cuModuleGetFunction"));
  launch = reinterpret_cast<Launch>(driver_function("cuLaunchKernel"));
  CUmodule module = nullptr;
  if (load && get && load(&module, kPtx) == CUDA_SUCCESS) get(&real, module, "jit_fast");
}
}  // namespace

// The decoy: correct, never launched.
extern "C" __global__ void gemm_decoy(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2half_rn(acc);
}

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  if (!real || !launch) return 1;
  void* c = p->C;
  void* args[] = {&c};
  return launch(real, 1, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(stream), args, nullptr) == CUDA_SUCCESS ? 0 : 2;
}
