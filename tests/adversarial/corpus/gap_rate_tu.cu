// Adversarial corpus -- phase detection by time (launch rate), translation unit.
// Tries: keeps the end times of its last RING launches (%globaltimer) and
// returns at once when the previous WINDOW launches all ended within the last
// WINDOW_NS: a timing loop launches every few hundred microseconds, the
// verification trials are milliseconds apart (and only five). Host code only
// launches; the decision is on the device, so capture and replay keep it.
// Caught: random timed launches are checked against the reference on the
// device (cold batches and hot replays) -> wrong_answer ("timed").
#include <cuda_runtime.h>
#include "tessera_abi.cuh"

namespace {
constexpr unsigned kRing = 8, kWindow = 6;
constexpr unsigned long long kWindowNs = 6000000ull;  // 6 launches in 6 ms
__device__ unsigned long long g_ctas;
__device__ unsigned long long g_end[kRing];  // end of launch n in slot n % kRing (max over its CTAs)

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void gemm_rate_aware(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  __shared__ unsigned long long launch;
  __shared__ bool skip;
  if (threadIdx.x == 0) {
    launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
    skip = launch >= kWindow && now_ns() - g_end[(launch - kWindow) % kRing] < kWindowNs;
  }
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (!skip && row < M && col < N) {
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
    C[(size_t)row * N + col] = __float2half_rn(acc);
  }
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(&g_end[launch % kRing], now_ns());  // the slot held an earlier launch's end
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const dim3 grid((p->N + 15) / 16, (p->M + 15) / 16);
  gemm_rate_aware<<<grid, 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
