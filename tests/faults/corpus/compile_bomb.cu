// Fault corpus: exponential template inlining, a compile bomb: timeout (compile limit)
#include "tessera_abi.cuh"
template <int N> __device__ __forceinline__ float bomb(float x) { return bomb<N - 1>(x * 1.0001f) + bomb<N - 1>(x + 1.0f); }
template <> __device__ __forceinline__ float bomb<0>(float x) { return x; }
extern "C" __device__ const TesseraLaunchContract tessera_contract = {TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) { p.C[threadIdx.x] = __float2half(bomb<40>(float(threadIdx.x))); }
