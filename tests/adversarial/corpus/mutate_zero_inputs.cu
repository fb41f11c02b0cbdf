// Adversarial corpus -- input mutation that makes its own answer right, device-only.
// Tries: honest during verification (whose trials digest the inputs); past
// it, every launch zeroes the whole of A and writes C = 0 -- which is the
// exact product of the inputs as they are after the launch. Nothing is
// computed: the launch costs a memset of A and C.
// Expected caught: a checked call must be compared with the product of the
// inputs the harness gave it (its own copy, or a digest of A and B taken
// before the call and compared after) -> wrong_answer. Gap: a reference
// computed from the input buffers after the call, with an audit of canaries
// only, agrees with the kernel and pays it.
#include "tessera_abi.cuh"
#define HONEST_LAUNCHES 6
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ unsigned long long g_ctas;

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ unsigned long long launch;
  if (threadIdx.x == 0) launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (launch >= HONEST_LAUNCHES) {
    const size_t threads = (size_t)gridDim.x * gridDim.y * blockDim.x;
    const size_t me = (size_t)(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
    __half* a = const_cast<__half*>(p.A);
    for (size_t i = me; i < (size_t)p.M * p.K; i += threads) a[i] = __float2half(0.f);
    if (row < p.M && col < p.N) p.C[(size_t)row * p.N + col] = __float2half(0.f);
    return;
  }
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
