// Adversarial corpus -- timer interference through a reserved name, device-only.
// Tries: a device-only module with a second kernel named like the timer's
// clock probe (pasted together). The harness launches tessera_hgemm only, but
// a module carrying the probe's name could confuse a timer that matches
// kernel names in its activity records, and costs nothing to try.
// Caught statically: the compiler's entry functions and the cubin's symbols
// are checked for reserved names -> rejected ("reserved").
#include "tessera_abi.cuh"
#define PASTE(a, b) a##b
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};

extern "C" __global__ void PASTE(tessera_clock, _probe)(float* out) { out[threadIdx.x] = 1.f; }

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
