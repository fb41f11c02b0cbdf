// Adversarial corpus -- the driver's symbol table through a weak cuGetProcAddress, translation unit.
// Tries: the unit cannot link the driver library, so it declares the
// driver's cuGetProcAddress_v2 weak (a weak undefined symbol passes the
// no-undefined link), with a pasted name so the source never spells it. In
// a process where the driver is loaded globally it resolves, and hands out
// any driver function by name -- here the module loader, to run a kernel
// that is not in the unit; where it stays null, an honest kernel runs.
// Caught statically: cuGetProcAddress and its variants are forbidden
// symbols, found among the shared object's undefined symbols
// -> rejected ("cuGetProcAddress").
#include <cuda.h>
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
#define PASTE(a, b) a##b

extern "C" __attribute__((weak)) CUresult PASTE(cuGetProc, Address_v2)(const char*, void**, int, cuuint64_t,
                                                                       CUdriverProcAddressQueryResult*);

namespace {
const char kPtx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry jit_gemm(.param .u64 c) { ret; }\n";
constexpr int kDriverVersion = 12000;

using LoadData = CUresult (*)(CUmodule*, const void*);
using GetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
using Launch = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                            void**, void**);
CUfunction jit = nullptr;
Launch launch = nullptr;

void* driver_function(const char* name) {
  void* fn = nullptr;
  if (!PASTE(cuGetProc, Address_v2)) return nullptr;
  return PASTE(cuGetProc, Address_v2)(name, &fn, kDriverVersion, CU_GET_PROC_ADDRESS_DEFAULT, nullptr) == CUDA_SUCCESS
             ? fn
             : nullptr;
}

__attribute__((constructor)) void load_foreign_module() {
  auto load = reinterpret_cast<LoadData>(driver_function("cuModuleLoadData"));
  auto get = reinterpret_cast<GetFunction>(driver_function("cuModuleGetFunction"));
  launch = reinterpret_cast<Launch>(driver_function("cuLaunchKernel"));
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
