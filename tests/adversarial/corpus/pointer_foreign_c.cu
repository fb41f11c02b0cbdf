// Adversarial corpus -- phase detection by pointer, device-only.
// Tries: remembers the output pointer of its first launch (a verification
// trial) and returns at once whenever C is anywhere else: a harness that
// times into other buffers (rotated outputs for back-to-back calls) would
// pay an empty kernel there while verification only ever sees the first one.
// Caught: hot timing rotates C over several buffers inside the captured
// graph, poisons them all and checks one at random after each replay
// -> wrong_answer ("timed").
#include "tessera_abi.cuh"
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ unsigned long long g_first_c;

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const unsigned long long c = reinterpret_cast<unsigned long long>(p.C);
  const unsigned long long first = atomicCAS(&g_first_c, 0ull, c);
  if (first != 0 && first != c) return;  // not the buffer verification reads
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
