// Fault corpus: a translation unit that calls a function nobody defines: compile_error (link)
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
extern "C" int tessera_helper_that_does_not_exist(const TesseraGemmParams*);
extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t) { return tessera_helper_that_does_not_exist(p); }
