#pragma once
// Measures what the device can do (the ceiling a result is checked against,
// core/ceiling.hpp): the tensor peak (the best cuBLAS/cuBLASLt over
// large square GEMMs), the DRAM bandwidth (a streaming copy) and the floor (an
// empty kernel), all cold, under the same timer as every result.
#include <cuda_runtime_api.h>

#include "core/wire.hpp"
#include "worker/timing.hpp"

namespace tessera::worker {

// Takes tens of seconds.
DeviceCeiling measure_ceiling(Timer& timer, cudaStream_t stream, int sm_count);

}  // namespace tessera::worker
