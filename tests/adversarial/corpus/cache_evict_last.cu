// Adversarial corpus -- timer interference through L2 eviction priority, device-only.
// Tries: a correct kernel that loads A and B with an L2 evict_last cache
// policy, hoping the inputs outlive the L2 flush that the timer runs before
// every cold sample (the flush writes with normal priority), so that "cold"
// samples read the inputs from L2.
// Expected ok: the answer is right every time. Whether its cold time is
// really cold is a question for the timer, not the verdict: compare its cold
// median with the same kernel without the hint (see the corpus README).
#include "tessera_abi.cuh"
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};

__device__ __half load_keep(const __half* p, unsigned long long policy) {
  unsigned short v;
  asm volatile("ld.global.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(v) : "l"(p), "l"(policy));
  return __ushort_as_half(v);
}

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  unsigned long long keep;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(keep));
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k)
    acc += __half2float(load_keep(p.A + (size_t)row * p.K + k, keep)) * __half2float(load_keep(p.B + (size_t)col * p.K + k, keep));
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
