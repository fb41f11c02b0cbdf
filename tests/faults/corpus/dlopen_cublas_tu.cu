// Fault corpus: a translation unit that reaches cuBLAS through dlopen: rejected
#include <dlfcn.h>
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
extern "C" int tessera_launch(const TesseraGemmParams*, cudaStream_t) {
  void* lib = dlopen("libcublas.so.13", RTLD_NOW);
  return lib ? 0 : 1;
}
