// Adversarial corpus -- input mutation (sparsifying its own inputs), device-only.
// Tries: past verification, the last CTA of each launch zeroes the first row
// of A once the launch is done, so that later launches have less to do (a
// real kernel would skip zero rows). The launch that zeroes computed right.
// Expected caught: the inputs a timed call is checked against must be the
// ones the harness wrote, not what the kernel left in the buffers; a
// reference from the harness's own copy (or a digest after the call) shows A
// changed -> wrong_answer. Every hot call reads an input set of its own, so
// no later call computes on the zeroed row: the audit of the inputs after
// timing finds it. Gap: a reference computed from the buffers after the call
// follows the mutation, and the kernel is paid.
#include "tessera_abi.cuh"
#define HONEST_LAUNCHES 6
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ unsigned long long g_ctas, g_done;

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ unsigned long long launch;
  __shared__ bool last;
  if (threadIdx.x == 0) launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row < p.M && col < p.N) {
    float acc = 0.f;
    for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
    p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = (atomicAdd(&g_done, 1ull) + 1) % (gridDim.x * gridDim.y) == 0;
  }
  __syncthreads();
  if (!last || launch < HONEST_LAUNCHES) return;
  __half* first_row = const_cast<__half*>(p.A);
  for (int k = threadIdx.x; k < p.K; k += blockDim.x) first_row[k] = __float2half(0.f);
}
