#include "worker/floor.hpp"

extern "C" __global__ void tessera_floor_empty() {}

extern "C" __global__ void tessera_floor_touch(const uint4* in, uint4* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = in[blockIdx.x * 8];  // 8 x 16 B = one 128-byte line per CTA
}

// Streams `count` 16-byte vectors from in to out: DRAM bandwidth, both ways.
extern "C" __global__ void tessera_floor_copy(const uint4* __restrict__ in, uint4* __restrict__ out, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

namespace tessera::worker {

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

cudaError_t launch_floor_copy(const void* in, void* out, std::size_t bytes, int sms, cudaStream_t s) {
  constexpr int kThreads = 512, kCtasPerSm = 4;  // enough loads in flight to saturate HBM
  tessera_floor_copy<<<sms * kCtasPerSm, kThreads, 0, s>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out),
                                                         bytes / sizeof(uint4));
  return cudaGetLastError();
}

}  // namespace tessera::worker
