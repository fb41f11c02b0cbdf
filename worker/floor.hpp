#pragma once
// Kernels that do (almost) nothing, timed under the measurement protocol to
// find the floor of kernel GPU time (`tessera bench floor`): what a small
// GEMM cannot get under, however good its tile.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace tessera::worker {

// Lets the empty kernel ask for up to `dynamic_smem` bytes (past the 48 KiB
// default). Once, before timing: it is not stream work.
cudaError_t allow_floor_smem(int dynamic_smem);
// An empty kernel of `ctas` CTAs of `threads` threads asking for
// `dynamic_smem` bytes of shared memory (which it does not touch).
cudaError_t launch_floor_empty(int ctas, int threads, int dynamic_smem, cudaStream_t s);
// Each CTA's thread 0 loads one 16-byte vector from its own 128-byte line of
// `in` (cold after the timer's L2 flush: a DRAM round trip) and stores it to
// out[cta]. `in` must hold ctas * 128 bytes, `out` ctas * 16. Both return the
// launch error (host code checks it).
cudaError_t launch_floor_touch(const void* in, void* out, int ctas, int threads, cudaStream_t s);
// Copies `bytes` (a multiple of 16) from in to out with a grid sized to `sms`:
// the DRAM bandwidth the plausibility ceiling uses (bytes read + written).
cudaError_t launch_floor_copy(const void* in, void* out, std::size_t bytes, int sms, cudaStream_t s);

}  // namespace tessera::worker
