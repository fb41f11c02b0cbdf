// Adversarial corpus -- phase detection by time (globaltimer gap), device-only.
// Tries: remembers when its previous launch ended (%globaltimer) and returns
// at once when this launch starts less than GAP_NS later: back-to-back
// launches are a timing loop, verification trials are milliseconds apart.
// Cold samples have an L2 flush between launches, so it fires in the hot
// graph replay (and wherever launches follow each other closely).
// Caught: hot timing gives every call of the replayed graph its own poisoned
// output and checks one at random after each replay -> wrong_answer ("timed").
#include "tessera_abi.cuh"
#define GAP_NS 20000ull
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ unsigned long long g_ctas;
__device__ unsigned long long g_end[2];  // end time of launch n in slot n % 2 (max over its CTAs)

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ unsigned long long launch;
  __shared__ bool skip;
  if (threadIdx.x == 0) {
    launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
    skip = launch > 0 && now_ns() - g_end[(launch - 1) & 1] < GAP_NS;
  }
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (!skip && row < p.M && col < p.N) {
    float acc = 0.f;
    for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
    p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
  }
  __syncthreads();
  // Slot launch%2 held launch-2's end, which is earlier: max() needs no reset.
  if (threadIdx.x == 0) atomicMax(&g_end[launch & 1], now_ns());
}
