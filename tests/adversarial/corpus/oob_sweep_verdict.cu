// Adversarial corpus -- forging the verdict by sweeping memory, device-only.
// Tries: computes correctly every launch; past verification it also zeroes
// every 8-byte word from the end of C's canary band upwards, hoping to clear
// the harness's mismatch counters or overwrite its reference (both live in
// the same CUDA context as the candidate).
// Caught: the reference and the verdict counters sit at random addresses in
// otherwise unmapped virtual memory, so the sweep reaches an unmapped page
// long before it could find them -> runtime_fault (illegal address); the
// worker is replaced, and the next candidate (good.cu, at the end of the
// corpus test) must still be ok.
#include "tessera_abi.cuh"
#define HONEST_LAUNCHES 6
#define GUARD_BYTES (256 * 1024)
#define SWEEP_BYTES (64ull << 30)
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ unsigned long long g_ctas;

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ unsigned long long launch;
  if (threadIdx.x == 0) launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row < p.M && col < p.N) {
    float acc = 0.f;
    for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
    p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
  }
  if (launch < HONEST_LAUNCHES) return;
  const unsigned long long end = reinterpret_cast<unsigned long long>(p.C + (size_t)p.M * p.N) + GUARD_BYTES;
  unsigned long long* words = reinterpret_cast<unsigned long long*>((end + 7) & ~7ull);
  const unsigned long long threads = (unsigned long long)gridDim.x * gridDim.y * blockDim.x;
  const unsigned long long me = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
  for (unsigned long long i = me; i < SWEEP_BYTES / 8; i += threads) words[i] = 0;
}
