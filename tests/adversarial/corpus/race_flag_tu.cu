// Adversarial corpus -- nondeterministic output (a race between warps), translation unit.
// Tries: splits K between two warp groups of a 512-thread CTA. The second
// group leaves its partial sums in shared memory and raises a flag; the first
// polls the flag between its k-steps and folds the partial sums in as soon as
// it is up. The second group clears the flag once it has started (after a
// few k-steps), with no barrier between the groups: the first group's first
// polls race with the clear and read whatever shared memory held. Where that
// was zero the first group waits as meant and the output is exact; where it
// was anything else it folds in garbage. Which one a run gets depends on
// which warps ran before it on the SM and on the order the warps run in --
// it can pass verification on one run and differ on the next.
// Caught: verification runs the last trial's inputs twice, with shared
// memory zeroed and then with every bit set (NaN), and the outputs must be
// identical -> wrong_answer ("two runs"); if a trial's run already folded
// garbage, that trial fails.
#include <cuda_runtime.h>
#include "tessera_abi.cuh"

namespace {
constexpr int kTile = 16;           // 16x16 outputs per CTA, one per thread of each group
constexpr int kGroup = kTile * kTile;
constexpr int kClearAfterSteps = 8; // the second group clears the flag after this many of its k-steps
constexpr int kPollEvery = 4;       // the first group polls every this many k-steps

__global__ void __launch_bounds__(2 * kGroup) gemm_two_groups(const __half* A, const __half* B, __half* C, int M,
                                                              int N, int K) {
  __shared__ volatile float partial[kGroup];
  __shared__ volatile int ready;  // 1: partial holds the second group's sums
  const int t = threadIdx.x % kGroup;
  const bool second = threadIdx.x >= kGroup;
  const int row = blockIdx.y * kTile + t / kTile, col = blockIdx.x * kTile + t % kTile;
  const bool inside = row < M && col < N;
  const int half = K / 2;
  float acc = 0.f;
  if (second) {
    for (int k = half; k < K; ++k) {
      if (inside) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
      if (k == half + kClearAfterSteps && t == 0) ready = 0;  // the race: no barrier orders this with the polls
    }
    partial[t] = acc;
    asm volatile("bar.sync 1, %0;" ::"n"(kGroup) : "memory");  // the second group's sums are all written
    if (t == 0) {
      __threadfence_block();
      ready = 1;
    }
    return;
  }
  bool folded = false;
  for (int k = 0; k < half; ++k) {
    if (!folded && k % kPollEvery == 0 && ready) {
      __threadfence_block();
      acc += partial[t];
      folded = true;
    }
    if (inside) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  }
  while (!folded) {
    if (ready) {
      __threadfence_block();
      acc += partial[t];
      folded = true;
    }
  }
  if (inside) C[(size_t)row * N + col] = __float2half_rn(acc);
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const dim3 grid((p->N + kTile - 1) / kTile, (p->M + kTile - 1) / kTile);
  gemm_two_groups<<<grid, 2 * kGroup, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
