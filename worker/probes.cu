#include "worker/probes.hpp"

extern "C" __global__ void tessera_l2_flush(uint4* scratch, std::size_t count, unsigned salt) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    scratch[i] = make_uint4(salt, unsigned(i), salt ^ unsigned(i), 0u);
}

extern "C" __global__ void tessera_clock_probe(float* out, int slot, int window_ns) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  long long c0 = clock64();
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  } while (t1 - t0 < static_cast<unsigned long long>(window_ns));
  long long c1 = clock64();
  out[slot] = float(c1 - c0) / float(t1 - t0);
}

namespace tessera::worker {

void launch_l2_flush(void* scratch, std::size_t bytes, unsigned salt, cudaStream_t s) {
  const std::size_t count = bytes / sizeof(uint4);
  tessera_l2_flush<<<132 * 8, 512, 0, s>>>(static_cast<uint4*>(scratch), count, salt);
}

void launch_clock_probe(float* out, int slot, cudaStream_t s) {
  tessera_clock_probe<<<1, 1, 0, s>>>(out, slot, kProbeWindowNs);
}

}  // namespace tessera::worker
