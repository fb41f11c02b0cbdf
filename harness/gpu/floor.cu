#include "harness/gpu/floor.hpp"

extern "C" __global__ void tessera_floor_empty() {}

extern "C" __global__ void tessera_floor_touch(const uint4* in, uint4* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = in[blockIdx.x * 8];  // 8 x 16 B = one 128-byte line per CTA
}

namespace tessera::gpu {

cudaError_t allow_floor_smem(int dynamic_smem) {
  return cudaFuncSetAttribute(tessera_floor_empty, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic_smem);
}

cudaError_t launch_floor_empty(int ctas, int threads, int dynamic_smem, cudaStream_t s) {
  tessera_floor_empty<<<ctas, threads, dynamic_smem, s>>>();
  return cudaGetLastError();
}

cudaError_t launch_floor_touch(const void* in, void* out, int ctas, int threads, cudaStream_t s) {
  tessera_floor_touch<<<ctas, threads, 0, s>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out));
  return cudaGetLastError();
}

}  // namespace tessera::gpu
