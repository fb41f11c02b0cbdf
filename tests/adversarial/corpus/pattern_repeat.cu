// Adversarial corpus -- phase detection by input pattern, device-only.
// Tries: fingerprints the magnitudes of the first row of A and the first row
// of B and returns at once when the fingerprint equals the previous
// launch's: verification draws all-new inputs for every trial, while the
// timing loop changes only part of the inputs between calls (a few rows,
// or signs), so its first rows usually repeat.
// Caught: verification runs its last trial's inputs twice (the determinism
// check): the second run sees the same first rows, skips and leaves the
// output poisoned -> wrong_answer ("two runs"). While timed, every call (hot
// replays included) has inputs of its own, so it would never skip there.
#include "tessera_abi.cuh"
#define KEY_ELEMS 32
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ unsigned long long g_ctas;
__device__ unsigned long long g_fingerprint[2];  // of launch n in slot n % 2

// Every CTA computes the same value; magnitudes only, so sign changes do not disturb it.
__device__ unsigned long long first_rows_fingerprint(const TesseraGemmParams& p) {
  unsigned long long h = 1469598103934665603ull;
  for (int i = 0; i < KEY_ELEMS && i < p.K; ++i) {
    h = (h ^ (__half_as_ushort(p.A[i]) & 0x7FFF)) * 1099511628211ull;
    h = (h ^ (__half_as_ushort(p.B[i]) & 0x7FFF)) * 1099511628211ull;
  }
  return h;
}

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ bool skip;
  if (threadIdx.x == 0) {
    const unsigned long long launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
    const unsigned long long fp = first_rows_fingerprint(p);
    skip = launch > 0 && g_fingerprint[(launch - 1) & 1] == fp;
    g_fingerprint[launch & 1] = fp;  // every CTA of this launch writes the same value
  }
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (skip || row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
