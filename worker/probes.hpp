#pragma once
// Harness kernels that bracket every timed sample. They are extern "C" so
// CUPTI reports them under these exact names and the timer can tell them
// apart from the work being measured.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace tessera::worker {

inline constexpr const char* kFlushKernelName = "tessera_l2_flush";
inline constexpr const char* kProbeKernelName = "tessera_clock_probe";
inline constexpr int kProbeWindowNs = 8000;  // long enough for a stable clock reading

// Overwrites `bytes` of scratch (at least twice the L2) so nothing of the
// measured kernel's inputs stays in L2.
void launch_l2_flush(void* scratch, std::size_t bytes, unsigned salt, cudaStream_t s);
// Writes the SM clock rate (cycles per ns) seen during a short spin to out[slot].
void launch_clock_probe(float* out, int slot, cudaStream_t s);

}  // namespace tessera::worker
