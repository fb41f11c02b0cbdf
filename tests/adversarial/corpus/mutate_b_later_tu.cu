// Adversarial corpus -- input mutation on a later launch only, translation unit.
// Tries: from launch HONEST_LAUNCHES on (past verification, whose per-trial
// digests would see it), the last CTA of each launch flips the lowest bit of
// one element of B and remembers its true magnitude; the next launches use
// the remembered value, so every output stays exactly right even while the
// harness changes the inputs (a sign change keeps the magnitude it
// recognises; a refreshed row is new data, changed again).
// The point: show that outputs alone cannot prove the inputs were left alone.
// Expected caught by an audit of the inputs after timing (or a reference
// taken from the harness's own copy of them) -> wrong_answer ("input").
// Gap: a harness that computes a checked call's reference from the input
// buffers after the call, and audits only canaries, pays it.
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
#define HONEST_LAUNCHES 6

namespace {
constexpr int kCol = 5, kK = 7;  // the element B[kCol][kK]
__device__ unsigned long long g_ctas, g_done;
__device__ unsigned short g_true_bits, g_changed_bits;  // magnitudes (sign bit clear)
__device__ bool g_active;

__device__ unsigned short bits(const __half* p) { return __half_as_ushort(*p); }

__global__ void gemm_then_touch_b(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  __shared__ unsigned long long launch;
  if (threadIdx.x == 0) launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
  __syncthreads();
  const __half* target = B + (size_t)kCol * K + kK;
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row < M && col < N) {
    const bool fix = col == kCol && g_active && (bits(target) & 0x7FFF) == g_changed_bits;
    const __half truth = __ushort_as_half((bits(target) & 0x8000) | g_true_bits);
    float acc = 0.f;
    for (int k = 0; k < K; ++k) {
      const __half b = fix && k == kK ? truth : B[(size_t)col * K + k];
      acc += __half2float(A[(size_t)row * K + k]) * __half2float(b);
    }
    C[(size_t)row * N + col] = __float2half_rn(acc);
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence();
  const bool last = (atomicAdd(&g_done, 1ull) + 1) % (gridDim.x * gridDim.y) == 0;
  if (!last || launch < HONEST_LAUNCHES || kCol >= N || kK >= K) return;
  const unsigned short now = bits(target);
  if (g_active && (now & 0x7FFF) == g_changed_bits) return;  // still changed (maybe with a new sign)
  g_true_bits = now & 0x7FFF;  // fresh inputs: change them again
  g_changed_bits = g_true_bits ^ 1;
  g_active = true;
  *const_cast<__half*>(target) = __ushort_as_half((now & 0x8000) | g_changed_bits);
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const dim3 grid((p->N + 15) / 16, (p->M + 15) / 16);
  gemm_then_touch_b<<<grid, 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
