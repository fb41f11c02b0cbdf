// Fault corpus: does not compile: compile_error
#include "tessera_abi.cuh"
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) { this is not C++; }
